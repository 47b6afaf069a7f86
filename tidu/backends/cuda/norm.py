"""layer_norm on the GPU: a block per row of the normalized (trailing) elements.

The threads stride over the row (coalesced) and combine their sums with a shared-memory tree,
twice: the mean, then the sum of squared deviations (two passes, as the CPU kernel, so the
variance never comes out negative); then each thread writes its elements
``(x - mean) / sqrt(var + eps)`` (``layer_norm_affine``: that times the weight plus the bias).
Sums are accumulated in float64.

``layer_norm_tangent`` (the derivative at ``x`` applied to ``dx``,
``r * (dx - mean(dx) - y * mean(y * dx))``) takes ``r`` the same way (``_row_stats``), then sums
``dx`` and ``y * dx`` in one pass with a tree each.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import cuda

from .launch import Kernel
from .memory import CudaArray
from .reduce import BLOCK, SIM_THREADS, TREES, block_threads, flat, row_blocks

_sum_tree = TREES["sum"]
_KERNELS: dict[tuple[str, np.dtype], Kernel] = {}


@cuda.jit(device=True)
def _row_stats(x, lo, hi, eps, sh, tid, bd):  # noqa: ANN001, ANN202
    """``(mean, 1 / sqrt(var + eps))`` of ``x[lo:hi]`` in float64, by the block: two passes, so the
    variance never comes out negative (every thread gets both; ends synchronized)."""
    n = hi - lo
    s = 0.0
    for k in range(lo + tid, hi, bd):
        s += np.float64(x[k])
    sh[tid] = s
    cuda.syncthreads()
    _sum_tree(sh, tid, bd)
    mean = sh[0] / n
    cuda.syncthreads()
    s = 0.0
    for k in range(lo + tid, hi, bd):
        d = np.float64(x[k]) - mean
        s += d * d
    sh[tid] = s
    cuda.syncthreads()
    _sum_tree(sh, tid, bd)
    r = 1.0 / math.sqrt(sh[0] / n + eps)
    cuda.syncthreads()
    return mean, r


def _rows(dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(x, out, outer, n, eps):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            mean, r = _row_stats(x, lo, lo + n, eps, sh, tid, bd)
            for k in range(lo + tid, lo + n, bd):
                out[k] = cast((np.float64(x[k]) - mean) * r)

    return rows


def layer_norm(x: CudaArray, *, k: int, eps: float) -> CudaArray:
    return _launch("layer_norm", _rows, [x], k, eps)


def _affine_rows(dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(x, w, b, out, outer, n, eps):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            mean, r = _row_stats(x, lo, lo + n, eps, sh, tid, bd)
            for j in range(tid, n, bd):
                y = cast((np.float64(x[lo + j]) - mean) * r)
                out[lo + j] = y * w[j] + b[j]

    return rows


def layer_norm_affine(x: CudaArray, w: CudaArray, b: CudaArray, *, k: int, eps: float) -> CudaArray:
    """``layer_norm(x) * w + b``, with ``w`` and ``b`` of the normalized shape."""
    return _launch("layer_norm_affine", _affine_rows, [x, w, b], k, eps)


def _tangent_rows(dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(dx, x, y, out, outer, n, eps):  # noqa: ANN001, ANN202
        sa = cuda.shared.array(BLOCK, np.float64)
        sb = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            hi = lo + n
            _, r = _row_stats(x, lo, hi, eps, sa, tid, bd)
            a = 0.0
            b = 0.0
            for k in range(lo + tid, hi, bd):
                a += np.float64(dx[k])
                b += np.float64(dx[k]) * np.float64(y[k])
            sa[tid] = a
            sb[tid] = b
            cuda.syncthreads()
            _sum_tree(sa, tid, bd)
            _sum_tree(sb, tid, bd)
            a = sa[0] / n
            b = sb[0] / n
            cuda.syncthreads()
            for k in range(lo + tid, hi, bd):
                out[k] = cast(r * (np.float64(dx[k]) - a - np.float64(y[k]) * b))

    return rows


def layer_norm_tangent(dx: CudaArray, x: CudaArray, y: CudaArray, *, k: int, eps: float) -> CudaArray:
    return _launch("layer_norm_tangent", _tangent_rows, [dx, x, y], k, eps)


def _launch(name: str, factory: Callable, operands: list[CudaArray], k: int, eps: float) -> CudaArray:
    """One block per row of the last ``k`` dimensions: ``kernel(*operands, out, outer, n, eps)``."""
    x = operands[0]  # the shape rules give every operand its shape and dtype
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    outer = x.size // n
    kernel = _KERNELS.get((name, x.dtype))
    if kernel is None:
        signature = f"void({', '.join([f'{x.dtype}[::1]'] * (len(operands) + 1))}, int64, int64, float64)"
        kernel = _KERNELS[name, x.dtype] = Kernel(factory(x.dtype), signature, sim_threads=SIM_THREADS)
    kernel.launch(row_blocks(outer), block_threads(n), *[flat(a) for a in operands], flat(out), outer, n, float(eps))
    return out
