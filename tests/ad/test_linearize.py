"""``linearize``: JVP graphs of scalar programs (tidu-rs scalar_ad / robustness / edge_case tests)."""

import math

import pytest
from scalar_ops import (
    ADD,
    COS,
    EXP,
    MUL,
    NEG,
    SIGN,
    SIN,
    SINCOS,
    CountingCtx,
    Program,
    evaluate,
    jvp,
)

from tidu.ad import (
    GraphBuilder,
    OperationRole,
    Primitive,
    PrimitiveValue,
    ResolvedView,
    ValueKey,
    linearize,
    tangent_of,
)

TOL = 1e-10


@pytest.mark.smoke
def test_jvp_of_x_plus_x():
    p = Program("x")
    y = p(ADD, "x", "x")
    assert jvp(p.build(y), [y], {"x": 3.0}, {"x": 1.5}) == [3.0]


def test_jvp_of_x_times_y():
    p = Program("x", "y")
    z = p(MUL, "x", "y")
    (dz,) = jvp(p.build(z), [z], {"x": 2.0, "y": 5.0}, {"x": 0.5, "y": -1.0})
    assert dz == pytest.approx(5.0 * 0.5 + 2.0 * -1.0, abs=TOL)


@pytest.mark.smoke
def test_jvp_of_exp_a_x():
    p = Program("x", "a")
    y = p(EXP, p(MUL, "a", "x"))
    (dy,) = jvp(p.build(y), [y], {"x": 1.0, "a": 2.0}, {"x": 1.0})
    assert dy == pytest.approx(2.0 * math.exp(2.0), abs=TOL)


def test_jvp_with_respect_to_every_input_sums_the_directions():
    p = Program("x", "a")
    y = p(EXP, p(MUL, "a", "x"))
    (dy,) = jvp(p.build(y), [y], {"x": 1.0, "a": 2.0}, {"x": 0.5, "a": 0.25})
    assert dy == pytest.approx(math.exp(2.0) * (2.0 * 0.5 + 1.0 * 0.25), abs=TOL)


def test_inactive_tangents_are_none_and_their_rules_are_not_called():
    p = Program("x", "a")
    const = p(EXP, p(SIN, "a"))  # depends on a only
    y = p(MUL, "x", "x")
    graph = p.build(const, y)
    ctx = CountingCtx()
    lin = linearize(graph, [graph.global_key(const), graph.global_key(y)], ["x"], 0, ctx)
    assert lin.tangent_outputs[0] is None
    assert lin.tangent_outputs[1] is not None
    assert ctx.count("jvp", "exp") == 0 and ctx.count("jvp", "sin") == 0
    assert ctx.count("jvp", "mul") == 1
    assert lin.as_graph().outputs == [lin.tangent_outputs[1]]  # graph outputs: active tangents only


def test_no_active_input_gives_an_empty_linear_graph():
    p = Program("x", "a")
    y = p(EXP, "a")
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    assert lin.tangent_outputs == [None]
    assert lin.as_graph().operations == []


def test_jvp_of_identity_is_the_tangent_input():
    p = Program("x")
    graph = p.build(p.ids["x"])
    lin = linearize(graph, [ValueKey.Input("x")], ["x"])
    ((key, tid),) = lin.tangent_inputs
    assert key == "x" and lin.tangent_outputs == [tid]
    assert lin.as_graph().operations == []


def test_diamond_shared_subexpression_is_linearized_once():
    p = Program("x")
    u = p(EXP, "x")
    y = p(MUL, p(SIN, u), p(COS, u))  # sin(e^x) cos(e^x) = sin(2 e^x) / 2
    graph = p.build(y)
    ctx = CountingCtx()
    x = 0.3
    (dy,) = jvp(graph, [y], {"x": x}, {"x": 1.0}, ctx=ctx)
    assert dy == pytest.approx(math.exp(x) * math.cos(2 * math.exp(x)), abs=TOL)
    assert ctx.count("jvp", "exp") == 1
    assert ctx.count("jvp") == 4  # exp, sin, cos, mul: each operation once


def test_outputs_sharing_operations_linearize_each_operation_once():
    p = Program("x")
    u = p(EXP, "x")
    v, w = p(SIN, u), p(NEG, u)
    graph = p.build(u, v, w)
    ctx = CountingCtx()
    du, dv, dw = jvp(graph, [u, v, w, u], {"x": 0.5}, {"x": 2.0}, ctx=ctx)[:3]
    e = math.exp(0.5)
    assert (du, dv, dw) == pytest.approx((2 * e, 2 * e * math.cos(e), -2 * e), abs=TOL)
    assert [ctx.count("jvp", n) for n in ("exp", "sin", "neg")] == [1, 1, 1]


def test_identical_applications_are_one_operation():
    p = Program("x")
    a, b = p(EXP, "x"), p(EXP, "x")
    assert a == b
    assert len(p.build(a).operations) == 1


def test_multi_output_sincos_jvp():
    p = Program("x")
    s, c = p(SINCOS, "x")
    graph = p.build(s, c)
    x, dx = 0.7, 1.5
    ds, dc = jvp(graph, [s, c], {"x": x}, {"x": dx})
    assert ds == pytest.approx(math.cos(x) * dx, abs=TOL)
    assert dc == pytest.approx(-math.sin(x) * dx, abs=TOL)
    lin = linearize(graph, [graph.global_key(c)], ["x"])
    assert len(lin.tangent_outputs) == 1  # only the requested slot is an output


def test_jvp_rule_with_a_primal_subcomputation():
    p = Program("x")
    y = p(SIN, "x")  # d sin = cos(x) dx: the rule computes cos(x) as Primary work
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    roles = [node.role for node in lin.as_graph().operations]
    assert OperationRole.Primary in roles
    assert jvp(graph, [y], {"x": 0.4}, {"x": 2.0}) == [pytest.approx(2.0 * math.cos(0.4), abs=TOL)]


def test_a_rule_may_leave_an_active_input_inactive():
    p = Program("x")
    s = p(SIGN, "x")
    y = p(MUL, s, "x")
    graph = p.build(s, y)
    ds, dy = jvp(graph, [s, y], {"x": -2.0}, {"x": 1.0})
    assert ds is None and dy == -1.0


def test_deep_chain_of_ten_sines():
    p = Program("x")
    v = p.ids["x"]
    for _ in range(10):
        v = p(SIN, v)
    x, expected, value = 0.9, 1.0, 0.9
    for _ in range(10):
        expected *= math.cos(value)
        value = math.sin(value)
    assert jvp(p.build(v), [v], {"x": x}, {"x": 1.0}) == [pytest.approx(expected, abs=TOL)]


def test_tangent_inputs_are_keyed_by_pass_id():
    p = Program("x", "y")
    z = p(MUL, "x", "y")
    graph = p.build(z)
    lin = linearize(graph, [graph.global_key(z)], ["y", "x", "y"], pass_id=7)
    assert [k for k, _ in lin.tangent_inputs] == ["y", "x"]  # one per distinct key, in order
    g = lin.as_graph()
    assert [g.global_key(i) for _, i in lin.tangent_inputs] == [
        ValueKey.Input(tangent_of("y", 7)),
        ValueKey.Input(tangent_of("x", 7)),
    ]
    assert tangent_of("x", 7) != tangent_of("x", 8) and tangent_of("x", 7) != tangent_of("y", 7)


def test_tangent_keys_use_the_keys_own_tangent_of():
    from eager_reverse_mode import ScalarKey

    x = ScalarKey.User("x")
    b = GraphBuilder()
    xi = b.add_input(x)
    (y,) = b.add_operation(MUL, [PrimitiveValue.Local(xi)] * 2, OperationRole.Primary)
    graph = b.build()
    lin = linearize(graph, [graph.global_key(y)], [x], 3)
    ((_, tid),) = lin.tangent_inputs
    assert lin.as_graph().global_key(tid) == ValueKey.Input(ScalarKey.Tangent(x, 3))


def test_aliases_give_a_value_the_tangent_of_another():
    p = Program("x", "x_copy")  # x_copy: a checkpointed copy of x
    y = p(MUL, "x", "x_copy")
    graph = p.build(y)
    aliases = {ValueKey.Input("x_copy"): ValueKey.Input("x")}
    lin = linearize(graph, [graph.global_key(y)], ["x"], 0, None, aliases)
    values = evaluate(lin.as_graph(), {"x": 3.0, "x_copy": 3.0, tangent_of("x", 0): 1.0})
    assert values[lin.tangent_outputs[0]] == 6.0


def test_jvp_rule_returning_the_wrong_number_of_tangents_is_reported():
    class TwoTangents(Primitive):
        name = "two"

        def __eq__(self, other):
            return isinstance(other, TwoTangents)

        def __hash__(self):
            return hash("two")

        def input_count(self):
            return 1

        def output_count(self):
            return 1

        def jvp_rule(self, builder, primal_inputs, primal_outputs, tangent_inputs, ctx):
            return [tangent_inputs[0], tangent_inputs[0]]

    p = Program("x")
    y = p(TwoTangents(), "x")
    graph = p.build(y)
    with pytest.raises(RuntimeError, match="jvp_rule for two returned 2 tangents for 1 outputs"):
        linearize(graph, [graph.global_key(y)], ["x"])


def test_a_view_may_name_produced_values_by_input_keys():
    # eager values are leaves by key; a ResolvedView maps such a key to the operation that made it
    p = Program("x")
    y = p(EXP, "x")
    graph = p.build(y)
    view = ResolvedView({ValueKey.Input("e0"): (graph.operations[0].key, 0)})
    lin = linearize(view, [ValueKey.Input("e0")], ["x"])
    (tid,) = lin.tangent_outputs
    assert tid is not None
    values = evaluate(lin.as_graph(), {"x": 0.5, tangent_of("x", 0): 2.0})
    assert values[tid] == pytest.approx(2.0 * math.exp(0.5), abs=TOL)
