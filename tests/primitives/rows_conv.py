"""``op_db`` rows for the convolution and pooling primitives (appended to ``OP_DB``).

The numpy references loop over kernel offsets (conv) and windows (pooling), independently
of the im2col kernel.
"""

from __future__ import annotations

import itertools

import numpy as np
from op_db import OpCase, _fixed

import tidu
from tidu.primitives.conv import conv_general_dilated


def _spread_pad(x: np.ndarray, dilation: tuple, padding: tuple) -> np.ndarray:
    for axis, (a, (lo, hi)) in enumerate(zip(dilation, padding), start=2):
        n = x.shape[axis]
        spread = np.zeros(x.shape[:axis] + ((n - 1) * a + 1,) + x.shape[axis + 1:], x.dtype)
        spread[(slice(None),) * axis + (slice(None, None, a),)] = x
        x = np.pad(spread, [(0, 0)] * axis + [(max(lo, 0), max(hi, 0))] + [(0, 0)] * (x.ndim - axis - 1))
        stop = x.shape[axis] - max(-hi, 0)
        x = x[(slice(None),) * axis + (slice(max(-lo, 0), stop),)]
    return x


def conv_ref(x, w, stride=None, padding=None, lhs_dilation=None, rhs_dilation=None, groups=1, flip=False):
    """out[n, o, p] = sum_{c, k} x_p[n, c, p*s + k*d] w[o, c, k], group by group."""
    nd = x.ndim - 2
    stride, lhs_dilation, rhs_dilation = (t or (1,) * nd for t in (stride, lhs_dilation, rhs_dilation))
    padding = padding or ((0, 0),) * nd
    if flip:
        w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    xp = _spread_pad(x, lhs_dilation, padding)
    ks = w.shape[2:]
    out_sp = [(n - (k - 1) * d - 1) // s + 1 for n, k, d, s in zip(xp.shape[2:], ks, rhs_dilation, stride)]
    cg, og = w.shape[1], w.shape[0] // groups
    out = np.zeros((x.shape[0], w.shape[0], *out_sp), x.dtype)
    for g in range(groups):
        xg, wg = xp[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og]
        for k in itertools.product(*[range(n) for n in ks]):
            window = tuple(slice(ki * d, ki * d + (o - 1) * s + 1, s)
                           for ki, d, o, s in zip(k, rhs_dilation, out_sp, stride))
            patch = xg[(slice(None), slice(None)) + window]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wg[(slice(None), slice(None)) + k])
    return out


def max_pool_ref(x, k, s, p):
    """Window maxima of (N, C, H, W), padding at -inf (square kernel, stride and padding)."""
    xp = np.pad(x, [(0, 0), (0, 0), (p, p), (p, p)], constant_values=-np.inf)
    oh, ow = (x.shape[2] + 2 * p - k) // s + 1, (x.shape[3] + 2 * p - k) // s + 1
    out = np.empty(x.shape[:2] + (oh, ow), x.dtype)
    for i, j in itertools.product(range(oh), range(ow)):
        out[:, :, i, j] = xp[:, :, i * s:i * s + k, j * s:j * s + k].max(axis=(2, 3))
    return out


def avg_pool_valid_ref(x, k, s, p, out_hw):
    """Means over each window's cells inside the input (``count_include_pad=False``)."""
    out = np.empty(x.shape[:2] + out_hw, x.dtype)
    for i, j in itertools.product(*map(range, out_hw)):
        rows = slice(max(i * s - p, 0), min(i * s - p + k, x.shape[2]))
        cols = slice(max(j * s - p, 0), min(j * s - p + k, x.shape[3]))
        out[:, :, i, j] = x[:, :, rows, cols].mean(axis=(2, 3))
    return out


def avg_pool3d_valid_ref(x, k, s, p, out_sizes):
    """Means over each 3-D window's cells inside the input (``count_include_pad=False``)."""
    out = np.empty(x.shape[:2] + out_sizes, x.dtype)
    for cell in itertools.product(*map(range, out_sizes)):
        window = tuple(slice(max(i * st - pd, 0), min(i * st - pd + kk, n))
                       for i, st, pd, kk, n in zip(cell, s, p, k, x.shape[2:]))
        out[(slice(None), slice(None), *cell)] = x[(slice(None), slice(None), *window)].mean(axis=(2, 3, 4))
    return out


def max_pool3d_ref(x, k, s, p):
    """Window maxima of (N, C, D, H, W), padding at -inf (cubic kernel)."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p], constant_values=-np.inf)
    out_sizes = tuple((n + 2 * q - k) // st + 1 for n, q, st in zip(x.shape[2:], p, s))
    out = np.empty(x.shape[:2] + out_sizes, x.dtype)
    for cell in itertools.product(*map(range, out_sizes)):
        window = tuple(slice(i * st, i * st + k) for i, st in zip(cell, s))
        out[(slice(None), slice(None), *cell)] = xp[(slice(None), slice(None), *window)].max(axis=(2, 3, 4))
    return out


def _conv(**params):
    return lambda x, w: conv_general_dilated.bind(x, w, **params)


# A general 1-D convolution no public op reaches: lhs dilation, negative padding, flipped kernel.
GENERAL = dict(window_strides=(2,), padding=((-1, 2),), lhs_dilation=(2,), rhs_dilation=(1,),
               feature_group_count=2, flip=True)
X_2455 = _fixed(2, 4, 5, 5, seed=11)
W_3222 = _fixed(4, 2, 2, 2, seed=12)
X_145 = _fixed(1, 4, 5, seed=13)

ROWS: list[OpCase] = [
    OpCase(
        "conv_general_dilated",
        lambda x, w: tidu.conv2d(x, w, stride=2, padding=1),
        (((2, 2, 5, 4), (3, 2, 3, 2)), ((1, 1, 3, 3), (1, 1, 1, 1))),
        ref=lambda x, w: conv_ref(x, w, stride=(2, 2), padding=((1, 1), (1, 1))),
        name="conv2d",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x, w, b: tidu.conv2d(x, w, b, padding=(1, 2), dilation=(2, 1), groups=2),
        (((1, 4, 5, 4), (4, 2, 2, 2), (4,)),),
        ref=lambda x, w, b: conv_ref(x, w, padding=((1, 1), (2, 2)), rhs_dilation=(2, 1), groups=2)
        + b[:, None, None],
        name="groups-dilation-bias",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x, w: tidu.conv1d(x, w, stride=2, padding=1, dilation=2),
        (((2, 3, 7), (2, 3, 3)),),
        ref=lambda x, w: conv_ref(x, w, stride=(2,), padding=((1, 1),), rhs_dilation=(2,)),
        name="conv1d",
    ),
    OpCase(
        "conv_general_dilated",
        _conv(**GENERAL),
        (((2, 4, 5), (4, 2, 3)),),
        ref=lambda x, w: conv_ref(x, w, GENERAL["window_strides"], GENERAL["padding"], (2,), None, 2, True),
        name="general",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x: tidu.conv2d(x, W_3222, stride=(1, 2), padding=1, groups=2),
        ((2, 4, 5, 5), (1, 4, 3, 2)),
        linear=True,
        ref=lambda x: conv_ref(x, W_3222.numpy(), stride=(1, 2), padding=((1, 1), (1, 1)), groups=2),
        name="linear-lhs",
    ),
    OpCase(
        "conv_general_dilated",
        lambda w: tidu.conv2d(X_2455, w, stride=2, dilation=(1, 2), groups=2),
        ((4, 2, 2, 2), (2, 2, 3, 1)),
        linear=True,
        ref=lambda w: conv_ref(X_2455.numpy(), w, stride=(2, 2), rhs_dilation=(1, 2), groups=2),
        name="linear-rhs",
    ),
    OpCase(
        "conv_general_dilated",
        lambda w: conv_general_dilated.bind(X_145, w, **GENERAL),
        ((4, 2, 3), (2, 2, 2)),
        linear=True,
        ref=lambda w: conv_ref(X_145.numpy(), w, GENERAL["window_strides"], GENERAL["padding"], (2,), None, 2, True),
        name="linear-rhs-flipped",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x, w, b: tidu.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2),
        (((1, 4, 3, 4, 4), (2, 2, 2, 1, 2), (2,)),),
        ref=lambda x, w, b: conv_ref(x, w, stride=(1, 2, 1), padding=((1, 1), (0, 0), (1, 1)), rhs_dilation=(1, 1, 2),
                                     groups=2) + b[:, None, None, None],
        name="conv3d",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x, w: tidu.conv_transpose3d(x, w, stride=2, padding=(0, 1, 0), output_padding=(1, 0, 0)),
        (((1, 2, 2, 2, 3), (2, 1, 2, 3, 1)),),
        ref=lambda x, w: conv_ref(x, w.swapaxes(0, 1), padding=((1, 2), (1, 1), (0, 0)), lhs_dilation=(2, 2, 2),
                                  flip=True),
        name="conv_transpose3d",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x: tidu.avg_pool3d(x, (2, 3, 2), stride=(1, 2, 2), padding=(0, 1, 1), ceil_mode=True,
                                  count_include_pad=False),
        ((1, 1, 3, 4, 3),),
        linear=True,
        ref=lambda x: avg_pool3d_valid_ref(x, (2, 3, 2), (1, 2, 2), (0, 1, 1), (2, 3, 2)),
        name="avg_pool3d",
    ),
    OpCase(
        "gather",
        lambda x: tidu.max_pool3d(x, 2, stride=(1, 2, 1), padding=(1, 0, 0)),
        ((1, 1, 2, 4, 3),),
        distinct=True,
        ref=lambda x: max_pool3d_ref(x, 2, (1, 2, 1), (1, 0, 0)),
        name="max_pool3d",
    ),
    OpCase(
        "conv_general_dilated",
        lambda x: tidu.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        ((1, 2, 6, 5),),
        linear=True,
        ref=lambda x: avg_pool_valid_ref(x, 3, 2, 1, (4, 3)),
        name="avg_pool2d",
    ),
    OpCase(
        "gather",
        lambda x: tidu.max_pool2d(x, 2, stride=1, padding=1),
        ((1, 2, 3, 4), (2, 3, 3)),
        distinct=True,
        ref=lambda x: max_pool_ref(x.reshape((-1,) + x.shape[-3:]), 2, 1, 1).reshape(
            x.shape[:-2] + (x.shape[-2] + 1, x.shape[-1] + 1)),
        name="max_pool2d",
    ),
]
