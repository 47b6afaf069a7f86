"""The CPU row kernels of softmax, log_softmax (float32) and layer_norm: PyTorch's values,
NaN and infinities included, and the same bits for any thread count."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
import tidu.nn.functional as F
from tidu.backends.cpu import threads


def _rows_with_edges(dtype: type = np.float32) -> np.ndarray:
    x = (np.random.default_rng(0).standard_normal((6, 5, 33)) * 4).astype(dtype)
    x[0, 0] = -np.inf  # a row of -inf: NaN, as PyTorch
    x[0, 1, 3] = np.nan  # a NaN: the row is NaN
    x[0, 2, :4] = np.inf  # +inf: NaN where x is inf, 0 elsewhere
    x[0, 3, ::2] = -np.inf  # masked entries: exactly 0
    x[1, 0] = 0.0  # a constant row
    return x


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_rows_match_pytorch_with_nan_and_inf(name):
    x = _rows_with_edges()
    got = getattr(F, name)(tidu.tensor(x), dim=-1).numpy()
    want = getattr(torch, name)(torch.tensor(x), dim=-1).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    if name == "softmax":
        assert (got[0, 3, ::2] == 0).all()


@pytest.mark.parametrize("kind", ["softmax", "log_softmax", "layer_norm"])
def test_row_kernels_give_the_same_bits_on_any_thread_count(kind, monkeypatch):
    monkeypatch.setattr(threads, "TASKS_PARALLEL_MIN", 0)
    x = tidu.tensor(_rows_with_edges()[1:])
    before = tidu.get_num_threads()
    results = []
    try:
        for n in (1, 2, 3):
            tidu.set_num_threads(n)
            y = F.layer_norm(x, (33,)) if kind == "layer_norm" else getattr(F, kind)(x, dim=-1)
            results.append(y.numpy())
    finally:
        tidu.set_num_threads(before)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_rows_match_pytorch(dtype):
    x = _rows_with_edges(dtype)[1:] + 100.0  # a large mean: the variance takes two passes
    got = F.layer_norm(tidu.tensor(x), (5, 33)).numpy()
    want = torch.nn.functional.layer_norm(torch.tensor(x), (5, 33)).numpy()
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5)
