"""layer_norm on the CPU: one pass over each row's mean, one over its squared deviations, one
writing ``(x - mean) / sqrt(var + eps)``, a row per task (rows run in parallel when there is
enough work; each row's result does not depend on the thread count). The arithmetic stays in the
element dtype, as PyTorch's: float32 rows sum in float32 vector lanes (a float64 sum would
convert every element; that made the kernels 2.5 times slower).

``layer_norm_tangent`` is its derivative at ``x`` applied to ``dx``,
``r * (dx - mean(dx) - y * mean(y * dx))``: the mean pass over ``x``, one pass summing the
squared deviations, ``dx`` and ``y * dx`` together, one writing the result.

``reassoc`` lets LLVM keep a vector of partial sums (the order is fixed by the compiled loop,
not by the data), as in tidu/backends/cpu/reduce.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous
from .threads import run_tasks


@njit(**JIT, fastmath={"reassoc"})
def _mean(xs, n):  # pragma: no cover - compiled
    s = n - n
    for j in range(xs.shape[0]):
        s += xs[j]
    return s / n


@njit(**JIT, fastmath={"reassoc"})
def _rows(x, out, n_eps, lo, hi):  # pragma: no cover - compiled
    n, eps = n_eps[0], n_eps[1]  # in the element dtype: the arithmetic stays in it (vectorized)
    for r in range(lo, hi):
        xs = x[r]
        mean = _mean(xs, n)
        s = n - n
        for j in range(x.shape[1]):
            d = xs[j] - mean
            s += d * d
        scale = 1.0 / math.sqrt(s / n + eps)
        o = out[r]
        for j in range(x.shape[1]):
            o[j] = (xs[j] - mean) * scale


def layer_norm(x: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """Normalize ``x`` over its last ``k`` dimensions (biased variance)."""
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    rows = x.size // n
    n_eps = np.array([n, eps], x.dtype)
    run_tasks(_rows, rows, x.size, contiguous(x).reshape(rows, n), out.reshape(rows, n), n_eps)
    return out


@njit(**JIT, fastmath={"reassoc"})
def _tangent_rows(dx, x, y, out, n_eps, lo, hi):  # pragma: no cover - compiled
    n, eps = n_eps[0], n_eps[1]
    for r in range(lo, hi):
        xs = x[r]
        ys = y[r]
        ds = dx[r]
        mean = _mean(xs, n)
        s = n - n
        a = n - n
        b = n - n
        for j in range(x.shape[1]):
            d = xs[j] - mean
            s += d * d
            a += ds[j]
            b += ds[j] * ys[j]
        scale = 1.0 / math.sqrt(s / n + eps)
        a /= n
        b /= n
        o = out[r]
        for j in range(x.shape[1]):
            o[j] = scale * (ds[j] - a - ys[j] * b)


def layer_norm_tangent(dx: np.ndarray, x: np.ndarray, y: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """``layer_norm``'s derivative at ``x`` (with ``y = layer_norm(x)``) applied to ``dx``."""
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    rows = x.size // n
    run_tasks(_tangent_rows, rows, 3 * x.size, *(contiguous(a).reshape(rows, n) for a in (dx, x, y)),
              out.reshape(rows, n), np.array([n, eps], x.dtype))
    return out
