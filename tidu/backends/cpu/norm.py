"""layer_norm on the CPU: one pass over each row's mean, one over its squared deviations, one
writing ``(x - mean) / sqrt(var + eps)``, in float64, a row per task (rows run in parallel when
there is enough work; each row's result does not depend on the thread count).

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
def _rows(x, out, eps, lo, hi):  # pragma: no cover - compiled
    n = x.shape[1]
    for r in range(lo, hi):
        xs = x[r]
        s = 0.0
        for j in range(n):
            s += xs[j]
        mean = s / n
        s = 0.0
        for j in range(n):
            d = xs[j] - mean
            s += d * d
        scale = 1.0 / math.sqrt(s / n + eps)
        o = out[r]
        for j in range(n):
            o[j] = (xs[j] - mean) * scale


def layer_norm(x: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """Normalize ``x`` over its last ``k`` dimensions (biased variance)."""
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    rows = x.size // n
    run_tasks(_rows, rows, x.size, contiguous(x).reshape(rows, n), out.reshape(rows, n), float(eps))
    return out


@njit(**JIT, fastmath={"reassoc"})
def _tangent_rows(dx, x, y, out, eps, lo, hi):  # pragma: no cover - compiled
    n = x.shape[1]
    for r in range(lo, hi):
        xs = x[r]
        ys = y[r]
        ds = dx[r]
        s = 0.0
        for j in range(n):
            s += xs[j]
        mean = s / n
        s = 0.0
        a = 0.0
        b = 0.0
        for j in range(n):
            d = xs[j] - mean
            s += d * d
            a += ds[j]
            b += ds[j] * np.float64(ys[j])
        scale = 1.0 / math.sqrt(s / n + eps)
        a /= n
        b /= n
        o = out[r]
        for j in range(n):
            o[j] = scale * (ds[j] - a - ys[j] * b)


def layer_norm_tangent(dx: np.ndarray, x: np.ndarray, y: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """``layer_norm``'s derivative at ``x`` (with ``y = layer_norm(x)``) applied to ``dx``."""
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    rows = x.size // n
    run_tasks(_tangent_rows, rows, 3 * x.size, *(contiguous(a).reshape(rows, n) for a in (dx, x, y)),
              out.reshape(rows, n), float(eps))
    return out
