"""cumsum on the GPU: the inclusive running sum along one axis, forwards or reversed.

The input is viewed as (outer, scanned, inner); sums accumulate in the input's dtype,
as on the CPU. Columns (``inner > 1``, or rows too short for a block) are scanned by a
thread each, sequentially (neighbouring threads walk neighbouring columns, so loads are
coalesced). Rows (``inner == 1``) get a block each, walking the row in tiles of
``ITEMS`` elements per thread: each thread sums its few consecutive elements, the block
scans those sums in shared memory (Hillis-Steele), and each thread rescans its elements
from its exclusive prefix; a carry runs from tile to tile. A few long rows, or few long
columns, are cut into chunks: one launch sums every chunk, the chunk sums are scanned
(recursively, small), and a second launch scans each chunk from its carry-in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda, from_dtype

from .launch import Kernel
from .memory import CudaArray
from .reduce import (
    BLOCK,
    COL_CHUNK,
    ROW_CHUNK,
    ROW_MIN,
    SIM_THREADS,
    TARGET_BLOCKS,
    TARGET_THREADS,
    block_threads,
    copy,
    flat,
    lesser,
    row_blocks,
    split,
)

ITEMS = 4  # consecutive elements a thread scans on its own in each tile


def _rows(zero: Any) -> Callable:
    acc_t = from_dtype(np.asarray(zero).dtype)

    def rows(x, carry_in, out, totals, outer, n, inner, chunks, reverse, phase):  # noqa: ANN001, ANN202
        """phase 0: totals[item] = sum of chunk ``item``; phase 1: scan it from carry_in[item - 1]
        (``inner`` is 1: the arguments are the columns kernel's)."""
        sh = cuda.shared.array(BLOCK, acc_t)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        clen = (n + chunks - 1) // chunks
        for item in range(cuda.blockIdx.x, outer * chunks, cuda.gridDim.x):
            base = item // chunks * n
            c = item % chunks
            lo = c * clen
            hi = lesser(lo + clen, n)
            carry = zero
            if phase == 1 and c > 0:
                carry = carry_in[item - 1]
            for t0 in range(lo, hi, bd * ITEMS):
                first = t0 + tid * ITEMS
                last = lesser(first + ITEMS, hi)
                local = zero
                for p in range(first, last):
                    local += x[base + (n - 1 - p if reverse else p)]
                sh[tid] = local
                cuda.syncthreads()
                off = 1
                while off < bd:
                    v = sh[tid - off] if tid >= off else zero
                    cuda.syncthreads()
                    sh[tid] += v
                    cuda.syncthreads()
                    off *= 2
                if phase == 1:
                    run = carry + (sh[tid - 1] if tid > 0 else zero)
                    for p in range(first, last):
                        k = base + (n - 1 - p if reverse else p)
                        run += x[k]
                        out[k] = run
                carry += sh[bd - 1]
                cuda.syncthreads()
            if phase == 0 and tid == 0:
                totals[item] = carry

    return rows


def _columns(zero: Any) -> Callable:
    def columns(x, carry_in, out, totals, outer, n, inner, chunks, reverse, phase):  # noqa: ANN001, ANN202
        """A thread per (outer, chunk, inner); phase 0: totals[w] = sum of its chunk; phase 1:
        scan the chunk from carry_in of the chunk before (``w - inner``)."""
        clen = (n + chunks - 1) // chunks
        for w in range(cuda.grid(1), outer * chunks * inner, cuda.gridsize(1)):
            t = w // inner
            c = t % chunks
            base = t // chunks * n * inner + w % inner
            lo = c * clen
            hi = lesser(lo + clen, n)
            run = zero
            if phase == 1 and c > 0:
                run = carry_in[w - inner]
            for p in range(lo, hi):
                k = base + (n - 1 - p if reverse else p) * inner
                run += x[k]
                if phase == 1:
                    out[k] = run
            if phase == 0:
                totals[w] = run

    return columns


_KERNELS: dict[tuple, Kernel] = {}


def _kernel(rows: bool, dtype: np.dtype) -> Kernel:
    kernel = _KERNELS.get((rows, dtype))
    if kernel is None:
        sig = f"void({dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], int64, int64, int64, int64, boolean, int64)"
        zero = dtype.type(0)
        kernel = Kernel(_rows(zero), sig, sim_threads=SIM_THREADS) if rows else Kernel(_columns(zero), sig)
        _KERNELS[(rows, dtype)] = kernel
    return kernel


def _scan3(x: CudaArray, outer: int, n: int, inner: int, reverse: bool, out: CudaArray) -> None:
    """Chunks (few long rows or columns): their sums, the scan of the sums, then each chunk
    from its carry-in; otherwise one launch."""
    rows = inner == 1 and n > ROW_MIN
    if rows:
        chunks = split(n, outer, ROW_CHUNK, TARGET_BLOCKS)
        blocks, threads = row_blocks(outer * chunks), block_threads(-(-n // (chunks * ITEMS)))
    else:
        chunks = split(n, outer * inner, COL_CHUNK, TARGET_THREADS)
    kernel = _kernel(rows, x.dtype)

    def launch(*arrays: CudaArray, phase: int) -> None:
        args = (*arrays, outer, n, inner, chunks, reverse, phase)
        if rows:
            kernel.launch(blocks, threads, *args)
        else:
            kernel(outer * chunks * inner, *args)

    # unused array arguments get a distinct placeholder: the simulator copies every argument
    # back after a launch, so an aliased one would overwrite what the kernel wrote
    unused = CudaArray.empty((1,), x.dtype)
    carry = unused
    if chunks > 1:
        totals = CudaArray.empty((outer * chunks * inner,), x.dtype)
        launch(x, unused, unused, totals, phase=0)
        carry = CudaArray.empty((outer * chunks * inner,), x.dtype)
        _scan3(totals, outer, chunks, inner, False, carry)
    launch(x, carry, out, unused, phase=1)


def cumsum_axis(x: CudaArray, axis: int, reverse: bool) -> CudaArray:
    """Inclusive running sum along ``axis`` (from the end when ``reverse``)."""
    if x.ndim == 0 or x.size == 0:
        return copy(x)
    out = CudaArray.empty(x.shape, x.dtype)
    outer, n, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
    _scan3(flat(x), outer, n, inner, bool(reverse), flat(out))
    return out

