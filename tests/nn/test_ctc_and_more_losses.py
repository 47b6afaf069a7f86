"""CTCLoss, TripletMarginWithDistanceLoss and RReLU against PyTorch (and finite differences)."""

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

T, N, C = 6, 4, 5
TARGETS = np.array([[1, 2, 2], [3, 3, 0], [4, 1, 4], [2, 0, 0]])  # padded; a repeat needs a blank between
TARGET_LENGTHS = [3, 2, 3, 0]
INPUT_LENGTHS = [6, 5, 6, 3]


def _targets(lib, layout, blank):
    labels = np.where(TARGETS >= blank, TARGETS + 1, TARGETS) % C if blank else TARGETS  # keep blank out
    if layout == "padded":
        return lib.tensor(labels)
    return lib.tensor(np.concatenate([labels[n, :k] for n, k in enumerate(TARGET_LENGTHS)]))


@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("blank", [0, 2])
def test_ctc_loss_and_gradient_through_log_softmax_match_torch(layout, reduction, blank):
    x = np.random.default_rng(0).normal(size=(T, N, C))
    results = []
    for lib in (tidu, torch):
        logits = lib.tensor(x, requires_grad=True)
        loss = lib.nn.CTCLoss(blank=blank, reduction=reduction)(
            logits.log_softmax(2), _targets(lib, layout, blank), lib.tensor(INPUT_LENGTHS), lib.tensor(TARGET_LENGTHS))
        (loss * lib.tensor(np.arange(1.0, N + 1) if reduction == "none" else 1.0)).sum().backward()
        results.append((loss.detach().numpy(), logits.grad.numpy(), str(loss.dtype).split(".")[1], loss.shape))
    (loss, grad, dtype, shape), (ref_loss, ref_grad, ref_dtype, ref_shape) = results
    assert dtype == ref_dtype and tuple(shape) == tuple(ref_shape)
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-12)


def test_ctc_gradient_in_log_probs_finite_differences_and_torchs_formula():
    """tidu's gradient is the derivative of the loss in ``log_probs`` (finite differences agree);
    PyTorch's kernel adds ``exp(log_probs)`` where ``t < input_length`` (docs/guides/pytorch-differences.md)."""
    x = np.random.default_rng(1).normal(size=(4, 2, 3))
    lp = torch.tensor(x).log_softmax(2).numpy()
    targets, in_lens, tgt_lens = [[1, 1], [2, 0]], [4, 3], [2, 1]
    fn = lambda t: tidu.nn.functional.ctc_loss(t, tidu.tensor(targets), in_lens, tgt_lens, reduction="sum")  # noqa: E731
    assert tidu.autograd.gradcheck(fn, (tidu.tensor(lp, requires_grad=True),), eps=1e-6, atol=1e-7)
    ours, ref = tidu.tensor(lp, requires_grad=True), torch.tensor(lp, requires_grad=True)
    fn(ours).backward()
    torch.nn.functional.ctc_loss(ref, torch.tensor(targets), in_lens, tgt_lens, reduction="sum").backward()
    running = (np.arange(4)[:, None] < np.array(in_lens)[None, :])[:, :, None]
    np.testing.assert_allclose(ours.grad.numpy() + np.exp(lp) * running, ref.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_ctc_float32_unbatched_and_zero_infinity():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, N, C)).astype(np.float32)  # T=3: [1, 2, 2] needs 4 steps, [3, 3] needs 3
    for zero_infinity in (False, True):
        results = []
        for lib in (tidu, torch):
            logits = lib.tensor(x, requires_grad=True)
            loss = lib.nn.functional.ctc_loss(logits.log_softmax(2), lib.tensor(TARGETS), [3, 3, 3, 2],
                                              TARGET_LENGTHS, reduction="none", zero_infinity=zero_infinity)
            if zero_infinity:
                loss.sum().backward()
            results.append((loss.detach().numpy(), None if logits.grad is None else logits.grad.numpy()))
        assert results[0][0].dtype == np.float32
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
        if zero_infinity:
            np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-6)
    x = rng.normal(size=(5, C))
    single = []
    for lib in (tidu, torch):
        logits = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(logits.log_softmax(1), lib.tensor([1, 3]), lib.tensor(5), lib.tensor(2),
                                          reduction="none")
        loss.backward()
        single.append((loss.detach().numpy(), logits.grad.numpy()))
    assert single[0][0].shape == single[1][0].shape == ()
    np.testing.assert_allclose(single[0][0], single[1][0], rtol=1e-12)
    np.testing.assert_allclose(single[0][1], single[1][1], rtol=1e-10, atol=1e-12)


def test_ctc_errors_as_torch():
    lp = "L.zeros(4, 2, 3).log_softmax(2)"
    assert_same_error(f"L.nn.functional.ctc_loss({lp}, L.tensor([[1], [2]]), [5, 4], [1, 1])", same_message=False)
    assert_same_error(f"L.nn.functional.ctc_loss({lp}, L.tensor([[1], [2]]), [4, 4], [1, 1], reduction='all')")


@pytest.mark.parametrize("kwargs", [{}, {"margin": 0.5, "swap": True, "reduction": "none"}, {"reduction": "sum"}])
@pytest.mark.parametrize("distance", ["default", "cosine"])
def test_triplet_margin_with_distance_loss_matches_torch(kwargs, distance):
    arrays = [np.random.default_rng(i).normal(size=(5, 3)) for i in range(3)]
    results = []
    for lib in (tidu, torch):
        a, p, n = (lib.tensor(v, requires_grad=True) for v in arrays)
        fn = None if distance == "default" else (lambda x, y, lib=lib: 1.0 - lib.nn.functional.cosine_similarity(x, y))
        loss = lib.nn.TripletMarginWithDistanceLoss(distance_function=fn, **kwargs)(a, p, n)
        loss.sum().backward()
        results.append([loss.detach().numpy()] + [t.grad.numpy() for t in (a, p, n)])
    for ours, ref in zip(*results, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    assert_same_error(lambda L: L.nn.TripletMarginWithDistanceLoss(margin=0.0))
    assert_same_error(lambda L: L.nn.functional.triplet_margin_with_distance_loss(L.ones(2, 3), L.ones(2, 3),
                                                                                   L.ones(3), margin=1.0))


def test_rrelu_eval_matches_torch_and_training_uses_its_own_slopes():
    x = np.linspace(-3, 3, 13)
    for kwargs in ({}, {"lower": 0.2, "upper": 0.6}):
        out = [lib.nn.RReLU(**kwargs).eval()(lib.tensor(x)).numpy() for lib in (tidu, torch)]
        np.testing.assert_allclose(out[0], out[1], rtol=1e-15)
    assert repr(tidu.nn.RReLU()) == repr(torch.nn.RReLU())
    layer = tidu.nn.RReLU(0.1, 0.3)
    t = tidu.tensor(-np.abs(np.random.default_rng(3).normal(size=200)) - 0.1, requires_grad=True)
    tidu.manual_seed(7)
    y = layer(t)
    y.sum().backward()
    slopes = (y / t).detach().numpy()
    assert ((slopes >= 0.1) & (slopes <= 0.3)).all() and slopes.std() > 0.03  # random per element
    np.testing.assert_allclose(t.grad.numpy(), slopes, rtol=1e-6)  # the gradient uses the drawn slopes
    tidu.manual_seed(7)
    np.testing.assert_array_equal(layer(t).detach().numpy(), y.detach().numpy())  # the generator decides
    assert (layer(tidu.tensor([0.5, 2.0])).numpy() == [0.5, 2.0]).all()
