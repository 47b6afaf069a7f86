"""Every script in examples/ runs and asserts its numbers (tidu-rs's ``example_runs`` tests)."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.fixture(scope="module")
def script_runs():
    """Start every example at once (each pays for importing tidu), then collect the results."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    # the scripts run at once: OpenBLAS threads of several processes fighting for 2 cores make small
    # matmuls many times slower (bench/RESULTS.md, training)
    env["OPENBLAS_NUM_THREADS"] = "1"
    procs = {
        path.name: subprocess.Popen(
            [sys.executable, str(path)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path in EXAMPLES
    }
    return {name: (proc.wait(timeout=120), *proc.communicate()) for name, proc in procs.items()}


def test_there_are_examples():
    assert {"eager_reverse_mode.py", "primitive_linearization.py", "gradient_two_inputs.py"} <= {
        p.name for p in EXAMPLES
    }


@pytest.mark.parametrize("name", [p.name for p in EXAMPLES])
def test_example_script_runs(name, script_runs):
    returncode, stdout, stderr = script_runs[name]
    assert returncode == 0, f"{name} failed:\n{stdout}\n{stderr}"
    assert stdout.strip(), f"{name} printed nothing"


@pytest.mark.smoke
def test_eager_reverse_mode_run():
    import eager_reverse_mode

    assert eager_reverse_mode.run() == 6.0


def test_primitive_linearization_run():
    import primitive_linearization

    assert primitive_linearization.run() == (9.0, 9.0, 12.0)


def test_gradient_two_inputs_run():
    import gradient_two_inputs

    assert gradient_two_inputs.run() == (5.0, 3.0)
    assert gradient_two_inputs.run(-1.5, 0.25) == (1.25, -1.5)


def test_eager_reverse_mode_pieces():
    from eager_reverse_mode import (
        ExampleKeySource,
        ScalarBackwardExecutor,
        ScalarBuilder,
        ScalarKey,
        ScalarOp,
        eager_input,
        input_key,
        record_primitive,
    )

    from tidu import eager
    from tidu.ad import ADRuleError, PrimitiveValue, ValueKey
    from tidu.eager import PrimitiveGraph, RecordedGraph, Recorder

    assert [op.input_count() for op in ScalarOp] == [2, 2, 1, 1]
    assert ScalarOp.Mul.add() is ScalarOp.Add and ScalarOp.Exp.eval(None, [0.0]) == [1.0]
    assert ScalarKey.User("x").tangent_of(2) == ScalarKey.Tangent(ScalarKey.User("x"), 2)
    source = ExampleKeySource()
    assert [source.fresh_input_key(), source.fresh_input_key()] == [
        ScalarKey.User("e0"),
        ScalarKey.User("e1"),
    ]

    builder = ScalarBuilder({input_key("x"): 2.0})
    seed = builder.push_value(5.0)
    (out,) = builder.add_primitive(
        ScalarOp.Mul, [PrimitiveValue.Local(seed), PrimitiveValue.External(input_key("x"))], None
    )
    assert builder.value(out) == 10.0
    with pytest.raises(KeyError, match="missing eager value"):
        builder.resolve_input(PrimitiveValue.External(input_key("y")))

    # exp(x): its JVP reads the retained output; the gradient is exp(x)
    recorder = Recorder(ExampleKeySource())
    x = eager_input("x", 0.5, requires_grad=True)
    (y,) = record_primitive(recorder, ScalarOp.Exp, [x], ScalarOp.Exp.eval(None, [0.5]))
    assert y.key == ValueKey.Input(ScalarKey.User("e0"))
    grads = eager.try_backward(y.key, y.trace, 1.0, ScalarBackwardExecutor(), None)
    assert grads[input_key("x")] == pytest.approx(math.exp(0.5), abs=1e-12)

    # replay defaults tangent inputs to zero, and refuses other missing inputs
    executor = ScalarBackwardExecutor()
    graph = RecordedGraph.from_primitive(ScalarOp.Neg, [input_key("x")]).as_graph()
    with pytest.raises(RuntimeError, match="missing concrete value for graph input"):
        executor.execute_forward(PrimitiveGraph(graph), {})
    assert executor.add_operands(1.0, 2.5) == 3.5

    # Exp is not linear: asking for its transpose is an ADRuleError
    with pytest.raises(ADRuleError, match="unsupported transpose AD rule for Exp"):
        ScalarOp.Exp.transpose_rule(builder, [seed], [PrimitiveValue.External(input_key("x"))], None, None)


def test_printed_linear_graph_in_the_tutorial_is_current():
    from eager_reverse_mode import ScalarKey, ScalarOp

    from tidu.ad import GraphBuilder, OperationRole, PrimitiveValue, linearize

    builder = GraphBuilder()
    x = builder.add_input(ScalarKey.User("x"))
    (y,) = builder.add_operation(ScalarOp.Mul, [PrimitiveValue.Local(x)] * 2, OperationRole.Primary)
    graph = builder.build()
    printed = str(linearize(graph, [graph.global_key(y)], [ScalarKey.User("x")]))
    doc = (ROOT / "docs" / "tutorials" / "primitive_linearization.md").read_text()
    assert f"```\n{printed}\n```" in doc
