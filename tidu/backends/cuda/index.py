"""``gather`` and ``scatter_add`` along one axis on the device.

One thread per index element (consecutive threads, consecutive index elements): its
position in the other dimensions gives the offsets into the operands (strided geometry as
in ``strided``), the index value the offset along ``axis``. Operands may have any
strides, so a broadcast index (as indexing and ``index_select`` build, and the gradients
scatter back) is never materialized. Index values are not checked
on the host (that would copy the index back and synchronize): an index outside
``[0, size)`` is never dereferenced; ``gather`` writes 0 there and ``scatter_add`` drops the
value. ``scatter_add`` accumulates with ``cuda.atomic.add``, so float sums into one
element are added in no fixed order (results may differ in the last bits between runs,
as PyTorch's CUDA ``scatter_add_``); integer sums are exact. Under
``tidu.use_deterministic_algorithms(True)`` float sums take a kernel without atomics that adds
in the order of the index, as PyTorch's deterministic ``scatter_add_`` does.

``nll_sum`` (the negative log likelihood's scaled sum of one pick per row) is one block's
float64 tree sum; its transpose writes the scaled one-hot rows in one pass.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...core.determinism import are_deterministic_algorithms_enabled
from .copy import contiguous
from .launch import Kernel
from .memory import CudaArray
from .reduce import BLOCK, SIM_THREADS, TREES, block_threads
from .strided import (
    GEOMETRY,
    INT,
    copy,
    duplicate,
    element_strides,
    geometry,
    numba_name,
    offsets,
    permuted,
    span,
)


def _gather(x, index, out, n, size, axis_stride, x0, i0,  # noqa: ANN001, ANN202
            s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        ox, oi = offsets(i, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
        j = index[i0 + oi]
        if 0 <= j < size:
            out[i] = x[x0 + ox + j * axis_stride]
        else:
            out[i] = 0


def _scatter_add(out, index, src, n, size, axis_stride, i0,  # noqa: ANN001, ANN202
                 s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        oo, oi = offsets(i, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
        j = index[i0 + oi]
        if 0 <= j < size:
            cuda.atomic.add(out, oo + j * axis_stride, src[i])


_kernels: dict[tuple, Kernel] = {}
_sum_tree = TREES["sum"]


def _kernel(fn, dtype: np.dtype) -> Kernel:  # noqa: ANN001
    kernel = _kernels.get((fn, dtype))
    if kernel is None:
        t = numba_name(dtype)
        starts = f", {INT}, {INT}" if fn is _gather else f", {INT}"
        sig = f"void({t}[::1], int64[::1], {t}[::1], {INT}, {INT}, {INT}{starts}, {GEOMETRY})"
        kernel = _kernels[(fn, dtype)] = Kernel(fn, sig)
    return kernel


def _without_axis(strides: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return tuple(0 if d == axis else st for d, st in enumerate(strides))


def _operand(a: CudaArray) -> tuple[CudaArray, int, tuple[int, ...]]:
    """``a`` as the kernels read it: 1-D memory, the offset of its first element, element strides."""
    if a.is_c_contiguous:
        return a, 0, element_strides(a.shape)
    memory, start = span(a)
    return memory, start, tuple(st // a.dtype.itemsize for st in a.strides)


def gather(x: CudaArray, index: CudaArray, *, axis: int) -> CudaArray:
    """``x`` and ``index`` may have any strides (a broadcast index is read, not materialized)."""
    out = CudaArray.empty(index.shape, x.dtype)
    if out.size:
        (xm, x0, xs), (im, i0, ist) = _operand(x), _operand(index)
        geo = geometry(index.shape, _without_axis(xs, axis), ist)
        _kernel(_gather, x.dtype)(out.size, xm, im, out, out.size, x.shape[axis], xs[axis], x0, i0, *geo)
    return out


def scatter_add(x: CudaArray, index: CudaArray, src: CudaArray, *, axis: int) -> CudaArray:
    """Operands of any strides; ``src``'s part that ``index`` covers is made C-contiguous first
    (no copy when it already is), ``x`` is copied into the output. 8- and 16-bit integers add in
    int32 and wrap back (numba-cuda's atomic add takes 32- and 64-bit numbers only)."""
    if x.dtype.kind in "iu" and x.dtype.itemsize < 4:
        from ...core import dtypes
        from .elementwise import convert

        wide = scatter_add(convert(x, new_dtype=dtypes.int32), index, convert(src, new_dtype=dtypes.int32), axis=axis)
        return convert(wide, new_dtype=dtypes.from_numpy_dtype(x.dtype))
    out = duplicate(x) if x.is_c_contiguous else permuted(x, range(x.ndim))
    if index.size:
        if src.shape != index.shape or not src.is_c_contiguous:
            src = _region(src, index.shape)
        if x.dtype.kind == "f" and are_deterministic_algorithms_enabled():
            _scatter_add_in_order(out, index, src, axis)
            return out
        im, i0, ist = _operand(index)
        xs = element_strides(x.shape)
        geo = geometry(index.shape, _without_axis(xs, axis), ist)
        _kernel(_scatter_add, x.dtype)(index.size, out, im, src, index.size, x.shape[axis], xs[axis], i0, *geo)
    return out


def _scatter_add_ordered(out, index, src, columns, length, size, axis_stride,  # noqa: ANN001, ANN202
                         s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    for c in range(cuda.grid(1), columns, cuda.gridsize(1)):
        oo, _ = offsets(c, s1, s2, s3, s4, s5, v1, v2, v3, v4, v5, a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5)
        for j in range(length):
            k = index[j * columns + c]
            if 0 <= k < size:
                out[oo + k * axis_stride] += src[j * columns + c]


def _scatter_add_in_order(out: CudaArray, index: CudaArray, src: CudaArray, axis: int) -> None:
    """``scatter_add`` with no atomics (``tidu.use_deterministic_algorithms(True)``, as PyTorch's
    deterministic ``scatter_add_``): ``index`` and ``src`` with ``axis`` moved to the front, one
    thread per position in the other dimensions adds that column's values in the order of ``axis``.
    Different columns write different elements, so every run adds in the same order."""
    order = (axis, *[d for d in range(index.ndim) if d != axis])
    index, src = permuted(index, order), permuted(src, order)
    length = index.shape[0]
    rest = index.shape[1:]
    columns = index.size // length if length else 0
    if not columns:
        return
    xs = element_strides(out.shape)
    rest_strides = tuple(xs[d] for d in order[1:])
    geo = geometry(rest, rest_strides, rest_strides)
    kernel = _kernels.get(("ordered", out.dtype))
    if kernel is None:
        t = numba_name(out.dtype)
        kernel = _kernels["ordered", out.dtype] = Kernel(
            _scatter_add_ordered, f"void({t}[::1], int64[::1], {t}[::1], {INT}, {INT}, {INT}, {INT}, {GEOMETRY})")
    kernel(columns, out.view((out.size,), (out.dtype.itemsize,)), index.view((index.size,), (8,)),
           src.view((src.size,), (src.dtype.itemsize,)), columns, length, out.shape[axis], xs[axis], *geo)


def _region(a: CudaArray, shape: tuple[int, ...]) -> CudaArray:
    """A C-contiguous copy of ``a[:shape[0], :shape[1], ...]``."""
    memory, start, strides = _operand(a)
    out = CudaArray.empty(shape, a.dtype)
    copy(memory, out, shape, strides, element_strides(shape), start)
    return out


def _picked_sum(cast):  # noqa: ANN001, ANN202
    def picked_sum(x, target, out, n, classes, scale):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        tid, bd = cuda.threadIdx.x, cuda.blockDim.x
        total = 0.0
        for i in range(tid, n, bd):
            t = target[i]
            if 0 <= t < classes:
                total += np.float64(x[i * classes + t])
        sh[tid] = total
        cuda.syncthreads()
        _sum_tree(sh, tid, bd)
        if tid == 0:
            out[0] = cast(scale * sh[0])

    return picked_sum


def _spread(out, target, ct, n, classes, scale):  # noqa: ANN001, ANN202
    for j in range(cuda.grid(1), n * classes, cuda.gridsize(1)):
        out[j] = scale * ct[0] if target[j // classes] == j % classes else 0


def nll_sum(x: CudaArray, target: CudaArray, *, scale: float) -> CudaArray:
    """``scale * sum_i x[i, target[i]]`` (0-d): one block sums the rows' picks in float64 (a loss
    over a batch: N is a batch size). Targets outside ``[0, C)`` add nothing."""
    out = CudaArray.empty((), x.dtype)
    n, classes = x.shape
    kernel = _kernels.get(("nll_sum", x.dtype))
    if kernel is None:
        t = numba_name(x.dtype)
        kernel = _kernels["nll_sum", x.dtype] = Kernel(
            _picked_sum(x.dtype.type), f"void({t}[::1], int64[::1], {t}[::1], int64, int64, float64)",
            sim_threads=SIM_THREADS)
    kernel.launch(1, block_threads(n), contiguous(x), contiguous(target), out.view((1,), (x.dtype.itemsize,)),
                  n, classes, float(scale))
    return out


def nll_sum_transpose(ct: CudaArray, target: CudaArray, *, classes: int, scale: float) -> CudaArray:
    """Zeros of (N, ``classes``) with ``scale * ct`` at ``[i, target[i]]``, in one pass (``ct`` is
    read on the device: no synchronization)."""
    n = target.shape[0]
    out = CudaArray.empty((n, classes), ct.dtype)
    if out.size:
        kernel = _kernels.get(("spread", ct.dtype))
        if kernel is None:
            t = numba_name(ct.dtype)
            kernel = _kernels["spread", ct.dtype] = Kernel(
                _spread, f"void({t}[::1], int64[::1], {t}[::1], int64, int64, {t})")
        kernel(out.size, out, contiguous(target), contiguous(ct).view((1,), (ct.dtype.itemsize,)), n, classes,
               ct.dtype.type(scale))
    return out


def _strided_read(src, order, lo, hi, scale, out, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        total = 0.0
        for t in range(lo[i], hi[i]):
            total += src[order[t]]
        out[i] = total * scale[i]


_sources: dict[int, tuple] = {}


def _on_device(sources: tuple) -> tuple:
    """``sources``' arrays uploaded once (they are cached on the host by their layouts)."""
    key = id(sources)
    entry = _sources.get(key)
    if entry is None or entry[0] is not sources:
        if len(_sources) > 256:
            _sources.clear()
        entry = _sources[key] = (sources, tuple(CudaArray.from_host(a) for a in sources))
    return entry[1]


def strided_read(src: CudaArray, sources: tuple, shape: tuple[int, ...]) -> CudaArray:
    """The CPU's ``strided_read`` (tidu/backends/cpu/index.py): one thread per output element
    sums its sources in order, in float64, with no atomics (the same bits as the CPU's)."""
    if src.dtype.kind != "f":
        from ..cpu.index import strided_read as on_host

        return CudaArray.from_host(on_host(src.copy_to_host(), sources, shape))
    out = CudaArray.empty(shape, src.dtype)
    if out.size:
        kernel = _kernels.get(("strided_read", src.dtype))
        if kernel is None:
            t = numba_name(src.dtype)
            kernel = _kernels["strided_read", src.dtype] = Kernel(
                _strided_read, f"void({t}[::1], int64[::1], int64[::1], int64[::1], float64[::1], {t}[::1], int64)")
        order, lo, hi, scale = _on_device(sources)
        flat = contiguous(src)
        kernel(out.size, flat.view((flat.size,), (src.dtype.itemsize,)), order, lo, hi, scale,
               out.view((out.size,), (src.dtype.itemsize,)), out.size)
    return out
