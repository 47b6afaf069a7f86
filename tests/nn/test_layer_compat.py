"""Layer attributes, reprs, children and constructor errors as PyTorch's, ``CrossMapLRN2d``, and
``parametrize``'s registration checks and ``cached``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _conv_attributes(L: Any) -> list:
    layers = [L.nn.Conv2d(1, 1, 3, padding="same", dilation=2), L.nn.Conv1d(1, 1, 3, padding=2),
              L.nn.Conv3d(1, 1, 3, padding="valid"), L.nn.LazyConv2d(1, 3), L.nn.ConvTranspose2d(1, 1, 3, padding=(1, 2)),
              L.nn.LazyConvTranspose1d(1, 3, output_padding=0)]
    return [(m.transposed, m.output_padding, m._reversed_padding_repeated_twice) for m in layers]


def test_conv_attributes_match_torch() -> None:
    assert _conv_attributes(tidu) == _conv_attributes(torch)


@pytest.mark.parametrize("make", [
    "L.nn.Embedding(5, 2, scale_grad_by_freq=True)", "L.nn.Embedding(5, 2, max_norm=1.0, norm_type=1.0)",
    "L.nn.Embedding(5, 2, norm_type=3.0, sparse=True, padding_idx=1)", "L.nn.Embedding(5, 2, max_norm=2)",
    "L.nn.TripletMarginWithDistanceLoss()", "L.nn.TripletMarginWithDistanceLoss(distance_function=L.nn.PairwiseDistance(p=1))",
    "L.nn.CrossMapLRN2d(3)", "L.nn.CrossMapLRN2d(4, alpha=0.1, beta=0.5, k=2.0)",
])
def test_reprs_and_children_match_torch(make: str) -> None:
    ours, ref = eval(make, {"L": tidu}), eval(make, {"L": torch})  # noqa: S307 - the test's own expressions
    assert repr(ours) == repr(ref)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in ref.named_modules()]


def test_default_triplet_distance_matches_torch() -> None:
    rng = np.random.default_rng(0)
    a, p, n = (rng.standard_normal((4, 3)) for _ in range(3))
    values = [float(L.nn.TripletMarginWithDistanceLoss(swap=True)(L.tensor(a), L.tensor(p), L.tensor(n)))
              for L in (tidu, torch)]
    np.testing.assert_allclose(values[0], values[1], rtol=1e-12)


@pytest.mark.parametrize(("size", "channels"), [(5, 8), (3, 6), (4, 7), (2, 3), (7, 3), (6, 9)])
def test_cross_map_lrn2d_matches_torch(size: int, channels: int) -> None:
    x = np.random.default_rng(size).standard_normal((2, channels, 3, 2))
    results = []
    for L in (torch, tidu):
        xt = L.tensor(x, requires_grad=True)
        y = L.nn.CrossMapLRN2d(size, alpha=0.1, beta=0.75, k=1.5)(xt)
        (y * L.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))).sum().backward()
        results.append((y.detach().numpy(), xt.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call", [
    "L.nn.Hardtanh(1.0, -1.0)", "L.nn.Hardtanh(1.0, 1.0)", "L.nn.Unflatten(1, [2, 'a'])", "L.nn.Unflatten(1, 3)",
    "L.nn.Unflatten(1, (2, 2.0))", "L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4))",
])
def test_constructor_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_transformer_activation_flag_matches_torch() -> None:
    def flags(L: Any) -> list[int]:
        return [L.nn.TransformerEncoderLayer(4, 2, 8, activation=a).activation_relu_or_gelu
                for a in ("relu", "gelu", L.nn.ReLU(), L.nn.GELU(), L.nn.functional.gelu, L.tanh)]

    assert flags(tidu) == flags(torch) == [1, 2, 1, 2, 2, 0]


def _first_rows(L: Any) -> Any:
    class FirstRows(L.nn.Module):
        def forward(self, x: Any) -> Any:
            return x[:2]

    return FirstRows()


def _double(L: Any, dtype: Any = None) -> Any:
    """Doubles; with ``dtype``, its result and its right inverse change the tensor's dtype and shape."""
    class Double(L.nn.Module):
        def forward(self, x: Any) -> Any:
            return (2 * x).to(dtype or x.dtype)

        def right_inverse(self, x: Any) -> Any:
            return x[:1] if dtype is not None else x / 2

    return Double()


@pytest.mark.parametrize("call", [
    "P.register_parametrization(L.nn.Linear(3, 3), 'weight', _first_rows(L))",
    "P.register_parametrization(L.nn.Linear(3, 3), 'weight', _double(L, L.float64))",
    "P.register_parametrization(P.register_parametrization(L.nn.Linear(3, 3), 'weight', _double(L)), 'weight', "
    "_first_rows(L))",
    "P.register_parametrization(P.register_parametrization(L.nn.Linear(3, 3), 'weight', _double(L)), 'weight', "
    "_double(L, L.float64))",
])
def test_parametrization_shape_and_dtype_checks_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"P": L.nn.utils.parametrize, "_first_rows": _first_rows,
                                        "_double": _double},
                      same_message=False)
    for L in (tidu, torch):  # allowed with unsafe=True
        L.nn.utils.parametrize.register_parametrization(L.nn.Linear(3, 3), "weight", _first_rows(L), unsafe=True)


def test_parametrize_cached_reuses_the_value_inside() -> None:
    for L in (tidu, torch):
        P = L.nn.utils.parametrize
        layer = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(2, 2))
        assert layer.weight is not layer.weight
        with P.cached():
            first = layer.weight
            with P.cached():
                assert layer.weight is first
            assert layer.weight is first
        assert layer.weight is not first
