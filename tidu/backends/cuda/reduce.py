"""Reductions on the GPU: sum, prod, max and argmax/argmin over a block of axes.

As on the CPU, the input is viewed as (outer, reduced, inner) and the result has the same
dtype semantics: float sums and products accumulate in float64, integer ones in int64
(bool counts as int64), ``max`` and ``argmax``/``argmin`` propagate NaN (argmax takes the
first NaN, else the first extreme). Two kernels cover every layout:

- rows (``inner == 1``, the reduced axes are the innermost): a block per row, its threads
  striding over the row (coalesced loads) into per-thread accumulators, then a
  shared-memory tree across the block;
- columns (``inner > 1``, or rows too short for a block): a thread per (outer, inner)
  column looping over the reduced axis (neighbouring threads read neighbouring columns).

When that leaves too little parallelism (few long rows, few long columns, a full
reduction) the reduced axis is split into chunks: a first launch writes one partial
result per chunk, a second reduces the partials with the same kernels. Non-adjacent axes
are reduced one adjacent run at a time, innermost first. Kernels are compiled per dtype
signature on first use; the simulator runs the cooperative kernels with a few threads.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda, from_dtype

from .launch import MAX_BLOCKS, Kernel, dense_like
from .memory import CudaArray

BLOCK = 256  # threads of a cooperative block; the shared arrays are this long
SIM_THREADS = 4  # threads the simulator runs a cooperative block with
ROW_MIN = 32  # rows longer than this get a block each; shorter ones a thread each
ROW_CHUNK = 8 * BLOCK  # at least this many elements of a row per block when a row is split
COL_CHUNK = 64  # at least this many elements of a column per thread when a column is split
TARGET_BLOCKS = 1024  # split rows until about this many blocks have work
TARGET_THREADS = 1 << 18  # split columns until about this many threads have work (a full H100)
# inputs of at most this many elements are reduced in one launch: a second launch (and its
# partials' allocation) costs the host more than the longer loops cost the GPU
SPLIT_MIN = 1 << 16

_Kernels = dict[tuple, Kernel]
_UNSEEN = object()


# ---------------------------------------------------------------- helpers shared by the kernels


def reinterpret(x: CudaArray, shape: tuple[int, ...], dtype: Any = None) -> CudaArray:
    """``x``'s memory (C-contiguous) under another shape or a same-size dtype; no copy."""
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    if tuple(shape) == x.shape and dtype == x.dtype:
        return x
    host = None if x.host is None else x.host.view(dtype).reshape(shape)
    return CudaArray(shape, dtype, None, x.ptr, x, host)


def flat(x: CudaArray, dtype: Any = None) -> CudaArray:
    """``x`` as the kernels' 1-D parameters take it, bool viewed as uint8: a C-contiguous array of
    another type as it is (the launcher packs it flat), anything else reinterpreted as 1-D."""
    if dtype is None:
        if x.dtype.kind != "b" and x.is_c_contiguous:
            return x
        dtype = np.uint8 if x.dtype == np.bool_ else x.dtype
    return reinterpret(x, (x.size,), dtype)


def block_threads(n: int) -> int:
    """Threads for a block reducing ``n`` elements: a power of two, 32 to ``BLOCK``."""
    return min(BLOCK, max(32, 1 << max(n - 1, 0).bit_length()))


def row_blocks(items: int) -> int:
    return max(min(items, 16 * MAX_BLOCKS), 1)


def split(n: int, units: int, chunk: int, target: int) -> int:
    """How many chunks to cut a reduced length ``n`` into, ``units`` rows or columns of it
    already running in parallel: enough to reach ``target`` units, none shorter than ``chunk``."""
    chunks = max(1, min(-(-n // chunk), -(-target // max(units, 1))))
    return -(-n // -(-n // chunks)) if n else 1  # no empty chunk


def tree(combine: Callable) -> Callable:
    """A device function folding ``sh[:blockDim]`` into ``sh[0]`` with ``combine``
    (every thread calls it after writing its own slot; it ends synchronized)."""

    def fold(sh, tid, bd):  # noqa: ANN001, ANN202
        step = 1
        while step * 2 < bd:
            step *= 2
        while step > 0:
            if tid < step and tid + step < bd:
                sh[tid] = combine(sh[tid], sh[tid + step])
            cuda.syncthreads()
            step //= 2

    return cuda.jit(device=True)(fold)


@cuda.jit(device=True)
def lesser(a, b):  # noqa: ANN001, ANN201 - builtin min() does not compile on every numba-cuda
    return a if a < b else b


def _add(a, b):  # noqa: ANN001, ANN202
    return a + b


def _mul(a, b):  # noqa: ANN001, ANN202
    return a * b


def _max(a, b):  # noqa: ANN001, ANN202
    return b if (b > a or b != b) else a


def _lowest(dtype: np.dtype) -> Any:
    return dtype.type(-np.inf if dtype.kind == "f" else np.iinfo(dtype).min)


def _highest(dtype: np.dtype) -> Any:
    return dtype.type(np.inf if dtype.kind == "f" else np.iinfo(dtype).max)


MONOIDS: dict[str, tuple[Callable, Callable[[np.dtype], Any]]] = {
    "sum": (cuda.jit(device=True)(_add), lambda d: d.type(0)),
    "prod": (cuda.jit(device=True)(_mul), lambda d: d.type(1)),
    "max": (cuda.jit(device=True)(_max), _lowest),
}
TREES = {name: tree(combine) for name, (combine, _) in MONOIDS.items()}


def acc_dtype(op: str, dtype: np.dtype) -> np.dtype:
    if op == "max":
        return dtype
    return np.dtype(np.float64 if dtype.kind == "f" else np.int64)


# ---------------------------------------------------------------- sum, prod, max


def _monoid_rows(combine: Callable, fold: Callable, identity: Any) -> Callable:
    acc_t = from_dtype(np.asarray(identity).dtype)

    def rows(x, out, outer, n, chunks):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, acc_t)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        clen = (n + chunks - 1) // chunks
        for item in range(cuda.blockIdx.x, outer * chunks, cuda.gridDim.x):
            base = item // chunks * n
            lo = item % chunks * clen
            hi = lesser(lo + clen, n)
            acc = identity
            for k in range(base + lo + tid, base + hi, bd):
                acc = combine(acc, x[k])
            sh[tid] = acc
            cuda.syncthreads()
            fold(sh, tid, bd)
            if tid == 0:
                out[item] = sh[0]

    return rows


def _monoid_columns(combine: Callable, identity: Any) -> Callable:
    def columns(x, out, outer, n, inner, chunks):  # noqa: ANN001, ANN202
        clen = (n + chunks - 1) // chunks
        for w in range(cuda.grid(1), outer * chunks * inner, cuda.gridsize(1)):
            t = w // inner
            lo = t % chunks * clen
            hi = lesser(lo + clen, n)
            base = t // chunks * n * inner + w % inner
            acc = identity
            for k in range(lo, hi):
                acc = combine(acc, x[base + k * inner])
            out[w] = acc

    return columns


_MONOID_KERNELS: _Kernels = {}


def _monoid_kernel(op: str, rows: bool, x: np.dtype, out: np.dtype) -> Kernel:
    key = (op, rows, x, out)
    kernel = _MONOID_KERNELS.get(key)
    if kernel is None:
        combine, identity_of = MONOIDS[op]
        identity = identity_of(acc_dtype(op, x))
        if rows:
            fn = _monoid_rows(combine, TREES[op], identity)
            kernel = Kernel(fn, f"void({x}[::1], {out}[::1], int64, int64, int64)", sim_threads=SIM_THREADS)
        else:
            fn = _monoid_columns(combine, identity)
            kernel = Kernel(fn, f"void({x}[::1], {out}[::1], int64, int64, int64, int64)")
        _MONOID_KERNELS[key] = kernel
    return kernel


def layout(outer: int, n: int, inner: int) -> tuple[bool, int, int, int]:
    """How to reduce (outer, n, inner) over n: (rows?, chunks, blocks, threads); blocks and
    threads only for rows (columns launch a thread per (outer, chunk, inner))."""
    return _layout(outer, n, inner, ROW_CHUNK, TARGET_BLOCKS, COL_CHUNK, TARGET_THREADS, SPLIT_MIN)


@functools.lru_cache(maxsize=4096)
def _layout(outer: int, n: int, inner: int, row_chunk: int, target_blocks: int, col_chunk: int,
            target_threads: int, split_min: int) -> tuple[bool, int, int, int]:
    whole = outer * n * inner <= split_min
    if inner == 1 and n > ROW_MIN:
        chunks = 1 if whole else split(n, outer, row_chunk, target_blocks)
        return True, chunks, row_blocks(outer * chunks), block_threads(-(-n // chunks))
    return False, 1 if whole else split(n, outer * inner, col_chunk, target_threads), 0, 0


def _reduce3(op: str, x: CudaArray, outer: int, n: int, inner: int, out: CudaArray) -> None:
    """out (outer*inner,) = op over the middle axis of flat ``x`` viewed as (outer, n, inner)."""
    rows, chunks, blocks, threads = layout(outer, n, inner)
    dest = out if chunks == 1 else CudaArray.empty((outer * chunks * inner,), acc_dtype(op, x.dtype))
    kernel = _monoid_kernel(op, rows, x.dtype, dest.dtype)
    if rows:
        kernel.launch(blocks, threads, x, dest, outer, n, chunks)
    else:
        kernel(outer * chunks * inner, x, dest, outer, n, inner, chunks)
    if chunks > 1:
        _reduce3(op, dest, outer, chunks, inner, out)


@functools.lru_cache(maxsize=1024)
def stages(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[tuple[int, int, int], ...]]:
    """The result's shape, and (outer, n, inner) of each launch that reduces one run of
    adjacent axes, innermost run first."""
    runs: list[list[int]] = []
    for a in sorted(axes):
        if runs and runs[-1][1] == a:
            runs[-1][1] = a + 1
        else:
            runs.append([a, a + 1])
    left = list(shape)
    views = []
    for lo, hi in reversed(runs):
        views.append((math.prod(left[:lo]), math.prod(left[lo:hi]), math.prod(left[hi:])))
        del left[lo:hi]
    return tuple(left), tuple(views)


def copy(x: CudaArray) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size:
        _copy_kernel(flat(x).dtype)(x.size, flat(x), flat(out), x.size)
    return out


def _copy(x, out, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = x[i]


_COPY_KERNELS: _Kernels = {}


def _copy_kernel(dtype: np.dtype) -> Kernel:
    kernel = _COPY_KERNELS.get(dtype)
    if kernel is None:
        kernel = _COPY_KERNELS[dtype] = Kernel(_copy, f"void({dtype}[::1], {dtype}[::1], int64)")
    return kernel


# (op, shape, axes, dtype, result dtype) -> the launch of a reduction of a C-contiguous input that
# takes one launch (one run of axes, one chunk), prepared once (``Kernel.fixed``), or ``None``
_ONE_LAUNCH: dict[tuple, tuple[Callable[..., None], tuple[int, ...]] | None] = {}


def _one_launch(op: str, shape: tuple[int, ...], axes: tuple[int, ...], dtype: np.dtype,
                out_dtype: Any) -> tuple[Callable[..., None], tuple[int, ...]] | None:
    """``(launch, out_shape)``: ``launch(x, out)`` is ``_reduce``'s one launch for ``x`` of ``shape``
    (C-contiguous) into a fresh ``out``, its arguments packed once; ``None`` where it takes more
    launches (or none)."""
    out_shape, views = stages(shape, axes)
    if len(views) != 1 or dtype.kind == "b" or not math.prod(out_shape):
        return None
    outer, n, inner = views[0]
    rows, chunks, blocks, threads = layout(outer, n, inner)
    if chunks != 1:
        return None
    kernel = _monoid_kernel(op, rows, dtype, np.dtype(out_dtype))
    x_, out_ = dense_like((outer * n * inner,), dtype), dense_like((outer * inner,), out_dtype)
    if rows:
        return kernel.fixed_shaped(blocks, threads, x_, out_, outer, n, chunks), out_shape
    return kernel.fixed(outer * inner, x_, out_, outer, n, inner, chunks), out_shape


def _reduce(op: str, x: CudaArray, axes: tuple[int, ...], out_dtype: Any) -> CudaArray:
    if not axes:
        return copy(x)
    if x.is_c_contiguous:  # the common case (a loss's sum) from a launch prepared per signature
        key = (op, x.shape, axes, x.dtype, out_dtype)
        known = _ONE_LAUNCH.get(key, _UNSEEN)
        if known is _UNSEEN:
            if len(_ONE_LAUNCH) >= 1024:
                _ONE_LAUNCH.clear()
            known = _ONE_LAUNCH[key] = _one_launch(op, x.shape, tuple(axes), x.dtype, out_dtype)
        if known is not None:
            launch, out_shape = known
            out = CudaArray.empty(out_shape, out_dtype)
            launch(x, out)
            return out
    out_shape, views = stages(x.shape, tuple(axes))
    out = CudaArray.empty(out_shape, out_dtype)
    if out.size == 0:
        return out
    cur = flat(x)
    for i, (outer, n, inner) in enumerate(views):
        dest = flat(out) if i == len(views) - 1 else CudaArray.empty((outer * inner,), acc_dtype(op, cur.dtype))
        _reduce3(op, cur, outer, n, inner, dest)
        cur = dest
    return out


def sum_axes(x: CudaArray, axes: tuple[int, ...]) -> CudaArray:
    return _reduce("sum", x, axes, np.int64 if x.dtype == np.bool_ else x.dtype)


def prod_axes(x: CudaArray, axes: tuple[int, ...]) -> CudaArray:
    return _reduce("prod", x, axes, x.dtype)


def max_axes(x: CudaArray, axes: tuple[int, ...]) -> CudaArray:
    return _reduce("max", x, axes, x.dtype)


# ---------------------------------------------------------------- argmax, argmin

BIG = np.int64(1 << 62)  # the index of an empty candidate: loses every tie
INDEX_T = from_dtype(np.dtype(np.int64))


def _better(largest: bool) -> Callable:
    def better(v, i, w, j):  # noqa: ANN001, ANN202
        """Whether candidate (w, j) beats (v, i): the first NaN, else the extreme, else the first."""
        if w != w:
            return v == v or j < i
        if v != v:
            return False
        if (w > v) if largest else (w < v):
            return True
        return w == v and j < i

    return cuda.jit(device=True)(better)


BETTER = {True: _better(True), False: _better(False)}


def _arg_rows(better: Callable, identity: Any) -> Callable:
    val_t = from_dtype(np.asarray(identity).dtype)

    def rows(x, idx, use_idx, vals, out, outer, n, chunks):  # noqa: ANN001, ANN202
        shv = cuda.shared.array(BLOCK, val_t)
        shi = cuda.shared.array(BLOCK, INDEX_T)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        clen = (n + chunks - 1) // chunks
        for item in range(cuda.blockIdx.x, outer * chunks, cuda.gridDim.x):
            base = item // chunks * n
            lo = item % chunks * clen
            hi = lesser(lo + clen, n)
            bv = identity
            bi = BIG
            for k in range(lo + tid, hi, bd):
                v = x[base + k]
                j = idx[base + k] if use_idx else k
                if better(bv, bi, v, j):
                    bv = v
                    bi = j
            shv[tid] = bv
            shi[tid] = bi
            cuda.syncthreads()
            step = 1
            while step * 2 < bd:
                step *= 2
            while step > 0:
                if tid < step and tid + step < bd and better(shv[tid], shi[tid], shv[tid + step], shi[tid + step]):
                    shv[tid] = shv[tid + step]
                    shi[tid] = shi[tid + step]
                cuda.syncthreads()
                step //= 2
            if tid == 0:
                vals[item] = shv[0]
                out[item] = shi[0]

    return rows


def _arg_columns(better: Callable, identity: Any) -> Callable:
    def columns(x, idx, use_idx, vals, out, outer, n, inner, chunks):  # noqa: ANN001, ANN202
        clen = (n + chunks - 1) // chunks
        for w in range(cuda.grid(1), outer * chunks * inner, cuda.gridsize(1)):
            t = w // inner
            lo = t % chunks * clen
            hi = lesser(lo + clen, n)
            base = t // chunks * n * inner + w % inner
            bv = identity
            bi = BIG
            for k in range(lo, hi):
                v = x[base + k * inner]
                j = idx[base + k * inner] if use_idx else k
                if better(bv, bi, v, j):
                    bv = v
                    bi = j
            vals[w] = bv
            out[w] = bi

    return columns


_ARG_KERNELS: _Kernels = {}


def _arg_kernel(largest: bool, rows: bool, dtype: np.dtype) -> Kernel:
    key = (largest, rows, dtype)
    kernel = _ARG_KERNELS.get(key)
    if kernel is None:
        identity = (_lowest if largest else _highest)(dtype)
        arrays = f"{dtype}[::1], int64[::1], int64, {dtype}[::1], int64[::1]"
        if rows:
            fn = _arg_rows(BETTER[largest], identity)
            kernel = Kernel(fn, f"void({arrays}, int64, int64, int64)", sim_threads=SIM_THREADS)
        else:
            fn = _arg_columns(BETTER[largest], identity)
            kernel = Kernel(fn, f"void({arrays}, int64, int64, int64, int64)")
        _ARG_KERNELS[key] = kernel
    return kernel


def _arg3(largest: bool, x: CudaArray, idx: CudaArray | None, outer: int, n: int, inner: int,
          out: CudaArray) -> None:
    rows, chunks, blocks, threads = layout(outer, n, inner)
    size = outer * chunks * inner
    vals = CudaArray.empty((size,), x.dtype)
    dest = out if chunks == 1 else CudaArray.empty((size,), np.int64)
    use_idx = int(idx is not None)
    idx = _no_index() if idx is None else idx
    kernel = _arg_kernel(largest, rows, x.dtype)
    if rows:
        kernel.launch(blocks, threads, x, idx, use_idx, vals, dest, outer, n, chunks)
    else:
        kernel(size, x, idx, use_idx, vals, dest, outer, n, inner, chunks)
    if chunks > 1:
        _arg3(largest, vals, dest, outer, chunks, inner, out)


_NO_INDEX: list[CudaArray] = []


def _no_index() -> CudaArray:
    if not _NO_INDEX:
        _NO_INDEX.append(CudaArray.empty((1,), np.int64))
    return _NO_INDEX[0]


def arg_axis(x: CudaArray, axis: int, largest: bool) -> CudaArray:
    """Index of the first maximum (``largest``) or minimum along ``axis``, int64; a NaN wins."""
    out = CudaArray.empty(x.shape[:axis] + x.shape[axis + 1:], np.int64)
    if out.size:
        outer, n, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
        _arg3(largest, flat(x), None, outer, n, inner, flat(out))
    return out
