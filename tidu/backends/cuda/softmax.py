"""softmax and log_softmax on the GPU, fused: the row maximum, the sum of exponentials and the
output in one kernel.

Same arithmetic as the CPU kernel (tidu/primitives/nn.py), in the input's dtype: shift by
the maximum (a NaN maximum, or a row of ``-inf``, gives NaN, as PyTorch), sum
``exp(x - max)``, then write ``exp(x - max) / sum`` or ``x - max - log(sum)``. Along the
last axis (``inner == 1``) a block takes a row: its threads stride over the row (coalesced)
and combine their maxima and sums with shared-memory trees; the row is read three times,
twice from cache. Along another axis (or for short rows) a thread takes an
(outer, inner) column and loops over the axis, neighbouring threads on neighbouring columns.

A few long rows (a log_softmax over a vocabulary for a small batch) would leave most of the
GPU idle with a block per row, so they are cut into chunks (few long columns likewise): a first launch writes each
chunk's maximum ``m_c`` and ``s_c = sum exp(x - m_c)`` (0 for a chunk of ``-inf``), a
second combines its row's chunks (``M = max m_c``, ``S = sum s_c exp(m_c - M)``) in every
block and writes the chunk's outputs.

``tangent`` runs their derivatives (``softmax_tangent``, ``log_softmax_tangent``): a row's sum,
then its values, with the same block-per-row or thread-per-column split.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import cuda, from_dtype

from .. import softmax_tangents as tangents
from .launch import Kernel
from .memory import CudaArray
from .reduce import (
    BLOCK,
    COL_CHUNK,
    MONOIDS,
    ROW_CHUNK,
    ROW_MIN,
    SIM_THREADS,
    TARGET_BLOCKS,
    TARGET_THREADS,
    TREES,
    block_threads,
    flat,
    lesser,
    row_blocks,
    split,
)

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


def _chunk_stats(dtype: np.dtype) -> Callable:
    lowest, zero, acc_t = dtype.type(-np.inf), dtype.type(0), from_dtype(dtype)

    def stats(x, m_out, s_out, outer, n, chunks):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, acc_t)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        clen = (n + chunks - 1) // chunks
        for item in range(cuda.blockIdx.x, outer * chunks, cuda.gridDim.x):
            start = item % chunks * clen
            lo = item // chunks * n + start
            hi = lo + lesser(clen, n - start)
            m = lowest
            for k in range(lo + tid, hi, bd):
                m = _max(m, x[k])
            sh[tid] = m
            cuda.syncthreads()
            _max_tree(sh, tid, bd)
            m = sh[0]
            cuda.syncthreads()
            s = zero
            if m != lowest:
                for k in range(lo + tid, hi, bd):
                    s += math.exp(x[k] - m)
            sh[tid] = s
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            if tid == 0:
                m_out[item] = m
                s_out[item] = sh[0]

    return stats


def _chunk_write(log: bool, dtype: np.dtype) -> Callable:
    lowest, zero, acc_t = dtype.type(-np.inf), dtype.type(0), from_dtype(dtype)

    def write(x, m_in, s_in, out, outer, n, chunks):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, acc_t)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        clen = (n + chunks - 1) // chunks
        for item in range(cuda.blockIdx.x, outer * chunks, cuda.gridDim.x):
            first = item // chunks * chunks
            m = lowest
            for c in range(first + tid, first + chunks, bd):
                m = _max(m, m_in[c])
            sh[tid] = m
            cuda.syncthreads()
            _max_tree(sh, tid, bd)
            m = sh[0]
            cuda.syncthreads()
            s = zero
            for c in range(first + tid, first + chunks, bd):
                s += s_in[c] * math.exp(m_in[c] - m)
            sh[tid] = s
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            s = sh[0]
            cuda.syncthreads()
            start = item % chunks * clen
            lo = item // chunks * n + start
            hi = lo + lesser(clen, n - start)
            if log:
                ls = math.log(s)
                for k in range(lo + tid, hi, bd):
                    out[k] = x[k] - m - ls
            else:
                for k in range(lo + tid, hi, bd):
                    out[k] = math.exp(x[k] - m) / s

    return write


def _column_stats(dtype: np.dtype) -> Callable:
    lowest, zero = dtype.type(-np.inf), dtype.type(0)

    def stats(x, m_out, s_out, outer, n, inner, chunks):  # noqa: ANN001, ANN202
        """A thread per (outer, chunk, inner): its chunk's maximum and sum of exponentials."""
        clen = (n + chunks - 1) // chunks
        for w in range(cuda.grid(1), outer * chunks * inner, cuda.gridsize(1)):
            t = w // inner
            start = t % chunks * clen
            lo = (t // chunks * n + start) * inner + w % inner
            hi = lo + lesser(clen, n - start) * inner
            m = lowest
            for k in range(lo, hi, inner):
                m = _max(m, x[k])
            s = zero
            if m != lowest:
                for k in range(lo, hi, inner):
                    s += math.exp(x[k] - m)
            m_out[w] = m
            s_out[w] = s

    return stats


def _column_write(log: bool, dtype: np.dtype) -> Callable:
    lowest, zero = dtype.type(-np.inf), dtype.type(0)

    def write(x, m_in, s_in, out, outer, n, inner, chunks):  # noqa: ANN001, ANN202
        """A thread per (outer, chunk, inner): combine its column's chunks, write its chunk."""
        clen = (n + chunks - 1) // chunks
        for w in range(cuda.grid(1), outer * chunks * inner, cuda.gridsize(1)):
            t = w // inner
            first = t // chunks * chunks * inner + w % inner
            last = first + chunks * inner
            m = lowest
            for j in range(first, last, inner):
                m = _max(m, m_in[j])
            s = zero
            for j in range(first, last, inner):
                s += s_in[j] * math.exp(m_in[j] - m)
            start = t % chunks * clen
            lo = (t // chunks * n + start) * inner + w % inner
            hi = lo + lesser(clen, n - start) * inner
            if log:
                ls = math.log(s)
                for k in range(lo, hi, inner):
                    out[k] = x[k] - m - ls
            else:
                for k in range(lo, hi, inner):
                    out[k] = math.exp(x[k] - m) / s

    return write


_KERNELS: dict[tuple, Kernel] = {}
_ARRAYS = "{0}[::1], {0}[::1], {0}[::1], {0}[::1], int64, int64, int64"


def _kernel(kind: str, log: bool, dtype: np.dtype) -> Kernel:
    key = (kind, log, dtype)
    kernel = _KERNELS.get(key)
    if kernel is None:
        if kind == "rows":
            kernel = Kernel(_rows(log, dtype), f"void({dtype}[::1], {dtype}[::1], int64, int64)",
                            sim_threads=SIM_THREADS)
        elif kind == "columns":
            kernel = Kernel(_columns(log, dtype), f"void({dtype}[::1], {dtype}[::1], int64, int64, int64)")
        elif kind == "stats":
            kernel = Kernel(_chunk_stats(dtype), f"void({dtype}[::1], {dtype}[::1], {dtype}[::1], int64, int64, int64)",
                            sim_threads=SIM_THREADS)
        elif kind == "write":
            kernel = Kernel(_chunk_write(log, dtype), f"void({_ARRAYS.format(dtype)})", sim_threads=SIM_THREADS)
        elif kind == "column_stats":
            kernel = Kernel(_column_stats(dtype),
                            f"void({dtype}[::1], {dtype}[::1], {dtype}[::1], int64, int64, int64, int64)")
        else:
            kernel = Kernel(_column_write(log, dtype), f"void({_ARRAYS.format(dtype)}, int64)")
        _KERNELS[key] = kernel
    return kernel


def _run(log: bool, x: CudaArray, axis: int) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    outer, n, inner = math.prod(x.shape[:axis]), math.prod(x.shape[axis:axis + 1]), math.prod(x.shape[axis + 1:])
    x, flat_out = flat(x), flat(out)
    if inner > 1 or n <= ROW_MIN:
        chunks = split(n, outer * inner, COL_CHUNK, TARGET_THREADS)
        if chunks == 1:
            _kernel("columns", log, x.dtype)(outer * inner, x, flat_out, outer, n, inner)
            return out
        size = outer * chunks * inner
        m, s = CudaArray.empty((size,), x.dtype), CudaArray.empty((size,), x.dtype)
        _kernel("column_stats", False, x.dtype)(size, x, m, s, outer, n, inner, chunks)
        _kernel("column_write", log, x.dtype)(size, x, m, s, flat_out, outer, n, inner, chunks)
        return out
    chunks = split(n, outer, ROW_CHUNK, TARGET_BLOCKS)
    if chunks == 1:
        _kernel("rows", log, x.dtype).launch(row_blocks(outer), block_threads(n), x, flat_out, outer, n)
        return out
    blocks, threads = row_blocks(outer * chunks), block_threads(-(-n // chunks))
    m, s = CudaArray.empty((outer * chunks,), x.dtype), CudaArray.empty((outer * chunks,), x.dtype)
    _kernel("stats", False, x.dtype).launch(blocks, threads, x, m, s, outer, n, chunks)
    _kernel("write", log, x.dtype).launch(blocks, threads, x, m, s, flat_out, outer, n, chunks)
    return out


def softmax(x: CudaArray, *, axis: int) -> CudaArray:
    return _run(False, x, axis)


def log_softmax(x: CudaArray, *, axis: int) -> CudaArray:
    return _run(True, x, axis)


_weight, _term, _value = (cuda.jit(device=True)(f) for f in (tangents.weight, tangents.term, tangents.value))


def _tangent_columns(kind: int, dtype: np.dtype) -> Callable:
    cast = dtype.type

    def columns(d, w, out, outer, n, inner):  # noqa: ANN001, ANN202
        for c in range(cuda.grid(1), outer * inner, cuda.gridsize(1)):
            lo = c // inner * n * inner + c % inner
            hi = lo + n * inner
            total = 0.0
            for k in range(lo, hi, inner):
                total += _term(kind, np.float64(d[k]), _weight(kind, np.float64(w[k])))
            for k in range(lo, hi, inner):
                out[k] = cast(_value(kind, np.float64(d[k]), _weight(kind, np.float64(w[k])), total))

    return columns


def _tangent_rows(kind: int, dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(d, w, out, outer, n):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            hi = lo + n
            total = 0.0
            for k in range(lo + tid, hi, bd):
                total += _term(kind, np.float64(d[k]), _weight(kind, np.float64(w[k])))
            sh[tid] = total
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            total = sh[0]
            cuda.syncthreads()
            for k in range(lo + tid, hi, bd):
                out[k] = cast(_value(kind, np.float64(d[k]), _weight(kind, np.float64(w[k])), total))

    return rows


def tangent(d: CudaArray, w: CudaArray, axis: int, kind: int) -> CudaArray:
    """A softmax tangent (tidu/backends/softmax_tangents.py) of ``d`` along ``axis``: a block per
    long row (last axis), else a thread per row or column; sums in float64."""
    out = CudaArray.empty(d.shape, d.dtype)
    if d.size == 0:
        return out
    outer, n, inner = math.prod(d.shape[:axis]), math.prod(d.shape[axis:axis + 1]), math.prod(d.shape[axis + 1:])
    rows = inner == 1 and n > ROW_MIN
    key = ("tangent rows" if rows else "tangent columns", kind, d.dtype)
    kernel = _KERNELS.get(key)
    if kernel is None:
        t = d.dtype
        if rows:
            kernel = Kernel(_tangent_rows(kind, t), f"void({t}[::1], {t}[::1], {t}[::1], int64, int64)",
                            sim_threads=SIM_THREADS)
        else:
            kernel = Kernel(_tangent_columns(kind, t), f"void({t}[::1], {t}[::1], {t}[::1], int64, int64, int64)")
        _KERNELS[key] = kernel
    if rows:
        kernel.launch(row_blocks(outer), block_threads(n), flat(d), flat(w), flat(out), outer, n)
    else:
        kernel(outer * inner, flat(d), flat(w), flat(out), outer, n, inner)
    return out


def softmax_tangent(d: CudaArray, w: CudaArray, *, axis: int) -> CudaArray:
    return tangent(d, w, axis, tangents.SOFTMAX)


def log_softmax_tangent(d: CudaArray, w: CudaArray, *, axis: int, transposed: bool) -> CudaArray:
    return tangent(d, w, axis, tangents.LOG_SOFTMAX_TRANSPOSED if transposed else tangents.LOG_SOFTMAX)
