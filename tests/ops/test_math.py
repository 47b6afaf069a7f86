"""The elementwise ops of ``tidu.ops.math`` against PyTorch.

Values, output dtypes and gradients on 0-d, empty, broadcast and non-contiguous operands in
float32 and float64 (``run_both``); integer and bool dtypes through a dtype table where
tidu must give torch's result or raise torch's exception class; kinks, ties and boundaries;
integer division sign tables; round half to even; special values; Python scalars and
reflected operators; second order and forward mode of the composed ops; bad input; and a
hypothesis fuzz of shapes and dtypes for the binary ops.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tidu
from tests.test_torch_oracle import TOL, Arg, T, assert_same, assert_same_error, errors_of, run_both

FLOATS = ["float32", "float64"]
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
EXACT = {"rtol": 0, "atol": 0}
CLOSE = {"rtol": 1e-6, "atol": 1e-6}
POS = (0.2, 3.0)


def lib(*xs: Any) -> Any:
    """The library the values belong to (``tidu`` or ``torch``)."""
    return torch if any(isinstance(x, torch.Tensor) for x in xs) else tidu


def same_or_same_error(lib_fn: Callable, tol: dict = EXACT, what: str = "") -> None:
    """``lib_fn(tidu)`` gives ``lib_fn(torch)``'s result, or raises torch's exception class."""
    try:
        ref = lib_fn(torch)
    except (RuntimeError, TypeError, ValueError, IndexError) as err:
        with pytest.raises(type(err)):
            lib_fn(tidu)
        return
    assert_same(lib_fn(tidu), ref, tol, what=what or "output")


# --- unary ops, float32 and float64: values and gradients ---------------------------------------
UNARY = {
    # name: (fn on either library, domain)
    "abs": (lambda x: lib(x).abs(x), None),
    "abs-op": (lambda x: abs(x), None),
    "neg": (lambda x: lib(x).neg(x), None),
    "exp": (lambda x: x.exp(), None),
    "exp2": (lambda x: lib(x).exp2(x), None),
    "exp2-method": (lambda x: x.exp2(), None),
    "expm1": (lambda x: lib(x).expm1(x), None),
    "log": (lambda x: x.log(), POS),
    "log2": (lambda x: lib(x).log2(x), POS),
    "log1p": (lambda x: lib(x).log1p(x), (-0.8, 3.0)),
    "sqrt": (lambda x: x.sqrt(), POS),
    "rsqrt": (lambda x: lib(x).rsqrt(x), POS),
    "sin": (lambda x: x.sin(), None),
    "cos": (lambda x: x.cos(), None),
    "tan": (lambda x: lib(x).tan(x), (-1.3, 1.3)),
    "tanh": (lambda x: x.tanh(), None),
    "sigmoid": (lambda x: lib(x).sigmoid(x), (-8.0, 8.0)),
    "relu": (lambda x: x.relu(), None),
    "sign": (lambda x: lib(x).sign(x), None),
    "floor": (lambda x: lib(x).floor(x), (-3.0, 3.0)),
    "ceil": (lambda x: x.ceil(), (-3.0, 3.0)),
    "round": (lambda x: lib(x).round(x), (-3.0, 3.0)),
    "round-decimals": (lambda x: x.round(decimals=1), (-3.0, 3.0)),
    "round-negative-decimals": (lambda x: lib(x).round(x * 100, decimals=-1), (-3.0, 3.0)),
    "trunc": (lambda x: lib(x).trunc(x), (-3.0, 3.0)),
    "erf": (lambda x: x.erf(), None),
    "reciprocal": (lambda x: lib(x).reciprocal(x), POS),
    "square": (lambda x: lib(x).square(x), None),
    "clamp": (lambda x: lib(x).clamp(x, -0.5, 1.0), None),
    "clamp-min": (lambda x: x.clamp(min=0.25), None),
    "clamp-max": (lambda x: x.clamp(max=0.25), None),
    "clip": (lambda x: lib(x).clip(x, max=1), None),
    "lerp-scalar-small": (lambda x: lib(x).lerp(x, x * x, 0.25), None),
    "lerp-scalar-large": (lambda x: x.lerp(x.sin(), 0.75), None),
    "pow-3": (lambda x: x**3, None),
    "pow-neg": (lambda x: x**-2, POS),
    "rpow": (lambda x: 2.5**x, None),
    "pow-fn-scalar-base": (lambda x: lib(x).pow(3.0, x), None),
    "floor-div-scalar": (lambda x: lib(x).div(x, 0.3, rounding_mode="floor"), None),
    "trunc-div-scalar": (lambda x: lib(x).div(x, 0.3, rounding_mode="trunc"), None),
    "mod-scalar": (lambda x: x % 0.7, None),
    "remainder-by-tensor": (lambda x: lib(x).remainder(x * 0 + 2.5, x), POS),
    "remainder-neg-scalar": (lambda x: lib(x).remainder(x, -0.7), None),
    "chain": (lambda x: (x.tan().abs().clamp(max=2) + x.sigmoid() * x.expm1()).log1p(), (-1.0, 1.0)),
}
UNARY_SHAPES = [(), (0, 3), (5,), (2, 3), T(3, 2)]


def _unary_args(name: str, shape: Any) -> list[Arg]:
    arg = shape if isinstance(shape, Arg) else Arg(shape)
    arg = Arg(arg.shape, arg.transposed)
    domain = UNARY[name][1]
    if domain:
        arg.low, arg.high = domain
    return [arg]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", UNARY_SHAPES, ids=repr)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_values_and_grads(name: str, shape: Any, dtype: str) -> None:
    run_both(UNARY[name][0], None, _unary_args(name, shape), dtype)


# --- binary and ternary ops, float32 and float64 ------------------------------------------------
BINARY = {
    "minimum": (lambda a, b: lib(a).minimum(a, b), None),
    "minimum-method": (lambda a, b: a.minimum(b), None),
    "maximum-method": (lambda a, b: a.maximum(b), None),
    "remainder": (lambda a, b: lib(a).remainder(a, b), ((-3.0, 3.0), (0.5, 2.0))),
    "mod-negative": (lambda a, b: a % -b, ((-3.0, 3.0), (0.5, 2.0))),
    "div-floor": (lambda a, b: lib(a).div(a, b, rounding_mode="floor"), ((-3.0, 3.0), (-2.0, -0.5))),
    "div-trunc": (lambda a, b: a.div(b, rounding_mode="trunc"), ((-3.0, 3.0), (0.5, 2.0))),
    "div-none": (lambda a, b: lib(a).div(a, b, rounding_mode=None), ((-3.0, 3.0), (0.5, 2.0))),
    "pow": (lambda a, b: lib(a).pow(a, b), ((0.5, 2.0), (-2.0, 2.0))),
    "clamp-min-tensor": (lambda a, b: lib(a).clamp(a + 0 * b, min=b), None),  # torch: out shape = input's
    "clamp-max-tensor": (lambda a, b: (a + 0 * b).clamp(max=b), None),
    "lerp-tensor-end": (lambda a, b: a.lerp(b, 0.6), None),
    "where-method": (lambda a, b: a.where(a > b, b), None),
    "mixed": (lambda a, b: (a.minimum(b) * (a % 1.5) - (a - b).abs()).clamp(-1, 1), None),
}
BINARY_SHAPES = [
    [(2, 3), (2, 3)],
    [(2, 1), (1, 3)],
    [(), (2, 3)],
    [(2, 3), ()],
    [(0, 3), (3,)],
    [T(3, 2), (2, 3)],
]


def _binary_args(name: str, shapes: list) -> list[Arg]:
    args = [s if isinstance(s, Arg) else Arg(s) for s in shapes]
    args = [Arg(a.shape, a.transposed) for a in args]
    domain = BINARY[name][1]
    for a, (lo, hi) in zip(args, domain or ()):
        a.low, a.high = lo, hi
    return args


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=lambda s: "-".join(map(repr, _binary_args("minimum", s))))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_values_and_grads(name: str, shapes: list, dtype: str) -> None:
    run_both(BINARY[name][0], None, _binary_args(name, shapes), dtype)


TERNARY_SHAPES = [[(2, 3), (2, 3), (2, 3)], [(2, 1), (3,), ()], [T(3, 2), (1, 3), (2, 1)], [(0, 3), (3,), (1,)]]
CLAMP_SHAPES = [[(2, 3), (2, 3), (2, 3)], [(2, 3), (3,), ()], [T(3, 2), (1, 3), (2, 1)], [(0, 3), (3,), (1,)]]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", TERNARY_SHAPES, ids=str)
def test_lerp_with_tensor_weight(shapes: list, dtype: str) -> None:
    args = [s if isinstance(s, Arg) else Arg(s) for s in shapes]
    args[2] = Arg(args[2].shape, args[2].transposed, low=-0.5, high=1.5)  # both of torch's branches
    run_both(lambda a, b, w: lib(a).lerp(a, b, w), None, args, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", CLAMP_SHAPES, ids=str)
def test_clamp_with_tensor_bounds(shapes: list, dtype: str) -> None:
    # bounds from overlapping ranges, so some have min > max (the result is max there)
    args = [s if isinstance(s, Arg) else Arg(s) for s in shapes]
    args[1] = Arg(args[1].shape, args[1].transposed, low=-1.0, high=0.5)
    args[2] = Arg(args[2].shape, args[2].transposed, low=-0.5, high=1.0)
    run_both(lambda x, lo, hi: lib(x).clamp(x, lo, hi), None, args, dtype)
    run_both(lambda x, lo, hi: x.clip(min=lo, max=hi), None, args, dtype, seed=1)


def test_clamp_broadcasts_the_input_to_the_bounds() -> None:
    # values only: torch's clamp backward fails to reduce the gradient of a broadcast input
    run_both(lambda x, lo, hi: lib(x).clamp(x, lo, hi), None, [Arg((2, 1)), Arg((3,)), Arg(())], "float64", grad=False)


# --- dtypes: integer and bool inputs, or torch's exception --------------------------------------
def _data(L: Any, dtype: str, values: list) -> Any:
    if dtype == "bool":
        return L.tensor([v != 0 for v in values])
    return L.tensor(values, dtype=getattr(L, dtype))


UNARY_ALL_DTYPES = {
    "abs": lambda x: lib(x).abs(x),
    "__abs__": abs,
    "neg": lambda x: -x,
    "sign": lambda x: x.sign(),
    "floor": lambda x: lib(x).floor(x),
    "ceil": lambda x: lib(x).ceil(x),
    "round": lambda x: x.round(),
    "round-decimals": lambda x: lib(x).round(x, decimals=2),
    "trunc": lambda x: lib(x).trunc(x),
    "square": lambda x: lib(x).square(x),
    "relu": lambda x: lib(x).relu(x),
    "sqrt": lambda x: lib(x).sqrt(x),
    "rsqrt": lambda x: x.rsqrt(),
    "exp": lambda x: lib(x).exp(x),
    "exp2": lambda x: lib(x).exp2(x),
    "expm1": lambda x: x.expm1(),
    "log": lambda x: lib(x).log(x),
    "log2": lambda x: x.log2(),
    "log1p": lambda x: lib(x).log1p(x),
    "sin": lambda x: lib(x).sin(x),
    "cos": lambda x: x.cos(),
    "tan": lambda x: lib(x).tan(x),
    "tanh": lambda x: lib(x).tanh(x),
    "sigmoid": lambda x: x.sigmoid(),
    "erf": lambda x: lib(x).erf(x),
    "reciprocal": lambda x: lib(x).reciprocal(x),
    "isnan": lambda x: lib(x).isnan(x),
    "isfinite": lambda x: x.isfinite(),
    "logical_not": lambda x: lib(x).logical_not(x),
    "bitwise_not": lambda x: lib(x).bitwise_not(x),
    "invert": lambda x: ~x,
    "clamp-int-bounds": lambda x: x.clamp(-1, 2),
    "clamp-float-bound": lambda x: lib(x).clamp(x, min=0.5),
    "pow-2": lambda x: x**2,
    "pow-float": lambda x: lib(x).pow(x, 0.5),
    "rpow": lambda x: 2**x,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY_ALL_DTYPES))
def test_unary_dtypes_like_torch(name: str, dtype: str) -> None:
    fn = UNARY_ALL_DTYPES[name]
    same_or_same_error(lambda L: fn(_data(L, dtype, [-3, -1, 0, 2, 5])), CLOSE, f"{name}({dtype})")


BINARY_ALL_DTYPES = {
    "floor_divide": lambda a, b: lib(a, b).floor_divide(a, b),
    "//": operator.floordiv,
    "remainder": lambda a, b: lib(a, b).remainder(a, b),
    "%": operator.mod,
    "div-trunc": lambda a, b: lib(a, b).div(a, b, rounding_mode="trunc"),
    "div-floor": lambda a, b: lib(a, b).div(a, b, rounding_mode="floor"),
    "pow": lambda a, b: lib(a, b).pow(a, b),
    "**": operator.pow,
    "maximum": lambda a, b: lib(a, b).maximum(a, b),
    "minimum": lambda a, b: lib(a, b).minimum(a, b),
    "bitwise_and": lambda a, b: lib(a, b).bitwise_and(a, b),
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "bitwise_or": lambda a, b: lib(a, b).bitwise_or(a, b),
    "bitwise_xor": lambda a, b: lib(a, b).bitwise_xor(a, b),
    "logical_and": lambda a, b: lib(a, b).logical_and(a, b),
    "logical_or": lambda a, b: lib(a, b).logical_or(a, b),
    "logical_xor": lambda a, b: lib(a, b).logical_xor(a, b),
    "clamp-min": lambda a, b: a.clamp(min=b) if hasattr(a, "clamp") else b.clamp(max=a),
    "where": lambda a, b: lib(a, b).where(lib(a, b).tensor([True, False, True, False, True]), a, b),
}


SCALARS = {"int": 3, "negint": -2, "float": 1.5, "bool": True}
A_VALUES = [-7, -3, 0, 2, 5]
B_VALUES = [2, -3, 1, 4, -2]  # no zero divisor (tested separately)


def _operand_pairs() -> list[tuple[str, Callable, Callable]]:
    pairs = []
    for da, db in itertools.product(DTYPES, DTYPES):
        pairs.append((f"{da},{db}", lambda L, da=da: _data(L, da, A_VALUES), lambda L, db=db: _data(L, db, B_VALUES)))
    for d, (s, v) in itertools.product(DTYPES, SCALARS.items()):
        pairs.append((f"{d},{s}", lambda L, d=d: _data(L, d, A_VALUES), lambda L, v=v: v))
        pairs.append((f"{s},{d}", lambda L, v=v: v, lambda L, d=d: _data(L, d, B_VALUES)))
    pairs.append(("0d-int64,float32", lambda L: L.tensor(5), lambda L: _data(L, "float32", B_VALUES)))
    return pairs


@pytest.mark.parametrize("name", list(BINARY_ALL_DTYPES))
def test_binary_dtypes_and_python_scalars_like_torch(name: str) -> None:
    fn = BINARY_ALL_DTYPES[name]
    for label, a, b in _operand_pairs():
        same_or_same_error(lambda L, a=a, b=b: fn(a(L), b(L)), CLOSE, f"{name}({label})")


# --- integer division and remainder: sign tables ------------------------------------------------
DIVISION = {
    "//": operator.floordiv,
    "%": operator.mod,
    "floor_divide": lambda a, b: lib(a).floor_divide(a, b),
    "remainder": lambda a, b: lib(a).remainder(a, b),
    "trunc": lambda a, b: lib(a).div(a, b, rounding_mode="trunc"),
    "floor": lambda a, b: a.div(b, rounding_mode="floor"),
    "true": lambda a, b: a / b,
}


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("name", list(DIVISION))
def test_division_sign_tables(name: str, dtype: str) -> None:
    fn = DIVISION[name]

    def table(L: Any, a: list, b: list) -> Any:
        dt = getattr(L, dtype)
        return fn(L.tensor(a, dtype=dt).reshape(-1, 1), L.tensor(b, dtype=dt))

    same_or_same_error(lambda L: table(L, list(range(-7, 8)), [-3, -2, -1, 1, 2, 3]), EXACT, "integers")
    if dtype.startswith("float"):
        a = [-3.5, -2.25, -1.0, -0.5, 0.0, 0.5, 1.0, 2.25, 3.5, float("inf"), float("-inf"), float("nan")]
        b = [-2.5, -1.0, -0.75, 0.0, 0.75, 1.0, 2.5, float("inf"), float("-inf")]
        same_or_same_error(lambda L: table(L, a, b), EXACT, "fractions, zero and infinite divisors")


@pytest.mark.parametrize(
    "lib_fn",
    [
        lambda L: L.tensor([1, 2]) // 0,
        lambda L: L.tensor([1, 2]) % 0,
        lambda L: L.tensor([1, 2], dtype=L.int32) // L.tensor([1, 0], dtype=L.int32),
        lambda L: 3 % L.tensor([1, 0]),
        lambda L: L.floor_divide(L.tensor([4]), L.tensor([0])),
        lambda L: L.div(L.tensor([7, -7]), 0, rounding_mode="trunc"),
        lambda L: L.div(L.tensor([7, -7]), L.tensor(0), rounding_mode="floor"),
    ],
    ids=["floordiv", "mod", "int32-tensor", "rmod", "floor_divide", "div-trunc", "div-floor"],
)
def test_integer_division_by_zero_raises_like_torch(lib_fn: Callable) -> None:
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        lib_fn(torch)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        lib_fn(tidu)


def test_integer_pow_wraps_and_negative_tensor_exponents_like_torch() -> None:
    base = [0, 1, -1, 2, -2, 3, 7]
    exps = [-3, -2, -1, 0, 1, 2, 5, 40, 63]
    for dtype in ("int32", "int64"):
        same_or_same_error(
            lambda L, d=dtype: L.tensor(base, dtype=getattr(L, d)).reshape(-1, 1)
            ** L.tensor(exps, dtype=getattr(L, d)),
            EXACT,
            dtype,
        )


# --- rounding -----------------------------------------------------------------------------------
HALVES = [-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.49999997, 1e20, -0.0, 4503599627370497.0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("decimals", [0, 1, 2, -1, -2])
def test_round_half_to_even_like_torch(decimals: int, dtype: str) -> None:
    values = HALVES + [0.125, 0.375, 1.25, 1.35, 2.675, 125.0, 135.0, 1234.5678, -0.05, -15.0]
    same_or_same_error(
        lambda L: L.tensor(values, dtype=getattr(L, dtype)).round(decimals=decimals), EXACT, f"decimals={decimals}"
    )


def test_round_is_half_to_even() -> None:
    out = tidu.round(tidu.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]))
    assert out.tolist() == [-2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 4.0]


# --- special values -----------------------------------------------------------------------------
SPECIAL = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-30, 1e30, -3.5, 0.75, 700.0, -700.0]
SPECIAL_OPS = [n for n in UNARY_ALL_DTYPES if n not in ("bitwise_not", "invert")]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", SPECIAL_OPS)
def test_special_values_like_torch(name: str, dtype: str) -> None:
    fn = UNARY_ALL_DTYPES[name]
    same_or_same_error(lambda L: fn(L.tensor(SPECIAL, dtype=getattr(L, dtype))), TOL[dtype], name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_propagates_through_maximum_minimum_clamp(dtype: str) -> None:
    nan = float("nan")

    def fn(L: Any) -> list:
        dt = getattr(L, dtype)
        a, b = L.tensor([1.0, nan, nan, 2.0], dtype=dt), L.tensor([nan, 1.0, nan, 1.0], dtype=dt)
        return [L.maximum(a, b), L.minimum(a, b), a.clamp(0, 1.5), a.clamp(min=b), a.relu(), a.sign()]

    for out, ref in zip(fn(tidu), fn(torch)):
        assert_same(out, ref, EXACT)


# --- kinks, ties and boundaries -----------------------------------------------------------------
def _grads(lib_fn: Callable, *values: list) -> None:
    """Gradients of ``lib_fn(L, *leaves).sum()`` w.r.t. the leaves in both libraries."""
    result = []
    for L in (tidu, torch):
        leaves = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in values]
        out = lib_fn(L, *leaves)
        (out * L.arange(1, out.numel() + 1, dtype=L.float64).reshape(out.shape)).sum().backward()
        result.append((out, [x.grad for x in leaves]))
    (out, grads), (ref, ref_grads) = result
    assert_same(out, ref, EXACT)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if r is None:
            assert g is None or not g.numpy().any(), f"input {i}: torch has no gradient"
        else:
            assert_same(g, r, TOL["float64"], what=f"grad of input {i}")


KINKS = {
    "relu": (lambda L, x: L.relu(x), [[-1.0, 0.0, 2.0]]),
    "abs": (lambda L, x: L.abs(x), [[-1.0, 0.0, 2.0, -0.0]]),
    "clamp-boundaries": (lambda L, x: L.clamp(x, -1.0, 1.0), [[-2.0, -1.0, 0.0, 1.0, 2.0]]),
    "clamp-min-only": (lambda L, x: x.clamp(min=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp-max-only": (lambda L, x: x.clamp(max=0.0), [[-1.0, 0.0, 1.0]]),
    "clamp-min-equals-max": (lambda L, x: x.clamp(1.0, 1.0), [[0.0, 1.0, 2.0]]),
    "clamp-tensors-at-ties": (
        lambda L, x, lo, hi: L.clamp(x, lo, hi),
        [[0.0, 1.0, 1.0, 2.0, -1.0, 3.0], [0.0, 0.0, 1.0, 3.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 2.0, 3.0]],
    ),
    "maximum-ties": (lambda L, a, b: L.maximum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 3.0]]),
    "minimum-ties": (lambda L, a, b: L.minimum(a, b), [[1.0, 2.0, 3.0], [1.0, 1.0, 3.0]]),
    "minimum-broadcast-tie": (lambda L, a, b: L.minimum(a, b), [2.0, [2.0, 1.0, 3.0]]),
    "sign": (lambda L, x: L.sign(x), [[-1.0, 0.0, 2.0]]),
    "floor": (lambda L, x: L.floor(x), [[-1.5, 0.0, 2.0]]),
    "ceil": (lambda L, x: L.ceil(x), [[-1.5, 0.0, 2.0]]),
    "round": (lambda L, x: L.round(x), [[-1.5, 0.5, 2.0]]),
    "trunc": (lambda L, x: L.trunc(x), [[-1.5, 0.5, 2.0]]),
    "pow-at-zero": (lambda L, x, y: x**y, [[0.0, 0.0, 0.0, 0.0, 2.0], [0.0, -1.0, 2.0, 0.5, 0.0]]),
    "pow-zero-exponent": (lambda L, x: x**0, [[0.0, 1.0, -2.0]]),
    "sqrt-at-zero": (lambda L, x: L.sqrt(x), [[0.0, 4.0]]),
    "rsqrt-at-zero": (lambda L, x: L.rsqrt(x), [[0.0, 4.0]]),
    "log1p-at-minus-one": (lambda L, x: L.log1p(x), [[-1.0, 0.0]]),
    "reciprocal-at-zero": (lambda L, x: L.reciprocal(x), [[0.0, 2.0]]),
    "lerp-weight-half": (lambda L, a, b, w: L.lerp(a, b, w), [[1.0, 2.0], [3.0, -1.0], [0.5, -0.5]]),
    "remainder-exact-multiple": (lambda L, a, b: L.remainder(a, b), [[4.0, -3.0, 3.0], [2.0, 1.5, -1.0]]),
    "where-self": (lambda L, x: x.where(x > 0, x * 2), [[-1.0, 0.0, 1.0]]),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_gradients_at_kinks_ties_and_boundaries(name: str) -> None:
    fn, values = KINKS[name]
    _grads(fn, *values)


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "round", "trunc"])
def test_piecewise_constant_ops_give_zero_gradients_and_require_grad(name: str) -> None:
    for L in (tidu, torch):
        x = L.tensor([-1.5, 0.2, 2.0], requires_grad=True)
        out = getattr(L, name)(x)
        assert out.requires_grad
        out.sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("name", ["isnan", "isfinite", "logical_not"])
def test_predicates_are_not_differentiable(name: str) -> None:
    x = tidu.tensor([1.0, float("nan")], requires_grad=True)
    out = getattr(tidu, name)(x)
    assert out.dtype is tidu.bool and not out.requires_grad


# --- Python scalars and reflected operators -----------------------------------------------------
REFLECTED = {
    "rfloordiv": lambda t: 7 // t,
    "rfloordiv-float": lambda t: 7.5 // t,
    "rmod": lambda t: 7 % t,
    "rmod-float": lambda t: -7.5 % t,
    "floordiv": lambda t: t // 2,
    "floordiv-neg": lambda t: t // -2,
    "mod": lambda t: t % 3,
    "mod-neg-float": lambda t: t % -2.5,
    "rand": lambda t: 6 & t,
    "ror": lambda t: 6 | t,
    "rxor": lambda t: 6 ^ t,
    "rand-bool": lambda t: True & t,
    "ror-bool": lambda t: False | t,
    "rxor-bool": lambda t: True ^ t,
    "and": lambda t: t & 3,
    "or": lambda t: t | 8,
    "xor": lambda t: t ^ -1,
    "invert": lambda t: ~t,
    "abs": lambda t: abs(t),
    "rpow": lambda t: 2**t,
    "rpow-float": lambda t: 0.5**t,
    "pow": lambda t: t**2,
    "rsub-then-abs": lambda t: abs(1 - t) if t.dtype not in (torch.bool, tidu.bool) else t,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(REFLECTED))
def test_python_scalars_and_reflected_operators(name: str, dtype: str) -> None:
    fn = REFLECTED[name]
    same_or_same_error(lambda L: fn(_data(L, dtype, B_VALUES)), CLOSE, f"{name}({dtype})")


def test_reflected_operators_carry_gradients() -> None:
    """torch has no derivative for a Python number on the left of ``%`` and ``//``; tidu's is that
    of the same number as a tensor (``-floor(a / x)`` and zero)."""
    run_both(
        lambda x: 2.5 % x + 3 // x + abs(x) + 2**x,
        lambda x: torch.remainder(torch.full_like(x, 2.5), x) + 3 // x.detach() + abs(x) + 2**x,
        [Arg((2, 3), low=0.5, high=2.0)],
        "float64",
    )


# --- second order and forward mode of the composed ops -----------------------------------------
SECOND_ORDER = {
    "sigmoid": lambda x: x.sigmoid(),
    "tan": lambda x: lib(x).tan(x),
    "expm1": lambda x: x.expm1(),
    "log1p": lambda x: lib(x).log1p(x * x),
    "exp2": lambda x: lib(x).exp2(x),
    "log2": lambda x: lib(x).log2(x * x + 1),
    "rsqrt": lambda x: lib(x).rsqrt(x * x + 1),
    "reciprocal": lambda x: lib(x).reciprocal(x + 3),
    "square": lambda x: lib(x).square(x.sin()),
    "abs-cubed": lambda x: x.abs() ** 3,
    "clamp": lambda x: (x * x).clamp(0.5, 2.0) * x,
    "lerp": lambda x: lib(x).lerp(x, x.exp(), x * 0.5),
    "remainder": lambda x: lib(x).remainder(x * x, x + 3) * x,
    "minimum": lambda x: lib(x).minimum(x * x, x.exp()),
    "pow-tensor": lambda x: lib(x).pow(x * x + 1, x),
}


@pytest.mark.parametrize("name", list(SECOND_ORDER))
def test_second_order_like_torch(name: str) -> None:
    fn = SECOND_ORDER[name]
    data = np.random.default_rng(4).uniform(-1.5, 1.5, size=(2, 3))
    w = np.random.default_rng(5).uniform(-1, 1, size=(2, 3))
    results = []
    for L in (tidu, torch):
        x = L.tensor(data, requires_grad=True)
        (g,) = L.autograd.grad(fn(x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad((g * L.tensor(w)).sum(), x)
        results.append((g, h))
    for out, ref in zip(*results):
        assert_same(out, ref, {"rtol": 1e-10, "atol": 1e-10})


FORWARD = {
    "clamp": lambda x: x.clamp(-0.5, 0.5),
    "lerp": lambda x: lib(x).lerp(x, x * x, x),
    "round-decimals": lambda x: x.round(decimals=1) + x,
    "remainder": lambda x: lib(x).remainder(x, 0.7),
    "abs-sign": lambda x: x.abs() * x.sign() + x.floor(),
    "sigmoid-tan": lambda x: x.sigmoid() * lib(x).tan(x),
}


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_mode_like_torch(name: str) -> None:
    fn = FORWARD[name]
    rng = np.random.default_rng(6)
    data, tangent = rng.uniform(-1.2, 1.2, size=(2, 3)), rng.uniform(-1, 1, size=(2, 3))
    out, jvp = tidu.func.jvp(fn, (tidu.tensor(data),), (tidu.tensor(tangent),))
    ref, ref_jvp = torch.func.jvp(fn, (torch.tensor(data),), (torch.tensor(tangent),))
    assert_same(out, ref, TOL["float64"])
    assert_same(jvp, ref_jvp, TOL["float64"], what="jvp")


# --- bad input: torch's exception class, a clear message ----------------------------------------
BAD = {
    "bitwise-float": (lambda L: L.tensor([1.0, 2.0]) & L.tensor([1.0, 2.0]), NotImplementedError, "bitwise_and.*Float"),
    "bitwise-int-float": (lambda L: L.tensor([1, 2]) | 1.5, NotImplementedError, "bitwise_or.*Float"),
    "bitwise_xor-double": (
        lambda L: L.bitwise_xor(L.tensor([1.0], dtype=L.float64), 1), NotImplementedError, "bitwise_xor.*Double"
    ),
    "invert-float": (lambda L: ~L.tensor([1.0]), TypeError, "only implemented on integer and Boolean"),
    "bitwise_not-float": (lambda L: L.bitwise_not(L.tensor([1.0])), NotImplementedError, "bitwise_not.*Float"),
    "bool-subtraction": (lambda L: L.tensor([True]) - L.tensor([True]), RuntimeError, "Subtraction"),
    "negative-int-power": (lambda L: L.tensor([1, 2]) ** -1, RuntimeError, "negative integer powers"),
    "negative-int-power-fn": (
        lambda L: L.pow(L.tensor([1, 2], dtype=L.int32), -2), RuntimeError, "negative integer powers"
    ),
    "bool-pow": (lambda L: L.pow(L.tensor([True]), L.tensor([True])), NotImplementedError, "pow.*Bool"),
    "abs-of-number": (lambda L: L.abs(5), TypeError, "abs.*must be Tensor, not int"),
    "exp-of-number": (lambda L: L.exp2(2.0), TypeError, "exp2.*must be Tensor, not float"),
    "maximum-scalar": (lambda L: L.maximum(L.tensor([1.0]), 2.0), TypeError, "maximum.*other.*not float"),
    "minimum-scalar": (lambda L: L.minimum(3, L.tensor([1.0])), TypeError, "minimum.*input.*not int"),
    "logical-scalar": (lambda L: L.logical_and(L.tensor([True]), 1), TypeError, "logical_and.*other.*not int"),
    "logical_xor-scalar": (lambda L: L.logical_xor(1.5, L.tensor([True])), TypeError, "logical_xor.*input"),
    "clamp-no-bounds": (lambda L: L.clamp(L.tensor([1.0])), RuntimeError, "At least one of 'min' or 'max'"),
    "clamp-string": (lambda L: L.clamp(L.tensor([1.0]), min="a"), TypeError, "str"),
    "rounding-mode": (
        lambda L: L.div(L.tensor([1.0]), 2, rounding_mode="up"), RuntimeError, "rounding_mode.*'up'"
    ),
    "lerp-dtypes": (
        lambda L: L.lerp(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64), 0.5),
        RuntimeError,
        "expected dtype float32 for `end`",
    ),
    "lerp-int": (lambda L: L.lerp(L.tensor([1]), L.tensor([2]), 0.5), NotImplementedError, "lerp.*Long"),
    "lerp-string-weight": (lambda L: L.lerp(L.tensor([1.0]), L.tensor([2.0]), "a"), TypeError, "weight"),
    "round-int-decimals": (lambda L: L.round(L.tensor([15]), decimals=-1), NotImplementedError, "round.*Long"),
    "abs-bool": (lambda L: L.abs(L.tensor([True])), NotImplementedError, "abs.*Bool"),
    "floor-bool": (lambda L: L.tensor([True]).floor(), NotImplementedError, "floor.*Bool"),
    "relu-bool": (lambda L: L.relu(L.tensor([True])), RuntimeError, "Boolean inputs not supported for relu"),
    "floordiv-bool": (lambda L: L.tensor([True]) // L.tensor([True]), NotImplementedError, "div_floor.*Bool"),
    "mod-bool": (lambda L: L.tensor([True]) % True, NotImplementedError, "remainder.*Bool"),
    "mod-string": (lambda L: L.tensor([1.0]) % "a", TypeError, "str"),
    "and-string": (lambda L: L.tensor([1]) & "a", TypeError, "str"),
    "where-non-bool": (lambda L: L.where(L.tensor([1.0]), 1.0, 2.0), RuntimeError, "bool"),
    "broadcast": (lambda L: L.minimum(L.ones(2), L.ones(3)), RuntimeError, "must match"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_like_torch(name: str) -> None:
    lib_fn, exc, match = BAD[name]
    with pytest.raises(exc):
        lib_fn(torch)
    with pytest.raises(exc, match=match):
        lib_fn(tidu)


# --- hypothesis: shapes and dtypes of the binary ops ---------------------------------------------
FUZZ = ["//", "%", "div-trunc", "pow", "maximum", "minimum", "&", "|", "^", "logical_and", "logical_xor"]


@settings(max_examples=30, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
    dtypes=st.tuples(st.sampled_from(DTYPES), st.sampled_from(DTYPES)),
    name=st.sampled_from(FUZZ),
    seed=st.integers(0, 2**16),
)
def test_fuzz_binary_shapes_and_dtypes(shapes: Any, dtypes: tuple, name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(-6, 7, size=shapes.input_shapes[0])
    b = rng.integers(1, 5, size=shapes.input_shapes[1]) * rng.choice([-1, 1], size=shapes.input_shapes[1])
    if dtypes[0] != "bool" and dtypes[0].startswith("float"):
        a = a + rng.uniform(-1, 1, size=a.shape)
    arrays = [(x != 0) if d == "bool" else x.astype(d) for x, d in zip((a, b), dtypes)]
    fn = BINARY_ALL_DTYPES[name]
    same_or_same_error(
        lambda L: fn(*[L.tensor(x) for x in arrays]), CLOSE, f"{name}{dtypes} {shapes.input_shapes}"
    )


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_where_of_one_dtype_takes_the_elementwise_short_path(device: str, monkeypatch: Any) -> None:
    """``where`` on tensors of one dtype and device (broadcast condition and operands) binds
    ``select`` through ``dispatch.bind_same``, with PyTorch's values and gradients; operands of
    two dtypes take the general path and promote as PyTorch does."""
    from tidu.core import dispatch

    calls = []
    short = dispatch.bind_same
    monkeypatch.setattr("tidu.ops.math.bind_same", lambda p, args: calls.append(p.name) or short(p, args))
    rng = np.random.default_rng(4)
    xs, ys, cond = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal((3, 1)) > 0
    outs = []
    for lib, dev in ((torch, "cpu"), (tidu, device)):
        x, y = (lib.tensor(a, requires_grad=True, device=dev) for a in (xs, ys))
        out = lib.where(lib.tensor(cond, device=dev), x, y)
        (out * out).sum().backward()
        outs.append([t.detach().cpu().numpy() for t in (out, x.grad, y.grad)])
    assert "select" in calls
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    calls.clear()
    mixed = tidu.where(tidu.tensor(cond, device=device), tidu.ones(3, 4, device=device),
                       tidu.zeros(4, dtype=tidu.float64, device=device))
    assert mixed.dtype is tidu.float64 and "select" not in calls


# --- inverse trigonometric and hyperbolic functions, log10, atan2, hypot, fmod, ... ----------------
_EDGES = np.array([-3.0, -1.5, -1.0, -0.99, -0.5, -0.0, 0.0, 0.3, 0.99, 1.0, 1.2, 2.0, 10.0, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin",
                                  "arccos", "arctan", "log10", "frac", "nan_to_num"])
def test_unary_functions_at_their_edges_match_torch(name: str, dtype: str) -> None:
    """Values and gradients at the domain's edges, infinities, signed zeros and NaN."""
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(_EDGES, dtype=getattr(lib, dtype), requires_grad=True)
        y = getattr(lib, name)(x)
        y.backward(lib.ones(len(_EDGES), dtype=getattr(lib, dtype)))
        results.append((y.detach().numpy(), x.grad.numpy()))
    tol = 1e-12 if dtype == "float64" else 2e-6
    for ours, ref in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["atan2", "arctan2", "hypot", "fmod", "logaddexp"])
def test_binary_functions_at_their_edges_match_torch(name: str, dtype: str) -> None:
    a = np.array([[-3.0, -1.0, 0.0, 0.0, 2.5, 7.0, np.inf, 1.0, -0.0, 5.0, 800.0, -np.inf]])
    b = np.array([[2.0, -2.0, 1.0, -1.0, 0.0, -3.0, 1.0, np.inf, -2.0, 5.0, 800.0, 3.0]])
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.tensor(b, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib, name)(x, y)
        out.sum().backward()
        results.append((out.detach().numpy(), x.grad.numpy(), y.grad.numpy()))
    tol = 1e-12 if dtype == "float64" else 2e-6
    for ours, ref in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("case", [
    lambda L: L.fmod(L.tensor([7, -7, 7, -7, 0]), L.tensor([2, 2, -2, -2, 3])),
    lambda L: L.fmod(L.tensor([7, -7]), 3), lambda L: L.tensor([5.5, -5.5]).fmod(2),
    lambda L: L.atan2(L.tensor([1, -1]), L.tensor([2, 2])), lambda L: L.clamp_min(L.tensor([-1.0, 2.0]), 0.5),
    lambda L: L.clamp_max(L.tensor([-1.0, 2.0]), 0.5), lambda L: L.tensor([-1.0, 2.0]).clamp_max(0.5), lambda L: L.nan_to_num(L.tensor([float("nan"), -float("inf")]), 1.0, 2.0, -2.0),
    lambda L: L.nan_to_num(L.tensor([1, 2])), lambda L: L.logaddexp(L.tensor([1, 2]), L.tensor([0.5, 0.5])),
])
def test_integer_operands_and_options_match_torch(case: Callable) -> None:
    ours, ref = case(tidu), case(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", ["L.fmod(L.tensor([1, 2]), L.tensor([1, 0]))", "L.hypot(L.tensor([1]), L.tensor([2]))",
                                  "L.frac(L.tensor([1]))", "L.fmod(L.tensor([True]), L.tensor([True]))"])
def test_new_function_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


@pytest.mark.parametrize(
    ("a", "b", "alpha"),
    [([1.0, 2.0], 1, 2), ([1.0, 2.0], 2.5, -0.5), ([1, 2], 3, 2), ([1, 2], 1.5, 2), ([1.0, 2.0], [0.5, 1.0], 3)],
)
def test_add_and_sub_with_alpha_match_torch(a: list, b: Any, alpha: Any) -> None:
    """A Python number as ``other`` with ``alpha`` (``x.sub(1, alpha=2)``) scales the number."""
    for name in ("add", "sub"):
        other_t = torch.tensor(b) if isinstance(b, list) else b
        other = tidu.tensor(b) if isinstance(b, list) else b
        want = getattr(torch, name)(torch.tensor(a), other_t, alpha=alpha)
        got = getattr(tidu, name)(tidu.tensor(a), other, alpha=alpha)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], name
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
        np.testing.assert_array_equal(getattr(tidu.tensor(a), name)(other, alpha=alpha).numpy(), want.numpy())


@pytest.mark.parametrize("other", [1, [1, 1]])
def test_add_float_alpha_on_integers_raises_like_torch(other: Any) -> None:
    message = "For integral input tensors, argument alpha must not be a floating point number."
    for lib in (torch, tidu):
        b = lib.tensor(other) if isinstance(other, list) else other
        for name in ("add", "sub"):
            with pytest.raises(RuntimeError, match=message):
                getattr(lib, name)(lib.tensor([1, 2]), b, alpha=0.5)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 2)])
def test_where_of_condition_alone_is_nonzero_as_tuple(shape: tuple) -> None:
    values = np.random.default_rng(0).standard_normal(shape) > 0
    want = torch.where(torch.tensor(values))
    got = tidu.where(tidu.tensor(values))
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == tidu.int64
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    with pytest.raises(TypeError):
        tidu.where(tidu.tensor(values), tidu.tensor(1.0))


@pytest.mark.parametrize(("a", "b"), [((2, 3), (3, 2)), ((4, 2, 3), (5, 3)), ((2, 3), (2, 4))])
def test_a_broadcast_mismatch_names_the_last_mismatched_dimension_as_pytorch_does(a: tuple, b: tuple) -> None:
    theirs, ours = errors_of(lambda L: L.ones(a) + L.ones(b))
    assert ours[0] is theirs[0]
    assert ours[1].startswith(theirs[1])  # tidu's adds the op and both shapes


@pytest.mark.parametrize("alpha", [2, 0, True])
@pytest.mark.parametrize("dtypes", [("bool", "bool"), ("int8", "bool"), ("uint8", "int8"), ("float16", "int64"),
                                    ("bool", "float64"), ("int32", "number"), ("bool", "number"), ("int8", "bool number")])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_alpha_scales_other_in_the_result_dtype(alpha: Any, dtypes: tuple, op: str) -> None:
    """``add``/``sub`` scale ``other`` by ``alpha`` in the result's dtype (``int8 + 2 * bool`` is
    int8; bool + alpha * bool is bool arithmetic, ``alpha`` read as True or False)."""
    def run(L):  # noqa: ANN001, ANN202
        x = L.tensor([1, 0, 1]).to(getattr(L, dtypes[0]))
        other = {"number": 3, "bool number": True}.get(dtypes[1])
        y = L.tensor([1, 1, 0]).to(getattr(L, dtypes[1])) if other is None else other
        return getattr(L, op)(x, y, alpha=alpha)

    try:
        ref = run(torch)
    except (RuntimeError, TypeError):
        assert_same_error(run, same_message=False)
        return
    ours = run(tidu)
    assert (str(ours.dtype).split(".")[-1], ours.tolist()) == (str(ref.dtype).split(".")[-1], ref.tolist())
