"""Scans along one axis: the input is viewed as (outer, scanned, inner)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .elementwise import JIT
from .reduce import _as_block


@njit(**JIT)
def _cumsum3(x, reverse, out):  # pragma: no cover - compiled
    n = x.shape[1]
    for a in range(x.shape[0]):
        for b in range(x.shape[2]):
            prev = n - 1 if reverse else 0
            out[a, prev, b] = x[a, prev, b]
            for i in range(1, n):
                k = n - 1 - i if reverse else i
                out[a, k, b] = out[a, prev, b] + x[a, k, b]
                prev = k


def cumsum_axis(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """Inclusive running sum along ``axis`` (from the end when ``reverse``)."""
    if x.ndim == 0 or x.size == 0:
        return x.copy()
    block, _ = _as_block(x, (axis,))
    out = np.empty(block.shape, x.dtype)
    _cumsum3(block, reverse, out)
    return out.reshape(x.shape)
