"""Pooling, normalisation, dropout, embedding-bag layers and their functionals against PyTorch:
values, indices, parameter and input gradients in float32 and float64, reprs, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import errors_of

from . import check_module, close

FLOATS = ["float32", "float64"]


def _lib(x):  # noqa: ANN001, ANN202
    return tidu if isinstance(x, tidu.Tensor | tidu.nn.Module) else torch


def _unpool(dims, kernel, stride=None, padding=0, output_size=None):  # noqa: ANN001, ANN202
    """Max pooling with indices, then the module (a ``MaxUnpool``) on its output."""
    def call(mod, args):  # noqa: ANN001, ANN202
        pool = getattr(_lib(mod).nn.functional, f"max_pool{dims}d")
        out, idx = pool(args[0], kernel, stride, padding, return_indices=True)
        return mod(out, idx, output_size=output_size)

    return call


# name: (constructor taking the library, input shapes, optional call)
MODULES = {
    "adaptive-max-pool2d": (lambda L: L.nn.AdaptiveMaxPool2d((3, 2)), [(2, 3, 7, 5)]),
    "adaptive-max-pool2d-indices": (lambda L: L.nn.AdaptiveMaxPool2d((4, None), return_indices=True), [(3, 7, 5)]),
    "adaptive-max-pool2d-upsample": (lambda L: L.nn.AdaptiveMaxPool2d(6, True), [(1, 2, 4, 5)]),
    "adaptive-max-pool2d-global": (lambda L: L.nn.AdaptiveMaxPool2d(1, True), [(2, 3, 4, 5)]),
    "adaptive-max-pool1d": (lambda L: L.nn.AdaptiveMaxPool1d(3, return_indices=True), [(2, 3, 8)]),
    "adaptive-max-pool1d-unbatched": (lambda L: L.nn.AdaptiveMaxPool1d(4), [(3, 7)]),
    "max-unpool2d": (lambda L: L.nn.MaxUnpool2d(2), [(2, 3, 4, 6)], _unpool(2, 2)),
    "max-unpool2d-stride-pad": (lambda L: L.nn.MaxUnpool2d((3, 2), (2, 1), (1, 0)), [(1, 2, 7, 5)],
                                _unpool(2, (3, 2), (2, 1), (1, 0))),
    "max-unpool2d-output-size": (lambda L: L.nn.MaxUnpool2d(2), [(2, 5, 5)], _unpool(2, 2, output_size=(5, 5))),
    "max-unpool2d-full-output-size": (lambda L: L.nn.MaxUnpool2d(2), [(2, 1, 5, 7)],
                                      _unpool(2, 2, output_size=(2, 1, 5, 7))),
    "max-unpool1d": (lambda L: L.nn.MaxUnpool1d(3, 2, 1), [(2, 3, 9)], _unpool(1, 3, 2, 1)),
    "max-unpool1d-unbatched": (lambda L: L.nn.MaxUnpool1d(2), [(3, 7)], _unpool(1, 2, output_size=[7])),
    "lp-pool2d": (lambda L: L.nn.LPPool2d(2, 2), [(2, 3, 4, 6)]),
    "lp-pool2d-ceil-stride": (lambda L: L.nn.LPPool2d(3, (3, 2), stride=(2, 1), ceil_mode=True), [(1, 2, 6, 5)]),
    "lp-pool2d-p1-unbatched": (lambda L: L.nn.LPPool2d(1, 2), [(2, 4, 4)]),
    "lp-pool1d": (lambda L: L.nn.LPPool1d(2, 3), [(2, 3, 9)]),
    "lp-pool1d-fractional-ceil": (lambda L: L.nn.LPPool1d(1.5, 2, stride=3, ceil_mode=True), [(3, 8)]),
    "local-response-norm": (lambda L: L.nn.LocalResponseNorm(3), [(2, 5, 4)]),
    "local-response-norm-4d": (lambda L: L.nn.LocalResponseNorm(2, 0.5, 0.6, 2.0), [(2, 4, 3, 3)]),
    "local-response-norm-wide": (lambda L: L.nn.LocalResponseNorm(6, 1.0, 1.2, 0.5), [(1, 3, 5)]),
    "channel-shuffle": (lambda L: L.nn.ChannelShuffle(2), [(2, 6, 3)]),
    "channel-shuffle-4d": (lambda L: L.nn.ChannelShuffle(3), [(1, 6, 2, 2)]),
    "upsampling-nearest2d": (lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), [(2, 3, 3, 2)]),
    "upsampling-nearest2d-size": (lambda L: L.nn.UpsamplingNearest2d(size=(5, 3)), [(1, 2, 3, 2)]),
    "upsampling-bilinear2d": (lambda L: L.nn.UpsamplingBilinear2d(scale_factor=2), [(2, 3, 3, 2)]),
    "upsampling-bilinear2d-size": (lambda L: L.nn.UpsamplingBilinear2d(size=(4, 7)), [(1, 2, 3, 2)]),
    "embedding-bag-mean-2d": (lambda L: L.nn.EmbeddingBag(6, 3), [np.array([[0, 2, 2], [5, 1, 0]])]),
    "embedding-bag-sum-offsets": (lambda L: L.nn.EmbeddingBag(6, 3, mode="sum"),
                                  [np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2, 5])]),
    "embedding-bag-max-offsets": (lambda L: L.nn.EmbeddingBag(6, 4, mode="max"),
                                  [np.array([1, 2, 4, 5, 4, 3, 0]), np.array([0, 3, 3, 4])]),
    "embedding-bag-mean-padding": (lambda L: L.nn.EmbeddingBag(6, 3, padding_idx=2),
                                   [np.array([1, 2, 4, 2, 2, 3]), np.array([0, 3, 4])]),
    "embedding-bag-max-padding-2d": (lambda L: L.nn.EmbeddingBag(6, 3, mode="max", padding_idx=-1),
                                     [np.array([[5, 5], [1, 5], [0, 3]])]),
    "embedding-bag-last-offset": (lambda L: L.nn.EmbeddingBag(6, 3, include_last_offset=True),
                                  [np.array([1, 2, 4, 0, 3]), np.array([0, 1, 1, 5])]),
    "embedding-bag-per-sample-weights": (lambda L: L.nn.EmbeddingBag(6, 3, mode="sum", padding_idx=0),
                                         [np.array([1, 2, 0, 5, 4]), np.array([0, 2]), (5,)]),
    "embedding-bag-per-sample-weights-2d": (lambda L: L.nn.EmbeddingBag(6, 2, mode="sum"),
                                            [np.array([[1, 2, 3], [5, 4, 4]]), (2, 3)],
                                            lambda m, a: m(a[0], per_sample_weights=a[1])),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(MODULES))
def test_module_matches_torch(name, dtype):
    make, inputs, *call = MODULES[name]
    if name.startswith("lp-pool") and "p1" not in name:  # non-integer powers of negatives are NaN in both
        inputs = [np.random.default_rng(1).uniform(0.2, 2.0, size=s).astype(dtype) for s in inputs]
        ours, ref = check_module(lambda: make(torch), lambda: make(tidu), [], dtype,
                                 call=lambda m, _: m(_lib(m).tensor(inputs[0], requires_grad=True)))
    else:
        ours, ref = check_module(lambda: make(torch), lambda: make(tidu), inputs, dtype,
                                 call=call[0] if call else None)
    assert repr(ours) == repr(ref)


@pytest.mark.parametrize("call", [
    "F.adaptive_max_pool2d(L.ones(5), 2)", "F.adaptive_max_pool1d(L.ones(5), 2)",
    "F.adaptive_max_pool1d(L.ones(1, 1, 1, 5), 2)", "F.adaptive_max_pool2d(L.ones(1, 1, 5, 5, dtype=L.long), 2)",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.tensor([[[[0, 1], [2, 99]]]]), 2)",
    "F.max_unpool1d(L.ones(1, 1, 2), L.tensor([[[0, -1]]]), 2)",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.long), 2, output_size=(7, 7))",
    "F.max_unpool2d(L.ones(1, 1, 2, 2), L.zeros(1, 1, 2, 2, dtype=L.long), 2, output_size=(2, 4))",
    "F.local_response_norm(L.ones(2, 3), 2)", "F.alpha_dropout(L.ones(3), 1.5, True)",
    "F.feature_alpha_dropout(L.ones(3), 0.5, True)", "F.feature_alpha_dropout(L.ones(3), -0.1)",
    "F.channel_shuffle(L.ones(2, 5, 3), 2)", "F.channel_shuffle(L.ones(2, 4), 2)", "F.channel_shuffle(L.ones(2, 4, 3), 0)",
    "F.embedding_bag(L.tensor([[0, 1]]), L.ones(3, 2), L.tensor([0]))", "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2))",
    "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), mode='mean', per_sample_weights=L.ones(2))",
    "F.embedding_bag(L.tensor([0, 5]), L.ones(3, 2), L.tensor([0]))",
    "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2), L.tensor([1]))",
    "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), mode='foo')",
    "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2), L.tensor([0, 3]))",
    "F.embedding_bag(L.tensor([0.0, 1]), L.ones(3, 2), L.tensor([0]))",
    "F.embedding_bag(L.tensor([0, 1]), L.ones(3, 2), L.tensor([0]), per_sample_weights=L.ones(3), mode='sum')",
    "F.embedding_bag(L.tensor([[0, 1]]), L.ones(3, 2), padding_idx=5)", "L.nn.EmbeddingBag(5, 3, padding_idx=5)",
])
def test_errors_match_torch(call: str) -> None:
    def first_line(error: tuple) -> tuple:  # the type names are each library's own
        message = error[1].split("\n")[0].replace("tidu.tensor.Tensor", "torch.Tensor")
        return error[0], message.split(" but got float32")[0].split(" but got torch.Float")[0]

    ref, ours = errors_of(call, lambda L: {"F": L.nn.functional})
    assert first_line(ours) == first_line(ref)


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_init_from_pretrained_and_max_norm_like_torch(dtype):
    tidu.manual_seed(0)
    bag = tidu.nn.EmbeddingBag(300, 40, padding_idx=-2)
    ref = torch.nn.EmbeddingBag(300, 40, padding_idx=-2)
    assert repr(bag) == repr(ref) and bag.padding_idx == ref.padding_idx == 298
    w = bag.weight.detach().numpy()
    assert not w[298].any() and abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05 and bag.weight.requires_grad
    table = np.random.default_rng(0).normal(size=(5, 3)).astype(dtype) * 3
    idx, offsets = np.array([1, 1, 2, 4]), np.array([0, 3])
    outs = []
    for L in (torch, tidu):  # noqa: N806
        frozen = L.nn.EmbeddingBag.from_pretrained(L.tensor(table), mode="max", max_norm=1.5)
        assert not frozen.weight.requires_grad
        outs.append((frozen(L.tensor(idx), L.tensor(offsets)), frozen.weight))
    for ours, theirs in zip(outs[1], outs[0]):
        close(ours, theirs, dtype)
    assert repr(tidu.nn.EmbeddingBag.from_pretrained(tidu.ones(2, 3), freeze=False, norm_type=3.0)) == \
        repr(torch.nn.EmbeddingBag.from_pretrained(torch.ones(2, 3), freeze=False, norm_type=3.0))


@pytest.mark.parametrize("fn,lead", [("alpha_dropout", 2), ("feature_alpha_dropout", 2), ("feature_alpha_dropout", 3)])
def test_alpha_dropout_statistics_match_torch(fn: str, lead: int) -> None:
    """Both libraries keep a standard normal input at zero mean and unit variance, map every dropped
    element to the same value, scale the kept ones by the same factor (their gradient), drop at rate p
    (one draw per channel for the feature version), and return the input unchanged out of training."""
    p = 0.3
    shape = (200, 100, 3)[:lead] if fn == "feature_alpha_dropout" else (300, 200)
    x = np.random.default_rng(0).standard_normal(shape)
    stats = []
    for L in (torch, tidu):  # noqa: N806
        L.manual_seed(0)
        xt = L.tensor(x, requires_grad=True)
        y = getattr(L.nn.functional, fn)(xt, p, training=True)
        y.sum().backward()
        out, grad = y.detach().numpy(), xt.grad.numpy()
        dropped = grad == 0
        assert abs(dropped.mean() - p) < 0.02
        if lead == 3:
            assert (dropped == dropped[..., :1]).all()
        stats.append((np.unique(out[dropped]), np.unique(grad[~dropped]), out.mean(), out.std()))
        assert getattr(L.nn.functional, fn)(xt, p) is xt or (getattr(L.nn.functional, fn)(xt, p) == xt).all()
    (drop_t, scale_t, _, _), (drop, scale, mean, std) = stats
    np.testing.assert_allclose(drop, drop_t, rtol=1e-12)
    np.testing.assert_allclose(scale, scale_t, rtol=1e-12)
    assert drop.size == scale.size == 1 and abs(mean) < 0.02 and abs(std - 1) < 0.02
    module = tidu.nn.AlphaDropout(p).eval()
    assert module(tidu.tensor(x)).tolist() == x.tolist() and repr(module) == repr(torch.nn.AlphaDropout(p))
    assert not tidu.nn.functional.alpha_dropout(tidu.ones(3), 1.0, True).numpy().any()


def test_unpool_inverts_max_pool_like_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 6, 4))
    outs = []
    for L in (torch, tidu):  # noqa: N806
        F = L.nn.functional  # noqa: N806
        y, i = F.max_pool2d(L.tensor(x), 2, return_indices=True)
        back = F.max_unpool2d(y, i, 2)
        assert (back != 0).sum() == y.numel()
        outs.append(back.numpy())
    np.testing.assert_array_equal(outs[1], outs[0])
