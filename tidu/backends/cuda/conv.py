"""``conv_general_dilated`` on the device: im2col and cuBLAS, or a direct kernel for small
feature groups (depthwise convolutions).

Per spatial axis (kernel length K, stride s, padding lo, input dilation a, kernel dilation d),
tap ``k`` of output ``p`` reads position ``u = p*s + k'*d - lo`` of the input spread ``a``
apart, with ``k' = K-1-k`` when ``flip``: the input element ``u / a`` when ``a`` divides
``u`` and it lies inside the input, else zero. The kernels are 3-D; 1-D and 2-D convolutions
run as 3-D ones with unit leading spatial dims.

im2col writes the windows as matrix columns (consecutive threads, consecutive output cells)
for a chunk of images at a time, at most ``COLS_LIMIT`` elements, then cuBLAS multiplies:
either per group a gemm batched over the chunk's images sharing ``w[g]`` (batch stride 0)
and writing the output in place, or ("folded", for few output cells per image, as in weight
gradients) one gemm batched over the groups with all the chunk's images side by side, whose
(O, images, cells) result is then copied into place.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from numba import cuda

from .blas import gemm_strided
from .launch import Kernel
from .memory import CudaArray
from .strided import copy, divmod_, reshaped, zeros

COLS_LIMIT = 1 << 26  # elements of im2col scratch per chunk (256 MiB of float32)
# Heuristics (not tuned on a GPU yet; bench/gpu_kernels_ccomp.py times every method):
SMALL_GROUP = 64  # grouped, with at most this many (out, in) channel pairs per group: the direct kernel
LOOP_GROUPS = 4  # at most this many groups: a gemm call per group; more: the folded gemm, batched over groups
FOLD_CELLS = 1024  # fewer output cells per image than this: one wide gemm over all images ("folded")


@cuda.jit(device=True)
def _source(p, k, kn, s, lo, a, d, n, flip):  # noqa: ANN001, ANN202
    """The input index tap ``k`` of output ``p`` reads along one axis, or -1 for a zero."""
    if flip:
        k = kn - 1 - k
    u = p * s + k * d - lo
    if u < 0:
        return -1
    if a != 1:  # between the spread input's elements: zeros
        if u % a != 0:
            return -1
        u //= a
    return u if u < n else -1


def _im2col(x, cols, total, n0, nc, c_in, dn, h, w, kd, kh, kw, pd, ph, pw, sd, sh, sw, lod, loh, low,  # noqa: ANN001, ANN202
            ad, ah, aw, dd, dh, dw, flip, folded, v_nc, v_c, v_kd, v_kh, v_kw, v_pd, v_ph, v_pw):
    """cols[n, c, e, i, j, z, p, q] for images n0.. (n0 + nc), or cols[c, e, i, j, n, z, p, q] when
    ``folded``; ``v_*`` are the inverses of the sizes (``divmod_``)."""
    for t in range(cuda.grid(1), total, cuda.gridsize(1)):
        r, q = divmod_(t, pw, v_pw)
        r, p = divmod_(r, ph, v_ph)
        r, z = divmod_(r, pd, v_pd)
        n = 0
        if folded:
            r, n = divmod_(r, nc, v_nc)
        r, j = divmod_(r, kw, v_kw)
        r, i = divmod_(r, kh, v_kh)
        r, e = divmod_(r, kd, v_kd)
        r, c = divmod_(r, c_in, v_c)
        if not folded:
            n = r
        di = _source(z, e, kd, sd, lod, ad, dd, dn, flip)
        hi = _source(p, i, kh, sh, loh, ah, dh, h, flip)
        wi = _source(q, j, kw, sw, low, aw, dw, w, flip)
        if di >= 0 and hi >= 0 and wi >= 0:
            cols[t] = x[((((n0 + n) * c_in + c) * dn + di) * h + hi) * w + wi]
        else:
            cols[t] = 0


_kernels: dict[tuple, Kernel] = {}
_GEOMETRY = ", ".join(["int64"] * 19)


def _im2col_kernel(dtype: np.dtype) -> Kernel:
    kernel = _kernels.get(("im2col", dtype))
    if kernel is None:
        t = str(dtype)
        kernel = _kernels[("im2col", dtype)] = Kernel(
            _im2col, f"void({t}[::1], {t}[::1], int64, int64, int64, int64, int64, int64, int64, {_GEOMETRY}, int64"
                     f"{', float64' * 8})")
    return kernel


def _direct_kernel(dtype: np.dtype) -> Kernel:
    """One thread per output element, summing its group's channels and taps (consecutive threads,
    consecutive output columns)."""
    kernel = _kernels.get(("direct", dtype))
    if kernel is not None:
        return kernel
    from numba import from_dtype

    zero = from_dtype(dtype)(0)

    def direct(x, wt, out, total, c_in, dn, h, w, o_all, cg, og,  # noqa: ANN001, ANN202
               kd, kh, kw, pd, ph, pw, sd, sh, sw, lod, loh, low, ad, ah, aw, dd, dh, dw, flip,
               v_pw, v_ph, v_pd, v_o, v_og):
        for t in range(cuda.grid(1), total, cuda.gridsize(1)):
            r, q = divmod_(t, pw, v_pw)
            r, p = divmod_(r, ph, v_ph)
            r, z = divmod_(r, pd, v_pd)
            n, o = divmod_(r, o_all, v_o)
            c0 = divmod_(o, og, v_og)[0] * cg
            acc = zero
            for e in range(kd):
                di = _source(z, e, kd, sd, lod, ad, dd, dn, flip)
                if di < 0:
                    continue
                for i in range(kh):
                    hi = _source(p, i, kh, sh, loh, ah, dh, h, flip)
                    if hi < 0:
                        continue
                    for j in range(kw):
                        wi = _source(q, j, kw, sw, low, aw, dw, w, flip)
                        if wi < 0:
                            continue
                        for c in range(cg):
                            acc += (x[(((n * c_in + c0 + c) * dn + di) * h + hi) * w + wi]
                                    * wt[(((o * cg + c) * kd + e) * kh + i) * kw + j])
            out[t] = acc

    t = str(dtype)
    kernel = _kernels[("direct", dtype)] = Kernel(
        direct, f"void({t}[::1], {t}[::1], {t}[::1], int64, int64, int64, int64, int64, int64, int64, int64, "
                f"{_GEOMETRY}{', float64' * 5})")
    return kernel


def _dilated(n: int, a: int) -> int:
    return (n - 1) * a + 1 if n else 0


def conv_general(lhs: CudaArray, rhs: CudaArray, *, window_strides: tuple, padding: tuple, lhs_dilation: tuple,
                 rhs_dilation: tuple, feature_group_count: int, flip: bool, method: str = "auto") -> CudaArray:
    """lhs (N, C, *in), rhs (O, C/G, *k) -> (N, O, *out), 1-D, 2-D or 3-D; ``method``: 'auto',
    'im2col', 'folded' (see ``_im2col_gemm``) or 'direct'."""
    lift = 5 - lhs.ndim
    if lift:  # 1-D and 2-D: a 3-D convolution of unit depth (and height)
        lhs = reshaped(lhs, (*lhs.shape[:2], *(1,) * lift, *lhs.shape[2:]))
        rhs = reshaped(rhs, (*rhs.shape[:2], *(1,) * lift, *rhs.shape[2:]))
        window_strides, padding = (1,) * lift + tuple(window_strides), ((0, 0),) * lift + tuple(padding)
        lhs_dilation, rhs_dilation = (1,) * lift + tuple(lhs_dilation), (1,) * lift + tuple(rhs_dilation)
    n, c, dn, h, w = lhs.shape
    o, cg, kd, kh, kw = rhs.shape
    g = feature_group_count
    sizes = [(lo + _dilated(m, a) + hi - _dilated(k, d)) // s + 1 for m, k, s, (lo, hi), a, d in
             zip((dn, h, w), (kd, kh, kw), window_strides, padding, lhs_dilation, rhs_dilation)]
    pd, ph, pw = sizes
    shape = (n, o, *sizes[lift:])
    if prod(shape) == 0 or cg * kd * kh * kw == 0:
        return zeros(shape, lhs.dtype)
    result = CudaArray.empty(shape, lhs.dtype)
    out = reshaped(result, (n, o, pd, ph, pw)) if lift else result
    lows = tuple(lo for lo, _ in padding)
    geometry = (kd, kh, kw, pd, ph, pw, *window_strides, *lows, *lhs_dilation, *rhs_dilation, int(flip))
    # a 1x1 kernel reading every input cell once: the input is already im2col's matrix
    pointwise = (kd == kh == kw == 1 and (*window_strides, *lhs_dilation) == (1,) * 6 and (pd, ph, pw) == (dn, h, w)
                 and lows == (0, 0, 0))
    if method == "auto":
        if g > 1 and (o // g) * cg <= SMALL_GROUP:  # depthwise and the like
            method = "direct"
        elif g <= LOOP_GROUPS and (pointwise or pd * ph * pw >= FOLD_CELLS):
            method = "im2col"
        else:
            method = "folded"
    if method == "direct":
        total = out.size
        inverses = [1.0 / v for v in (pw, ph, pd, o, o // g)]
        _direct_kernel(lhs.dtype)(total, lhs, rhs, out, total, c, dn, h, w, o, cg, o // g, *geometry, *inverses)
    else:
        _im2col_gemm(lhs, rhs, out, g, geometry, folded=method == "folded", pointwise=pointwise)
    return result


def _im2col_gemm(lhs: CudaArray, rhs: CudaArray, out: CudaArray, g: int, geometry: tuple[Any, ...],
                 folded: bool, pointwise: bool) -> None:
    """im2col, then per chunk of images either one gemm per group batched over the images
    (``out[n, g] = w[g] @ cols[n, g]``, written in place), or, ``folded``, one gemm batched over
    the groups with the images side by side in its columns (``tmp[g] = w[g] @ cols[g]``, a wide
    product where each image has few output cells, as in weight gradients), then ``tmp``
    (O, images, cells) is copied into ``out`` (images, O, cells). A ``pointwise`` convolution
    unfolded is its input: no im2col then, unless ``folded``."""
    n, c, dn, h, w = lhs.shape
    o, cg, kd, kh, kw = rhs.shape
    pd, ph, pw = geometry[3:6]
    og, kk, pq, isz = o // g, kd * kh * kw, pd * ph * pw, lhs.dtype.itemsize
    pointwise = pointwise and not folded
    chunk = n if pointwise else max(1, COLS_LIMIT // (c * kk * pq))
    cols = lhs if pointwise else CudaArray.empty((min(chunk, n) * c * kk * pq,), lhs.dtype)
    for n0 in range(0, n, chunk):
        nc = min(chunk, n - n0)
        total = nc * c * kk * pq
        if not pointwise:
            inverses = [1.0 / v for v in (nc, c, kd, kh, kw, pd, ph, pw)]
            _im2col_kernel(lhs.dtype)(total, lhs, cols, total, n0, nc, c, dn, h, w, *geometry, int(folded),
                                      *inverses)
        at = out.ptr + n0 * o * pq * isz
        if not folded:
            for gi in range(g):
                gemm_strided(lhs.dtype, False, False, og, pq, cg * kk,
                             rhs.ptr + gi * og * cg * kk * isz, cg * kk, 0,
                             cols.ptr + gi * cg * kk * pq * isz, pq, c * kk * pq,
                             at + gi * og * pq * isz, pq, o * pq, nc)
            continue
        tmp = out if nc == 1 else CudaArray.empty((o, nc, pq), lhs.dtype)
        gemm_strided(lhs.dtype, False, False, og, nc * pq, cg * kk, rhs.ptr, cg * kk, og * cg * kk,
                     cols.ptr, nc * pq, cg * kk * nc * pq, at if nc == 1 else tmp.ptr, nc * pq, og * nc * pq, g)
        if nc > 1:
            copy(tmp, out, (nc, o, pq), (pq, nc * pq, 1), (o * pq, pq, 1), 0, n0 * o * pq)
