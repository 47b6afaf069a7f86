"""softmax and log_softmax of float32 rows on the CPU, fused: a pass finds the row maximum ``m``
(NaN if the row has one), one writes ``e = exp(x - m)`` (tidu/backends/cpu/fastmath.py's
vectorizable ``exp``, within 1 ULP) and sums it in float64, a second writes ``e / sum`` or
``x - m - log(sum)``. A row per task, rows in parallel when there is enough work (a row's
result does not depend on the thread count); ``reassoc`` lets LLVM keep a vector of partial
sums. Other layouts and float64 take numpy's path (tidu/primitives/nn.py).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .elementwise import JIT
from .fastmath import exp_f32
from .threads import run_tasks


@njit(**JIT, fastmath={"reassoc"})
def _rows(x, out, log, lo, hi):  # pragma: no cover - compiled
    n = x.shape[1]
    for r in range(lo, hi):
        xs, o = x[r], out[r]
        mr = xs[0]
        nan = False
        for j in range(n):
            v = xs[j]
            mr = v if v > mr else mr
            nan |= v != v
        if nan:
            mr = np.float32(np.nan)
        s = 0.0
        for j in range(n):
            e = exp_f32(xs[j] - mr)
            o[j] = e
            s += e
        if log:
            ls = math.log(s)
            for j in range(n):
                o[j] = (xs[j] - mr) - ls
        else:
            for j in range(n):
                o[j] = o[j] / s


def last_axis(x: np.ndarray, log: bool) -> np.ndarray | None:
    """``(log_)softmax`` of ``x`` along its last axis, or ``None`` where numpy's path applies
    (not float32, not C-contiguous, empty or 0-d)."""
    if x.dtype != np.float32 or x.ndim == 0 or x.size == 0 or not x.flags.c_contiguous:
        return None
    n = x.shape[-1]
    rows = x.size // n
    x2 = x.reshape(rows, n)
    out = np.empty(x.shape, x.dtype)
    run_tasks(_rows, rows, x.size, x2, out.reshape(rows, n), log)
    return out
