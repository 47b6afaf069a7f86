"""``op_db`` rows for the reduce primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu


def _with_zeros(x: tidu.Tensor, where: list[int]) -> tidu.Tensor:
    """``x`` with the flat entries ``where`` set to zero (through a constant mask, so the
    input stays a leaf): the prod gradient at one zero and at several."""
    mask = np.ones(tuple(x.shape))
    mask.reshape(-1)[where] = 0.0
    return x * tidu.tensor(mask, device=x.device)


def _np_zeros(x: np.ndarray, where: list[int]) -> np.ndarray:
    y = x.copy()
    y.reshape(-1)[where] = 0.0
    return y


def _cumsum_rev(x: np.ndarray) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(x, 0), 0), 0)


ROWS: list[OpCase] = [
    OpCase("reduce_prod", lambda x: x.prod(dim=1), ((3, 4), (2, 1)), ref=lambda x: x.prod(axis=1)),
    OpCase("reduce_prod", lambda x: x.prod(), ((2, 3), (), (4,)), ref=np.prod, name="all"),
    OpCase(
        "reduce_prod",
        lambda x: _with_zeros(x, [1]).prod(dim=1),
        ((2, 3),),
        ref=lambda x: _np_zeros(x, [1]).prod(axis=1),
        name="one-zero",
    ),
    OpCase(
        "reduce_prod",
        lambda x: _with_zeros(x, [0, 2]).prod(),
        ((4,),),
        ref=lambda x: _np_zeros(x, [0, 2]).prod(),
        name="two-zeros",
    ),
    OpCase("argmax", lambda x: x.argmax(dim=1), ((3, 4), (2, 1)), distinct=True, ref=lambda x: x.argmax(axis=1)),
    OpCase("argmax", lambda x: x.argmax(), ((2, 3),), distinct=True, ref=lambda x: np.argmax(x), name="flat"),
    OpCase("argmin", lambda x: x.argmin(dim=0), ((3, 4),), distinct=True, ref=lambda x: x.argmin(axis=0)),
    OpCase("argsort", lambda x: x.argsort(dim=1), ((3, 4), (2, 0)), distinct=True,
           ref=lambda x: np.argsort(x, axis=1, kind="stable")),
    OpCase("argsort", lambda x: x.argsort(dim=0, descending=True), ((5, 2),), distinct=True,
           ref=lambda x: np.argsort(-x, axis=0, kind="stable"), name="descending"),
    OpCase("cumsum", lambda x: x.cumsum(1), ((3, 4), (2, 0)), linear=True, ref=lambda x: np.cumsum(x, 1)),
    OpCase("cumsum", lambda x: x.cumsum(0), ((5,), ()), linear=True, ref=lambda x: np.cumsum(x, 0).reshape(x.shape),
           name="dim0"),
    OpCase(
        "cumsum",
        lambda x: tidu.primitives.reduce.cumsum.bind(x, axis=0, reverse=True),
        ((4, 2),),
        linear=True,
        ref=_cumsum_rev,
        name="reverse",
    ),
]
