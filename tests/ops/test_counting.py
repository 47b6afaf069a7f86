"""Counting and searching against PyTorch: ``unique``, ``unique_consecutive``, ``searchsorted``,
``bucketize``, ``bincount``, ``histc``: values, dtypes, shapes, ``bincount``'s gradient and
PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.ops.test_order import _assert_same
from tests.test_torch_oracle import assert_same_error

_NAN = float("nan")
_ROWS = [[1, 2], [1, 2], [0, 5], [1, 2], [0, 5]]


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.tensor([3, 1, 3, 2]).unique(),
    lambda L: L.unique(L.tensor([[3, 1], [3, 2]]), return_inverse=True, return_counts=True),
    lambda L: L.unique(L.tensor([2.0, _NAN, 1.0, _NAN, 2.0]), return_inverse=True, return_counts=True),
    lambda L: L.unique(L.tensor([3, 1, 3]), sorted=False, return_counts=True),
    lambda L: L.unique(L.tensor([True, False, True]), return_inverse=True),
    lambda L: L.unique(L.tensor(_ROWS), dim=0, return_inverse=True, return_counts=True),
    lambda L: L.unique(L.tensor(_ROWS).t(), dim=1, return_inverse=True),
    lambda L: L.unique(L.tensor([[[1, 0], [1, 0]], [[0, 1], [1, 0]]]), dim=-1, return_counts=True),
    lambda L: L.unique(L.zeros(0, dtype=L.int64), return_inverse=True, return_counts=True),
    lambda L: L.unique(L.tensor(4.5)),
    lambda L: L.unique_consecutive(L.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True),
    lambda L: L.tensor([1.0, _NAN, _NAN, 2.0]).unique_consecutive(return_counts=True),
    lambda L: L.unique_consecutive(L.tensor(_ROWS), dim=0, return_inverse=True, return_counts=True),
    lambda L: L.unique_consecutive(L.tensor(_ROWS), dim=1, return_counts=True),
    lambda L: L.unique_consecutive(L.tensor([[2, 2], [2, 1]])),
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 4.0]), L.tensor([2.0, 3.0, _NAN, 5.0, -1.0])),
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 4.0]), L.tensor([[2.0], [3.0]]), right=True),
    lambda L: L.searchsorted(L.tensor([1.0, 2.0, 2.0, 4.0]), 2.0),
    lambda L: L.searchsorted(L.tensor([1, 2, 2, 4]), L.tensor(2), side="right"),
    lambda L: L.searchsorted(L.tensor([1, 2, 2, 4]), L.tensor([2.5, 1.0])),
    lambda L: L.searchsorted(L.tensor([[1, 2], [3, 4]]), L.tensor([[2, 3, 5], [0, 3, 4]]), side="right",
                             out_int32=True),
    lambda L: L.searchsorted(L.tensor([[[1, 5, 9]], [[0, 2, 2]]]), L.tensor([[[2, 9]], [[2, 3]]])),
    lambda L: L.searchsorted(L.tensor([4, 1, 2]), L.tensor([2, 3, 0]), sorter=L.tensor([1, 2, 0])),
    lambda L: L.searchsorted(L.tensor([[4, 1, 2], [3, 9, 0]]), L.tensor([[2], [3]]), sorter=L.tensor([[1, 2, 0],
                                                                                                       [2, 0, 1]])),
    lambda L: L.bucketize(L.tensor([[1, 5], [3, 9]]), L.tensor([1, 3, 5, 7])),
    lambda L: L.bucketize(L.tensor([[1, 5], [3, 9]]), L.tensor([1, 3, 5, 7]), right=True, out_int32=True),
    lambda L: L.bucketize(3, L.tensor([1, 3, 5, 7])),
    lambda L: L.bucketize(L.tensor([0.5, 3.0, _NAN]), L.tensor([1.0, 3.0])),
    lambda L: L.bincount(L.tensor([1, 1, 3])),
    lambda L: L.tensor([1, 1, 3], dtype=L.int32).bincount(minlength=6),
    lambda L: L.bincount(L.tensor([1, 1, 3]), weights=L.tensor([0.5, 1.0, 2.0])),
    lambda L: L.bincount(L.tensor([1, 1, 3]), weights=L.tensor([1, 2, 3])),
    lambda L: L.bincount(L.tensor([1, 1, 3]), weights=L.tensor([0.5, 1.0, 2.0], dtype=L.float64), minlength=6),
    lambda L: L.bincount(L.zeros(0, dtype=L.int64)),
    lambda L: L.bincount(L.zeros(0, dtype=L.int64), minlength=2),
    lambda L: L.histc(L.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3),
    lambda L: L.tensor([2.0, 2.0]).histc(bins=4),
    lambda L: L.histc(L.tensor([[0.0, 1.0], [0.5, 1.0]], dtype=L.float64), bins=3),
    lambda L: L.histc(L.tensor([1.0, _NAN, 3.0]), bins=2, min=0, max=4),
    lambda L: L.histc(L.zeros(0, dtype=L.float64), bins=2),
])
def test_matches_torch(lib_fn: Callable) -> None:
    _assert_same(lib_fn(tidu), lib_fn(torch))


@pytest.mark.parametrize("seed", range(3))
def test_random_data_matches_torch(seed: int) -> None:
    rng = np.random.default_rng(seed)
    floats = rng.normal(size=(7, 40)).astype(np.float32)
    ints = rng.integers(0, 9, size=(40,))
    edges = np.sort(rng.normal(size=(7, 10)), axis=1).astype(np.float32)
    for fn in (
        lambda L: L.histc(L.tensor(floats), bins=13),
        lambda L: L.histc(L.tensor(floats), bins=7, min=-1.0, max=0.5),
        lambda L: L.unique(L.tensor(ints), return_inverse=True, return_counts=True),
        lambda L: L.unique(L.tensor(ints.reshape(8, 5) % 2), dim=0, return_inverse=True, return_counts=True),
        lambda L: L.searchsorted(L.tensor(edges), L.tensor(floats[:, :9]), right=bool(seed % 2)),
        lambda L: L.bucketize(L.tensor(floats), L.tensor(edges[0])),
        lambda L: L.bincount(L.tensor(ints), weights=L.tensor(floats[0])),
    ):
        _assert_same(fn(tidu), fn(torch))


def test_bincount_weights_get_the_gradient_of_their_bin() -> None:
    w = tidu.tensor([0.5, 1.0, 2.0], requires_grad=True)
    counts = tidu.bincount(tidu.tensor([1, 1, 3]), weights=w)
    (counts * tidu.tensor([10.0, 20.0, 30.0, 40.0])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [20.0, 20.0, 40.0])


@pytest.mark.parametrize("call", [
    "L.searchsorted(L.tensor([[1, 2], [3, 4]]), L.tensor([[2, 3, 5]]))",
    "L.searchsorted(L.tensor([4, 1, 2]), L.tensor([2, 3]), side='left', right=True)",
    "L.searchsorted(L.tensor([4, 1, 2]), L.tensor([2, 3]), side='foo')",
    "L.bucketize(L.tensor([1]), L.tensor([[1, 3]]))",
    "L.bincount(L.tensor([-1]))", "L.bincount(L.tensor([1.0]))", "L.bincount(L.tensor([[1]]))",
    "L.bincount(L.tensor([1, 2]), minlength=-1)", "L.bincount(L.tensor([1, 2]), weights=L.tensor([1.0]))",
    "L.bincount(L.tensor([True, True]))",
    "L.histc(L.tensor([1, 2]), bins=4)", "L.histc(L.tensor([1.0, 2.0]), bins=0)",
    "L.histc(L.tensor([1.0, 2.0]), bins=2, min=3, max=1)", "L.histc(L.tensor([1.0, float('inf')]), bins=2)",
    "L.histc(L.tensor([1.0, float('nan')]), bins=2)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=call not in _MESSAGE_DIFFERS)


# PyTorch prints a NaN bound as -nan (its C library's sign); the class is compared
_MESSAGE_DIFFERS = {"L.histc(L.tensor([1.0, float('nan')]), bins=2)"}


@pytest.mark.skipif(not tidu.cuda.is_available(), reason="needs a GPU or the CUDA simulator")
def test_results_stay_on_cuda() -> None:
    x = tidu.tensor([3, 1, 3, 2], device="cuda")
    edges = tidu.tensor([1.0, 2.5], device="cuda")
    for out in (*x.unique(return_inverse=True, return_counts=True), tidu.unique_consecutive(x),
                tidu.searchsorted(edges, tidu.tensor([2.0, 3.0], device="cuda")), tidu.bucketize(x, edges),
                x.bincount(), x.bincount(tidu.ones(4, device="cuda")), edges.histc(bins=3)):
        assert out.device.type == "cuda"
    assert x.bincount(tidu.ones(4, device="cuda")).cpu().tolist() == [0.0, 1.0, 1.0, 2.0]


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.histogram(L.tensor([1.0, 2.0, 1.0, 4.0]), bins=4),
    lambda L: L.histogram(L.tensor([1.0, 1.0]), bins=2),
    lambda L: L.tensor([1.0, 2.0, 1.0, 4.0], dtype=L.float64).histogram(L.tensor([0.0, 1.0, 3.0, 5.0], dtype=L.float64),
                                                                        weight=L.tensor([1.0, 2.0, 3.0, 4.0],
                                                                                        dtype=L.float64), density=True),
    lambda L: L.histogram(L.tensor([[1.0, 2.0], [1.0, 4.0]]), bins=3, range=(0.0, 3.0)),
])
def test_histogram_matches_torch(lib_fn: Callable) -> None:
    out, ref = lib_fn(tidu), lib_fn(torch)
    for a, b in ((out.hist, ref.hist), (out.bin_edges, ref.bin_edges)):
        assert str(a.dtype)[5:] == str(b.dtype)[6:]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_histogram_of_integers_raises_as_torch() -> None:
    assert_same_error("L.histogram(L.tensor([1, 2]), bins=2)")


_POINTS = [[0.0, 1.0], [1.0, 1.0], [2.0, 0.5], [0.25, 0.75], [1.5, 0.0]]


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.histogramdd(L.tensor(_POINTS), bins=[3, 2]),
    lambda L: L.histogramdd(L.tensor([_POINTS, _POINTS]), bins=2),
    lambda L: L.histogramdd(L.tensor(_POINTS, dtype=L.float64), bins=2, range=[0.0, 1.0, 0.0, 2.0]),
    lambda L: L.histogramdd(L.tensor(_POINTS), bins=[L.tensor([0.0, 1.0, 2.0]), L.tensor([0.0, 0.5, 1.0])],
                            weight=L.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), density=True),
    lambda L: L.histogramdd(L.tensor([[0.5, 0.5, 0.5]]), bins=(1, 2, 3)),
])
def test_histogramdd_matches_torch(lib_fn: Callable) -> None:
    out, ref = lib_fn(tidu), lib_fn(torch)
    assert str(out.hist.dtype)[5:] == str(ref.hist.dtype)[6:] and len(out.bin_edges) == len(ref.bin_edges)
    np.testing.assert_allclose(out.hist.numpy(), ref.hist.numpy(), rtol=1e-6)
    for a, b in zip(out.bin_edges, ref.bin_edges):
        assert str(a.dtype)[5:] == str(b.dtype)[6:]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    "L.histogramdd(L.ones(3), bins=2)",
    "L.histogramdd(L.ones(3, 2), bins=[2])",
    "L.histogramdd(L.ones(3, 2), bins=2, range=[0.0, 1.0])",
])
def test_histogramdd_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_histogramdd_of_integers_raises_as_torch() -> None:
    assert_same_error("L.histogramdd(L.ones(3, 2, dtype=L.int64), bins=2)", same_message=False)


@pytest.mark.parametrize("shape,dim", [((0, 3), 0), ((0, 3), 1), ((2, 0), 0), ((2, 0), 1)])
def test_unique_along_a_dim_of_an_empty_tensor_is_pytorchs(shape: tuple, dim: int) -> None:
    """The empty slices along ``dim`` give empty results; an empty other dim is PyTorch's error."""
    def run(L):  # noqa: ANN001, ANN202
        return L.unique(L.zeros(shape, dtype=L.int32), dim=dim, return_inverse=True, return_counts=True)

    try:
        ref = run(torch)
    except RuntimeError:
        assert_same_error(run)
        return
    ours = run(tidu)
    assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in ref]
    assert [str(t.dtype).split(".")[-1] for t in ours] == [str(t.dtype).split(".")[-1] for t in ref]
