"""``dot_general`` on the device: one strided-batched cuBLAS gemm for floats, a tiled kernel for integers.

Each operand is read in place as a batch of matrices when its batch, free and contracted
dimensions each collapse to one strided dimension, one of the matrix strides is 1 and the
other a valid leading dimension: C-contiguous operands in (batch, free, contracted) or
(batch, contracted, free) order, and also transposed, sliced or batch-broadcast views
(``dot_general`` accepts any strides). The transposed reading is cuBLAS's transpose flag.
Otherwise the operand is first copied into (batch, free, contracted) order. The contracted
pairs may be taken in any order; the order that leaves the fewest elements to copy wins.
The result (batch, lhs free, rhs free) is the gemm's output as it lies.
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


def _group(x: CudaArray, dims: list[int]) -> tuple[int, int] | None:
    """(size, element stride) of ``dims`` read as one dimension, or None when they do not collapse."""
    kept = [d for d in dims if x.shape[d] != 1]
    size = prod(x.shape[d] for d in dims)
    if not kept:
        return size, 0
    strides = [x.strides[d] // x.dtype.itemsize for d in kept]
    for i in range(len(kept) - 1):
        if strides[i] != strides[i + 1] * x.shape[kept[i + 1]]:
            return None
    return size, strides[-1]


def _matrix(x: CudaArray, batch: list[int], rows: list[int], cols: list[int]) -> tuple[bool, int, int] | None:
    """How cuBLAS reads ``x`` as a batch of (rows x cols) matrices: (transposed, leading dim, batch
    stride), or None when it cannot."""
    groups = [_group(x, batch), _group(x, rows), _group(x, cols)]
    if None in groups or any(st < 0 for _, st in groups):
        return None
    (_, sb), (r, sr), (c, sc) = groups
    if c == 1 or sc == 1:  # row-major: rows step by the leading dimension
        ld = sr if r > 1 else max(c, 1)
        return (False, ld, sb) if ld >= max(c, 1) else None
    if r == 1 or sr == 1:  # column-major: the transposed reading
        ld = sc
        return (True, ld, sb) if ld >= max(r, 1) else None
    return None


def _operands(a: CudaArray, b: CudaArray, dims: Dims, m: int, n: int, k: int) -> tuple:
    """Both operands as cuBLAS reads them (m x k and k x n matrices), copying those it cannot
    read in place."""
    (ca, cb), (ba, bb) = dims
    fa, fb = _free(a.ndim, ca, ba), _free(b.ndim, cb, bb)
    best = None
    for key in (0, 1):
        pairs = sorted(zip(ca, cb), key=lambda p: p[key])
        pa, pb = [p[0] for p in pairs], [p[1] for p in pairs]
        ra, rb = _matrix(a, list(ba), fa, pa), _matrix(b, list(bb), pb, fb)
        cost = (a.size if ra is None else 0) + (b.size if rb is None else 0)
        if best is None or cost < best[0]:
            best = (cost, pa, pb, ra, rb)
    _, pa, pb, ra, rb = best
    if ra is None:
        a, ra = permuted(a, list(ba) + fa + pa), (False, k, m * k)
    if rb is None:
        b, rb = permuted(b, list(bb) + pb + fb), (False, n, k * n)
    return a, ra, b, rb


def _canonical(x: CudaArray, order: list[int]) -> CudaArray:
    """``x`` C-contiguous in dimension ``order`` (no copy when it already is)."""
    if x.is_c_contiguous and order == sorted(order):
        return x
    return permuted(x, order)


def dot_general(a: CudaArray, b: CudaArray, *, dimension_numbers: Dims) -> CudaArray:
    """The contraction of ``a`` and ``b`` (any strides) as (batch, lhs free, rhs free), C-contiguous."""
    (ca, cb), (ba, bb) = dimension_numbers
    fa, fb = _free(a.ndim, ca, ba), _free(b.ndim, cb, bb)
    shape = tuple([a.shape[i] for i in ba] + [a.shape[i] for i in fa] + [b.shape[i] for i in fb])
    nb, m, n = prod(a.shape[i] for i in ba), prod(a.shape[i] for i in fa), prod(b.shape[i] for i in fb)
    k = prod(a.shape[i] for i in ca)
    if nb * m * n == 0 or k == 0:
        return zeros(shape, a.dtype)
    out = CudaArray.empty(shape, a.dtype)
    if a.dtype.kind == "f":
        a, (ta, lda, sa), b, (tb, ldb, sb) = _operands(a, b, dimension_numbers, m, n, k)
        gemm_strided(a.dtype, ta, tb, m, n, k, a.ptr, lda, sa, b.ptr, ldb, sb, out.ptr, n, m * n, nb)
        return out
    a = _canonical(a, list(ba) + fa + list(ca))
    b = _canonical(b, list(bb) + list(cb) + fb)
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
