"""Recording eager calls: ``Recorder``, ``RecordedGraph``, traces (tidu-rs eager_record_tests)."""

import gc
import weakref

import pytest
from scalar_ops import ADD, EXP, MUL, NEG, SINCOS, Executor, Program, call, leaf

from tidu.ad import GraphBuilder, OperationRole, Primitive, PrimitiveValue, ValueKey
from tidu.eager import (
    CountingKeySource,
    EagerInput,
    EagerOutput,
    EagerRecordError,
    RecordedGraph,
    Recorder,
    Trace,
    record_primitive,
    topological_traces,
    try_backward,
)

X = ValueKey.Input("x")


@pytest.mark.smoke
def test_no_trace_unless_an_input_requires_grad():
    recorder = Recorder()
    (y,) = call(recorder, MUL, leaf("x", 2.0, False), leaf("y", 3.0, False))
    assert y.trace is None and not y.requires_grad
    assert recorder.live_nodes() == [] and str(recorder) == ""


def test_an_inactive_input_is_an_edge_that_is_skipped():
    recorder = Recorder()
    (y,) = call(recorder, MUL, leaf("x", 2.0), leaf("c", 3.0, False))
    assert y.requires_grad
    edges = y.trace.node.input_edges
    assert [(key, rg) for _, key, rg in edges] == [(X, True), (ValueKey.Input("c"), False)]
    assert set(try_backward(y.key, y.trace, 1.0, Executor())) == {y.key, X}


def test_n_ary_edges_point_at_the_producers():
    recorder = Recorder()
    x = leaf("x", 0.5)
    (u,) = call(recorder, EXP, x)
    (v,) = call(recorder, NEG, x)
    (w,) = call(recorder, ADD, u, v)
    node = w.trace.node
    assert [(trace, key) for trace, key, _ in node.input_edges] == [(u.trace, u.key), (v.trace, v.key)]
    assert w.trace.input_traces() == [u.trace, v.trace]
    order = topological_traces(w.trace)
    assert order[-1] == w.trace and set(order[:2]) == {u.trace, v.trace} and len(order) == 3


def test_multi_output_call_shares_one_node_with_fresh_keys():
    recorder = Recorder(CountingKeySource(10))
    s, c = recorder.record_graph(RecordedGraph.from_primitive(SINCOS, [X]), [leaf("x", 1.0)], [0.8, 0.5])
    assert isinstance(s, EagerOutput) and (s.output_slot, c.output_slot) == (0, 1)
    assert s.trace == c.trace and hash(s.trace) == hash(c.trace)
    assert (s.key, c.key) == (ValueKey.Input(10), ValueKey.Input(11))
    assert s.trace.node.primal_out_keys == [s.key, c.key]


def test_saved_values_are_the_inputs_and_the_retained_values():
    recorder = Recorder()
    x = leaf("x", 2.0)
    (y,) = record_primitive(recorder, EXP, [x], [7.0])
    graph_out = y.trace.node.computation.output_keys()[0]
    assert y.trace.saved_values() == {X: 2.0, graph_out: 7.0}
    (z,) = record_primitive(recorder, EXP, [x], [7.0], retain_outputs=False)
    assert z.trace.saved_values() == {X: 2.0}
    z.trace.release()
    assert z.trace.is_released() and not y.trace.is_released()


def test_key_sources():
    from eager_reverse_mode import ExampleKeySource, ScalarKey

    recorder = Recorder(ExampleKeySource())
    assert recorder.fresh_input_keys(2) == [ScalarKey.User("e0"), ScalarKey.User("e1")]
    assert recorder.key_source_mut() is recorder.key_source is recorder.into_key_source()
    (y,) = call(recorder, NEG, leaf("x", 1.0))
    assert y.key == ValueKey.Input(ScalarKey.User("e2"))
    assert Recorder().fresh_input_keys(3) == [0, 1, 2]


def test_recorder_prints_live_nodes_and_forgets_dead_ones():
    recorder = Recorder()
    x = leaf("x", 3.0)
    (u,) = call(recorder, MUL, x, x)
    (v,) = call(recorder, EXP, u)
    assert str(recorder) == "%0 = mul 'x' 'x'\n%1 = exp %0"
    del v
    gc.collect()
    assert str(recorder) == "%0 = mul 'x' 'x'"
    del u
    gc.collect()
    assert recorder.live_nodes() == [] and str(recorder) == ""


def test_the_recorder_holds_no_strong_reference():
    recorder = Recorder()
    (u,) = call(recorder, EXP, leaf("x", 0.0))
    node = weakref.ref(u.trace.node)
    del u
    gc.collect()
    assert node() is None
    assert recorder.live_nodes() == []


def test_a_node_lives_while_a_later_node_needs_it():
    recorder = Recorder()
    (u,) = call(recorder, EXP, leaf("x", 0.0))
    (v,) = call(recorder, NEG, u)
    del u
    gc.collect()
    assert len(recorder.live_nodes()) == 2
    assert try_backward(v.key, v.trace, 1.0, Executor())[X] == -1.0


def test_trace_repr_names_the_computation():
    (y,) = call(Recorder(), MUL, leaf("x", 1.0), leaf("y", 2.0))
    assert repr(y.trace) == "<Trace mul>" and y.trace.name() == "mul"
    assert isinstance(y.trace, Trace)


# ---- EagerRecordError: tidu-rs 0.2.0's messages ------------------------------------------------------------


def one_op_graph():
    p = Program("x", "y")
    z = p(MUL, "x", "y")
    graph = p.build(z)
    return graph, graph.global_key(z)


def test_record_error_is_a_runtime_error():
    assert issubclass(EagerRecordError, RuntimeError)


@pytest.mark.parametrize(
    ("inputs", "outputs", "message"),
    [
        (["x"], None, "input_keys expected 2 entries, got 1"),
        (["y", "x"], None, "input_keys does not match graph metadata at slot 0"),
        (["x", "y"], [], "output_keys expected 1 entries, got 0"),
        (["x", "y"], ["x"], "output_keys does not match graph metadata at slot 0"),
    ],
)
def test_recorded_graph_validates_its_keys(inputs, outputs, message):
    graph, out = one_op_graph()
    output_keys = [out] if outputs is None else [ValueKey.Input(k) for k in outputs]
    with pytest.raises(EagerRecordError, match=f"^{message}$"):
        RecordedGraph(graph, [ValueKey.Input(k) for k in inputs], output_keys)


def test_recorded_graph_accepts_a_repeated_input_key():
    recorded = RecordedGraph.from_primitive(MUL, [X, X])
    assert recorded.input_keys() == [X, X] and len(recorded.as_graph().inputs) == 1


def test_from_primitive_checks_the_arity():
    with pytest.raises(EagerRecordError, match="^input_keys expected 2 entries, got 1$"):
        RecordedGraph.from_primitive(MUL, [X])


def test_record_graph_validates_its_arguments():
    recorded = RecordedGraph.from_primitive(MUL, [X, ValueKey.Input("y")])
    recorder = Recorder()
    x, y = leaf("x", 1.0), leaf("y", 2.0)
    with pytest.raises(EagerRecordError, match="^inputs expected 2 entries, got 1$"):
        recorder.record_graph(recorded, [x], [2.0])
    with pytest.raises(EagerRecordError, match="^outputs expected 1 entries, got 2$"):
        recorder.record_graph(recorded, [x, y], [2.0, 3.0])
    with pytest.raises(EagerRecordError, match="^inputs does not match graph metadata at slot 1$"):
        recorder.record_graph(recorded, [x, EagerInput(ValueKey.Input("z"), None, True, 2.0)], [2.0])
    assert recorder.live_nodes() == []


def test_record_graph_limits_outputs_to_256():
    class Split(Primitive):
        name = "split"

        def __eq__(self, other):
            return isinstance(other, Split)

        def __hash__(self):
            return hash("split")

        def input_count(self):
            return 1

        def output_count(self):
            return 257

    b = GraphBuilder()
    outs = b.add_operation(Split(), [PrimitiveValue.Local(b.add_input("x"))], OperationRole.Primary)
    b.set_outputs(outs)
    graph = b.build()
    recorded = RecordedGraph(graph, [X], [graph.global_key(o) for o in outs])
    with pytest.raises(EagerRecordError, match="^eager recording supports at most 256 outputs, got 257$"):
        Recorder().record_graph(recorded, [leaf("x", 1.0)], [0.0] * 257)
