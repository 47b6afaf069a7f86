"""softmax and log_softmax on the GPU, fused: the row maximum, the sum of exponentials and the
output in one kernel.

Same arithmetic as the CPU kernel (tidu/primitives/nn.py), in the input's dtype: shift by
the maximum (a NaN maximum, or a row of ``-inf``, gives NaN, as PyTorch), sum
``exp(x - max)``, then write ``exp(x - max) / sum`` or ``x - max - log(sum)``. Along the
last axis (``inner == 1``) a block takes a row: its threads stride over the row (coalesced)
and combine their maxima and sums with shared-memory trees; the row is read three times,
twice from cache. Along another axis (or for short rows) a thread takes an
(outer, inner) column and loops over the axis, neighbouring threads on neighbouring columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import cuda, from_dtype

from .launch import Kernel
from .memory import CudaArray
from .reduce import BLOCK, MONOIDS, ROW_MIN, SIM_THREADS, TREES, block_threads, flat, row_blocks

_max, _max_tree, _sum_tree = MONOIDS["max"][0], TREES["max"], TREES["sum"]


def _rows(log: bool, dtype: np.dtype) -> Callable:
    lowest, zero, acc_t = dtype.type(-np.inf), dtype.type(0), from_dtype(dtype)

    def rows(x, out, outer, n):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, acc_t)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            hi = lo + n
            m = lowest
            for k in range(lo + tid, hi, bd):
                m = _max(m, x[k])
            sh[tid] = m
            cuda.syncthreads()
            _max_tree(sh, tid, bd)
            m = sh[0]
            cuda.syncthreads()
            s = zero
            for k in range(lo + tid, hi, bd):
                s += math.exp(x[k] - m)
            sh[tid] = s
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            s = sh[0]
            cuda.syncthreads()
            if log:
                ls = math.log(s)
                for k in range(lo + tid, hi, bd):
                    out[k] = x[k] - m - ls
            else:
                for k in range(lo + tid, hi, bd):
                    out[k] = math.exp(x[k] - m) / s

    return rows


def _columns(log: bool, dtype: np.dtype) -> Callable:
    lowest, zero = dtype.type(-np.inf), dtype.type(0)

    def columns(x, out, outer, n, inner):  # noqa: ANN001, ANN202
        for w in range(cuda.grid(1), outer * inner, cuda.gridsize(1)):
            lo = w // inner * n * inner + w % inner
            hi = lo + n * inner
            m = lowest
            for k in range(lo, hi, inner):
                m = _max(m, x[k])
            s = zero
            for k in range(lo, hi, inner):
                s += math.exp(x[k] - m)
            if log:
                ls = math.log(s)
                for k in range(lo, hi, inner):
                    out[k] = x[k] - m - ls
            else:
                for k in range(lo, hi, inner):
                    out[k] = math.exp(x[k] - m) / s

    return columns


_KERNELS: dict[tuple, Kernel] = {}


def _kernel(log: bool, rows: bool, dtype: np.dtype) -> Kernel:
    key = (log, rows, dtype)
    kernel = _KERNELS.get(key)
    if kernel is None:
        if rows:
            kernel = Kernel(_rows(log, dtype), f"void({dtype}[::1], {dtype}[::1], int64, int64)",
                            sim_threads=SIM_THREADS)
        else:
            kernel = Kernel(_columns(log, dtype), f"void({dtype}[::1], {dtype}[::1], int64, int64, int64)")
        _KERNELS[key] = kernel
    return kernel


def _run(log: bool, x: CudaArray, axis: int) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    outer, n, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis:axis + 1]), math.prod(x.shape[axis + 1:])
    if inner == 1 and n > ROW_MIN:
        _kernel(log, True, x.dtype).launch(row_blocks(outer), block_threads(n), flat(x), flat(out), outer, n)
    else:
        _kernel(log, False, x.dtype)(outer * inner, flat(x), flat(out), outer, n, inner)
    return out


def softmax(x: CudaArray, *, axis: int) -> CudaArray:
    return _run(False, x, axis)


def log_softmax(x: CudaArray, *, axis: int) -> CudaArray:
    return _run(True, x, axis)
