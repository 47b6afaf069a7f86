"""``ADRuleError``: raised by every fallible entry point, with tidu-rs's exact messages."""

import pytest
from scalar_ops import (
    BAD_TRANSPOSE,
    EXP,
    MUL,
    NO_JVP,
    NO_TRANSPOSE,
    Executor,
    ImmediateBuilder,
    Program,
    call,
    leaf,
)

from tidu.ad import (
    ADRuleError,
    ADRuleKind,
    ValueKey,
    linear_transpose,
    linearize,
    try_linear_transpose,
    try_linear_transpose_with_builder,
    try_linearize,
)
from tidu.eager import Recorder, try_backward


def linear_of(op):
    p = Program("x", "a")
    y = p(MUL, "a", p(op, "x"))
    graph = p.build(y)
    return linearize(graph, [graph.global_key(y)], ["x"])


@pytest.mark.smoke
def test_messages_and_kinds():
    assert ADRuleKind.Jvp.as_str() == "jvp" and ADRuleKind.Transpose.as_str() == "transpose"
    err = ADRuleError.unsupported("custom::op", ADRuleKind.Jvp)
    assert str(err) == "unsupported jvp AD rule for custom::op"
    assert isinstance(err, RuntimeError)
    assert err.rule() is ADRuleKind.Jvp and err.op == "custom::op" and err.is_unsupported()
    err = ADRuleError.invalid_input("fft", ADRuleKind.Jvp, "rank mismatch")
    assert str(err) == "invalid jvp AD input for fft: rank mismatch"
    assert err.rule() is ADRuleKind.Jvp and not err.is_unsupported()


@pytest.mark.parametrize("entry", [try_linearize, linearize])
def test_linearize_surfaces_jvp_errors(entry):
    p = Program("x")
    y = p(EXP, p(NO_JVP, "x"))
    graph = p.build(y)
    with pytest.raises(ADRuleError, match="^unsupported jvp AD rule for custom::op$") as info:
        entry(graph, [graph.global_key(y)], ["x"])
    assert info.value.rule() is ADRuleKind.Jvp


def test_an_operation_without_any_rule_methods_is_unsupported():
    class Opaque:
        name = "opaque"

        def input_count(self):
            return 1

        def output_count(self):
            return 1

    p = Program("x")
    y = p(Opaque(), "x")
    graph = p.build(y)
    with pytest.raises(ADRuleError, match="^unsupported jvp AD rule for opaque$"):
        try_linearize(graph, [graph.global_key(y)], ["x"])


@pytest.mark.parametrize("entry", [try_linear_transpose, linear_transpose])
def test_linear_transpose_surfaces_transpose_errors(entry):
    with pytest.raises(ADRuleError, match="^unsupported transpose AD rule for fft$") as info:
        entry(linear_of(NO_TRANSPOSE))
    assert info.value.rule() is ADRuleKind.Transpose


def test_transpose_with_builder_surfaces_transpose_errors():
    lin = linear_of(NO_TRANSPOSE)
    builder = ImmediateBuilder({ValueKey.Input("a"): 2.0})
    with pytest.raises(ADRuleError) as info:
        try_linear_transpose_with_builder(lin, builder, [builder.push_value(1.0)])
    assert info.value.rule() is ADRuleKind.Transpose and info.value.op == "fft"


def test_invalid_transpose_input_message():
    with pytest.raises(ADRuleError, match="^invalid transpose AD input for bad: rank mismatch$") as info:
        linear_transpose(linear_of(BAD_TRANSPOSE))
    assert info.value.rule() is ADRuleKind.Transpose and info.value.message == "rank mismatch"


@pytest.mark.parametrize(("op", "kind"), [(NO_JVP, ADRuleKind.Jvp), (NO_TRANSPOSE, ADRuleKind.Transpose)])
def test_try_backward_surfaces_rule_errors(op, kind):
    recorder = Recorder()
    (y,) = call(recorder, op, leaf("x", 2.0))
    with pytest.raises(ADRuleError) as info:
        try_backward(y.key, y.trace, 1.0, Executor())
    assert info.value.rule() is kind


def test_transpose_rule_returning_the_wrong_number_of_cotangents_is_reported(monkeypatch):
    import scalar_ops

    monkeypatch.setitem(scalar_ops.TRANSPOSE, "mul", lambda b, cts, inputs, mask: [cts[0]])
    with pytest.raises(RuntimeError, match="transpose_rule for mul returned 1 cotangents for 2 inputs"):
        linear_transpose(linear_of(EXP))
