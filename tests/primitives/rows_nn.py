"""``op_db`` rows for the nn primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu.nn.functional as F


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
]
