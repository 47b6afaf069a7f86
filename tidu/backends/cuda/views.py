"""The view primitives on the device: new shapes and strides over the same memory.

As numpy's, these never copy (except ``reshape`` of an array that is not
C-contiguous, which first makes it so), so writes through a view reach its base.
"""

from __future__ import annotations

import functools

from .copy import contiguous
from .memory import CudaArray, contiguous_strides


def reshape(x: CudaArray, *, new_sizes: tuple[int, ...]) -> CudaArray:
    """A view when the layout allows one (as numpy's), else a reshaped contiguous copy."""
    new_sizes = tuple(new_sizes)
    if x.is_c_contiguous:
        return x.view(new_sizes, contiguous_strides(new_sizes, x.dtype.itemsize))
    strides = _view_strides(x.shape, x.strides, new_sizes)
    if strides is None:
        x = contiguous(x)
        strides = contiguous_strides(new_sizes, x.dtype.itemsize)
    return x.view(new_sizes, strides)


@functools.lru_cache(maxsize=4096)
def _view_strides(shape: tuple[int, ...], strides: tuple[int, ...], new: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that give ``new`` over the same elements in the same order, or ``None``.

    Old and new dimensions (size-1 ones aside) are matched in groups of equal element count;
    a group of old dimensions must be walkable as one (each stride the next one's times its
    size), and the group's new dimensions then divide its innermost stride.
    """
    if 0 in shape or 0 in new:
        return contiguous_strides(new, 1)  # nothing is addressed
    old = [(n, st) for n, st in zip(shape, strides) if n != 1]
    sizes = [n for n in new if n != 1]
    out: list[int] = []
    i = j = 0
    while i < len(old) and j < len(sizes):
        gi, gj = [old[i]], [sizes[j]]
        po, pn = old[i][0], sizes[j]
        while po != pn:
            if po < pn:
                i += 1
                gi.append(old[i])
                po *= old[i][0]
            else:
                j += 1
                gj.append(sizes[j])
                pn *= sizes[j]
        for (_, s0), (n1, s1) in zip(gi, gi[1:]):
            if s0 != s1 * n1:
                return None
        step = gi[-1][1]
        group = []
        for n in reversed(gj):
            group.append(step)
            step *= n
        out += reversed(group)
        i += 1
        j += 1
    it = iter(out)
    return tuple(next(it) if n != 1 else 0 for n in new)


def transpose(x: CudaArray, *, permutation: tuple[int, ...]) -> CudaArray:
    return x.view(tuple(x.shape[p] for p in permutation), tuple(x.strides[p] for p in permutation))


def broadcast_in_dim(x: CudaArray, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> CudaArray:
    strides = [0] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[d]:
            strides[d] = x.strides[i]
    return x.view(tuple(shape), tuple(strides))


def slice_view(x: CudaArray, *, start_indices: tuple, limit_indices: tuple, strides: tuple) -> CudaArray:
    offset = sum(s * st for s, st in zip(start_indices, x.strides))
    shape = tuple(max(0, -(-(e - s) // k)) for s, e, k in zip(start_indices, limit_indices, strides))
    return x.view(shape, tuple(st * k for st, k in zip(x.strides, strides)), offset if all(shape) else 0)


def as_strided(x: CudaArray, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
               input_stride: tuple[int, ...], input_offset: int, view: bool) -> CudaArray:
    """The view of ``x``'s storage (as numpy's: tidu/primitives/strided.py), or the elements read
    at those locations from ``x`` placed at its recorded layout."""
    from ..layout import element_geometry, storage, strided_sources

    if view and element_geometry(x) == (tuple(input_stride), input_offset):
        item, root = x.dtype.itemsize, storage(x)
        start = storage_offset if 0 not in size else min(storage_offset, root.size)  # nothing is read
        return root.view(tuple(size), tuple(s * item for s in stride), start * item)
    from .index import strided_read

    sources = strided_sources((tuple(x.shape), tuple(input_stride), input_offset),
                              (tuple(size), tuple(stride), storage_offset), "src")
    return strided_read(x, sources, tuple(size))


def as_strided_transpose(ct: CudaArray, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                         input_shape: tuple[int, ...], input_stride: tuple[int, ...], input_offset: int) -> CudaArray:
    from ..layout import strided_sources
    from .index import strided_read

    sources = strided_sources((tuple(size), tuple(stride), storage_offset),
                              (tuple(input_shape), tuple(input_stride), input_offset), "dst")
    return strided_read(ct, sources, tuple(input_shape))
