"""``dot_general`` on the device: one strided-batched cuBLAS gemm for floats, a tiled kernel for integers.

Each operand is read in place as a batch of matrices when its dimensions already lie in
memory as (batch, free, contracted) or (batch, contracted, free) (the second through
cuBLAS's transpose flag); otherwise it is first copied into the first layout. The
contracted pairs may be taken in any order, so the order that leaves the fewest elements to
copy is chosen. The result (batch, lhs free, rhs free) is the gemm's output as it lies.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import cuda

from .blas import gemm_strided
from .launch import Kernel
from .memory import CudaArray
from .strided import flat, permuted, zeros

Dims = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]
TILE = 16


def _free(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _layout(ndim: int, batch: list[int], free: list[int], contract: list[int], free_first: bool) -> bool | None:
    """Whether the operand must be read transposed (None: neither layout fits, copy it)."""
    ident = list(range(ndim))
    first, second = (free, contract) if free_first else (contract, free)
    if batch + first + second == ident:
        return False
    if batch + second + first == ident:
        return True
    return None


def _plan(a: CudaArray, b: CudaArray, dims: Dims) -> tuple:
    (ca, cb), (ba, bb) = dims
    fa, fb = _free(a.ndim, ca, ba), _free(b.ndim, cb, bb)
    best = None
    for key in (0, 1):
        pairs = sorted(zip(ca, cb), key=lambda p: p[key])
        pa, pb = [p[0] for p in pairs], [p[1] for p in pairs]
        ta = _layout(a.ndim, list(ba), fa, pa, True)
        tb = _layout(b.ndim, list(bb), fb, pb, False)
        cost = (a.size if ta is None else 0) + (b.size if tb is None else 0)
        if best is None or cost < best[0]:
            best = (cost, pa, pb, ta, tb)
    _, pa, pb, ta, tb = best
    if ta is None:
        a, ta = permuted(a, list(ba) + fa + pa), False
    if tb is None:
        b, tb = permuted(b, list(bb) + pb + fb), False
    return a, b, ta, tb


def dot_general(a: CudaArray, b: CudaArray, *, dimension_numbers: Dims) -> CudaArray:
    (ca, cb), (ba, bb) = dimension_numbers
    fa, fb = _free(a.ndim, ca, ba), _free(b.ndim, cb, bb)
    shape = tuple([a.shape[i] for i in ba] + [a.shape[i] for i in fa] + [b.shape[i] for i in fb])
    nb, m, n = prod(a.shape[i] for i in ba), prod(a.shape[i] for i in fa), prod(b.shape[i] for i in fb)
    k = prod(a.shape[i] for i in ca)
    if nb * m * n == 0 or k == 0:
        return zeros(shape, a.dtype)
    out = CudaArray.empty(shape, a.dtype)
    if a.dtype.kind == "f":
        a, b, ta, tb = _plan(a, b, dimension_numbers)
        gemm_strided(a.dtype, ta, tb, m, n, k, a.ptr, m if ta else k, m * k, b.ptr, k if tb else n, k * n,
                     out.ptr, n, m * n, nb)
        return out
    a = permuted(a, list(ba) + fa + list(ca))
    b = permuted(b, list(bb) + list(cb) + fb)
    tiles = nb * -(-m // TILE) * -(-n // TILE)
    _int_kernel(a.dtype).launch(min(tiles, 4096), TILE * TILE, flat(a), flat(b), flat(out), nb, m, n, k)
    return out


_int_kernels: dict[np.dtype, Kernel] = {}


def _int_kernel(dtype: np.dtype) -> Kernel:
    """A (batch, m, k) @ (batch, k, n) product over C-contiguous integer arrays.

    Each block takes output tiles (grid-stride); per ``TILE``-long slice of ``k`` its threads
    stage both operand tiles in shared memory (coalesced loads along rows), then each thread
    adds its outputs' partial dot products to the output, which it alone owns. Any block
    size works.
    """
    kernel = _int_kernels.get(dtype)
    if kernel is not None:
        return kernel
    from numba import from_dtype

    item = from_dtype(dtype)

    def matmul(a, b, out, nb, m, n, k):  # noqa: ANN001, ANN202
        sa = cuda.shared.array((TILE, TILE), item)
        sb = cuda.shared.array((TILE, TILE), item)
        tid, nt = cuda.threadIdx.x, cuda.blockDim.x
        tm, tn = (m + TILE - 1) // TILE, (n + TILE - 1) // TILE
        for t in range(cuda.blockIdx.x, nb * tm * tn, cuda.gridDim.x):
            bi, r = t // (tm * tn), t % (tm * tn)
            i0, j0 = (r // tn) * TILE, (r % tn) * TILE
            for k0 in range(0, k, TILE):
                for e in range(tid, TILE * TILE, nt):
                    row, col = e // TILE, e % TILE
                    i, kk = i0 + row, k0 + col
                    sa[row, col] = a[(bi * m + i) * k + kk] if i < m and kk < k else 0
                    kk, j = k0 + row, j0 + col
                    sb[row, col] = b[(bi * k + kk) * n + j] if kk < k and j < n else 0
                cuda.syncthreads()
                for e in range(tid, TILE * TILE, nt):
                    row, col = e // TILE, e % TILE
                    i, j = i0 + row, j0 + col
                    if i < m and j < n:
                        acc = sa[row, 0] * sb[0, col]
                        for q in range(1, TILE):
                            acc += sa[row, q] * sb[q, col]
                        o = (bi * m + i) * n + j
                        out[o] = acc if k0 == 0 else out[o] + acc
                cuda.syncthreads()

    t = str(dtype)
    kernel = _int_kernels[dtype] = Kernel(
        matmul, f"void({t}[::1], {t}[::1], {t}[::1], int64, int64, int64, int64)", sim_threads=4)
    return kernel
