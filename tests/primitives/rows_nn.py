"""``op_db`` rows for the nn primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu
import tidu.nn.functional as F
from tidu.primitives.gather import nll_sum, nll_sum_transpose
from tidu.primitives.nn import layer_norm_tangent, log_softmax_tangent, softmax_tangent

NLL_TARGET = tidu.tensor([2, 0, 4])  # one class of 5 per row of 3


def _softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _layer_norm_ref(x: np.ndarray, k: int) -> np.ndarray:
    axes = tuple(range(x.ndim - k, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    return centered / np.sqrt((centered**2).mean(axis=axes, keepdims=True) + 1e-5)


def _tangent_ref(dx: np.ndarray, x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    axes = tuple(range(x.ndim - k, x.ndim))
    centered = x - x.mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt((centered**2).mean(axis=axes, keepdims=True) + 1e-5)
    return r * (dx - dx.mean(axis=axes, keepdims=True) - y * (y * dx).mean(axis=axes, keepdims=True))


def _tangent(k: int):  # noqa: ANN202 - y is any tensor here: the map is defined for every (dx, x, y)
    return lambda dx, x, y: layer_norm_tangent.bind(dx, x, y, k=k, eps=1e-5)


def _softmax_tangent_ref(dx: np.ndarray, s: np.ndarray, axis: int) -> np.ndarray:
    return s * (dx - (s * dx).sum(axis=axis, keepdims=True))


def _log_softmax_tangent_ref(dx: np.ndarray, y: np.ndarray, axis: int, transposed: bool) -> np.ndarray:
    if transposed:
        return dx - np.exp(y) * dx.sum(axis=axis, keepdims=True)
    return dx - (np.exp(y) * dx).sum(axis=axis, keepdims=True)


def _log_tangent(axis: int, transposed: bool):  # noqa: ANN202
    return lambda dx, y: log_softmax_tangent.bind(dx, y, axis=axis, transposed=transposed)


def _nll_sum_ref(x: np.ndarray, scale: float) -> np.ndarray:
    return np.asarray(scale * x[np.arange(3), NLL_TARGET.numpy()].sum())


def _nll_sum_transpose_ref(ct: np.ndarray, scale: float) -> np.ndarray:
    out = np.zeros((3, 5), ct.dtype)
    out[np.arange(3), NLL_TARGET.numpy()] = scale * ct
    return out


ROWS: list[OpCase] = [
    OpCase("softmax", lambda x: F.softmax(x, dim=-1), ((5,), (2, 3)), ref=lambda x: _softmax_ref(x, -1)),
    OpCase("softmax", lambda x: F.softmax(x, dim=0), ((3, 2),), ref=lambda x: _softmax_ref(x, 0), name="dim0"),
    OpCase("log_softmax", lambda x: F.log_softmax(x, dim=-1), ((5,), (2, 3)), ref=lambda x: _log_softmax_ref(x, -1)),
    OpCase(
        "log_softmax",
        lambda x: F.log_softmax(x, dim=1),
        ((2, 3, 2),),
        ref=lambda x: _log_softmax_ref(x, 1),
        name="dim1",
    ),
    OpCase("layer_norm", lambda x: F.layer_norm(x, x.shape[-1:]), ((5,), (2, 3)), ref=lambda x: _layer_norm_ref(x, 1)),
    OpCase(
        "layer_norm", lambda x: F.layer_norm(x, x.shape[-2:]), ((2, 3, 4),), ref=lambda x: _layer_norm_ref(x, 2),
        name="two-dims",
    ),
    OpCase("layer_norm_affine", lambda x, w, b: F.layer_norm(x, w.shape, w, b), (((2, 5), (5,), (5,)),),
           ref=lambda x, w, b: _layer_norm_ref(x, 1) * w + b),
    OpCase("layer_norm_affine", lambda x, w, b: F.layer_norm(x, w.shape, w, b), (((2, 3, 4), (3, 4), (3, 4)),),
           ref=lambda x, w, b: _layer_norm_ref(x, 2) * w + b, name="two-dims"),
    OpCase("softmax_tangent", lambda dx, s: softmax_tangent.bind(dx, s, axis=1), (((2, 5), (2, 5)),),
           ref=lambda dx, s: _softmax_tangent_ref(dx, s, 1)),
    OpCase("softmax_tangent", lambda dx, s: softmax_tangent.bind(dx, s, axis=1), (((2, 3, 2), (2, 3, 2)),),
           ref=lambda dx, s: _softmax_tangent_ref(dx, s, 1), name="inner"),
    OpCase("log_softmax_tangent", _log_tangent(1, False), (((2, 5), (2, 5)),),
           ref=lambda dx, y: _log_softmax_tangent_ref(dx, y, 1, False)),
    OpCase("log_softmax_tangent", _log_tangent(1, True), (((2, 5), (2, 5)),),
           ref=lambda dx, y: _log_softmax_tangent_ref(dx, y, 1, True), name="transposed"),
    OpCase("log_softmax_tangent", _log_tangent(0, True), (((3, 2, 2), (3, 2, 2)),),
           ref=lambda dx, y: _log_softmax_tangent_ref(dx, y, 0, True), name="transposed-inner"),
    OpCase("nll_sum", lambda x: nll_sum.bind(x, NLL_TARGET, scale=-1 / 3), ((3, 5),), linear=True,
           ref=lambda x: _nll_sum_ref(x, -1 / 3)),
    OpCase("nll_sum", lambda x: F.cross_entropy(x, NLL_TARGET), ((3, 5),),
           ref=lambda x: _nll_sum_ref(_log_softmax_ref(x, 1), -1 / 3), name="cross_entropy"),
    OpCase("nll_sum_transpose", lambda ct: nll_sum_transpose.bind(ct, NLL_TARGET, classes=5, scale=-2.0), ((),),
           linear=True, ref=lambda ct: _nll_sum_transpose_ref(ct, -2.0)),
    OpCase("layer_norm_tangent", _tangent(1), (((2, 5), (2, 5), (2, 5)),),
           ref=lambda dx, x, y: _tangent_ref(dx, x, y, 1)),
    OpCase("layer_norm_tangent", _tangent(2), (((2, 3, 4), (2, 3, 4), (2, 3, 4)),),
           ref=lambda dx, x, y: _tangent_ref(dx, x, y, 2), name="two-dims"),
]
