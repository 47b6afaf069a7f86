"""``op_db`` rows for the shape primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu
from tidu.primitives.strided import as_strided_transpose

# Index operands (constants, int64): rows are linear in the float arguments.
GATHER_INDEX = tidu.tensor([[0, 2, 2, 1], [1, 1, 0, 4]])  # gathers from (3, 5) along dim 1, repeats
MASK = tidu.tensor([[True, False, True, True], [False, False, False, True], [True, True, False, False]])
SCATTER_INDEX = tidu.tensor([[2, 0, 2], [0, 0, 1]])  # scatters (2, 3) into (3, 3) along dim 0, repeats


def _take_along(x: np.ndarray, index: np.ndarray, axis: int) -> np.ndarray:
    lead = tuple(slice(0, m) if d != axis else slice(None) for d, m in enumerate(index.shape))
    return np.take_along_axis(x[lead], index, axis)


def _scatter_add_ref(x: np.ndarray, src: np.ndarray) -> np.ndarray:
    out = x.copy()
    index = SCATTER_INDEX.numpy()
    for i in range(index.shape[0]):
        for j in range(index.shape[1]):
            out[index[i, j], j] += src[i, j]
    return out


ROWS: list[OpCase] = [
    OpCase(
        "concatenate",
        lambda a, b, c: tidu.cat([a, b, c], dim=1),
        (((2, 1), (2, 3), (2, 2)), ((0, 2), (0, 1), (0, 3))),
        linear=True,
        ref=lambda a, b, c: np.concatenate([a, b, c], axis=1),
    ),
    OpCase(
        "concatenate",
        lambda a, b: tidu.cat([a, b]),
        (((3,), (2,)), ((1, 2), (2, 2))),
        linear=True,
        ref=lambda a, b: np.concatenate([a, b]),
        name="dim0",
    ),
    OpCase(
        "concatenate",
        lambda x: x.roll((1, -2), (0, 1)),
        ((3, 4),),
        linear=True,
        ref=lambda x: np.roll(x, (1, -2), (0, 1)),
        name="roll",
    ),
    OpCase("rev", lambda x: x.flip(0, -1), ((2, 3, 4), (3, 1)), linear=True, ref=lambda x: np.flip(x, (0, -1))),
    OpCase("rev", lambda x: x.flip(()), ((),), linear=True, ref=lambda x: x.copy(), name="0d"),
    OpCase(
        "gather",
        lambda x: tidu.gather(x, 1, GATHER_INDEX),
        ((3, 5), (2, 5)),
        linear=True,
        ref=lambda x: _take_along(x, GATHER_INDEX.numpy(), 1),
    ),
    OpCase(
        "gather",
        lambda x: x[[0, 2, 0, -1]],
        ((3, 2), (3,)),
        linear=True,
        ref=lambda x: x[[0, 2, 0, -1]],
        name="getitem",
    ),
    OpCase(
        "gather",
        lambda x: x[MASK],
        ((3, 4),),
        linear=True,
        ref=lambda x: x[MASK.numpy()],
        name="mask",
    ),
    OpCase(
        "gather",
        lambda x: x.index_select(1, tidu.tensor([2, 0, 2])),
        ((2, 3),),
        linear=True,
        ref=lambda x: x[:, [2, 0, 2]],
        name="index_select",
    ),
    OpCase(
        "scatter_add",
        lambda x, src: tidu.scatter_add(x, 0, SCATTER_INDEX, src),
        (((3, 3), (2, 3)), ((3, 4), (2, 4))),
        linear=True,
        ref=_scatter_add_ref,
    ),
    OpCase(
        "scatter_add",
        lambda x, v: tidu.index_put(x, (tidu.tensor([1, 0, 1]),), v, accumulate=True),
        (((3, 2), (3, 2)), ((3,), ())),
        linear=True,
        ref=lambda x, v: x + _index_add_ref(x, v),
        name="index_put",
    ),
    # as_strided of a fresh tensor's storage: overlapping windows, zero strides and an offset, a
    # transposed input (read at its own layout), an input that overlaps itself (an expanded one)
    OpCase("as_strided", lambda x: x.as_strided((3, 3), (1, 1)), ((5,),), linear=True,
           ref=lambda x: _strided(x, (3, 3), (1, 1))),
    OpCase("as_strided", lambda x: tidu.as_strided(x, (2, 2, 2), (0, 1, 3), 1), ((2, 3),), linear=True,
           ref=lambda x: _strided(x, (2, 2, 2), (0, 1, 3), 1), name="offset"),
    OpCase("as_strided", lambda x: x.t().as_strided((2, 2), (1, 2), 1), ((2, 3),), linear=True,
           ref=lambda x: _strided(x, (2, 2), (1, 2), 1), name="transposed"),
    OpCase("as_strided", lambda x: x.expand(3, 4).as_strided((2, 3), (1, 1)), ((4,),), linear=True,
           ref=lambda x: _strided(x, (2, 3), (1, 1)), name="expanded"),
    OpCase("as_strided_transpose", lambda c: as_strided_transpose.bind(
        c, size=(3, 3), stride=(1, 1), storage_offset=0, input_shape=(2, 5), input_stride=(0, 1), input_offset=0),
        ((3, 3),), linear=True, ref=lambda c: _strided_transpose(c, (2, 5), 5, (1, 1)) / 2),
    # to the device and back (the CUDA simulator in CI): linear, its transpose the move back
    OpCase("device_put", lambda x: (x.to("cuda") * 2).to("cpu"), ((2, 3), ()), linear=True, ref=lambda x: 2 * x),
]


def _strided(x: np.ndarray, size: tuple, stride: tuple, offset: int = 0) -> np.ndarray:
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    return np.lib.stride_tricks.as_strided(flat, size, [s * flat.itemsize for s in stride]).copy()


def _strided_transpose(c: np.ndarray, shape: tuple, locations: int, stride: tuple) -> np.ndarray:
    """``c`` summed into the storage locations it was read from (a dense storage of ``locations``),
    read back at ``shape`` broadcast over that storage."""
    storage = np.zeros(locations)
    index = np.lib.stride_tricks.as_strided(np.arange(locations), c.shape,
                                            [s * np.arange(1).itemsize for s in stride])
    np.add.at(storage, index, c)
    return np.broadcast_to(storage, shape).copy()


def _index_add_ref(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    np.add.at(out, np.array([1, 0, 1]), np.broadcast_to(v, (3,) + x.shape[1:]))
    return out
