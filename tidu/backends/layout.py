"""Array layouts the kernels of both backends read in place."""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import Any

import numpy as np


def storage(array: Any) -> Any:
    """The array that owns ``array``'s memory (numpy's and ``CudaArray``'s views chain to it
    through ``.base``)."""
    kind = type(array)
    while type(array.base) is kind:
        array = array.base
    return array


def repeat_period(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> int | None:
    """``p`` when a layout's row-major element ``i`` is ``vector[i % p]`` for a dense vector at its
    start (zero strides or size-1 dims first, then dims laid out densely), else ``None``.

    >>> repeat_period((4, 3), (0, 8), 8), repeat_period((4, 3), (24, 8), 8), repeat_period((3, 4), (8, 24), 8)
    (3, 12, None)
    """
    k = 0
    while k < len(shape) and (strides[k] == 0 or shape[k] == 1):
        k += 1
    step = period = 1
    for n, st in zip(reversed(shape[k:]), reversed(strides[k:])):
        if n != 1 and st != step * itemsize:
            return None
        step *= n
        period *= n
    return period


@lru_cache(maxsize=4096)  # asked per queued operand: a broadcast bias meets it every step
def in_place_layout(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> str | None:
    """How a fused loop reads a non-contiguous operand in place: ``"scalar"`` (zero strides),
    ``"row"`` (one dense row repeated: element ``c`` of every row), ``"col"`` (the last dimension
    broadcast over dense rows: one value per row), else ``None`` (copied first).

    >>> in_place_layout((4, 3), (0, 0), 8), in_place_layout((4, 3), (0, 8), 8), in_place_layout((4, 3), (8, 0), 8)
    ('scalar', 'row', 'col')
    """
    if not any(strides):
        return "scalar"
    if repeat_period(shape, strides, itemsize) == shape[-1]:
        return "row"
    if strides[-1] == 0 and repeat_period(shape[:-1], strides[:-1], itemsize) == prod(shape[:-1]):
        return "col"
    return None


def element_geometry(array: Any) -> tuple[tuple[int, ...], int]:
    """``array``'s strides and the offset of its first element in its storage (``storage``), in
    elements, for numpy's arrays and ``CudaArray``'s alike."""
    itemsize = array.dtype.itemsize
    root = storage(array)
    if type(array) is np.ndarray:
        start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    else:
        start = array.ptr - root.ptr
    return tuple(s // itemsize for s in array.strides), start // itemsize


@lru_cache(maxsize=1024)
def overlapping(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two elements of a layout (non-negative strides) share a memory location.

    >>> overlapping((2, 3), (3, 1)), overlapping((3, 3), (1, 1)), overlapping((4, 2), (0, 1)), overlapping((3, 2), (2, 3))
    (False, True, True, False)
    """
    if 0 in shape:
        return False
    reach = 0
    for stride, n in sorted((st, n) for n, st in zip(shape, strides) if n != 1):
        if stride <= reach:  # maybe: decide by listing the locations
            locations = positions(shape, strides, 0)
            return len(np.unique(locations)) != locations.size
        reach += stride * (n - 1)
    return False


def positions(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> np.ndarray:
    """The storage location (in elements) of each element of a layout, in row-major order."""
    out = np.full((1,) * len(shape), offset, np.int64)
    for d, (n, st) in enumerate(zip(shape, strides)):
        step = [1] * len(shape)
        step[d] = n
        out = out + (np.arange(n, dtype=np.int64) * st).reshape(step)
    return np.broadcast_to(out, shape).reshape(-1)


@lru_cache(maxsize=256)
def strided_sources(src: tuple, dst: tuple, mean: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which elements of a ``src`` layout lie at each element's location of a ``dst`` layout (each
    ``(shape, strides, offset)`` in elements over one storage): ``(order, lo, hi, scale)`` where
    dst element ``i`` reads src elements ``order[lo[i]:hi[i]]`` (row-major numbers, in that
    order). ``scale[i]`` is 1 over the number of src elements at the location when ``mean`` is
    ``"src"`` (their mean), over the number of dst elements at it when ``"dst"``, else 1.

    ``as_strided`` of a layout and its transpose (tidu/primitives/strided.py) both read this way.

    >>> order, lo, hi, scale = strided_sources(((3,), (1,), 0), ((2, 2), (1, 1), 0), "src")
    >>> order.tolist(), lo.tolist(), hi.tolist()
    ([0, 1, 2], [0, 1, 1, 2], [1, 2, 2, 3])
    """
    at_src, at_dst = positions(*src), positions(*dst)
    order = np.argsort(at_src, kind="stable")
    located = at_src[order]
    lo = np.searchsorted(located, at_dst, "left")
    hi = np.searchsorted(located, at_dst, "right")
    if mean == "src":
        scale = 1.0 / np.maximum(hi - lo, 1)
    elif mean == "dst":
        ranked = np.sort(at_dst)
        scale = 1.0 / np.maximum(np.searchsorted(ranked, at_dst, "right") - np.searchsorted(ranked, at_dst, "left"), 1)
    else:
        scale = np.ones(at_dst.size)
    return order.astype(np.int64), lo.astype(np.int64), hi.astype(np.int64), scale
