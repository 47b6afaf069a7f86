"""Graphs, keys and printing (computegraph's layer, ported into tidu.ad)."""

import pytest
from scalar_ops import EXP, MUL, NEG, SINCOS, Program

from tidu.ad import (
    GraphBuilder,
    OperationKey,
    OperationRole,
    PrimitiveValue,
    ResolvedView,
    TangentKey,
    ValueDef,
    ValueKey,
    ValueRef,
    linear_transpose,
    linearize,
    resolve,
    tangent_of,
)

Local, External = PrimitiveValue.Local, PrimitiveValue.External


@pytest.mark.smoke
def test_graph_prints_one_line_per_operation():
    p = Program("x", "a")
    s, c = p(SINCOS, "x")
    y = p(EXP, p(MUL, "a", s))
    assert str(p.build(y, c)) == "\n".join(
        [
            "inputs: %0='x', %1='a'",
            "%2, %3 = sincos %0",
            "%4 = mul %1 %2",
            "%5 = exp %4",
            "outputs: %5, %3",
        ]
    )


def test_linearized_graph_prints_tangent_inputs_reads_and_outputs():
    p = Program("x", "a")
    y = p(EXP, p(MUL, "a", "x"))
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    assert str(lin) == "\n".join(
        [
            "LinearizedGraph(tangent inputs: %0=d0('x'); reads: %1='a', %3=exp#0)",
            "%2 = mul %1 %0  [.L]",
            "%4 = mul %2 %3  [L.]",
            "tangent outputs: %4",
        ]
    )
    assert repr(lin) == str(lin)
    transposed = linear_transpose(lin)
    assert str(transposed).splitlines()[0].startswith("LinearizedGraph(tangent inputs: %0=ct0('x'); reads: ")
    inactive = linearize(graph, [graph.global_key(y)], ["z"])
    assert str(inactive) == "LinearizedGraph(tangent inputs: %0=d0('z'))\ntangent outputs: None"


def test_derived_keys_are_structural_across_builders():
    first, second = Program("x"), Program("x")
    a = first(NEG, first(EXP, "x"))
    b = second(NEG, second(EXP, "x"))
    ka, kb = first.build(a).global_key(a), second.build(b).global_key(b)
    assert ka == kb and hash(ka) == hash(kb) and ka is not kb
    assert ka.operation.op == NEG and ka.output_slot == 0
    assert ka.operation.inputs[0].operation.inputs == (ValueKey.Input("x"),)
    assert ka != ValueKey.Input("x") and ValueKey.Input("x") == ValueKey.Input("x")


def test_roles_and_operation_keys():
    lin = OperationRole.Linearized([True, False])
    assert lin == OperationRole.Linearized((True, False)) and lin != OperationRole.Linearized([False, True])
    assert lin.is_linearized() and not OperationRole.Primary.is_linearized()
    x = ValueKey.Input("x")
    key = OperationKey(MUL, (x, x), OperationRole.Primary)
    assert key == OperationKey(MUL, [x, x], OperationRole.Primary)
    assert key != OperationKey(MUL, (x, x), lin)  # the role is part of the identity
    assert key.operation() == MUL and key.fingerprint() == hash(key)


def test_primitive_values_and_value_refs_are_one_type():
    assert ValueRef is PrimitiveValue
    assert Local(3) == ValueRef.Local(3) and Local(3).is_local() and Local(3) != Local(4)
    ext = External(ValueKey.Input("x"))
    assert ext == ValueRef.External(ValueKey.Input("x")) and not ext.is_local()
    assert len({Local(1), Local(1), ext, External(ValueKey.Input("x"))}) == 2


def test_tangent_of_defaults_to_tangent_key():
    t = tangent_of("x", 2)
    assert isinstance(t, TangentKey) and t.of == "x" and t.pass_id == 2
    assert tangent_of(t, 3) == TangentKey(TangentKey("x", 2), 3)
    assert repr(t) == "d2('x')"


def test_builder_errors_and_dedup():
    b = GraphBuilder()
    x = b.add_input("x")
    assert b.add_input("x") == x and b.add_input(ValueKey.Input("x")) == x
    with pytest.raises(ValueError, match="mul takes 2 inputs, got 1"):
        b.add_operation(MUL, [Local(x)], OperationRole.Primary)
    with pytest.raises(ValueError, match="unknown local value %9 used by exp"):
        b.add_operation(EXP, [Local(9)], OperationRole.Primary)
    (e,) = b.add_operation(EXP, [External(ValueKey.Input("y"))], OperationRole.Primary)
    graph = b.build()
    assert [graph.global_key(i) for i in graph.inputs] == [ValueKey.Input("x"), ValueKey.Input("y")]
    assert graph.local_id(graph.global_key(e)) == e and graph.values[e].producer == (0, 0)


def test_value_resolution():
    p = Program("x")
    y = p(EXP, "x")
    graph = p.build(y)
    assert graph.resolve_value(ValueKey.Input("x")) is ValueDef.Input
    produced = graph.resolve_value(graph.global_key(y))
    assert produced.operation == graph.operations[0].key and produced.output_slot == 0
    view = ResolvedView({ValueKey.Input("e0"): (graph.operations[0].key, 0)})
    assert view.resolve_value(ValueKey.Input("e0")).operation == graph.operations[0].key
    assert resolve([graph]).resolve_value(ValueKey.Input("x")) is ValueDef.Input
