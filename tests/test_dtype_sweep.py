"""Every dtype against PyTorch: ops run on each of tidu's ten dtypes (and, for binary ops, on
pairs of them, with scalars and broadcasting) in tidu and in PyTorch; the outcome must agree:
the same exception class, or the same result dtype, shape and values.

The suite runs the unary table on two shapes and the binary table on a sample of dtype pairs;
``python tests/test_dtype_sweep.py`` runs all of it (every shape, every pair), as the fuzzers do
(CONTRIBUTING.md). The first sweep (stop 36) found bfloat16 values read as their bits by the ops
computed on the host, float overflow PyTorch refuses, and promotion differences (``ldexp``,
``add`` with ``alpha``, ``einsum`` of integers).
"""

from __future__ import annotations

import itertools
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
SHAPES = [(2, 3), (0, 3), (), (3,)]
PAIRS = [((2, 3), (2, 3)), ((), (3,)), ((2, 3), ()), ((0, 3), (3,))]

UNARY: dict[str, Callable] = {
 "abs": lambda L, x: L.abs(x), "neg": lambda L, x: L.neg(x), "exp": lambda L, x: L.exp(x), "exp2": lambda L, x: L.exp2(x),
 "expm1": lambda L, x: L.expm1(x), "log": lambda L, x: L.log(x), "log2": lambda L, x: L.log2(x), "log1p": lambda L, x: L.log1p(x),
 "sqrt": lambda L, x: L.sqrt(x), "rsqrt": lambda L, x: L.rsqrt(x), "sin": lambda L, x: L.sin(x), "cos": lambda L, x: L.cos(x),
 "tan": lambda L, x: L.tan(x), "tanh": lambda L, x: L.tanh(x), "sigmoid": lambda L, x: L.sigmoid(x), "relu": lambda L, x: L.relu(x),
 "sign": lambda L, x: L.sign(x), "floor": lambda L, x: L.floor(x), "ceil": lambda L, x: L.ceil(x), "round": lambda L, x: L.round(x),
 "clamp": lambda L, x: L.clamp(x, -1, 1), "clampf": lambda L, x: L.clamp(x, -1.5, 1.5), "clip": lambda L, x: L.clip(x, min=0),
 "erf": lambda L, x: L.erf(x), "reciprocal": lambda L, x: L.reciprocal(x), "square": lambda L, x: L.square(x),
 "isnan": lambda L, x: L.isnan(x), "isfinite": lambda L, x: L.isfinite(x),
 "sum": lambda L, x: x.sum(), "sum0": lambda L, x: x.sum(0), "mean": lambda L, x: x.mean(), "prod": lambda L, x: x.prod(),
 "prod0": lambda L, x: x.prod(0), "max": lambda L, x: x.max(), "min": lambda L, x: x.min(), "max0": lambda L, x: x.max(0)[0], "max0i": lambda L, x: x.max(0)[1],
 "amax": lambda L, x: x.amax(), "amin0": lambda L, x: x.amin(0), "argmax": lambda L, x: x.argmax(), "argmin0": lambda L, x: x.argmin(0),
 "var": lambda L, x: x.var(), "std0": lambda L, x: x.std(0), "logsumexp0": lambda L, x: L.logsumexp(x, 0), "norm": lambda L, x: x.norm(),
 "cumsum0": lambda L, x: x.cumsum(0), "all": lambda L, x: x.all(), "any0": lambda L, x: x.any(0),
 "neg_op": lambda L, x: -x, "invert": lambda L, x: ~x, "pow2": lambda L, x: x ** 2, "pow_half": lambda L, x: x ** 0.5, "rpow": lambda L, x: 2 ** x,
 "add_int": lambda L, x: x + 1, "add_float": lambda L, x: x + 1.5, "mul_bool": lambda L, x: x * True, "div_int": lambda L, x: x / 2,
 "floordiv": lambda L, x: x // 2, "mod": lambda L, x: x % 3, "rfloordiv": lambda L, x: 7 // x, "rmod": lambda L, x: 7.5 % x,
 "rsub": lambda L, x: 1 - x, "rdiv": lambda L, x: 1 / x, "eq0": lambda L, x: x == 0, "lt1": lambda L, x: x < 1.5,
 "and_true": lambda L, x: x & True, "or1": lambda L, x: x | 1, "xor": lambda L, x: x ^ 1,
 "float": lambda L, x: x.float(), "double": lambda L, x: x.double(), "long": lambda L, x: x.long(), "int": lambda L, x: x.int(), "bool": lambda L, x: x.bool(),
 "flip": lambda L, x: x.flip(0), "roll": lambda L, x: x.roll(1), "tril": lambda L, x: x.tril(), "cumprod0": lambda L, x: x.cumprod(0),
 "sort": lambda L, x: x.sort()[0], "argsort": lambda L, x: x.argsort(), "topk1": lambda L, x: x.topk(1)[0], "unique": lambda L, x: L.unique(x),
 "nonzero": lambda L, x: x.nonzero(), "count_nonzero": lambda L, x: L.count_nonzero(x), "masked_fill": lambda L, x: x.masked_fill(x > 0, 0),
 "where_scalar": lambda L, x: L.where(x > 0, x, 0), "where_float": lambda L, x: L.where(x > 0, x, 0.5), "lerp": lambda L, x: L.lerp(x, x, 0.5),
 "sign_bit": lambda L, x: L.signbit(x), "trunc": lambda L, x: L.trunc(x), "frac": lambda L, x: L.frac(x), "fmod": lambda L, x: L.fmod(x, 2),
 "remainder": lambda L, x: L.remainder(x, -2), "bitwise_not": lambda L, x: L.bitwise_not(x), "logical_not": lambda L, x: L.logical_not(x),
 "nan_to_num": lambda L, x: L.nan_to_num(x), "cummax": lambda L, x: L.cummax(x, 0)[0], "mean0": lambda L, x: x.mean(0), "median": lambda L, x: x.median(),
 "softmax": lambda L, x: L.softmax(x, 0), "log_softmax": lambda L, x: L.log_softmax(x, 0), "sum_dtype": lambda L, x: x.sum(dtype=L.float64),
 "cumsum_dtype": lambda L, x: x.cumsum(0, dtype=L.int32), "mean_dtype": lambda L, x: x.mean(dtype=L.float64), "diff": lambda L, x: L.diff(x, dim=0),
 "clone": lambda L, x: x.clone(), "zeros_like": lambda L, x: L.zeros_like(x), "full_like": lambda L, x: L.full_like(x, 2.5), "ones_like_f": lambda L, x: L.ones_like(x, dtype=L.float32),
 "abs_": lambda L, x: x.clone().abs_(), "add_": lambda L, x: x.clone().add_(1), "mul_f": lambda L, x: x.clone().mul_(1.5), "div_": lambda L, x: x.clone().div_(2),
 "clamp_": lambda L, x: x.clone().clamp_(0, 1), "fill_": lambda L, x: x.clone().fill_(2.5), "zero_": lambda L, x: x.clone().zero_(),
 "item": lambda L, x: x.reshape(-1)[0].item() if x.numel() else x.sum().item(), "tolist": lambda L, x: x.tolist(),
 "eq_self": lambda L, x: L.equal(x, x), "allclose": lambda L, x: L.allclose(x, x), "isclose": lambda L, x: L.isclose(x, x),
 "deg2rad": lambda L, x: L.deg2rad(x), "atan": lambda L, x: L.atan(x), "asinh": lambda L, x: L.asinh(x), "sinc": lambda L, x: L.sinc(x),
 "logit": lambda L, x: L.logit(x), "xlogy": lambda L, x: L.xlogy(x, x), "hypot": lambda L, x: L.hypot(x, x), "atan2": lambda L, x: L.atan2(x, x),
 "maximum_s": lambda L, x: L.maximum(x, L.tensor(1)), "fmax": lambda L, x: L.fmax(x, x), "copysign": lambda L, x: L.copysign(x, -1),
 "float_power": lambda L, x: L.float_power(x, 2), "true_divide": lambda L, x: L.true_divide(x, 3), "floor_divide": lambda L, x: L.floor_divide(x, -3),
 "addcmul": lambda L, x: L.addcmul(x, x, x, value=2), "heaviside": lambda L, x: L.heaviside(x, x), "gcd": lambda L, x: L.gcd(x, x), "lcm": lambda L, x: L.lcm(x, x + 1),
 "bitwise_and": lambda L, x: L.bitwise_and(x, 3), "lshift": lambda L, x: x << 1, "rshift": lambda L, x: x >> 1, "logical_xor": lambda L, x: L.logical_xor(x, x > 0),
 "clamp_min_t": lambda L, x: L.clamp(x, min=L.tensor(0.5)), "argwhere": lambda L, x: L.argwhere(x), "bincount": lambda L, x: L.bincount(x.reshape(-1)),
 "histc": lambda L, x: L.histc(x, 4), "searchsorted": lambda L, x: L.searchsorted(L.tensor([0, 1, 2]), x), "bucketize": lambda L, x: L.bucketize(x, L.tensor([0, 1, 2])),
 "kthvalue": lambda L, x: x.kthvalue(1, 0)[0] if x.ndim else x.kthvalue(1)[0], "mode": lambda L, x: x.mode(0)[0] if x.ndim else x.mode()[0],
 "nansum": lambda L, x: L.nansum(x), "nanmean": lambda L, x: L.nanmean(x), "aminmax": lambda L, x: L.aminmax(x)[0], "std_mean": lambda L, x: L.std_mean(x)[0],
 "var_mean0": lambda L, x: L.var_mean(x, 0)[1] if x.ndim else L.var_mean(x)[1], "logcumsumexp": lambda L, x: L.logcumsumexp(x, 0), "cumprod_int": lambda L, x: x.cumprod(0, dtype=L.int64),
 "trapz": lambda L, x: L.trapezoid(x), "dist": lambda L, x: L.dist(x, x * 2), "renorm": lambda L, x: L.renorm(x, 2, 0, 1),
}
BINARY: dict[str, Callable] = {
 "add": lambda L, a, b: a + b, "sub": lambda L, a, b: a - b, "mul": lambda L, a, b: a * b, "div": lambda L, a, b: a / b,
 "floordiv": lambda L, a, b: a // b, "mod": lambda L, a, b: a % b, "pow": lambda L, a, b: a ** b, "eq": lambda L, a, b: a == b,
 "lt": lambda L, a, b: a < b, "and": lambda L, a, b: a & b, "or": lambda L, a, b: a | b, "xor": lambda L, a, b: a ^ b,
 "maximum": lambda L, a, b: L.maximum(a, b), "minimum": lambda L, a, b: L.minimum(a, b), "where": lambda L, a, b: L.where(a > 0, a, b),
 "atan2": lambda L, a, b: L.atan2(a, b), "add_alpha": lambda L, a, b: L.add(a, b, alpha=2), "sub_alpha": lambda L, a, b: L.sub(a, b, alpha=2),
 "lerp": lambda L, a, b: L.lerp(a, b, 0.5), "cat": lambda L, a, b: L.cat([a.reshape(-1), b.reshape(-1)]), "stack": lambda L, a, b: L.stack([a, b]) ,
 "matmul": lambda L, a, b: a @ b.transpose(-1, -2) if a.ndim >= 2 and b.ndim >= 2 else a @ b, "dot": lambda L, a, b: L.dot(a.reshape(-1), b.reshape(-1)),
 "iadd": lambda L, a, b: a.clone().__iadd__(b), "imul": lambda L, a, b: a.clone().__imul__(b), "idiv": lambda L, a, b: a.clone().__itruediv__(b),
 "isub": lambda L, a, b: a.clone().__isub__(b), "copy_": lambda L, a, b: a.clone().copy_(b), "masked_fill_t": lambda L, a, b: a.masked_fill(a > 0, b.reshape(-1)[0] if b.numel() else b.sum()),
 "fmod": lambda L, a, b: L.fmod(a, b), "remainder": lambda L, a, b: L.remainder(a, b), "true_divide": lambda L, a, b: L.true_divide(a, b),
 "floor_divide": lambda L, a, b: L.floor_divide(a, b), "ne": lambda L, a, b: a != b, "ge": lambda L, a, b: a >= b,
 "logical_and": lambda L, a, b: L.logical_and(a, b), "bitwise_or": lambda L, a, b: L.bitwise_or(a, b), "hypot": lambda L, a, b: L.hypot(a, b),
 "copysign": lambda L, a, b: L.copysign(a, b), "fmin": lambda L, a, b: L.fmin(a, b), "xlogy": lambda L, a, b: L.xlogy(a, b),
 "isclose": lambda L, a, b: L.isclose(a, b), "eq_fn": lambda L, a, b: L.equal(a, b), "heaviside": lambda L, a, b: L.heaviside(a, b),
 "outer": lambda L, a, b: L.outer(a.reshape(-1), b.reshape(-1)), "addcdiv": lambda L, a, b: L.addcdiv(a, a, b, value=0.5),
 "clamp_t": lambda L, a, b: L.clamp(a, min=b), "float_power": lambda L, a, b: L.float_power(a, b), "ldexp": lambda L, a, b: L.ldexp(a, b),
 "rshift": lambda L, a, b: a >> b, "gcd": lambda L, a, b: L.gcd(a, b),
}


# (op, dtype): outcomes that differ from PyTorch's, each for a reason (docs/guides/pytorch-differences.md)
KNOWN = {
    # an empty integer or bool input: PyTorch's kernel never runs (its empty result, or its
    # IndexError), tidu's dtype check does
    ("median", "empty"), ("softmax", "empty"), ("log_softmax", "empty"), ("kthvalue", "empty"), ("histc", "empty"),
    ("kthvalue", "bool"),  # PyTorch's bool kthvalue runs on a 0-d tensor only
    ("trapz", "bool"),  # a 0-d bool: PyTorch's dimension error, tidu's dtype error
    ("matmul", "bool"), ("dot", "bool"),  # bool products of mismatched shapes: PyTorch names the shapes first
    ("addcdiv", "bfloat16"),  # an integer divided by a bfloat16: one ulp of bfloat16 apart
    # a 0-d half exponent: PyTorch's 2 ** e is in the product's dtype there, tidu's in the exponent's
    ("ldexp", "float16", ()), ("ldexp", "bfloat16", ()),
}


def _data(shape: tuple, dt: str, rng: np.random.Generator) -> np.ndarray:
    a = rng.uniform(-3, 3, shape)
    if dt == "bool":
        return a > 0
    if dt == "uint8":
        return np.abs(a * 10).astype(np.uint8)
    if dt.startswith("int"):
        return (a * 10).astype(dt)
    return a.astype(np.float32 if dt == "bfloat16" else dt)


def _outcome(lib: Any, fn: Callable, arrays: list, dts: list) -> tuple:
    """What ``fn`` gives on ``lib``: ``("raised", class)``, or the result's kind, dtype, shape and values."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib, *[lib.tensor(a).to(getattr(lib, d)) for a, d in zip(arrays, dts)])
    except Exception as e:  # noqa: BLE001 - the class is the outcome compared
        return ("raised", type(e).__name__)
    if isinstance(r, lib.Tensor):
        name = str(r.dtype).split(".")[-1]
        values = r.detach().to(lib.float64).numpy() if name in ("float16", "bfloat16") else r.detach().numpy()
        return ("tensor", name, tuple(r.shape), values)
    return ("value", type(r).__name__, r)


def difference(fn: Callable, arrays: list, dts: list) -> str | None:
    """How tidu's outcome differs from PyTorch's, or ``None``."""
    ours, ref = _outcome(tidu, fn, arrays, dts), _outcome(torch, fn, arrays, dts)
    if ours[0] != ref[0] or ours[0] == "raised":
        return None if ours == ref else f"tidu {ours[:3]}, torch {ref[:3]}"
    if ours[:3] != ref[:3] and ours[0] == "tensor":
        return f"tidu {ours[:3]}, torch {ref[:3]}"
    a, b = ours[-1], ref[-1]
    try:
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return None if a == b else f"values {a} and {b}"
    tol = 1e-2 if ours[1] in ("float16", "bfloat16") else 1e-4
    return None if np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True) else "values"


def _known(name: str, dts: list, shapes: list) -> bool:
    return (any((name, d) in KNOWN or (name, d, s) in KNOWN for d, s in zip(dts, shapes))
            or any(0 in s for s in shapes) and (name, "empty") in KNOWN)


def sweep_unary(name: str, shapes: list = SHAPES) -> list[str]:
    rng = np.random.default_rng(0)
    found = []
    for dt, shape in itertools.product(DTYPES, shapes):
        diff = None if _known(name, [dt], [shape]) else difference(UNARY[name], [_data(shape, dt, rng)], [dt])
        if diff:
            found.append(f"{name} {dt} {shape}: {diff}")
    return found


def sweep_binary(name: str, pairs: list, shapes: list = PAIRS) -> list[str]:
    rng = np.random.default_rng(0)
    found = []
    for (da, db), (sa, sb) in itertools.product(pairs, shapes):
        if _known(name, [da, db], [sa, sb]):
            continue
        diff = difference(BINARY[name], [_data(sa, da, rng), _data(sb, db, rng)], [da, db])
        if diff:
            found.append(f"{name} {da} {db} {sa} {sb}: {diff}")
    return found


# the suite's sample of pairs: each dtype with itself, with float32 and with int64, both ways
SAMPLE_PAIRS = sorted({(a, b) for a in DTYPES for b in (a, "float32", "int64")} | {(b, a) for a in DTYPES for b in ("float32", "int64")})


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_over_every_dtype_match_torch(name: str) -> None:
    assert not sweep_unary(name, [(2, 3), (0, 3)])


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_over_dtype_pairs_match_torch(name: str) -> None:
    assert not sweep_binary(name, SAMPLE_PAIRS, [((2, 3), (2, 3)), ((), (3,))])


def main() -> int:
    """``python tests/test_dtype_sweep.py``: every op, dtype, pair and shape; prints each difference."""
    found = [d for name in sorted(UNARY) for d in sweep_unary(name)]
    found += [d for name in sorted(BINARY) for d in sweep_binary(name, list(itertools.product(DTYPES, DTYPES)))]
    for line in found:
        print(line)
    print(f"{len(UNARY)} unary and {len(BINARY)} binary ops over {len(DTYPES)} dtypes: {len(found)} differences")
    return len(found)


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
