"""Convolution (im2col or col2im around a BLAS matmul) and the window-argmax, gather and
scatter loops of max pooling."""

from __future__ import annotations

import threading
from math import prod

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous

_SCRATCH = threading.local()
SCRATCH_LIMIT = 1 << 22  # elements; a larger temporary is allocated (and freed) each call


def scratch(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A reused temporary that never leaves the kernel (im2col columns, col2im products): fresh
    large arrays cost a page fault per 4 KiB, as much as the copy that fills them."""
    size = prod(shape)
    if size > SCRATCH_LIMIT:
        return np.empty(shape, dtype)
    name = np.dtype(dtype).name
    buf = getattr(_SCRATCH, name, None)
    if buf is None or buf.size < size:
        buf = np.empty(max(size, 1 << 16), dtype)
        setattr(_SCRATCH, name, buf)
    return buf[:size].reshape(shape)


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


@njit(**JIT)
def _im2col(x, cols, sd, sh, sw, dd, dh, dw):  # pragma: no cover - compiled
    """cols[n, c, a, i, j, z, p, q] = x[n, c, z*sd + a*dd, p*sh + i*dh, q*sw + j*dw]; x is padded
    (N, C, D, H, W). 1-D and 2-D convolutions come with unit leading spatial dims.

    The longer of the kernel and output widths is the inner loop (weight gradients have
    kernels as wide as the image and outputs as small as the kernel)."""
    n_j, n_q = cols.shape[4], cols.shape[7]
    for n in range(cols.shape[0]):
        for c in range(cols.shape[1]):
            for a in range(cols.shape[2]):
                for i in range(cols.shape[3]):
                    for z in range(cols.shape[5]):
                        d = z * sd + a * dd
                        for p in range(cols.shape[6]):
                            h = p * sh + i * dh
                            if n_q >= n_j:
                                for j in range(n_j):
                                    for q in range(n_q):
                                        cols[n, c, a, i, j, z, p, q] = x[n, c, d, h, q * sw + j * dw]
                            else:
                                for q in range(n_q):
                                    for j in range(n_j):
                                        cols[n, c, a, i, j, z, p, q] = x[n, c, d, h, q * sw + j * dw]


@njit(**JIT)
def _landing(src, lo, k, spread, dil, stride, n_out):  # pragma: no cover - compiled
    """The output index that input ``src`` (spread ``spread`` apart, shifted by ``lo``) reaches
    through tap ``k``, or -1."""
    at = src * spread + lo - k * dil
    if at < 0 or at % stride != 0 or at // stride >= n_out:
        return -1
    return at // stride


@njit(**JIT)
def _col2im(y, out, sd, sh, sw, lo_d, lo_h, lo_w, ad, ah, aw, dd, dh, dw):  # pragma: no cover - compiled
    """out[n, o, z, p, q] += y[n, o, e, i, j, c, a, b] where z*sd + e*dd == c*ad + lo_d,
    p*sh + i*dh == a*ah + lo_h and q*sw + j*dw == b*aw + lo_w."""
    n_out_d, n_out_h, n_out_w, n_b = out.shape[2], out.shape[3], out.shape[4], y.shape[7]
    for n in range(y.shape[0]):
        for o in range(y.shape[1]):
            for e in range(y.shape[2]):
                for c in range(y.shape[5]):
                    z = _landing(c, lo_d, e, ad, dd, sd, n_out_d)
                    if z < 0:
                        continue
                    for i in range(y.shape[3]):
                        for a in range(y.shape[6]):
                            p = _landing(a, lo_h, i, ah, dh, sh, n_out_h)
                            if p < 0:
                                continue
                            for j in range(y.shape[4]):
                                off = lo_w - j * dw
                                if sw == 1:  # the columns that land inside the output, without a test each
                                    first = max(0, (-off + aw - 1) // aw)
                                    last = min(n_b, (n_out_w - 1 - off) // aw + 1)
                                    for b in range(first, last):
                                        out[n, o, z, p, b * aw + off] += y[n, o, e, i, j, c, a, b]
                                    continue
                                for b in range(n_b):
                                    pw = b * aw + off
                                    if pw >= 0 and pw % sw == 0 and pw // sw < n_out_w:
                                        out[n, o, z, p, pw // sw] += y[n, o, e, i, j, c, a, b]


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
    method: str = "auto",
) -> np.ndarray:
    """lhs (N, C, *in), rhs (O, C/G, *k) -> (N, O, *out), 1-D, 2-D or 3-D; see ``conv_general_dilated``.

    Two ways, whichever builds the smaller matrix (``method='auto'``): ``'im2col'`` (gather
    the windows, C*K rows, one column per output cell, then kernel @ cols), or ``'col2im'``
    (kernel^T @ input, O*K rows, one column per input cell, then scatter-add each product to
    its output cell). The second is the cheap one for the transposes, whose input is the
    cotangent of many channels. The kernels are 3-D: a 1-D or 2-D convolution runs as one
    with unit leading spatial dims (one compiled specialization per dtype).
    """
    lift = 5 - lhs.ndim
    if lift:  # 1-D and 2-D: a 3-D convolution of unit depth (and height)
        unit = (None,) * lift
        out = conv_general(lhs[(slice(None), slice(None), *unit)], rhs[(slice(None), slice(None), *unit)],
                           window_strides=(1,) * lift + tuple(window_strides), padding=((0, 0),) * lift + tuple(padding),
                           lhs_dilation=(1,) * lift + tuple(lhs_dilation), rhs_dilation=(1,) * lift + tuple(rhs_dilation),
                           feature_group_count=feature_group_count, flip=flip, method=method)
        return out.reshape(out.shape[:2] + out.shape[2 + lift:])
    if flip:
        rhs = rhs[:, :, ::-1, ::-1, ::-1]
    n, c, o, g = lhs.shape[0], lhs.shape[1], rhs.shape[0], feature_group_count
    cg, og, ks = c // g, o // g, rhs.shape[2:]
    spread = [(m - 1) * a + 1 if m else 0 for m, a in zip(lhs.shape[2:], lhs_dilation)]
    out_sp = tuple((lo + m + hi - (k - 1) * d - 1) // s + 1
                   for m, (lo, hi), k, d, s in zip(spread, padding, ks, rhs_dilation, window_strides))
    kk = prod(ks)
    if n * o * prod(out_sp) == 0 or cg * kk == 0:
        return np.zeros((n, o) + out_sp, lhs.dtype)
    if method == "col2im" or method == "auto" and o * lhs[0, 0].size < c * prod(out_sp):
        # col2im: y[n, o, k, in] = sum_c w[o, c, k] x[n, c, in], scattered to the outputs
        kernel = np.ascontiguousarray(rhs.reshape(g, og, cg, kk).transpose(0, 1, 3, 2)).reshape(g, og * kk, cg)
        y = scratch((n, g, og * kk, lhs[0, 0].size), lhs.dtype)
        np.matmul(kernel, contiguous(lhs).reshape(n, g, cg, -1), out=y)
        y = y.reshape((n, o, *ks, *lhs.shape[2:]))
        out = np.zeros((n, o) + out_sp, lhs.dtype)
        _col2im(y, out, *window_strides, *(lo for lo, _ in padding), *lhs_dilation, *rhs_dilation)
        return out
    x = contiguous(dilate_and_pad(lhs, lhs_dilation, padding))
    cols = scratch((n, c, *ks, *out_sp), lhs.dtype)
    _im2col(x, cols, *window_strides, *rhs_dilation)
    out = np.matmul(contiguous(rhs).reshape(g, og, cg * kk), cols.reshape(n, g, cg * kk, -1))
    return out.reshape((n, o) + out_sp)


@njit(**JIT)
def _window_argmax(x, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw, idx):  # pragma: no cover - compiled
    """PyTorch's choice: the first maximum of each window in row-major order (a NaN wins);
    x is (B, D, H, W), idx (B, oD, oH, oW)."""
    depth, height, width = x.shape[1], x.shape[2], x.shape[3]
    for b in range(x.shape[0]):
        for od in range(idx.shape[1]):
            d0 = od * sd - pd
            for oh in range(idx.shape[2]):
                h0 = oh * sh - ph
                for ow in range(idx.shape[3]):
                    w0 = ow * sw - pw
                    best = -1
                    value = x[b, 0, 0, 0]
                    for e in range(kd):
                        d = d0 + e * dd
                        if d < 0 or d >= depth:
                            continue
                        for i in range(kh):
                            h = h0 + i * dh
                            if h < 0 or h >= height:
                                continue
                            for j in range(kw):
                                w = w0 + j * dw
                                if w < 0 or w >= width:
                                    continue
                                v = x[b, d, h, w]
                                if best < 0 or v > value or v != v:
                                    best = (d * height + h) * width + w
                                    value = v
                    idx[b, od, oh, ow] = best


@njit(**JIT)
def _window_argmax_2d(x, kh, kw, sh, sw, ph, pw, dh, dw, idx):  # pragma: no cover - compiled
    """``_window_argmax`` over (B, H, W): 1-D and 2-D pooling, a fifth faster than the 3-D loop
    nest with a unit depth."""
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
    x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, out_sizes: tuple
) -> np.ndarray:
    """Flat (row-major over the pooled dims) index of each pooling window's maximum; x is
    (B, *spatial) with 1 to 3 spatial dims (1-D runs as 2-D with a unit height)."""
    idx = np.empty((x.shape[0],) + tuple(out_sizes), np.int64)
    if not idx.size:
        return idx
    if x.ndim == 4:
        _window_argmax(contiguous(x), *kernel, *stride, *padding, *dilation, idx)
        return idx
    lift = 3 - x.ndim
    ones, zeros = (1,) * lift, (0,) * lift
    _window_argmax_2d(contiguous(x).reshape((x.shape[0],) + ones + x.shape[1:]), *ones, *kernel, *ones, *stride,
                      *zeros, *padding, *ones, *dilation, idx.reshape((x.shape[0],) + ones + idx.shape[1:]))
    return idx
