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

import functools
from math import prod

import numpy as np
from numba import cuda

from .blas import gemm_strided
from .launch import Kernel
from .memory import CudaArray
from .strided import permuted, span, zeros

Dims = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]
TILE = 16


def _free(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


def _group(shape: tuple, strides: tuple, dims: list[int]) -> tuple[int, int] | None:
    """(size, element stride) of ``dims`` read as one dimension, or None when they do not collapse."""
    kept = [d for d in dims if shape[d] != 1]
    size = prod(shape[d] for d in dims)
    if not kept:
        return size, 0
    for d, inner in zip(kept, kept[1:]):
        if strides[d] != strides[inner] * shape[inner]:
            return None
    return size, strides[kept[-1]]


def _matrix(shape: tuple, strides: tuple, batch: list[int], rows: list[int],
            cols: list[int]) -> tuple[bool, int, int] | None:
    """How cuBLAS reads an operand as a batch of (rows x cols) matrices: (transposed, leading dim,
    batch stride), or None when it cannot."""
    groups = [_group(shape, strides, batch), _group(shape, strides, rows), _group(shape, strides, cols)]
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


@functools.lru_cache(maxsize=4096)
def _plan(a_shape: tuple, a_strides: tuple, b_shape: tuple, b_strides: tuple, dims: Dims, blas: bool) -> tuple:
    """(out shape, nb, m, n, k, and per operand: the order to copy it into first or None, and how
    it is then read: (transposed, leading dim, batch stride)); strides in elements.

    cuBLAS (``blas``) reads either matrix layout; the integer kernel only row-major
    (batch, rows, cols) with no gaps.
    """
    (ca, cb), (ba, bb) = dims
    fa, fb = _free(len(a_shape), ca, ba), _free(len(b_shape), cb, bb)
    shape = tuple([a_shape[i] for i in ba] + [a_shape[i] for i in fa] + [b_shape[i] for i in fb])
    nb, m, n = prod(a_shape[i] for i in ba), prod(a_shape[i] for i in fa), prod(b_shape[i] for i in fb)
    k = prod(a_shape[i] for i in ca)

    def usable(read: tuple | None, rows: int, cols: int) -> bool:
        if read is None or blas:
            return read is not None
        transposed, ld, step = read
        return not transposed and (ld == cols or rows == 1) and (step == rows * cols or nb == 1)

    best = None
    for key in (0, 1):
        pairs = sorted(zip(ca, cb), key=lambda p: p[key])
        pa, pb = [p[0] for p in pairs], [p[1] for p in pairs]
        ra, rb = _matrix(a_shape, a_strides, list(ba), fa, pa), _matrix(b_shape, b_strides, list(bb), pb, fb)
        ra, rb = (ra if usable(ra, m, k) else None), (rb if usable(rb, k, n) else None)
        cost = (prod(a_shape) if ra is None else 0) + (prod(b_shape) if rb is None else 0)
        if best is None or cost < best[0]:
            best = (cost, pa, pb, ra, rb)
    _, pa, pb, ra, rb = best
    copy_a = None if ra is not None else tuple(list(ba) + fa + pa)
    copy_b = None if rb is not None else tuple(list(bb) + pb + fb)
    return shape, nb, m, n, k, copy_a, ra or (False, k, m * k), copy_b, rb or (False, n, k * n)


def dot_general(a: CudaArray, b: CudaArray, *, dimension_numbers: Dims) -> CudaArray:
    """The contraction of ``a`` and ``b`` (any strides) as (batch, lhs free, rhs free), C-contiguous."""
    item = a.dtype.itemsize
    blas = a.dtype.kind == "f"
    shape, nb, m, n, k, copy_a, (ta, lda, sa), copy_b, (tb, ldb, sb) = _plan(
        a.shape, tuple(st // item for st in a.strides), b.shape, tuple(st // item for st in b.strides),
        dimension_numbers, blas)
    if nb * m * n == 0 or k == 0:
        return zeros(shape, a.dtype)
    if copy_a is not None:
        a = permuted(a, copy_a)
    if copy_b is not None:
        b = permuted(b, copy_b)
    out = CudaArray.empty(shape, a.dtype)
    if blas:
        gemm_strided(a.dtype, ta, tb, m, n, k, a.ptr, lda, sa, b.ptr, ldb, sb, out.ptr, n, m * n, nb)
    else:
        tiles = nb * -(-m // TILE) * -(-n // TILE)
        _int_kernel(a.dtype).launch(min(tiles, 4096), TILE * TILE, span(a)[0], span(b)[0], out, nb, m, n, k)
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
