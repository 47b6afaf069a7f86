"""The composed elementwise functions against PyTorch: values and dtypes on special values (0,
tiny, NaN, infinities), gradients to second order, integer promotion, in-place forms, errors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, assert_same_error, run_both

_SPECIAL = np.array([0.0, -0.0, 0.3, 0.5, 1.0, -2.0, 1e-20, 5e-6, math.nan, math.inf, -math.inf, 0.999])
_INTS = np.array([0, 1, 2, -3])


def _same(ours: Any, ref: Any) -> None:
    if isinstance(ref, bool):
        assert ours is ref
        return
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-6, atol=1e-7, equal_nan=True)


_UNARY = ["logit", "sinc", "deg2rad", "rad2deg", "isinf", "isposinf", "isneginf", "absolute", "negative", "positive"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", _UNARY)
def test_unary_values_match_torch(name: str, dtype: str) -> None:
    data = _INTS if dtype == "int64" else _SPECIAL
    _same(getattr(tidu, name)(tidu.tensor(data.astype(dtype))), getattr(torch, name)(torch.tensor(data.astype(dtype))))


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.logit(L.tensor(_SPECIAL), 1e-6),
    lambda L: L.tensor(_SPECIAL, dtype=L.float32).logit(0.25),
    lambda L: L.xlogy(L.tensor(_SPECIAL), L.tensor(_SPECIAL[::-1].copy())),
    lambda L: L.xlogy(2, L.tensor(_SPECIAL)),
    lambda L: L.tensor(_SPECIAL).xlogy(3.0),
    lambda L: L.xlogy(L.tensor(_INTS), L.tensor(_INTS)),
    lambda L: L.float_power(L.tensor(_INTS), 2),
    lambda L: L.tensor(_SPECIAL, dtype=L.float32).float_power(L.tensor(_INTS[:1])),
    lambda L: L.fmax(L.tensor(_SPECIAL), L.tensor(_SPECIAL[::-1].copy())),
    lambda L: L.tensor(_SPECIAL).fmin(L.tensor(_SPECIAL[::-1].copy())),
    lambda L: L.fmax(L.tensor(_INTS), L.tensor(_INTS[::-1].copy())),
    lambda L: L.fmin(L.tensor([1.0, math.nan]), L.tensor([[math.nan], [0.5]])),
    lambda L: L.addcmul(L.tensor(_SPECIAL), L.tensor(_SPECIAL), L.tensor(_SPECIAL), value=0.5),
    lambda L: L.addcmul(L.tensor(_INTS), L.tensor(_INTS), L.tensor(_INTS), value=2),
    lambda L: L.tensor(_SPECIAL).addcdiv(L.tensor(_SPECIAL), L.tensor(_SPECIAL[::-1].copy()), value=2),
    lambda L: L.isclose(L.tensor(_SPECIAL), L.tensor(_SPECIAL + 1e-9)),
    lambda L: L.isclose(L.tensor(_SPECIAL), L.tensor(_SPECIAL), equal_nan=True),
    lambda L: L.tensor(_INTS).isclose(L.tensor(_INTS + 1), atol=1),
    lambda L: L.isclose(L.tensor([True, False]), L.tensor([True, True])),
    lambda L: L.allclose(L.tensor(_SPECIAL), L.tensor(_SPECIAL), equal_nan=True),
    lambda L: L.allclose(L.tensor(_SPECIAL), L.tensor(_SPECIAL)),
    lambda L: L.equal(L.tensor(_INTS), L.tensor(_INTS.astype(float))),
    lambda L: L.tensor(_INTS).equal(L.tensor(_INTS[:2])),
    lambda L: L.true_divide(L.tensor(_INTS), 2),
])
def test_values_match_torch(lib_fn: Callable) -> None:
    _same(lib_fn(tidu), lib_fn(torch))


# name -> (lib -> fn, operand ranges)
GRAD_CASES: dict[str, tuple[Callable, list]] = {
    "logit": (lambda L: lambda x: L.logit(x), [Arg((5,), low=0.05, high=0.95)]),
    "logit-eps": (lambda L: lambda x: x.logit(0.2), [Arg((6,), low=0.0, high=1.0)]),
    "xlogy": (lambda L: lambda x, y: L.xlogy(x, y), [Arg((5,)), Arg((5,), low=0.1, high=3.0)]),
    "sinc": (lambda L: lambda x: L.sinc(x), [Arg((6,))]),
    "deg2rad": (lambda L: lambda x: x.deg2rad(), [Arg((3,))]),
    "rad2deg": (lambda L: lambda x: L.rad2deg(x), [Arg((3,))]),
    "fmax": (lambda L: lambda x, y: L.fmax(x, y), [Arg((2, 3)), Arg((3,))]),
    "fmin": (lambda L: lambda x, y: L.fmin(x, y), [Arg((2, 3)), Arg((2, 1))]),
    "addcmul": (lambda L: lambda a, b, c: L.addcmul(a, b, c, value=-2), [Arg((2, 3)), Arg((3,)), Arg((2, 1))]),
    "addcdiv": (lambda L: lambda a, b, c: a.addcdiv(b, c, value=0.5), [Arg((2, 3)), Arg((3,)), Arg((2, 1), low=0.5, high=2.0)]),
    "float_power": (lambda L: lambda a, b: L.float_power(a, b), [Arg((3,), 0.5, 2.0), Arg((3,))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_match_torch(name: str, dtype: str) -> None:
    make, args = GRAD_CASES[name]
    run_both(make(tidu), make(torch), args, dtype)


@pytest.mark.parametrize("name,fn,points", [
    ("logit", lambda L, x: L.logit(x), [0.1, 0.5, 0.8]),
    ("xlogy", lambda L, x: L.xlogy(x, x * x + 1), [0.0, 0.3, -1.5, 2.0]),
    ("xlogy-zero-first", lambda L, x: L.xlogy(x * 0, x + 3), [0.3, -1.5]),
    ("sinc", lambda L, x: L.sinc(x), [0.3, -1.5, 2.0, 1e-3]),
    ("addcdiv", lambda L, x: L.addcdiv(x, x, x * x + 1, value=3), [0.0, 0.3, -1.5]),
])
def test_second_derivatives_match_torch(name: str, fn: Callable, points: list) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(points, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(fn(L, x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad(g.sum(), x)
        out.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-7, atol=1e-9)


def test_sinc_derivatives_at_zero_are_the_true_ones() -> None:
    x = tidu.tensor([0.0, 1e-7, -3e-6], dtype=tidu.float64, requires_grad=True)
    (g,) = tidu.autograd.grad(tidu.sinc(x).sum(), x, create_graph=True)
    (h,) = tidu.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), -(math.pi ** 2) / 3 * x.detach().numpy(), atol=1e-15)
    np.testing.assert_allclose(h.numpy(), -(math.pi ** 2) / 3, rtol=1e-9)  # PyTorch's: NaN at 0
    near = np.array([1e-5, 2e-5, 1e-4])
    np.testing.assert_allclose(tidu.sinc(tidu.tensor(near)).numpy(), np.sinc(near), rtol=1e-15)


@pytest.mark.parametrize("name,args", [
    ("exp_", ()), ("sigmoid_", ()), ("relu_", ()), ("tanh_", ()), ("abs_", ()), ("neg_", ()), ("square_", ()),
    ("clamp_min_", (0.1,)), ("pow_", (2,)), ("lerp_", ("end", 0.3)), ("addcmul_", ("end", "end")),
    ("logit_", (0.2,)), ("xlogy_", ("end",)), ("sinc_", ()), ("atan2_", ("end",)), ("tril_", ()), ("nan_to_num_", ()),
])
def test_in_place_forms_match_torch(name: str, args: tuple) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=L.float64, requires_grad=True)
        end = L.tensor([[1.0, 2.0], [-0.5, 0.75]], dtype=L.float64)
        x = w * 1.5
        result = getattr(x, name)(*[end if a == "end" else a for a in args])
        assert result is x
        (x * L.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=L.float64)).sum().backward()
        out.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1])


def test_in_place_comparisons_cast_to_the_tensor_dtype() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([1.0, 2.0, 3.0])
        assert x.lt_(2.5) is x
        np.testing.assert_array_equal(x.numpy(), [1.0, 1.0, 0.0])
        n = L.tensor([1, 5])
        n.ge_(L.tensor([2, 2]))
        np.testing.assert_array_equal(n.numpy(), [0, 1])


@pytest.mark.parametrize("call", [
    "L.addcdiv(L.tensor([1]), L.tensor([1]), L.tensor([2]))", "L.positive(L.tensor([True]))",
    "L.isclose(L.tensor([1]), L.tensor([1.0]))", "L.isclose(L.tensor([1.0]), L.tensor([1.0]), rtol=-1)",
    "L.isclose(L.tensor([1.0]), L.tensor([1.0]), atol=-1)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_xlogy_gradient_at_zero_is_the_log_as_in_torch() -> None:
    """d/dx x log y = log y, at x = 0 too; d/dy = x / y. (At x = 0 where log y is not finite, tidu's
    are 0: the differences guide lists PyTorch's.)"""
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([0.0, 0.0, 0.0, 1.0, 2.0, 0.5], dtype=L.float64, requires_grad=True)
        y = L.tensor([2.0, 0.0, math.nan, 0.0, math.inf, 3.0], dtype=L.float64, requires_grad=True)
        value = L.xlogy(x, y)
        value.sum().backward()
        out.append((value.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])
    np.testing.assert_array_equal(out[1][2][[0, 2, 3, 4, 5]], out[0][2][[0, 2, 3, 4, 5]])


# --- copysign, ldexp, logaddexp2, heaviside, gcd/lcm, nextafter, signbit, frexp, isin, isreal -------------
@pytest.mark.parametrize("lib_fn", [
    lambda L: L.copysign(L.tensor(_SPECIAL), L.tensor(-_SPECIAL[::-1].copy())),
    lambda L: L.copysign(L.tensor(_INTS), -1), lambda L: L.tensor(_SPECIAL).copysign(-0.0),
    lambda L: L.ldexp(L.tensor(_SPECIAL), L.tensor([1, 2, -1, 0, 3, 1, 2, 0, 1, 2, 1, 5])),
    lambda L: L.ldexp(L.tensor(_INTS), L.tensor(_INTS)),
    lambda L: L.logaddexp2(L.tensor(_SPECIAL), L.tensor(_SPECIAL[::-1].copy())),
    lambda L: L.logaddexp2(L.tensor([math.inf, -math.inf, 1000.0]), L.tensor([math.inf, -math.inf, 1000.0])),
    lambda L: L.heaviside(L.tensor(_SPECIAL), L.tensor([0.5], dtype=L.float64)), lambda L: L.tensor(_INTS).heaviside(L.tensor(_INTS)),
    lambda L: L.gcd(L.tensor([12, 18, 0, -4]), L.tensor([8, -27, 0, 6])), lambda L: L.tensor([4, 6]).lcm(L.tensor([6, -4])),
    lambda L: L.nextafter(L.tensor(_SPECIAL), L.tensor(_SPECIAL[::-1].copy())),
    lambda L: L.tensor(_SPECIAL, dtype=L.float32).nextafter(L.tensor([2.0])),
    lambda L: L.signbit(L.tensor(_SPECIAL)), lambda L: L.tensor(_INTS).signbit(), lambda L: L.signbit(L.tensor(-0.0)),
    lambda L: L.frexp(L.tensor(_SPECIAL[~np.isnan(_SPECIAL) & np.isfinite(_SPECIAL)]))[0],
    lambda L: L.tensor(_SPECIAL[np.isfinite(_SPECIAL)], dtype=L.float32).frexp()[1],
    lambda L: L.isin(L.tensor(_INTS), L.tensor([2, 0])), lambda L: L.isin(L.tensor(_INTS), 2, invert=True),
    lambda L: L.isin(1, L.tensor(_INTS)), lambda L: L.isin(L.tensor(_SPECIAL), L.tensor([0.5, math.nan])),
    lambda L: L.isreal(L.tensor(_SPECIAL)), lambda L: L.tensor(_INTS).isreal(),
])
def test_more_elementwise_values_match_torch(lib_fn: Callable) -> None:
    _same(lib_fn(tidu), lib_fn(torch))


MORE_GRAD_CASES: dict[str, tuple[Callable, list]] = {
    "copysign": (lambda L: lambda x: L.copysign(x, L.tensor([-0.0, 1.0, -2.0])), [Arg((2, 3))]),
    "copysign-number": (lambda L: lambda x: x.copysign(-1.0), [Arg((4,))]),
    "ldexp": (lambda L: lambda x, y: L.ldexp(x, y), [Arg((2, 3)), Arg((3,))]),
    "logaddexp2": (lambda L: lambda x, y: x.logaddexp2(y), [Arg((2, 3)), Arg((2, 1))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(MORE_GRAD_CASES))
def test_more_gradients_match_torch(name: str, dtype: str) -> None:
    make, args = MORE_GRAD_CASES[name]
    run_both(make(tidu), make(torch), args, dtype)


@pytest.mark.parametrize("name", list(MORE_GRAD_CASES))
def test_more_gradients_match_finite_differences(name: str) -> None:
    make, args = MORE_GRAD_CASES[name]
    rng = np.random.default_rng(2)
    leaves = [tidu.tensor(rng.uniform(0.2, 2.0, a.shape) * rng.choice([-1, 1], a.shape), requires_grad=True)
              for a in args]
    assert tidu.autograd.gradgradcheck(make(tidu), leaves) if name == "logaddexp2" else True
    assert tidu.autograd.gradcheck(make(tidu), leaves)


@pytest.mark.parametrize("name,args", [("copysign_", (-1.0,)), ("ldexp_", ("end",)), ("heaviside_", ("end",))])
def test_more_in_place_forms(name: str, args: tuple) -> None:
    got = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([[0.5, -1.0], [0.0, 0.25]], dtype=L.float64)
        end = L.tensor([[1.0, 2.0], [-0.5, 3.0]], dtype=L.float64)
        assert getattr(x, name)(*[end if a == "end" else a for a in args]) is x
        got.append(x.numpy())
    np.testing.assert_array_equal(got[1], got[0])
    for L in (torch, tidu):  # noqa: N806 - the library
        n = L.tensor([4, 6])
        assert L.gcd_(n, L.tensor([6, 4])) is n and n.tolist() == [2, 2]
        assert n.lcm_(L.tensor([3, 5])).tolist() == [6, 10]


@pytest.mark.parametrize("call", [
    "L.heaviside(L.tensor([1.0]), L.tensor([1]))", "L.gcd(L.tensor([1.0]), L.tensor([2.0]))",
    "L.lcm(L.tensor([True]), L.tensor([True]))", "L.nextafter(L.tensor([1]), L.tensor([2]))",
    "L.frexp(L.tensor([1]))",
])
def test_more_errors_match_torch(call: str) -> None:
    assert_same_error(call)


@pytest.mark.parametrize("a,b", [("float32", "float64"), ("int32", "float16"), ("bfloat16", "float16"), ("int32", "int64"),
                                 ("bool", "float16"), ("float16", "int64"), ("float64", "int8"), ("int8", "bool"),
                                 ("bool", "bool")])
def test_ldexp_promotes_like_pytorchs_product(a: str, b: str) -> None:
    """PyTorch computes ``input * 2.0 ** other``: the power in ``other``'s float dtype (the
    default one for integers), promoted with ``input``; gradients in both."""
    results = []
    for L in (tidu, torch):
        x = L.tensor([1.5, -2.0, 3.0]).to(getattr(L, a))
        e = L.tensor([1, -2, 3]).to(getattr(L, b))
        out = L.ldexp(x, e)
        results.append((_name_of(out.dtype), out.double().numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-3)
    run_both(lambda x, e: tidu.ldexp(x, e) if isinstance(x, tidu.Tensor) else torch.ldexp(x, e),
             None, [Arg((3,)), Arg((3,), low=-2, high=2)], "float64")


def _name_of(dt: Any) -> str:
    return str(dt).split(".")[-1]


def test_ldexp_and_addcmul_refuse_what_pytorch_refuses() -> None:
    assert_same_error("L.ldexp(L.ones(2), L.tensor([True, False]))")
    assert_same_error("L.addcmul(L.tensor([True]), L.tensor([True]), L.tensor([False]))")


def test_angle_of_real_tensors_matches_torch() -> None:
    """pi where negative (-inf too), 0 elsewhere (-0.0 too), NaN kept; integers give floats; zero gradient."""
    values = [-1.0, 0.0, 2.0, float("nan"), -0.0, -float("inf"), float("inf")]
    results = []
    for L in (tidu, torch):
        x = L.tensor(values, requires_grad=True)
        y = L.angle(x)
        y.sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), str(L.angle(L.tensor([-1, 2])).dtype).split(".")[-1],
                        str(x.half().angle().dtype).split(".")[-1]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2:] == results[1][2:]
