"""``tidu.eager.try_backward`` over recorded traces (tidu-rs eager_backward_tests)."""

import math

import pytest
from scalar_ops import ADD, EXP, MUL, NEG, SIGN, SINCOS, Executor, Program, call, leaf

from tidu.ad import ValueKey
from tidu.eager import FREED_MESSAGE, EagerInput, RecordedGraph, Recorder, backward, try_backward

X = ValueKey.Input("x")
Y = ValueKey.Input("y")


@pytest.mark.smoke
def test_x_times_x_accumulates_both_uses():
    recorder = Recorder()
    x = leaf("x", 3.0)
    (y,) = call(recorder, MUL, x, x)
    executor = Executor()
    grads = try_backward(y.key, y.trace, 1.0, executor)
    assert grads[X] == 6.0
    assert executor.additions == 0  # one node: linearization already summed the two uses


def test_dependency_order():
    recorder = Recorder()
    a, b = leaf("a", 1.0), leaf("b", 2.0)
    (s,) = call(recorder, ADD, a, b)
    (y,) = call(recorder, NEG, s)
    grads = try_backward(y.key, y.trace, 1.0, Executor())
    assert grads[ValueKey.Input("a")] == -1.0 and grads[ValueKey.Input("b")] == -1.0
    assert grads[s.key] == -1.0  # intermediate keys are returned too


def test_fan_out_across_calls_uses_add_operands():
    recorder = Recorder()
    x, y = leaf("x", 3.0), leaf("y", 4.0)
    (xy,) = call(recorder, MUL, x, y)
    (f,) = call(recorder, ADD, xy, x)
    executor = Executor()
    grads = try_backward(f.key, f.trace, 1.0, executor)
    assert (grads[X], grads[Y]) == (5.0, 3.0)
    assert executor.additions == 1


def test_shared_node_is_processed_once():
    recorder = Recorder()
    x = leaf("x", 0.5)
    (u,) = call(recorder, EXP, x)
    (v,) = call(recorder, MUL, u, u)  # diamond: e^x feeds both inputs
    (w,) = call(recorder, ADD, v, u)
    executor = Executor()
    grads = try_backward(w.key, w.trace, 1.0, executor)
    assert grads[X] == pytest.approx(2 * math.exp(1.0) + math.exp(0.5), abs=1e-12)
    assert len(executor.linear_graphs) == 3


def test_multi_operation_graph_recorded_as_one_node():
    p = Program("x", "y")
    z = p(ADD, p(MUL, "x", "y"), "y")
    graph = p.build(z)
    recorded = RecordedGraph(graph, [X, Y], [graph.global_key(z)])
    recorder = Recorder()
    (out,) = recorder.record_graph(recorded, [leaf("x", 2.0), leaf("y", 3.0)], [9.0])
    assert len(recorder.live_nodes()) == 1
    grads = try_backward(out.key, out.trace, 1.0, Executor())
    assert (grads[X], grads[Y]) == (3.0, 3.0)


def test_multi_operation_node_reads_retained_values():
    p = Program("x", "y")
    z = p(EXP, p(MUL, "x", "y"))
    graph = p.build(z)
    recorded = RecordedGraph(graph, [X, Y], [graph.global_key(z)])
    value = math.exp(0.5 * 0.8)
    (out,) = Recorder().record_graph(
        recorded, [leaf("x", 0.5), leaf("y", 0.8)], [value], {graph.global_key(z): value}
    )
    grads = try_backward(out.key, out.trace, 2.0, Executor())
    assert grads[X] == pytest.approx(2.0 * 0.8 * value, abs=1e-12)


def test_only_seeded_multi_output_slots_are_linearized():
    recorder = Recorder()
    x = leaf("x", 0.4)
    s, c = call(recorder, SINCOS, x)
    (y,) = call(recorder, NEG, c)  # only the cos slot is used
    executor = Executor()
    grads = try_backward(y.key, y.trace, 1.0, executor)
    assert grads[X] == pytest.approx(math.sin(0.4), abs=1e-12)
    sincos_linear = executor.linear_graphs[-1]
    assert len(sincos_linear.tangent_outputs) == 1


def test_both_slots_of_a_multi_output_node():
    recorder = Recorder()
    x = leaf("x", 0.4)
    s, c = call(recorder, SINCOS, x)
    (y,) = call(recorder, MUL, s, c)
    executor = Executor()
    grads = try_backward(y.key, y.trace, 1.0, executor)
    assert grads[X] == pytest.approx(math.cos(0.8), abs=1e-12)
    assert len(executor.linear_graphs[-1].tangent_outputs) == 2


def test_a_seed_on_a_non_zero_slot():
    recorder = Recorder()
    s, c = call(recorder, SINCOS, leaf("x", 1.0))
    grads = try_backward(c.key, c.trace, 3.0, Executor())
    assert grads[X] == pytest.approx(-3.0 * math.sin(1.0), abs=1e-12)


def test_an_output_with_an_inactive_tangent_takes_a_cotangent():
    # sign(x) * x: the product sends a cotangent to sign's output, whose tangent is None
    recorder = Recorder()
    x = leaf("x", -2.0)
    (s,) = call(recorder, SIGN, x)
    (y,) = call(recorder, MUL, s, x)
    assert try_backward(y.key, y.trace, 1.0, Executor())[X] == -1.0


def test_inputs_that_do_not_require_grad_get_no_cotangent():
    recorder = Recorder()
    x, c = leaf("x", 2.0), leaf("c", 5.0, requires_grad=False)
    (y,) = call(recorder, MUL, x, c)
    grads = try_backward(y.key, y.trace, 1.0, Executor())
    assert grads[X] == 5.0 and ValueKey.Input("c") not in grads


def test_wanted_returns_only_those_keys():
    recorder = Recorder()
    x, y = leaf("x", 3.0), leaf("y", 4.0)
    (xy,) = call(recorder, MUL, x, y)
    (f,) = call(recorder, ADD, xy, x)
    everything = try_backward(f.key, f.trace, 1.0, Executor())
    assert {xy.key, f.key, X, Y} <= set(everything)
    only = try_backward(f.key, f.trace, 1.0, Executor(), wanted={X})
    assert only == {X: everything[X]}


def test_no_trace_returns_the_seed():
    assert try_backward(X, None, 2.5, Executor()) == {X: 2.5}


def test_backward_through_a_released_trace_raises():
    recorder = Recorder()
    x = leaf("x", 3.0)
    (u,) = call(recorder, EXP, x)
    (y,) = call(recorder, NEG, u)
    u.trace.release()
    assert u.trace.is_released()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time") as info:
        try_backward(y.key, y.trace, 1.0, Executor())
    assert str(info.value) == FREED_MESSAGE
    with pytest.raises(RuntimeError, match="second time"):
        u.trace.saved_values()


def test_backward_is_repeatable_and_backward_is_the_alias():
    recorder = Recorder()
    x = leaf("x", 1.5)
    (y,) = call(recorder, MUL, x, x)
    assert backward is try_backward
    assert backward(y.key, y.trace, 1.0, Executor()) == try_backward(y.key, y.trace, 1.0, Executor())


def test_missing_concrete_values_are_reported():
    p = Program("x", "y")
    z = p(EXP, p(MUL, "x", "y"))
    graph = p.build(z)
    recorded = RecordedGraph(graph, [X, Y], [graph.global_key(z)])
    (out,) = Recorder().record_graph(recorded, [leaf("x", 0.5), leaf("y", 0.8)], [1.0])  # nothing retained
    with pytest.raises(RuntimeError, match="missing concrete value for graph input"):
        try_backward(out.key, out.trace, 1.0, Executor())


def test_eager_values_chain_through_eager_inputs():
    recorder = Recorder()
    v = leaf("x", -3.0)
    for _ in range(4):
        (v,) = call(recorder, EXP, v)
        assert isinstance(v, EagerInput) and v.requires_grad
    value, expected = -3.0, 1.0
    for _ in range(4):
        value = math.exp(value)
        expected *= value
    assert try_backward(v.key, v.trace, 1.0, Executor())[X] == pytest.approx(expected, rel=1e-12)
