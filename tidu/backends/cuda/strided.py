"""Strided copies between flat device arrays, the building block of the copying structural kernels.

``copy(src, dst, shape, src_strides, dst_strides, src_start, dst_start)`` writes
``dst[dst_start + sum(i * dst_strides)] = src[src_start + sum(i * src_strides)]`` for every
index ``i`` of ``shape`` (element strides, negative allowed), after merging the dimensions
both layouts walk densely; at most ``MAX_DIMS`` remain, passed as scalars, so a copy is one
launch with no metadata upload. Consecutive threads take consecutive destination elements.
Index arithmetic divides through float64 inverses of the sizes (``divmod_``): a 64-bit
integer division is a long software routine on a GPU, and there is one per dimension and
element.
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any

import numpy as np
from numba import cuda

from . import driver
from .launch import Kernel
from .memory import CudaArray, contiguous_strides
from .runtime import runtime

MAX_DIMS = 6


@cuda.jit(device=True)
def divmod_(i, d, inv):  # noqa: ANN001, ANN201
    """``divmod(i, d)`` for ``0 <= i < 2**52`` through ``inv = 1.0 / d``: a 64-bit integer
    division is a long software routine on a GPU; the float64 quotient is off by at most one."""
    q = int(i * inv)
    r = i - q * d
    if r < 0:
        q -= 1
        r += d
    elif r >= d:
        q += 1
        r -= d
    return q, r


@cuda.jit(device=True)
def offsets(i, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5,  # noqa: ANN001, ANN201
            a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    """The two offsets of flat index ``i`` over a 6-d shape (sizes ``s``, their inverses ``v``;
    the first size is not needed).

    Leading dimensions are the size-1 padding: once the quotient is 0 the remaining
    coordinates are all 0, so the divisions stop there.
    """
    r, k = divmod_(i, s5, v5)
    oa = k * a5
    ob = k * b5
    if r == 0:
        return oa, ob
    r, k = divmod_(r, s4, v4)
    oa += k * a4
    ob += k * b4
    if r == 0:
        return oa, ob
    r, k = divmod_(r, s3, v3)
    oa += k * a3
    ob += k * b3
    if r == 0:
        return oa, ob
    r, k = divmod_(r, s2, v2)
    oa += k * a2
    ob += k * b2
    if r == 0:
        return oa, ob
    r, k = divmod_(r, s1, v1)
    return oa + k * a1 + r * a0, ob + k * b1 + r * b0


def _copy(src, dst, n, start_a, start_b, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5,  # noqa: ANN001, ANN202
          a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        oa, ob = offsets(i, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
        dst[start_b + ob] = src[start_a + oa]


def numba_name(dtype: np.dtype) -> str:
    return "boolean" if dtype == np.bool_ else str(dtype)


INT = "int64"
# five sizes (the first is implied), their inverses, two sets of six strides
GEOMETRY = ", ".join([INT] * 5 + ["float64"] * 5 + [INT] * 12)

_kernels: dict[np.dtype, Kernel] = {}


def merge(shape: tuple[int, ...], *strides: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dimensions and merge neighbours that every stride set walks densely."""
    merged: list[tuple[int, list[int]]] = []
    for d, n in enumerate(shape):
        if n == 1:
            continue
        sts = [st[d] for st in strides]
        if merged and all(p == s * n for p, s in zip(merged[-1][1], sts)):
            merged[-1] = (merged[-1][0] * n, sts)
        else:
            merged.append((n, sts))
    return [n for n, _ in merged], [[sts[j] for _, sts in merged] for j in range(len(strides))]


@functools.lru_cache(maxsize=4096)
def geometry(shape: tuple[int, ...], *strides: tuple[int, ...]) -> tuple:
    """The kernel scalars of a merged, front-padded ``MAX_DIMS`` geometry: sizes 1.., their
    inverses, then the strides."""
    sizes, merged = merge(shape, *strides)
    if len(sizes) > MAX_DIMS:
        raise NotImplementedError(
            f"CUDA strided copy over {len(sizes)} dimensions that do not merge (at most {MAX_DIMS})")
    pad = MAX_DIMS - len(sizes)
    out: list = ([1] * pad + sizes)[1:]
    out += [1.0 / n for n in out]
    for st in merged:
        out += [0] * pad + st
    return tuple(out)


def copy(src: CudaArray, dst: CudaArray, shape: tuple[int, ...], src_strides: tuple[int, ...],
         dst_strides: tuple[int, ...], src_start: int = 0, dst_start: int = 0) -> None:
    """The strided copy described in the module docstring (``src``, ``dst``: C-contiguous, read
    as 1-D by the kernel)."""
    n = math.prod(shape)
    if not n:
        return
    kernel = _kernels.get(src.dtype)
    if kernel is None:
        t = numba_name(src.dtype)
        kernel = _kernels[src.dtype] = Kernel(_copy, f"void({t}[::1], {t}[::1], {INT}, {INT}, {INT}, {GEOMETRY})")
    kernel(n, src, dst, n, src_start, dst_start, *geometry(shape, src_strides, dst_strides))


@functools.lru_cache(maxsize=4096)
def element_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return contiguous_strides(tuple(shape), 1)


def reshaped(x: CudaArray, shape: tuple[int, ...]) -> CudaArray:
    """The C-contiguous ``x`` with a new shape of the same size (no copy; ``x`` is the owner)."""
    host = None if x.host is None else x.host.reshape(shape)
    return CudaArray(tuple(shape), x.dtype, None, x.ptr, x, host)


def zeros(shape: tuple[int, ...], dtype: Any) -> CudaArray:
    out = CudaArray.empty(tuple(shape), dtype)
    if out.host is not None:
        out.host[...] = 0
    elif out.nbytes:
        driver.call("cuMemsetD8Async", out.ptr, 0, out.nbytes, runtime().stream)
    return out


def duplicate(x: CudaArray) -> CudaArray:
    """A fresh copy of C-contiguous ``x``."""
    out = CudaArray.empty(x.shape, x.dtype)
    if out.host is not None:
        out.host[...] = x.host
    elif x.nbytes:
        driver.call("cuMemcpyDtoDAsync_v2", out.ptr, x.ptr, x.nbytes, runtime().stream)
    return out


def span(x: CudaArray) -> tuple[CudaArray, int]:
    """A 1-D array over all the memory the (any-strided) ``x`` addresses, and the offset of
    ``x``'s first element in it."""
    item = x.dtype.itemsize
    reach = [(n - 1) * (st // item) for n, st in zip(x.shape, x.strides)] if x.size else []
    low, high = sum(r for r in reach if r < 0), sum(r for r in reach if r > 0)
    extent = high - low + 1 if x.size else 0
    ptr = x.ptr + low * item
    host = None
    if x.host is not None:  # the simulator: "device" memory is host memory at the same address
        host = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_byte)), (max(extent, 1) * item,))
        host = host.view(x.dtype)[:extent]
    return CudaArray((extent,), x.dtype, None, ptr, x, host), -low


def permuted(x: CudaArray, perm: tuple[int, ...] | list[int]) -> CudaArray:
    """A fresh C-contiguous ``x.transpose(perm)``; ``x`` may have any strides."""
    shape = tuple(x.shape[p] for p in perm)
    strides = [st // x.dtype.itemsize for st in x.strides]
    out = CudaArray.empty(shape, x.dtype)
    if out.size:
        src, start = span(x)
        copy(src, out, shape, tuple(strides[p] for p in perm), element_strides(shape), start)
    return out
