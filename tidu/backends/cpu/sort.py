"""``argsort`` on the host: numpy's stable sort, with PyTorch's order of NaN (last ascending,
first descending) and ties in index order."""

from __future__ import annotations

import numpy as np


def argsort_axis(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable sorting permutation of ``x`` along ``axis`` (int64).

    >>> argsort_axis(np.array([2.0, np.nan, 1.0, 2.0]), 0, True).tolist()
    [1, 0, 3, 2]
    """
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int64, copy=False)
    moved = np.moveaxis(x, axis, -1)
    if moved.dtype.kind == "f":
        keys = (-moved, ~np.isnan(moved))  # primary (last) key: NaN first
    else:
        keys = (~moved,)  # order-reversing without overflow (bool: not)
    order = np.lexsort(keys, axis=-1) if moved.size else np.zeros(moved.shape, np.int64)
    return np.moveaxis(order.astype(np.int64, copy=False), -1, axis)
