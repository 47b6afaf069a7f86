"""Higher order by repeated transforms with a fresh pass id each time (tidu-rs higher-order guide)."""

import math

import pytest
from scalar_ops import CONJ, EXP, MUL, SIN, Program, eval_key, evaluate, jvp, seed_env

from tidu.ad import linear_transpose, linearize, tangent_of

TOL = 1e-10


def derivative_key(graph, key, order):
    """The key of d^order f / dx^order (times the tangent directions), by repeated linearize."""
    for pass_id in range(order):
        lin = linearize(graph, [key], ["x"], pass_id)
        graph = lin.as_graph()
        key = graph.global_key(lin.tangent_outputs[0])
    return graph, key


def unit_tangents(order, x):
    return {"x": x, **{tangent_of("x", p): 1.0 for p in range(order)}}


@pytest.mark.smoke
def test_forward_over_forward_x_squared():
    p = Program("x")
    y = p(MUL, "x", "x")
    g = p.build(y)
    graph, key = derivative_key(g, g.global_key(y), 2)
    assert evaluate(graph, unit_tangents(2, 5.0))[graph.local_id(key)] == 2.0


@pytest.mark.parametrize(("power", "expected"), [(3, 6.0), (4, 24.0)])
def test_nth_derivative_of_x_to_the_n(power, expected):
    p = Program("x")
    y = p.ids["x"]
    for _ in range(power - 1):
        y = p(MUL, y, "x")
    g = p.build(y)
    graph, key = derivative_key(g, g.global_key(y), power)
    assert evaluate(graph, unit_tangents(power, 1.7))[graph.local_id(key)] == pytest.approx(
        expected, abs=1e-9
    )
    # one order fewer: d^(n-1) x^n = n! x
    graph, key = derivative_key(g, g.global_key(y), power - 1)
    assert eval_key(key, unit_tangents(power - 1, 1.7)) == pytest.approx(expected * 1.7, abs=1e-9)


def test_mixed_directions_at_second_order():
    p = Program("x")
    y = p(SIN, "x")
    g = p.build(y)
    graph, key = derivative_key(g, g.global_key(y), 3)
    env = {"x": 0.4, tangent_of("x", 0): 2.0, tangent_of("x", 1): 3.0, tangent_of("x", 2): 0.5}
    assert eval_key(key, env) == pytest.approx(-math.cos(0.4) * 2.0 * 3.0 * 0.5, abs=TOL)


def test_forward_over_reverse_exp_a_x():
    p = Program("x", "a")
    y = p(EXP, p(MUL, "a", "x"))
    g = p.build(y)
    lin = linearize(g, [g.global_key(y)], ["x"], 0)
    transposed = linear_transpose(lin)
    tg = transposed.as_graph()
    lin2 = linearize(tg, [tg.global_key(transposed.tangent_outputs[0])], ["x"], 1)
    env = {"x": 1.0, "a": 2.0, tangent_of("x", 1): 1.0, **seed_env(transposed, lin, [1.0])}
    hessian = evaluate(lin2.as_graph(), env)[lin2.tangent_outputs[0]]
    assert hessian == pytest.approx(4.0 * math.exp(2.0), abs=TOL)  # a^2 e^(a x)


def test_reverse_of_reverse_is_forward():
    p = Program("x", "y")
    z = p(MUL, p(SIN, "x"), p(EXP, "y"))
    g = p.build(z)
    primals = {"x": 0.3, "y": -0.2}
    lin = linearize(g, [g.global_key(z)], ["x", "y"])
    once = linear_transpose(lin)
    twice = linear_transpose(once)
    assert len(twice.tangent_outputs) == len(once.tangent_inputs) == 1
    env = {**primals, **seed_env(twice, once, [0.5, -2.0])}
    (out,) = (evaluate(twice.as_graph(), env)[t] for t in twice.tangent_outputs)
    assert out == pytest.approx(jvp(g, [z], primals, {"x": 0.5, "y": -2.0})[0], abs=TOL)


def test_forward_over_reverse_complex_z_squared():
    p = Program("z")
    y = p(MUL, "z", "z")
    g = p.build(y)
    lin = linearize(g, [g.global_key(y)], ["z"], 0)
    transposed = linear_transpose(lin)  # ct -> 2 conj(z) ct
    tg = transposed.as_graph()
    lin2 = linearize(tg, [tg.global_key(transposed.tangent_outputs[0])], ["z"], 1)
    env = {"z": 1 + 1j, tangent_of("z", 1): 1j, **seed_env(transposed, lin, [1.0])}
    assert evaluate(lin2.as_graph(), env)[lin2.tangent_outputs[0]] == pytest.approx(-2j, abs=TOL)


def test_second_derivative_through_conj_is_real_linear():
    p = Program("z")
    y = p(MUL, p(CONJ, "z"), "z")  # |z|^2: second derivative 2 Re(conj(d0) d1)
    g = p.build(y)
    env = {"z": 0.5j, tangent_of("z", 0): 1 + 2j, tangent_of("z", 1): 3 - 1j}
    lin = linearize(g, [g.global_key(y)], ["z"], 0)
    lg = lin.as_graph()
    lin2 = linearize(lg, [lg.global_key(lin.tangent_outputs[0])], ["z"], 1)
    value = evaluate(lin2.as_graph(), env)[lin2.tangent_outputs[0]]
    assert value == pytest.approx(2 * ((1 + 2j).conjugate() * (3 - 1j)).real, abs=TOL)
