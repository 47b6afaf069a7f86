"""layer_norm on the CPU: one pass over each row's mean, one over its squared deviations, one
writing ``(x - mean) / sqrt(var + eps)``, in float64, a row per task (rows run in parallel when
there is enough work; each row's result does not depend on the thread count).

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
