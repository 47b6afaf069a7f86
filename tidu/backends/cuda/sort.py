"""``argsort`` on the device: each element's place is its rank, the count of the row's
elements that sort before it (NaN last ascending, first descending; ties in index order), so
one thread per element writes its index there. That is O(n) a thread: rows longer than
``RANK_LIMIT`` are sorted on the host instead (a copy each way)."""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu.sort import argsort_axis as host_argsort
from .copy import contiguous
from .launch import Kernel
from .memory import CudaArray
from .strided import numba_name, permuted

RANK_LIMIT = 8192


def _rank(x, out, rows, n, descending):  # noqa: ANN001, ANN202
    for t in range(cuda.grid(1), rows * n, cuda.gridsize(1)):
        base = t // n * n
        i = t - base
        v = x[t]
        rank = 0
        for j in range(n):
            w = x[base + j]
            if w != w:
                before = (v == v and descending) or (v != v and j < i)
            elif v != v:
                before = not descending
            elif descending:
                before = w > v or (w == v and j < i)
            else:
                before = w < v or (w == v and j < i)
            if before:
                rank += 1
        out[base + rank] = i


_kernels: dict[np.dtype, Kernel] = {}


def argsort_axis(x: CudaArray, axis: int, descending: bool) -> CudaArray:
    n = x.shape[axis]
    if n > RANK_LIMIT:
        return CudaArray.from_host(host_argsort(x.copy_to_host(), axis, descending))
    last = x.ndim - 1
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = contiguous(x) if axis == last else permuted(x, order)
    out = CudaArray.empty(moved.shape, np.int64)
    rows = moved.size // n if n else 0
    if rows:
        kernel = _kernels.get(x.dtype)
        if kernel is None:
            sig = f"void({numba_name(x.dtype)}[::1], int64[::1], int64, int64, boolean)"
            kernel = _kernels[x.dtype] = Kernel(_rank, sig)
        kernel(rows * n, moved.view((moved.size,), (x.dtype.itemsize,)), out.view((out.size,), (8,)), rows, n,
               descending)
    return out if axis == last else permuted(out, [order.index(d) for d in range(x.ndim)])
