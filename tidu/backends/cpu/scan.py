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


@njit(**JIT)
def _linear_recurrence3(a, b, reverse, out):  # pragma: no cover - compiled
    n = a.shape[1]
    for o in range(a.shape[0]):
        for c in range(a.shape[2]):
            prev = 0.0
            for i in range(n):
                k = n - 1 - i if reverse else i
                prev = a[o, k, c] * prev + b[o, k, c]
                out[o, k, c] = prev


def linear_recurrence_axis(a: np.ndarray, b: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """``y[i] = a[i] * y[i - 1] + b[i]`` along ``axis`` from ``y[-1] = 0`` (from the end when
    ``reverse``: ``y[i] = a[i] * y[i + 1] + b[i]``)."""
    if a.ndim == 0 or a.size == 0:
        return b.copy()
    block_a, _ = _as_block(a, (axis,))
    block_b, _ = _as_block(b, (axis,))
    out = np.empty(block_a.shape, a.dtype)
    _linear_recurrence3(block_a, block_b, reverse, out)
    return out.reshape(a.shape)


@njit(**JIT)
def _logcumsumexp3(x, out):  # pragma: no cover - compiled
    for o in range(x.shape[0]):
        for c in range(x.shape[2]):
            acc = -np.inf
            for i in range(x.shape[1]):
                v = x[o, i, c]
                hi = max(acc, v)
                if v != v or acc != acc:
                    acc = v + acc
                elif hi == -np.inf or (hi == np.inf and acc == v):
                    acc = hi
                else:
                    acc = hi + np.log1p(np.exp(min(acc, v) - hi))
                out[o, i, c] = acc


def logcumsumexp_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """The running ``logaddexp`` along ``axis``: never overflows, exact for -inf entries."""
    if x.ndim == 0 or x.size == 0:
        return x.copy()
    block, _ = _as_block(x, (axis,))
    out = np.empty(block.shape, x.dtype)
    _logcumsumexp3(block, out)
    return out.reshape(x.shape)


@njit(**JIT)
def _cumulative_extreme3(x, largest, out):  # pragma: no cover - compiled
    for o in range(x.shape[0]):
        for c in range(x.shape[2]):
            best = x[o, 0, c]
            at = 0
            for i in range(x.shape[1]):
                v = x[o, i, c]
                if v != v or (best == best and (v >= best if largest else v <= best)):
                    best = v
                    at = i
                out[o, i, c] = at


def cumulative_extreme_axis(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    """The index (int64) of the running maximum (minimum) along ``axis``: the last of equal
    values, and once a NaN is met, the last NaN (PyTorch's ``cummax``/``cummin``)."""
    if x.ndim == 0 or x.size == 0:
        return np.zeros(x.shape, np.int64)
    block, _ = _as_block(x, (axis,))
    out = np.empty(block.shape, np.int64)
    _cumulative_extreme3(block, largest, out)
    return out.reshape(x.shape)
