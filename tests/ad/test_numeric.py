"""AD against a 5-point finite-difference stencil (tidu-rs tests/common/numeric.rs: h = 1e-3)."""

import math

import pytest
from scalar_ops import ADD, COS, EXP, MUL, NEG, SIN, SINCOS, Program, eval_key, jvp, vjp

H = 1e-3
NUM_TOL = 1e-5


def stencil(f, x, h=H):
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


def build_sin_exp(p):
    return p(ADD, p(MUL, p(SIN, "x"), p(EXP, p(MUL, "x", "x"))), p(COS, "x"))


def build_sincos_product(p):
    s, c = p(SINCOS, "x")
    return p(MUL, s, p(NEG, c))


def build_nested(p):
    return p(EXP, p(SIN, p(MUL, p(COS, "x"), p(ADD, "x", "x"))))


@pytest.mark.parametrize("build", [build_sin_exp, build_sincos_product, build_nested])
@pytest.mark.parametrize("x", [-0.8, 0.3, 1.2])
def test_gradient_matches_five_point_stencil(build, x):
    p = Program("x")
    y = build(p)
    graph = p.build(y)

    def f(value):
        return eval_key(graph.global_key(y), {"x": value})

    expected = stencil(f, x)
    assert vjp(graph, [y], ["x"], {"x": x}, [1.0]) == [pytest.approx(expected, abs=NUM_TOL)]
    assert jvp(graph, [y], {"x": x}, {"x": 1.0}) == [pytest.approx(expected, abs=NUM_TOL)]


def test_stencil_is_accurate_enough_to_catch_a_wrong_rule():
    exact = math.cos(0.3)
    assert abs(stencil(math.sin, 0.3) - exact) < 1e-12
    assert abs(stencil(math.sin, 0.3) - 1.01 * exact) > NUM_TOL
