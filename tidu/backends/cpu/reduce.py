"""Reductions over a block of axes: the input is viewed as (outer, reduced, inner).

Floating-point sums accumulate in float64. ``max`` propagates NaN like PyTorch. When the
reduced axes are the innermost (``inner == 1``: a row sum, a full sum), each row is reduced
with ``LANES`` independent accumulators, so the loop vectorizes instead of waiting on one
running total.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous


@njit(**JIT)
def _sum3(x, acc):  # pragma: no cover - compiled
    for a in range(x.shape[0]):
        for k in range(x.shape[1]):
            for b in range(x.shape[2]):
                acc[a, b] += x[a, k, b]


LANES = 8


@njit(**JIT)
def _sum_rows(x, acc):  # pragma: no cover - compiled
    """acc[a] = sum of row a of x (outer, n), with LANES partial sums."""
    n = x.shape[1]
    lanes = np.zeros(LANES, acc.dtype)
    for a in range(x.shape[0]):
        lanes[:] = 0
        k = 0
        while k + LANES <= n:
            for j in range(LANES):
                lanes[j] += x[a, k + j]
            k += LANES
        total = lanes.sum()
        while k < n:
            total += x[a, k]
            k += 1
        acc[a] += total


@njit(**JIT)
def _max_rows(x, out):  # pragma: no cover - compiled
    """out[a] = max of row a of x (outer, n >= 1), NaN winning, with LANES partial maxima."""
    n = x.shape[1]
    lanes = np.empty(LANES, x.dtype)
    for a in range(x.shape[0]):
        for j in range(LANES):
            lanes[j] = x[a, 0]
        k = 0
        while k + LANES <= n:
            for j in range(LANES):
                v = x[a, k + j]
                lanes[j] = v if (v > lanes[j] or v != v) else lanes[j]
            k += LANES
        best = lanes[0]
        for j in range(1, LANES):
            v = lanes[j]
            best = v if (v > best or v != v) else best
        while k < n:
            v = x[a, k]
            best = v if (v > best or v != v) else best
            k += 1
        out[a] = best


@njit(**JIT)
def _max3(x, out):  # pragma: no cover - compiled
    for a in range(x.shape[0]):
        for b in range(x.shape[2]):
            out[a, b] = x[a, 0, b]
        for k in range(1, x.shape[1]):
            for b in range(x.shape[2]):
                v = x[a, k, b]
                if v > out[a, b] or v != v:
                    out[a, b] = v


def _as_block(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """Move ``axes`` next to each other and view as (outer, reduced, inner), contiguous."""
    keep = [d for d in range(x.ndim) if d not in axes]
    lo = min(axes)
    if list(axes) != list(range(lo, lo + len(axes))):
        order = keep[:0] + [d for d in keep if d < lo] + list(axes) + [d for d in keep if d > lo]
        x = np.transpose(x, order)
        axes = tuple(range(len([d for d in keep if d < lo]), len([d for d in keep if d < lo]) + len(axes)))
        lo = axes[0]
    hi = lo + len(axes)
    x = contiguous(x)
    outer = prod(x.shape[:lo])
    inner = prod(x.shape[hi:])
    out_shape = x.shape[:lo] + x.shape[hi:]
    return x.reshape(outer, prod(x.shape[lo:hi]), inner), out_shape


def sum_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    block, out_shape = _as_block(x, axes)
    acc_dtype = np.float64 if x.dtype.kind == "f" else np.int64
    acc = np.zeros((block.shape[0], block.shape[2]), acc_dtype)
    if block.shape[2] == 1:
        _sum_rows(block.reshape(block.shape[0], block.shape[1]), acc.reshape(-1))
    else:
        _sum3(block, acc)
    return acc.astype(x.dtype if x.dtype.kind != "b" else np.int64, copy=False).reshape(out_shape)


def max_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    block, out_shape = _as_block(x, axes)
    out = np.empty((block.shape[0], block.shape[2]), x.dtype)
    if block.shape[2] == 1 and block.shape[1] > 0:
        _max_rows(block.reshape(block.shape[0], block.shape[1]), out.reshape(-1))
    else:
        _max3(block, out)
    return out.reshape(out_shape)


@njit(**JIT)
def _prod3(x, acc):  # pragma: no cover - compiled
    for a in range(x.shape[0]):
        for k in range(x.shape[1]):
            for b in range(x.shape[2]):
                acc[a, b] *= x[a, k, b]


def prod_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    block, out_shape = _as_block(x, axes)
    acc = np.ones((block.shape[0], block.shape[2]), np.float64 if x.dtype.kind == "f" else np.int64)
    _prod3(block, acc)
    return acc.astype(x.dtype, copy=False).reshape(out_shape)


@njit(**JIT)
def _arg3(x, largest, out):  # pragma: no cover - compiled
    """First index of the max (``largest``) or min along axis 1; a NaN wins at once."""
    for a in range(x.shape[0]):
        for b in range(x.shape[2]):
            best = x[a, 0, b]
            at = 0
            if best == best:
                for k in range(1, x.shape[1]):
                    v = x[a, k, b]
                    if v != v:
                        at = k
                        break
                    if (v > best) if largest else (v < best):
                        best = v
                        at = k
            out[a, b] = at


def arg_axis(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    block, out_shape = _as_block(x, (axis,))
    out = np.empty((block.shape[0], block.shape[2]), np.int64)
    _arg3(block.view(np.uint8) if x.dtype.kind == "b" else block, largest, out)
    return out.reshape(out_shape)
