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
def _im2col(x, cols, sh, sw, dh, dw):  # pragma: no cover - compiled
    """cols[n, c, i, j, p, q] = x[n, c, p*sh + i*dh, q*sw + j*dw]; x is padded (N, C, H, W).

    The longer of the kernel and output widths is the inner loop (weight gradients have
    kernels as wide as the image and outputs as small as the kernel)."""
    n_j, n_q = cols.shape[3], cols.shape[5]
    for n in range(cols.shape[0]):
        for c in range(cols.shape[1]):
            for i in range(cols.shape[2]):
                for p in range(cols.shape[4]):
                    h = p * sh + i * dh
                    if n_q >= n_j:
                        for j in range(n_j):
                            for q in range(n_q):
                                cols[n, c, i, j, p, q] = x[n, c, h, q * sw + j * dw]
                    else:
                        for q in range(n_q):
                            for j in range(n_j):
                                cols[n, c, i, j, p, q] = x[n, c, h, q * sw + j * dw]


@njit(**JIT)
def _col2im(y, out, sh, sw, lo_h, lo_w, ah, aw, dh, dw):  # pragma: no cover - compiled
    """out[n, o, p, q] += y[n, o, i, j, a, b] where p*sh + i*dh == a*ah + lo_h and
    q*sw + j*dw == b*aw + lo_w."""
    n_out_h, n_out_w, n_b = out.shape[2], out.shape[3], y.shape[5]
    for n in range(y.shape[0]):
        for o in range(y.shape[1]):
            for i in range(y.shape[2]):
                for a in range(y.shape[4]):
                    ph = a * ah + lo_h - i * dh
                    if ph < 0 or ph % sh != 0 or ph // sh >= n_out_h:
                        continue
                    p = ph // sh
                    for j in range(y.shape[3]):
                        off = lo_w - j * dw
                        if sw == 1:  # the columns that land inside the output, without a test each
                            first = max(0, (-off + aw - 1) // aw)
                            last = min(n_b, (n_out_w - 1 - off) // aw + 1)
                            for b in range(first, last):
                                out[n, o, p, b * aw + off] += y[n, o, i, j, a, b]
                            continue
                        for b in range(n_b):
                            pw = b * aw + off
                            if pw >= 0 and pw % sw == 0 and pw // sw < n_out_w:
                                out[n, o, p, pw // sw] += y[n, o, i, j, a, b]


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
    """lhs (N, C, *in), rhs (O, C/G, *k) -> (N, O, *out), 1-D or 2-D; see ``conv_general_dilated``.

    Two ways, whichever builds the smaller matrix (``method='auto'``): ``'im2col'`` (gather
    the windows, C*K rows, one column per output cell, then kernel @ cols), or ``'col2im'``
    (kernel^T @ input, O*K rows, one column per input cell, then scatter-add each product to
    its output cell). The second is the cheap one for the transposes, whose input is the
    cotangent of many channels.
    """
    if lhs.ndim == 3:  # 1-D: a 2-D convolution of height 1
        out = conv_general(lhs[:, :, None], rhs[:, :, None], window_strides=(1, *window_strides),
                           padding=((0, 0), *padding), lhs_dilation=(1, *lhs_dilation),
                           rhs_dilation=(1, *rhs_dilation), feature_group_count=feature_group_count, flip=flip,
                           method=method)
        return out[:, :, 0]
    if flip:
        rhs = rhs[:, :, ::-1, ::-1]
    n, c, o, g = lhs.shape[0], lhs.shape[1], rhs.shape[0], feature_group_count
    cg, og, ks = c // g, o // g, rhs.shape[2:]
    spread = [(m - 1) * a + 1 if m else 0 for m, a in zip(lhs.shape[2:], lhs_dilation)]
    out_hw = tuple((lo + m + hi - (k - 1) * d - 1) // s + 1
                   for m, (lo, hi), k, d, s in zip(spread, padding, ks, rhs_dilation, window_strides))
    kk = prod(ks)
    if n * o * prod(out_hw) == 0 or cg * kk == 0:
        return np.zeros((n, o) + out_hw, lhs.dtype)
    if method == "col2im" or method == "auto" and o * lhs[0, 0].size < c * prod(out_hw):
        # col2im: y[n, o, k, in] = sum_c w[o, c, k] x[n, c, in], scattered to the outputs
        kernel = np.ascontiguousarray(rhs.reshape(g, og, cg, kk).transpose(0, 1, 3, 2)).reshape(g, og * kk, cg)
        y = scratch((n, g, og * kk, lhs[0, 0].size), lhs.dtype)
        np.matmul(kernel, contiguous(lhs).reshape(n, g, cg, -1), out=y)
        y = y.reshape((n, o, *ks, *lhs.shape[2:]))
        out = np.zeros((n, o) + out_hw, lhs.dtype)
        _col2im(y, out, *window_strides, padding[0][0], padding[1][0], *lhs_dilation, *rhs_dilation)
        return out
    x = contiguous(dilate_and_pad(lhs, lhs_dilation, padding))
    cols = scratch((n, c, *ks, *out_hw), lhs.dtype)
    _im2col(x, cols, *window_strides, *rhs_dilation)
    out = np.matmul(contiguous(rhs).reshape(g, og, cg * kk), cols.reshape(n, g, cg * kk, -1))
    return out.reshape((n, o) + out_hw)


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
