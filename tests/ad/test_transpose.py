"""``linear_transpose`` and ``try_linear_transpose_with_builder``: VJPs of scalar programs."""

import cmath
import math

import pytest
import scalar_ops
from scalar_ops import (
    ADD,
    CONJ,
    EXP,
    MUL,
    NEG,
    SIGN,
    SIN,
    SINCOS,
    CountingCtx,
    ImmediateBuilder,
    Program,
    evaluate,
    jvp,
    seed_env,
    vjp,
)

from tidu.ad import (
    PrimitiveValue,
    ValueKey,
    linear_transpose,
    linearize,
    tangent_of,
    try_linear_transpose_with_builder,
)
from tidu.ad.keys import MAX_PASS

TOL = 1e-10


@pytest.mark.smoke
def test_vjp_of_exp_a_x():
    p = Program("x", "a")
    y = p(EXP, p(MUL, "a", "x"))
    (ct_x,) = vjp(p.build(y), [y], ["x"], {"x": 1.0, "a": 2.0}, [1.0])
    assert ct_x == pytest.approx(2.0 * math.exp(2.0), abs=TOL)


@pytest.mark.smoke
def test_vjp_of_x_plus_x_times_x_accumulates_fan_out():
    p = Program("x")
    y = p(ADD, "x", p(MUL, "x", "x"))
    graph = p.build(y)
    (ct_x,) = vjp(graph, [y], ["x"], {"x": 3.0}, [2.0])
    assert ct_x == pytest.approx(2.0 * (1 + 2 * 3.0), abs=TOL)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    transposed = linear_transpose(lin)
    adds = [n for n in transposed.as_graph().operations if n.operation == ADD]
    assert adds and all(n.role.active_mask == (True, True) for n in adds)


def test_multi_variable_vjp():
    p = Program("x", "y")
    z = p(ADD, p(MUL, "x", "y"), p(SIN, "x"))
    ct_x, ct_y = vjp(p.build(z), [z], ["x", "y"], {"x": 0.5, "y": -2.0}, [1.0])
    assert ct_x == pytest.approx(-2.0 + math.cos(0.5), abs=TOL)
    assert ct_y == pytest.approx(0.5, abs=TOL)


def test_vjp_of_a_constant_output_is_none():
    p = Program("x", "a")
    y = p(EXP, "a")
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    transposed = linear_transpose(lin)
    assert transposed.tangent_inputs == []  # no active output, no seed
    assert transposed.tangent_outputs == [None]


def test_transposed_graph_interface():
    p = Program("x", "y")
    u, v = p(MUL, "x", "y"), p(EXP, "x")
    graph = p.build(u, v)
    lin = linearize(graph, [graph.global_key(u), graph.global_key(v)], ["x", "y"])
    transposed = linear_transpose(lin)
    # one seed per active tangent output, keyed from the tangent inputs with pass ids from the top
    assert [k for k, _ in transposed.tangent_inputs] == [
        tangent_of("x", MAX_PASS),
        tangent_of("y", MAX_PASS - 1),
    ]
    assert len(transposed.tangent_outputs) == len(lin.tangent_inputs)
    values = evaluate(transposed.as_graph(), {"x": 0.5, "y": 3.0, **seed_env(transposed, lin, [1.0, 2.0])})
    ct_x, ct_y = (values[t] for t in transposed.tangent_outputs)
    assert ct_x == pytest.approx(3.0 + 2.0 * math.exp(0.5), abs=TOL)
    assert ct_y == pytest.approx(0.5, abs=TOL)


def test_sincos_vjp_and_single_slot_seed():
    p = Program("x")
    s, c = p(SINCOS, "x")
    graph = p.build(s, c)
    x = 0.3
    (ct,) = vjp(graph, [s, c], ["x"], {"x": x}, [1.0, 2.0])
    assert ct == pytest.approx(math.cos(x) - 2.0 * math.sin(x), abs=TOL)
    (ct_c,) = vjp(graph, [c], ["x"], {"x": x}, [1.0])
    assert ct_c == pytest.approx(-math.sin(x), abs=TOL)


def test_sincos_adjoint():
    p = Program("x")
    s, c = p(SINCOS, "x")
    graph = p.build(s, c)
    x, dx, cts = 1.1, 0.7, (0.25, -1.5)
    ds, dc = jvp(graph, [s, c], {"x": x}, {"x": dx})
    (ct_x,) = vjp(graph, [s, c], ["x"], {"x": x}, list(cts))
    assert cts[0] * ds + cts[1] * dc == pytest.approx(ct_x * dx, abs=TOL)


def test_duplicate_outputs_sum_their_seeds():
    p = Program("x")
    y = p(EXP, "x")
    (ct,) = vjp(p.build(y), [y, y], ["x"], {"x": 0.0}, [1.0, 2.0])
    assert ct == pytest.approx(3.0, abs=TOL)


def test_identity_transposes_to_the_seed():
    p = Program("x")
    graph = p.build(p.ids["x"])
    assert vjp(graph, [p.ids["x"]], ["x"], {"x": 4.0}, [5.0]) == [5.0]


def test_summing_seeds_without_any_operation_is_reported():
    p = Program("x")
    graph = p.build(p.ids["x"])
    lin = linearize(graph, [ValueKey.Input("x")] * 2, ["x"])
    with pytest.raises(RuntimeError, match="no operation to take add"):
        linear_transpose(lin)


def test_transpose_rules_get_every_input_as_external_and_the_active_mask(monkeypatch):
    p = Program("x", "a")
    y = p(MUL, "a", "x")
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    (node,) = lin.as_graph().operations
    assert node.role.active_mask == (False, True)
    seen = []
    rule = scalar_ops.TRANSPOSE["mul"]

    def spy(b, cts, inputs, mask):
        seen.append((list(inputs), mask))
        return rule(b, cts, inputs, mask)

    monkeypatch.setitem(scalar_ops.TRANSPOSE, "mul", spy)
    builder = ImmediateBuilder({ValueKey.Input("a"): 4.0})
    (out,) = try_linear_transpose_with_builder(lin, builder, [builder.push_value(1.5)])
    assert builder.locals[out] == 6.0
    ((inputs, mask),) = seen
    assert mask == (False, True)
    dx_key = lin.as_graph().global_key(lin.tangent_inputs[0][1])
    assert inputs == [PrimitiveValue.External(ValueKey.Input("a")), PrimitiveValue.External(dx_key)]


def test_with_builder_executes_immediately_and_sums_fan_out():
    p = Program("x")
    y = p(ADD, "x", "x")
    graph = p.build(y)
    lin = linearize(graph, [graph.global_key(y)], ["x"])
    builder = ImmediateBuilder({ValueKey.Input("x"): 3.0})
    (out,) = try_linear_transpose_with_builder(lin, builder, [builder.push_value(1.0)])
    assert builder.locals[out] == 2.0
    assert builder.ops == [ADD]


def test_with_builder_seeds_align_with_tangent_outputs():
    # tidu-rs aligns seeds with tangent_outputs; a seed for an inactive output is ignored
    p = Program("x")
    s = p(SIGN, "x")
    y = p(NEG, "x")
    graph = p.build(s, y)
    lin = linearize(graph, [graph.global_key(s), graph.global_key(y)], ["x"])
    assert lin.tangent_outputs[0] is None
    for seeds in ([7.0, 2.0], [2.0]):  # aligned with all outputs, or one per active output
        builder = ImmediateBuilder({})
        ids = [builder.push_value(v) for v in seeds]
        (out,) = try_linear_transpose_with_builder(lin, builder, ids)
        assert builder.locals[out] == -2.0
    with pytest.raises(ValueError, match="expected 2 cotangent seeds"):
        try_linear_transpose_with_builder(lin, ImmediateBuilder({}), [0, 0, 0])


def test_ctx_reaches_transpose_rules():
    p = Program("x", "a")
    y = p(NEG, p(MUL, "a", "x"))
    graph = p.build(y)
    ctx = CountingCtx()
    vjp(graph, [y], ["x"], {"x": 1.0, "a": 2.0}, [1.0], ctx=ctx)
    assert ctx.count("transpose", "neg") == 1 and ctx.count("transpose", "mul") == 1


# ---- complex numbers: JAX convention, transposes w.r.t. Re(conj(a) * b) ---------------------------------


def test_conj_is_its_own_transpose():
    p = Program("z")
    w = p(CONJ, "z")
    graph = p.build(w)
    z, dz, ct = 1 + 2j, 0.5 - 1j, -0.25 + 3j
    (dw,) = jvp(graph, [w], {"z": z}, {"z": dz})
    assert dw == dz.conjugate()
    (ct_z,) = vjp(graph, [w], ["z"], {"z": z}, [ct])
    assert ct_z == ct.conjugate()
    assert (ct.conjugate() * dw).real == pytest.approx((ct_z.conjugate() * dz).real, abs=TOL)


def test_constant_times_z_transposes_with_the_conjugated_constant():
    p = Program("z", "c")
    w = p(MUL, "c", "z")
    (ct_z,) = vjp(p.build(w), [w], ["z"], {"z": 1j, "c": 2 - 3j}, [1.0])
    assert ct_z == 2 + 3j


def test_abs_squared_gives_two_z():
    p = Program("z")
    y = p(MUL, "z", p(CONJ, "z"))  # |z|^2, a real loss: the cotangent is 2 dL/dconj(z) = 2 z
    z = 1.5 - 0.5j
    (ct_z,) = vjp(p.build(y), [y], ["z"], {"z": z}, [1.0])
    assert ct_z == pytest.approx(2 * z, abs=TOL)


def test_complex_exp_vjp():
    p = Program("z")
    y = p(EXP, "z")
    z = 0.3 + 0.4j
    (ct_z,) = vjp(p.build(y), [y], ["z"], {"z": z}, [1.0])
    assert ct_z == pytest.approx(cmath.exp(z).conjugate(), abs=TOL)
