"""layer_norm on the GPU: a block per row of the normalized (trailing) elements.

The threads stride over the row (coalesced) and combine their sums with a shared-memory tree,
twice: the mean, then the sum of squared deviations (two passes, as the CPU kernel, so the
variance never comes out negative); then each thread writes its elements
``(x - mean) / sqrt(var + eps)``. Sums are accumulated in float64.

``layer_norm_tangent`` (the derivative at ``x`` applied to ``dx``,
``r * (dx - mean(dx) - y * mean(y * dx))``) sums the same way: the mean, then the squared
deviations, ``dx`` and ``y * dx`` in one pass with a tree each.
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
def _row_mean(x, lo, hi, sh, tid, bd):  # noqa: ANN001, ANN202
    """The mean of ``x[lo:hi]`` in float64, by the block (every thread gets it; ends synchronized)."""
    s = 0.0
    for k in range(lo + tid, hi, bd):
        s += np.float64(x[k])
    sh[tid] = s
    cuda.syncthreads()
    _sum_tree(sh, tid, bd)
    mean = sh[0] / (hi - lo)
    cuda.syncthreads()
    return mean


def _rows(dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(x, out, outer, n, eps):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            hi = lo + n
            mean = _row_mean(x, lo, hi, sh, tid, bd)
            s = 0.0
            for k in range(lo + tid, hi, bd):
                d = np.float64(x[k]) - mean
                s += d * d
            sh[tid] = s
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            r = 1.0 / math.sqrt(sh[0] / n + eps)
            cuda.syncthreads()
            for k in range(lo + tid, hi, bd):
                out[k] = cast((np.float64(x[k]) - mean) * r)

    return rows


def layer_norm(x: CudaArray, *, k: int, eps: float) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    outer = x.size // n
    kernel = _kernel("layer_norm", _rows, x.dtype, 2)
    kernel.launch(row_blocks(outer), block_threads(n), flat(x), flat(out), outer, n, float(eps))
    return out


def _tangent_rows(dtype: np.dtype) -> Callable:
    cast = dtype.type

    def rows(dx, x, y, out, outer, n, eps):  # noqa: ANN001, ANN202
        sh = cuda.shared.array(BLOCK, np.float64)
        sa = cuda.shared.array(BLOCK, np.float64)
        sb = cuda.shared.array(BLOCK, np.float64)
        tid = cuda.threadIdx.x
        bd = cuda.blockDim.x
        for row in range(cuda.blockIdx.x, outer, cuda.gridDim.x):
            lo = row * n
            hi = lo + n
            mean = _row_mean(x, lo, hi, sh, tid, bd)
            s = 0.0
            a = 0.0
            b = 0.0
            for k in range(lo + tid, hi, bd):
                d = np.float64(x[k]) - mean
                s += d * d
                a += np.float64(dx[k])
                b += np.float64(dx[k]) * np.float64(y[k])
            sh[tid] = s
            sa[tid] = a
            sb[tid] = b
            cuda.syncthreads()
            _sum_tree(sh, tid, bd)
            _sum_tree(sa, tid, bd)
            _sum_tree(sb, tid, bd)
            r = 1.0 / math.sqrt(sh[0] / n + eps)
            a = sa[0] / n
            b = sb[0] / n
            cuda.syncthreads()
            for k in range(lo + tid, hi, bd):
                out[k] = cast(r * (np.float64(dx[k]) - a - np.float64(y[k]) * b))

    return rows


def layer_norm_tangent(dx: CudaArray, x: CudaArray, y: CudaArray, *, k: int, eps: float) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    outer = x.size // n
    kernel = _kernel("layer_norm_tangent", _tangent_rows, x.dtype, 4)
    kernel.launch(row_blocks(outer), block_threads(n), flat(dx), flat(x), flat(y), flat(out), outer, n, float(eps))
    return out


def _kernel(name: str, factory: Callable, dtype: np.dtype, arrays: int) -> Kernel:
    kernel = _KERNELS.get((name, dtype))
    if kernel is None:
        signature = f"void({', '.join([f'{dtype}[::1]'] * arrays)}, int64, int64, float64)"
        kernel = _KERNELS[name, dtype] = Kernel(factory(dtype), signature, sim_threads=SIM_THREADS)
    return kernel
