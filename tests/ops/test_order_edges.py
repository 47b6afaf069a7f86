"""``mode`` against PyTorch on lines with NaN: each NaN counts once, and the line is ordered as
PyTorch's C++ sort leaves it, so values, indices and gradients agree."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.ops.test_order import _assert_same

_NAN = float("nan")


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.mode(L.tensor([_NAN, _NAN, 1.0])),
    lambda L: L.mode(L.tensor([_NAN, 1.0, _NAN, 1.0])),
    lambda L: L.mode(L.tensor([1.0, _NAN, 1.0, _NAN])),
    lambda L: L.mode(L.tensor([_NAN, 1.0, 1.0])),
    lambda L: L.mode(L.tensor([_NAN])),
    lambda L: L.mode(L.tensor([2.0, _NAN, 2.0, _NAN, _NAN])),
    lambda L: L.mode(L.tensor([float("inf"), _NAN, _NAN, float("inf")], dtype=L.float64)),
    lambda L: L.mode(L.tensor([[_NAN, _NAN, 1.0], [1.0, 2.0, 2.0], [3.0, _NAN, 0.0]]), 1),
    lambda L: L.tensor([[_NAN, 1.0], [_NAN, 1.0], [2.0, _NAN]]).mode(0, keepdim=True),
    lambda L: L.mode(L.tensor([_NAN] * 20 + [1.0] * 19)),
    lambda L: L.mode(L.tensor([1.0] * 20 + [_NAN] * 20)),
])
def test_mode_with_nan_matches_torch(lib_fn: Callable) -> None:
    _assert_same(lib_fn(tidu), lib_fn(torch))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mode_of_random_lines_with_nan_matches_torch(seed: int, dtype: str) -> None:
    """Lines of up to 70 elements (past the 16 where the C++ sort starts partitioning), few
    distinct values, at least one NaN; sorted and reversed lines too."""
    rng = np.random.default_rng(seed)
    for n in (2, 5, 16, 17, 33, 70):
        data = rng.integers(0, 4, (6, n)).astype(dtype)
        data[rng.random(data.shape) < rng.uniform(0.1, 0.6, (6, 1))] = np.nan
        data[np.arange(6), rng.integers(0, n, 6)] = np.nan
        data[4] = np.sort(data[4])
        data[5] = np.sort(data[5])[::-1]
        _assert_same(tidu.mode(tidu.tensor(data), 1), torch.mode(torch.tensor(data), 1))


def test_mode_gradient_with_nan_goes_to_torchs_index() -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([[_NAN, _NAN, 1.0], [1.0, _NAN, 1.0], [2.0, 3.0, _NAN]], requires_grad=True)
        (x.mode(1).values * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
