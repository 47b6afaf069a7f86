"""Convolution (im2col + BLAS) and the window-argmax, gather and scatter loops of max pooling.

``conv_general`` lays the windows of the dilated, padded input out as columns (one copy of a
strided numpy view) and multiplies each feature group by its kernel matrix with ``np.matmul``.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from .elementwise import JIT, contiguous


def dilate_and_pad(x: np.ndarray, dilation: tuple, padding: tuple) -> np.ndarray:
    """Spread the spatial axes of ``x`` (N, C, *spatial) ``dilation`` apart, then pad by
    ``(lo, hi)`` pairs; negative padding crops."""
    if all(a == 1 for a in dilation) and all(lo == 0 and hi == 0 for lo, hi in padding):
        return x
    spatial = x.shape[2:]
    sizes = [lo + ((n - 1) * a + 1 if n else 0) + hi for n, a, (lo, hi) in zip(spatial, dilation, padding)]
    out = np.zeros(x.shape[:2] + tuple(sizes), x.dtype)
    src, dst = [slice(None)] * 2, [slice(None)] * 2
    for n, a, (lo, _), size in zip(spatial, dilation, padding, sizes):
        first = max(0, -(lo // a) if lo < 0 else 0)  # first source index landing at or after 0
        last = min(n, (size - 1 - lo) // a + 1) if size > lo else 0  # one past the last that fits
        if last <= first:
            return out
        src.append(slice(first, last))
        dst.append(slice(lo + first * a, lo + (last - 1) * a + 1, a))
    out[tuple(dst)] = x[tuple(src)]
    return out


def conv_general(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    window_strides: tuple,
    padding: tuple,
    lhs_dilation: tuple,
    rhs_dilation: tuple,
    feature_group_count: int,
    flip: bool,
) -> np.ndarray:
    """lhs (N, C, *in), rhs (O, C/G, *k) -> (N, O, *out); see ``conv_general_dilated``."""
    nd = lhs.ndim - 2
    if flip:
        rhs = rhs[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    x = dilate_and_pad(lhs, lhs_dilation, padding)
    n, c = x.shape[:2]
    o, ks = rhs.shape[0], rhs.shape[2:]
    g = feature_group_count
    cg, og = c // g, o // g
    out_sp = tuple((xs - (k - 1) * d - 1) // s + 1 for xs, k, d, s in zip(x.shape[2:], ks, rhs_dilation, window_strides))
    npos, kcols = prod(out_sp), cg * prod(ks)
    if n * npos * o == 0 or kcols == 0:
        return np.zeros((n, o) + out_sp, lhs.dtype)
    sn, sc, ssp = x.strides[0], x.strides[1], x.strides[2:]
    # windows as (G, Cg, *k, N, *out): the column matrix of each group is one reshape away
    view = as_strided(
        x,
        (g, cg) + tuple(ks) + (n,) + out_sp,
        (cg * sc, sc) + tuple(t * d for t, d in zip(ssp, rhs_dilation)) + (sn,)
        + tuple(t * s for t, s in zip(ssp, window_strides)),
        writeable=False,
    )
    cols = view.reshape(g, kcols, n * npos)
    kernel = contiguous(rhs).reshape(g, og, kcols)
    out = np.matmul(kernel, cols)  # (G, Og, N * npos)
    out = out.reshape(o, n, npos).transpose(1, 0, 2)
    return np.ascontiguousarray(out).reshape((n, o) + out_sp)


@njit(**JIT)
def _window_argmax(x, kh, kw, sh, sw, ph, pw, dh, dw, idx):  # pragma: no cover - compiled
    """PyTorch's choice: the first maximum of each window in row-major order (a NaN wins)."""
    height, width = x.shape[1], x.shape[2]
    for b in range(x.shape[0]):
        for oh in range(idx.shape[1]):
            h0 = oh * sh - ph
            for ow in range(idx.shape[2]):
                w0 = ow * sw - pw
                best = -1
                value = x[b, 0, 0]
                for i in range(kh):
                    h = h0 + i * dh
                    if h < 0 or h >= height:
                        continue
                    for j in range(kw):
                        w = w0 + j * dw
                        if w < 0 or w >= width:
                            continue
                        v = x[b, h, w]
                        if best < 0 or v > value or v != v:
                            best = h * width + w
                            value = v
                idx[b, oh, ow] = best


def window_argmax(
    x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, out_hw: tuple
) -> np.ndarray:
    """Flat (h * W + w) index of each pooling window's maximum; x is (B, H, W)."""
    idx = np.empty((x.shape[0],) + tuple(out_hw), np.int64)
    if idx.size:
        _window_argmax(contiguous(x), *kernel, *stride, *padding, *dilation, idx)
    return idx


def gather_last(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.take_along_axis(x, idx, axis=-1)


@njit(**JIT)
def _scatter_add_rows(ct, idx, out):  # pragma: no cover - compiled
    for b in range(ct.shape[0]):
        for p in range(ct.shape[1]):
            out[b, idx[b, p]] += ct[b, p]


def scatter_add_last(ct: np.ndarray, idx: np.ndarray, size: int) -> np.ndarray:
    lead = ct.shape[:-1]
    out = np.zeros((prod(lead), size), ct.dtype)
    if ct.size:
        _scatter_add_rows(contiguous(ct).reshape(-1, ct.shape[-1]), contiguous(idx).reshape(-1, idx.shape[-1]), out)
    return out.reshape(lead + (size,))
