"""``searchsorted``/``bucketize`` with NaN in the sequence and their ``sorter`` and 0-d errors;
``histogram``/``histogramdd`` edges (PyTorch's ``linspace``), bins and errors; all against PyTorch."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.ops.test_order import _assert_same
from tests.test_torch_oracle import assert_same_error

_INF, _NAN = float("inf"), float("nan")


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, _NAN]), L.tensor([3.0, _NAN])),
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, _NAN]), L.tensor([3.0, _NAN, 1.5, 0.0]), right=True),
    lambda L: L.searchsorted(L.tensor([_NAN, 1.0, 2.0]), L.tensor([0.0, 1.5, 3.0])),
    lambda L: L.searchsorted(L.tensor([1.0, _NAN, _NAN, 4.0, 5.0]), L.tensor([0.0, 2.0, 4.5, 6.0]), side="right"),
    lambda L: L.searchsorted(L.tensor([[1.0, _NAN], [_NAN, _NAN]]), L.tensor([[0.5, 2.0], [1.0, _NAN]])),
    lambda L: L.searchsorted(L.tensor([3.0, _NAN, 1.0]), L.tensor([2.0, 4.0]), sorter=L.tensor([2, 0, 1])),
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, _NAN], dtype=L.float64), 2.5),
    lambda L: L.searchsorted(L.tensor([5.0, 1.0, 3.0, 2.0]), L.tensor([2.0, 4.0])),  # unsorted: the same bisection
    lambda L: L.searchsorted(L.tensor([0.1]), 0.1, right=True),  # the number in the sequence's dtype
    lambda L: L.searchsorted(L.tensor([1, 2, 3]), 2.5),
    lambda L: L.searchsorted(L.zeros(0), L.tensor([1.0])),
    lambda L: L.searchsorted(L.zeros(2, 0), L.zeros(2, 1)),
    lambda L: L.bucketize(L.tensor([3.0, 1.0]), L.tensor([1.0, _NAN])),
    lambda L: L.bucketize(L.tensor([[3.0, _NAN], [0.0, 2.0]]), L.tensor([1.0, 2.0, _NAN]), right=True),
    lambda L: L.bucketize(2.0, L.tensor([_NAN, 1.0, 3.0]), out_int32=True),
])
def test_searches_with_nan_match_torch(lib_fn: Callable) -> None:
    _assert_same(lib_fn(tidu), lib_fn(torch))


@pytest.mark.parametrize("seed", range(3))
def test_random_searches_with_nan_match_torch(seed: int) -> None:
    rng = np.random.default_rng(seed)
    edges = np.sort(rng.integers(0, 6, (4, 9)).astype(np.float32), axis=1)
    edges[rng.random(edges.shape) < 0.3] = np.nan
    values = rng.integers(-1, 7, (4, 7)).astype(np.float32)
    values[rng.random(values.shape) < 0.2] = np.nan
    for right in (False, True):
        for fn in (lambda L: L.searchsorted(L.tensor(edges), L.tensor(values), right=right),  # noqa: B023
                   lambda L: L.searchsorted(L.tensor(edges[0]), L.tensor(values), right=right),  # noqa: B023
                   lambda L: L.bucketize(L.tensor(values), L.tensor(edges[1]), right=right)):  # noqa: B023
            _assert_same(fn(tidu), fn(torch))


@pytest.mark.parametrize("call", [
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0, 2]))",
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0, 2, 1, 3]))",
    "L.searchsorted(L.tensor([[1.0, 3.0, 2.0]]), L.tensor([[2.0]]), sorter=L.tensor([0, 2, 1]))",
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0, 2, 1], dtype=L.int32))",
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0.0, 2.0, 1.0]))",
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0, 5, 1]))",
    "L.searchsorted(L.tensor([1.0, 3.0, 2.0]), L.tensor([2.0]), sorter=L.tensor([0, -1, 1]))",
    "L.searchsorted(L.tensor(1.0), L.tensor([2.0]))",
    "L.searchsorted(L.tensor(1.0), 2.0)",
    "L.searchsorted(L.tensor([[1.0, 2.0]]), L.tensor(1.0))",
    "L.searchsorted(L.tensor([[1.0, 2.0]]), L.tensor([[[1.0]]]))",
    "L.searchsorted(L.tensor([True, False]), L.tensor([True]))",
])
def test_search_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def _same_histogram(ours: tuple, ref: tuple) -> None:
    assert type(ours).__name__ == type(ref).__name__
    assert str(ours.hist.dtype)[5:] == str(ref.hist.dtype)[6:]
    np.testing.assert_allclose(ours.hist.numpy(), ref.hist.numpy(), rtol=1e-6, equal_nan=True)
    edges = (ours.bin_edges, ref.bin_edges) if isinstance(ref.bin_edges, torch.Tensor) else zip(ours.bin_edges,
                                                                                                 ref.bin_edges)
    for a, b in [edges] if isinstance(ref.bin_edges, torch.Tensor) else edges:
        assert str(a.dtype)[5:] == str(b.dtype)[6:]
        np.testing.assert_array_equal(a.numpy(), b.numpy())  # bit for bit: the bins depend on them


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.histogram(L.tensor([0.6, 0.7], dtype=L.float64), 10, range=(0.0, 1.0)),
    lambda L: L.histogram(L.tensor([0.3, 0.6, 0.7, 0.9]), 10, range=(0.0, 1.0)),
    lambda L: L.histogram(L.tensor([1.0, 2.0, 3.0]), 7, range=(-0.3, 3.3)),
    lambda L: L.histogram(L.tensor([0.1, 0.2, 0.3, 0.4], dtype=L.float64), 3, weight=L.tensor([1.0, 2.0, 3.0, 4.0],
                                                                                              dtype=L.float64)),
    lambda L: L.histogram(L.tensor([1.0, _NAN, 2.0]), 2, range=(0.0, 3.0), density=True),
    lambda L: L.histogram(L.tensor([2.0, 2.0]), 4),
    lambda L: L.histogram(L.zeros(0), 2),
    lambda L: L.histogram(L.tensor([1.0, 2.0, 3.0]), L.tensor([0.0, 3.0, 1.0, 2.0])),  # unsorted edges: upper_bound
    lambda L: L.histogram(L.tensor([1.0, 2.0]), L.tensor([0.0, 1.0, 1.0, 3.0])),
    lambda L: L.histogramdd(L.tensor([[0.6, 0.7], [0.3, 0.1]], dtype=L.float64), 10, range=[0.0, 1.0, 0.0, 1.0]),
    lambda L: L.histogramdd(L.tensor([[1.0, 2.0], [1.0, 2.0]]), [2, 3]),
])
def test_histogram_edges_and_bins_match_torch(lib_fn: Callable) -> None:
    _same_histogram(lib_fn(tidu), lib_fn(torch))


@pytest.mark.parametrize("seed", range(3))
def test_random_histograms_match_torch(seed: int) -> None:
    """Edges bit for bit, and so every element in PyTorch's bin, for float32 and float64 data on
    grids that put elements on edges."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        dtype = str(rng.choice(["float32", "float64"]))
        data = (np.round(rng.normal(size=int(rng.integers(1, 60))) * 10) / rng.integers(1, 20)).astype(dtype)
        bins = int(rng.choice([1, 3, 7, 10, 16, 33, 100]))
        low = float(np.round(rng.normal() * 5, int(rng.integers(0, 3))))
        span = None if rng.random() < 0.3 else (low, low + float(np.round(rng.exponential() * 10, 2)))
        _same_histogram(tidu.histogram(tidu.tensor(data), bins, range=span),
                        torch.histogram(torch.tensor(data), bins, range=span))
    points = rng.normal(size=(50, 2)).round(1)
    _same_histogram(tidu.histogramdd(tidu.tensor(points), [7, 10]), torch.histogramdd(torch.tensor(points), [7, 10]))


@pytest.mark.parametrize("call", [
    "L.histogram(L.tensor([1.0, float('inf')]), 3)",
    "L.histogram(L.tensor([1.0, float('nan')]), 3)",
    "L.histogram(L.tensor([1.0, 2.0]), 3, range=(2.0, 1.0))",
    "L.histogram(L.tensor([1.0, 2.0]), 3, range=(0.0, float('inf')))",
    "L.histogram(L.tensor([1.0, 2.0]), 0)",
    "L.histogram(L.tensor([1.0, 2.0], dtype=L.float16), 2)",
    "L.histogram(L.tensor([1, 2]), bins=L.tensor([0, 1, 2]))",
    "L.histogram(L.tensor([1.0, 2.0]), 2, weight=L.tensor([1.0]))",
    "L.histogram(L.tensor([1.0, 2.0]), 2, weight=L.tensor([1.0, 2.0], dtype=L.float64))",
    "L.histogram(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0], dtype=L.float64))",
    "L.histogram(L.tensor([1.0, 2.0]), L.tensor([[2.0, 1.0]]))",
    "L.histogram(L.tensor([1.0, 2.0]), L.tensor([]))",
    "L.histogram(L.tensor([1.0, 2.0]), L.tensor([1.0]))",
    "L.histogramdd(L.tensor([[1.0, 2.0]]), [2, 3], range=[0.0, 1.0, 3.0, 2.0])",
    "L.histogramdd(L.ones(3, 2), bins=[L.ones(2)])",
    "L.histogramdd(L.ones(3, 2), bins=[2, 0])",
    "L.histogramdd(L.ones(3, 2, dtype=L.int64), bins=[2, 0])",
    "L.histogramdd(L.ones(3, 2), bins=2, weight=L.ones(3, 1))",
])
def test_histogram_errors_match_torch(call: str) -> None:
    assert_same_error(call)
