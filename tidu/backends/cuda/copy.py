"""Views made contiguous and writes into views, on the strided-copy kernel of ``strided.py``.

``contiguous(a)`` is ``a`` itself when C-contiguous, else a fresh C-contiguous copy;
``copy_into(dst, src)`` is ``dst[...] = src`` for any strides on either side (an in-place
write into a view).
"""

from __future__ import annotations

from .memory import CudaArray
from .strided import copy, duplicate, element_strides, numba_name, span

__all__ = ["contiguous", "contiguous_copy", "copy_into", "numba_name"]


def copy_into(dst: CudaArray, src: CudaArray) -> None:
    """``dst[...] = src`` for two arrays of one shape and dtype, any strides (no overlap)."""
    if dst.shape != src.shape or dst.dtype != src.dtype:
        raise RuntimeError(f"copy: {src.shape} {src.dtype} into {dst.shape} {dst.dtype}")
    if not dst.size:
        return
    item = dst.dtype.itemsize
    (s, s_start), (d, d_start) = span(src), span(dst)
    copy(s, d, dst.shape, tuple(st // item for st in src.strides), tuple(st // item for st in dst.strides),
         s_start, d_start)


def contiguous_copy(a: CudaArray) -> CudaArray:
    """A fresh C-contiguous copy of ``a``."""
    if a.is_c_contiguous:
        return duplicate(a)
    out = CudaArray.empty(a.shape, a.dtype)
    if out.size:
        src, start = span(a)
        item = a.dtype.itemsize
        copy(src, out, a.shape, tuple(st // item for st in a.strides), element_strides(a.shape), start)
    return out


def contiguous(a: CudaArray) -> CudaArray:
    """``a`` itself when C-contiguous, else a C-contiguous copy."""
    return a if a.is_c_contiguous else contiguous_copy(a)
