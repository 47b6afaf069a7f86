"""The top-level layers, activations and losses (``tidu.nn.toplevel``: ``tidu.selu``,
``tidu.dropout``, ``tidu.batch_norm``...) against PyTorch's: values, gradients, dtypes, the
in-place forms and the errors, each called with ATen's signature."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.ops.test_reduce import compare
from tests.test_torch_oracle import assert_same_error

RNG = np.random.default_rng(0)


def _x(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, size=shape)


IDX = np.array([[1, 0, 3], [2, 2, 0]])
TARGET = np.array([1.0, -1.0, 1.0, -1.0])
WEIGHT = RNG.uniform(0.5, 1.5, size=(2, 3))  # binary_cross_entropy_with_logits has no gradient for its weights
LOGITS = _x(6, 2, 4)  # ctc_loss's gradients agree for log_softmax outputs (PyTorch's assumes them)

# name -> (call of the library and the float64 inputs, the inputs' shapes); each input gets a gradient
CASES: dict[str, tuple[Callable, list[np.ndarray]]] = {
    "selu": (lambda L, x: L.selu(x), [_x(2, 3)]),
    "celu": (lambda L, x: L.celu(x, 1.5), [_x(2, 3)]),
    "threshold": (lambda L, x: L.threshold(x, 0.25, -1.0), [_x(2, 3)]),
    "prelu": (lambda L, x, w: L.prelu(x, w), [_x(2, 3, 4), _x(3)]),
    "rrelu": (lambda L, x: L.rrelu(x, 0.1, 0.3), [_x(2, 3)]),
    "dropout": (lambda L, x: L.dropout(x, 0.3, False), [_x(2, 3)]),
    "alpha_dropout": (lambda L, x: L.alpha_dropout(x, 0.3, False), [_x(2, 3)]),
    "feature_dropout": (lambda L, x: L.feature_dropout(x, 0.3, False), [_x(2, 3)]),
    "feature_alpha_dropout": (lambda L, x: L.feature_alpha_dropout(x, 0.3, False), [_x(2, 3)]),
    "layer_norm": (lambda L, x, w, b: L.layer_norm(x, [4], w, b, 1e-3, False), [_x(2, 3, 4), _x(4), _x(4)]),
    "layer_norm (defaults)": (lambda L, x: L.layer_norm(x, (3, 4)), [_x(2, 3, 4)]),
    "group_norm": (lambda L, x, w, b: L.group_norm(x, 2, w, b, 1e-4, True), [_x(2, 4, 3), _x(4), _x(4)]),
    "batch_norm (train)": (lambda L, x, w, b: L.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
                           [_x(3, 2, 4), _x(2), _x(2)]),
    "batch_norm (eval)": (lambda L, x, w: L.batch_norm(x, w, None, L.tensor([0.5, -0.5], dtype=L.float64),
                                                       L.tensor([2.0, 0.5], dtype=L.float64), False, 0.1, 1e-5, True),
                          [_x(3, 2, 4), _x(2)]),
    "instance_norm": (lambda L, x, w, b: L.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
                      [_x(2, 3, 4), _x(3), _x(3)]),
    "rms_norm": (lambda L, x, w: L.rms_norm(x, [4], w, 1e-6), [_x(2, 3, 4), _x(4)]),
    "embedding": (lambda L, w: L.embedding(w, L.tensor(IDX)), [_x(4, 3)]),
    "embedding (padding_idx)": (lambda L, w: L.embedding(w, L.tensor(IDX), 2), [_x(4, 3)]),
    "pixel_shuffle": (lambda L, x: L.pixel_shuffle(x, 2), [_x(1, 8, 2, 3)]),
    "pixel_unshuffle": (lambda L, x: L.pixel_unshuffle(x, 2), [_x(1, 2, 4, 6)]),
    "channel_shuffle": (lambda L, x: L.channel_shuffle(x, 2), [_x(1, 4, 2, 2)]),
    "bilinear": (lambda L, a, b, w, c: L.bilinear(a, b, w, c), [_x(2, 3), _x(2, 4), _x(5, 3, 4), _x(5)]),
    "kl_div": (lambda L, x, t: L.kl_div(x, t), [_x(2, 3), _x(2, 3, low=0.1, high=1.0)]),
    "kl_div (sum, log_target)": (lambda L, x, t: L.kl_div(x, t, 2, log_target=True), [_x(2, 3), _x(2, 3)]),
    "kl_div (none)": (lambda L, x, t: L.kl_div(x, t, 0), [_x(2, 3), _x(2, 3, low=0.1, high=1.0)]),
    "cosine_embedding_loss": (lambda L, a, b: L.cosine_embedding_loss(a, b, L.tensor(TARGET), 0.2),
                              [_x(4, 3), _x(4, 3)]),
    "hinge_embedding_loss": (lambda L, x: L.hinge_embedding_loss(x, L.tensor(TARGET), 1.0, 2), [_x(4)]),
    "margin_ranking_loss": (lambda L, a, b: L.margin_ranking_loss(a, b, L.tensor(TARGET), 0.5, 0), [_x(4), _x(4)]),
    "triplet_margin_loss": (lambda L, a, p, n: L.triplet_margin_loss(a, p, n, 1.0, 2, 1e-6, True, 1),
                            [_x(4, 3), _x(4, 3), _x(4, 3)]),
    "poisson_nll_loss": (lambda L, x, t: L.poisson_nll_loss(x, t, True, True, 1e-8, 1), [_x(4), _x(4, low=0.0)]),
    "poisson_nll_loss (rates)": (lambda L, x, t: L.poisson_nll_loss(x, t, False, False, 1e-6, 2),
                                 [_x(4, low=0.5), _x(4, low=0.0)]),
    "binary_cross_entropy_with_logits": (lambda L, x, t: L.binary_cross_entropy_with_logits(
        x, t, L.tensor(WEIGHT), L.tensor(WEIGHT[0]), 1), [_x(2, 3), _x(2, 3, low=0.0, high=1.0)]),
    "binary_cross_entropy_with_logits (defaults)": (lambda L, x, t: L.binary_cross_entropy_with_logits(x, t),
                                                    [_x(2, 3), _x(2, 3, low=0.0, high=1.0)]),
    "cosine_embedding_loss (mean)": (lambda L, a, b: L.cosine_embedding_loss(a, b, L.tensor(TARGET), 0.0, 1),
                                     [_x(4, 3), _x(4, 3)]),
    "hinge_embedding_loss (defaults)": (lambda L, x: L.hinge_embedding_loss(x, L.tensor(TARGET)), [_x(4)]),
    "margin_ranking_loss (defaults)": (lambda L, a, b: L.margin_ranking_loss(a, b, L.tensor(TARGET)), [_x(4), _x(4)]),
    "triplet_margin_loss (defaults)": (lambda L, a, p, n: L.triplet_margin_loss(a, p, n), [_x(4, 3), _x(4, 3), _x(4, 3)]),
    "ctc_loss": (lambda L, x: L.ctc_loss(x.log_softmax(2), L.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, 1, False),
                 [LOGITS]),
    "ctc_loss (tensor lengths, sum)": (lambda L, x: L.ctc_loss(x.log_softmax(2), L.tensor([[1, 2], [3, 1]]),
                                                               L.tensor([6, 6]), L.tensor([2, 1]), 0, 2, True),
                                       [LOGITS]),
    "ctc_loss (defaults)": (lambda L, x: L.ctc_loss(x.log_softmax(2), L.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]),
                            [LOGITS]),
    "max_pool1d": (lambda L, x: L.max_pool1d(x, 2), [_x(2, 3, 6)]),
    "max_pool1d (all args)": (lambda L, x: L.max_pool1d(x, [3], [2], [1], [1], True), [_x(2, 3, 6)]),
    "max_pool1d_with_indices": (lambda L, x: L.max_pool1d_with_indices(x, 3, 1, 1), [_x(2, 3, 6)]),
    "avg_pool1d": (lambda L, x: L.avg_pool1d(x, 3, 2, 1, True, False), [_x(2, 3, 6)]),
    "adaptive_avg_pool1d": (lambda L, x: L.adaptive_avg_pool1d(x, 4), [_x(2, 3, 7)]),
    "adaptive_max_pool1d": (lambda L, x: L.adaptive_max_pool1d(x, 4), [_x(2, 3, 7)]),
    "constant_pad_nd": (lambda L, x: L.constant_pad_nd(x, [1, -1, 2, 0], 0.5), [_x(2, 3, 4)]),
    "constant_pad_nd (default)": (lambda L, x: L.constant_pad_nd(x, (2, 1)), [_x(2, 3)]),
    "convolution 1d": (lambda L, x, w, b: L.convolution(x, w, b, [2], [1], [1], False, [0], 1),
                       [_x(2, 4, 7), _x(6, 4, 3), _x(6)]),
    "convolution 2d groups": (lambda L, x, w: L.convolution(x, w, None, [1, 2], [1, 0], [2, 1], False, [0, 0], 2),
                              [_x(2, 4, 5, 6), _x(6, 2, 2, 3)]),
    "convolution 3d": (lambda L, x, w: L.convolution(x, w, None, [1], [0], [1], False, [0], 1),
                       [_x(1, 2, 3, 4, 3), _x(3, 2, 2, 2, 2)]),
    "convolution transposed 1d": (lambda L, x, w, b: L.convolution(x, w, b, [2], [1], [1], True, [1], 1),
                                  [_x(2, 4, 5), _x(4, 3, 3), _x(3)]),
    "convolution transposed 2d": (lambda L, x, w: L.convolution(x, w, None, [2, 1], [0, 1], [1, 1], True, [1, 0], 2),
                                  [_x(1, 4, 3, 3), _x(4, 1, 2, 3)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_match_torch(name: str) -> None:
    call, arrays = CASES[name]
    compare(call, arrays)


@pytest.mark.parametrize("name", ["selu", "celu", "threshold", "rrelu"])
def test_float32_and_dtypes(name: str) -> None:
    call, arrays = CASES[name]
    compare(call, [a.astype(np.float32) for a in arrays])


def test_integer_inputs_keep_torch_dtypes_and_errors() -> None:
    compare(lambda L, x: L.threshold(x, 1, 9), [np.arange(4)], grad=False)
    compare(lambda L, x: L.dropout(x, 0.5, False), [np.arange(4)], grad=False)
    compare(lambda L, x: L.constant_pad_nd(x, [1, 1], 7), [np.arange(4)], grad=False)
    assert_same_error("L.selu(L.arange(3))")


@pytest.mark.parametrize("name,args", [("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.1, -2.0)),
                                       ("rrelu_", (0.2, 0.4)), ("dropout_", (0.3, False)),
                                       ("alpha_dropout_", (0.3, False)), ("feature_dropout_", (0.3, False)),
                                       ("feature_alpha_dropout_", (0.3, False)), ("dropout_", (1.0, True)),
                                       ("feature_dropout_", (1.0, True))])
def test_in_place_forms_write_input_and_differentiate_like_torch(name: str, args: tuple) -> None:
    def call(L, x):  # noqa: ANN001, ANN202, N803 - the library
        y = x * 1.0
        out = getattr(L, name)(y, *args)
        assert out is y
        return y

    compare(call, [_x(2, 3)])
    for L in (tidu, torch):  # noqa: N806 - the library
        leaf = L.ones(2, 2, requires_grad=True)
        if args[-1:] == (False,):  # not training: nothing is written, as in PyTorch
            assert getattr(L, name)(leaf, *args) is leaf
            continue
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(L, name)(leaf, *args)


def test_dropout_in_training_zeroes_and_scales_like_torch() -> None:
    tidu.manual_seed(0)
    x = tidu.ones(64, 8, 3, requires_grad=True)
    y = tidu.dropout(x, 0.25, True)
    kept = y.detach().numpy()
    assert np.all((kept == 0) | np.isclose(kept, 1 / 0.75))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # the gradient is the mask, scaled
    z = tidu.feature_dropout(x, 0.5, True).detach().numpy()
    assert all(len(np.unique(z[n, c])) == 1 for n in range(64) for c in range(8))
    assert 0 < (z == 0).mean() < 1
    w = tidu.feature_alpha_dropout(x, 0.5, True).detach().numpy()
    assert all(len(np.unique(w[n, c])) == 1 for n in range(64) for c in range(8))
    slopes = tidu.rrelu(-tidu.ones(1000), 0.1, 0.3, True, tidu.Generator().manual_seed(1)).numpy()
    again = tidu.rrelu(-tidu.ones(1000), 0.1, 0.3, True, tidu.Generator().manual_seed(1)).numpy()
    np.testing.assert_array_equal(slopes, again)  # the generator given draws the slopes
    assert ((slopes >= -0.3) & (slopes <= -0.1)).all() and len(np.unique(slopes)) > 100


def test_batch_and_instance_norm_update_running_stats_like_torch() -> None:
    data = _x(4, 3, 5)
    for train in (True, False):
        stats = []
        for L in (tidu, torch):  # noqa: N806 - the library
            mean, var = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
            L.batch_norm(L.tensor(data), None, None, mean, var, train, 0.3, 1e-5, False)
            m2, v2 = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
            L.instance_norm(L.tensor(data), None, None, m2, v2, True, 0.3, 1e-5, False)
            stats.append([t.numpy() for t in (mean, var, m2, v2)])
        for ours, ref in zip(*stats):
            np.testing.assert_allclose(ours, ref, rtol=1e-12)


@pytest.mark.parametrize("call", [
    "L.dropout(L.ones(3), 1.5, True)", "L.dropout(L.ones(3), -0.5, False)", "L.dropout_(L.ones(3), 2.0, False)",
    "L.alpha_dropout(L.ones(3), 2.0, True)", "L.feature_dropout(L.ones(3), 1.5, True)",
    "L.feature_dropout(L.ones(3), 0.5, True)", "L.feature_alpha_dropout(L.ones(3), 0.5, True)",
    "L.celu(L.ones(3), 0.0)", "L.batch_norm(L.ones(2, 3), None, None, None, None, False, 0.1, 1e-5, True)",
    "L.instance_norm(L.ones(2, 3, 4), None, None, None, None, False, 0.1, 1e-5, True)",
    "L.layer_norm(L.ones(2, 3, 4), (3,))", "L.group_norm(L.ones(2, 3, 4), 4)",
    "L.embedding(L.ones(5, 3), L.tensor([1, 5]))", "L.embedding(L.ones(5, 3), L.tensor([1.0]))",
    "L.kl_div(L.ones(2), L.ones(2), 'mean')", "L.hinge_embedding_loss(L.ones(2), L.ones(2), 1.0, 'sum')",
    "L.max_pool1d(L.ones(2, 3, 4), 5)", "L.constant_pad_nd(L.ones(2, 3), (1,))",
    "L.convolution(L.ones(1, 3, 4), L.ones(5, 3, 2), None, 1, [0], [1], False, [0], 1)",
    "L.convolution(L.ones(1, 3, 4), L.ones(2, 3), None, [1], [0], [1], False, [0], 1)",
    "L.convolution(L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2), None, [1, 1, 1], [0], [1], False, [0], 1)",
    "L.prelu(L.ones(2, 3), L.ones(2))", "L.pixel_shuffle(L.ones(1, 3, 2, 2), 2)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


def test_top_level_reduction_mean_differs_from_batchmean_as_in_torch() -> None:
    """``torch.kl_div``'s mean (reduction 1) averages over every element; only
    ``nn.functional.kl_div`` knows ``'batchmean'``."""
    compare(lambda L, x, t: L.kl_div(x, t, 1) * 6 - L.nn.functional.kl_div(x, t, reduction="sum"),
            [_x(2, 3), _x(2, 3, low=0.1, high=1.0)], tol={"rtol": 1e-12, "atol": 1e-12})
