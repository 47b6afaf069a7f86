"""Strided copies on the device: making views contiguous, and writing into views.

One kernel serves both: ``dst[offset_dst(i)] = src[offset_src(i)]`` over the
elements of a shape of at most ``MAX_DIMS`` dimensions (after merging the
dimensions that both layouts walk densely), with per-dimension element strides
passed as scalars, so a copy is one launch with no metadata upload.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import cuda

from .launch import Kernel
from .memory import CudaArray
from .runtime import runtime

MAX_DIMS = 6


def _strided_copy(src, dst, n, s0, s1, s2, s3, s4, s5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        r = i
        k = r % s5
        r //= s5
        so = k * a5
        do = k * b5
        k = r % s4
        r //= s4
        so += k * a4
        do += k * b4
        k = r % s3
        r //= s3
        so += k * a3
        do += k * b3
        k = r % s2
        r //= s2
        so += k * a2
        do += k * b2
        k = r % s1
        r //= s1
        so += k * a1
        do += k * b1
        so += r * a0
        do += r * b0
        dst[do] = src[so]


_kernels: dict[Any, Kernel] = {}


def numba_name(dtype: np.dtype) -> str:
    return "boolean" if dtype == np.bool_ else str(dtype)


def _kernel(dtype: np.dtype) -> Kernel:
    kernel = _kernels.get(dtype)
    if kernel is None:
        t = numba_name(dtype)
        kernel = _kernels[dtype] = Kernel(_strided_copy, f"void({t}[::1], {t}[::1], int64{', int64' * 18})")
    return kernel


def _merge(shape: tuple[int, ...], *strides: tuple[int, ...]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dimensions and merge neighbours every layout walks densely (element strides)."""
    dims = [(n, [st[i] for st in strides]) for i, n in enumerate(shape) if n != 1]
    merged: list[tuple[int, list[int]]] = []
    for n, sts in dims:
        if merged and all(p == s * n for p, s in zip(merged[-1][1], sts)):
            merged[-1] = (merged[-1][0] * n, sts)
        else:
            merged.append((n, sts))
    return [n for n, _ in merged], [[sts[j] for _, sts in merged] for j in range(len(strides))]


def _span(a: CudaArray) -> CudaArray:
    """A 1-D array over every element ``a`` addresses, starting at ``a``'s first element."""
    itemsize = a.dtype.itemsize
    extent = 1 + sum((n - 1) * (st // itemsize) for n, st in zip(a.shape, a.strides)) if a.size else 0
    if a.host is not None:
        host = np.lib.stride_tricks.as_strided(a.host, (extent,), (itemsize,), writeable=False)
        # the simulator writes every array argument back after a launch: a read-only source
        # (a broadcast host view) is handed over as a copy of its span
        host = host.copy() if not a.host.flags.writeable else np.lib.stride_tricks.as_strided(
            a.host, (extent,), (itemsize,))
        return CudaArray((extent,), a.dtype, None, a.ptr, a, host)
    return CudaArray((extent,), a.dtype, None, a.ptr, a)


def copy_into(dst: CudaArray, src: CudaArray) -> None:
    """``dst[...] = src`` for two arrays of one shape and dtype, any strides (no overlap)."""
    if dst.shape != src.shape or dst.dtype != src.dtype:
        raise RuntimeError(f"copy: {src.shape} {src.dtype} into {dst.shape} {dst.dtype}")
    n = math.prod(dst.shape)
    if not n:
        return
    itemsize = dst.dtype.itemsize
    if any(st < 0 for st in (*src.strides, *dst.strides)):
        raise NotImplementedError("CUDA copies of negative-stride views are not supported")
    shape, (sa, sb) = _merge(dst.shape, [st // itemsize for st in src.strides],
                             [st // itemsize for st in dst.strides])
    if len(shape) > MAX_DIMS:
        raise NotImplementedError(
            f"CUDA strided copy of a view with {len(shape)} non-mergeable dimensions (at most {MAX_DIMS})"
        )
    pad = MAX_DIMS - len(shape)
    shape, sa, sb = [1] * pad + shape, [0] * pad + sa, [0] * pad + sb
    _kernel(dst.dtype)(n, _span(src), _span(dst), n, *shape, *sa, *sb)


def contiguous_copy(a: CudaArray) -> CudaArray:
    """A fresh C-contiguous copy of ``a``."""
    out = CudaArray.empty(a.shape, a.dtype)
    if a.is_c_contiguous and a.size and not runtime().simulated:
        from . import driver

        driver.call("cuMemcpyDtoDAsync_v2", out.ptr, a.ptr, a.nbytes, runtime().stream)
    else:
        copy_into(out, a)
    return out


def contiguous(a: CudaArray) -> CudaArray:
    """``a`` itself when C-contiguous, else a C-contiguous copy."""
    return a if a.is_c_contiguous else contiguous_copy(a)
