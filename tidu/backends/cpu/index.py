"""Gather and scatter-add along one axis: arrays are viewed as (outer, axis, inner) blocks.

``index`` has the output's (gather) or the source's (scatter-add) shape; it may be a
broadcast view (zero strides), which the loops read without materializing. Indices
are checked against the axis size before a loop runs.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous


@njit(**JIT)
def _gather3(x, index, out):  # pragma: no cover - compiled
    for a in range(out.shape[0]):
        for j in range(out.shape[1]):
            for b in range(out.shape[2]):
                out[a, j, b] = x[a, index[a, j, b], b]


@njit(**JIT)
def _scatter_add3(out, index, src):  # pragma: no cover - compiled
    for a in range(index.shape[0]):
        for j in range(index.shape[1]):
            for b in range(index.shape[2]):
                out[a, index[a, j, b], b] += src[a, j, b]


@njit(**JIT)
def _gather_rows3(x, index, out):  # pragma: no cover - compiled
    for a in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[a, j, :] = x[a, index[a, j], :]


@njit(**JIT)
def _scatter_add_rows3(out, index, src):  # pragma: no cover - compiled
    for a in range(index.shape[0]):
        for j in range(index.shape[1]):
            out[a, index[a, j], :] += src[a, j, :]


def _distinct(index: np.ndarray) -> np.ndarray:
    """A broadcast index without its repeated (zero-stride) dimensions."""
    return index[tuple(slice(0, 1) if step == 0 else slice(None) for step in index.strides)]


def _rows(index3: np.ndarray) -> np.ndarray | None:
    """The (outer, axis) index when it is the same along the inner block: whole rows move."""
    return index3[:, :, 0] if index3.shape[2] > 1 and index3.strides[2] == 0 else None


def check_bounds(index: np.ndarray, size: int, axis: int, exc: type = RuntimeError) -> None:
    """Raise ``exc`` naming the first index outside ``[0, size)``."""
    index = _distinct(index)
    if index.size == 0:
        return
    bad = (index < 0) | (index >= size)
    if bad.any():
        value = int(index[bad].flat[0])
        raise exc(f"index {value} is out of bounds for dimension {axis} with size {size}")


def _block(a: np.ndarray, axis: int) -> np.ndarray:
    """View ``a`` as (outer, a.shape[axis], inner); copies only when numpy must."""
    return a.reshape(prod(a.shape[:axis]), a.shape[axis], prod(a.shape[axis + 1:]))


def _leading(x: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    """The part of ``x`` that ``index`` addresses: index's extent in every other dimension."""
    return x[tuple(slice(None) if d == axis else slice(0, m) for d, m in enumerate(index.shape))]


def gather(x: np.ndarray, index: np.ndarray, *, axis: int) -> np.ndarray:
    """``out[..., j, ...] = x[..., index[..., j, ...], ...]`` along ``axis`` (``torch.gather``)."""
    out = np.empty(index.shape, x.dtype)
    if out.size:
        check_bounds(index, x.shape[axis], axis)
        x3, index3, out3 = _block(_leading(x, index, axis), axis), _block(index, axis), _block(out, axis)
        rows = _rows(index3)
        if rows is None:
            _gather3(x3, index3, out3)
        else:
            _gather_rows3(x3, rows, out3)
    return out


def scatter_add(x: np.ndarray, index: np.ndarray, src: np.ndarray, *, axis: int) -> np.ndarray:
    """A copy of ``x`` with ``src[..., j, ...]`` added at ``[..., index[..., j, ...], ...]``."""
    check_bounds(index, x.shape[axis], axis)
    out = np.array(x, copy=True, order="C")
    if index.size:
        region = _leading(out, index, axis)
        block = _block(region, axis)
        part = src[tuple(slice(0, m) for m in index.shape)]
        index3, src3 = _block(index, axis), _block(part, axis)
        rows = _rows(index3)
        if rows is None:
            _scatter_add3(block, index3, src3)
        else:
            _scatter_add_rows3(block, rows, src3)
        if block.base is not out:  # numpy had to copy the region to view it as a block
            region[...] = block.reshape(region.shape)
    return out


@njit(**JIT)
def _picked_sum(x, target):  # pragma: no cover - compiled
    total = 0.0  # float64, as PyTorch's CPU loss accumulates
    for i in range(x.shape[0]):
        t = target[i]
        if 0 <= t < x.shape[1]:
            total += x[i, t]
    return total


@njit(**JIT)
def _spread(out, target, value):  # pragma: no cover - compiled
    for i in range(out.shape[0]):
        t = target[i]
        if 0 <= t < out.shape[1]:
            out[i, t] = value


def nll_sum(x: np.ndarray, target: np.ndarray, *, scale: float) -> np.ndarray:
    """``scale * sum_i x[i, target[i]]`` of an (N, C) ``x`` (a 0-d array); targets outside
    ``[0, C)`` add nothing (the caller checked them)."""
    return np.asarray(scale * _picked_sum(contiguous(x), contiguous(target)), x.dtype)


def nll_sum_transpose(ct: np.ndarray, target: np.ndarray, *, classes: int, scale: float) -> np.ndarray:
    """``nll_sum``'s transpose: zeros of (N, ``classes``) with ``scale * ct`` at ``[i, target[i]]``."""
    out = np.zeros((target.shape[0], classes), ct.dtype)
    _spread(out, contiguous(target), ct.dtype.type(scale * ct))
    return out


@njit(**JIT)
def _strided_read(src, order, lo, hi, scale, out):  # pragma: no cover - compiled
    for i in range(out.shape[0]):
        total = 0.0
        for t in range(lo[i], hi[i]):
            total += src[order[t]]
        out[i] = total * scale[i]


def strided_read(src: np.ndarray, sources: tuple, shape: tuple[int, ...]) -> np.ndarray:
    """``out`` of ``shape`` whose element ``i`` (row-major) is ``scale[i]`` times the sum of the
    row-major elements ``order[lo[i]:hi[i]]`` of ``src``, summed in float64 in that order
    (``sources = (order, lo, hi, scale)``, from ``tidu.backends.layout.strided_sources``)."""
    order, lo, hi, scale = sources
    flat = contiguous(src).reshape(-1)
    if src.dtype.kind != "f":
        flat = flat.astype(np.float64)
    out = np.empty(lo.size, flat.dtype)
    _strided_read(flat, order, lo, hi, scale, out)
    return out.astype(src.dtype, copy=False).reshape(shape)
