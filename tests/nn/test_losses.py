"""Losses against PyTorch: values and gradients for every reduction, class indices and
probabilities, ignore_index, weights, label smoothing; bad targets raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import errors_of

from . import close

FLOATS = ["float32", "float64"]
REDUCTIONS = ["mean", "sum", "none"]


def _run(make, specs, dtype, seed=0, **kwargs):  # noqa: ANN001, ANN003, ANN202
    """``make(lib)`` builds the loss module; ``specs`` are ``(kind, array)`` pairs: ``"x"`` a
    differentiable float input, anything else a constant (targets, weights)."""
    rng = np.random.default_rng(seed)
    args_t, args_r, leaves = [], [], []
    for kind, data in specs:
        data = data.astype(dtype) if data.dtype.kind == "f" else data
        if kind == "x":
            a, b = tidu.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
            leaves.append((a, b))
        else:
            a, b = tidu.tensor(data), torch.tensor(data)
        args_t.append(a)
        args_r.append(b)
    out, ref = make(tidu)(*args_t), make(torch)(*args_r)
    close(out, ref, dtype)
    w = rng.uniform(-1, 1, size=tuple(ref.shape)).astype(dtype)
    (out * tidu.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for i, (a, b) in enumerate(leaves):
        close(a.grad, b.grad, dtype, what=f"grad {i}")


RNG = np.random.default_rng(0)


def _u(*shape, low=-2.0, high=2.0):  # noqa: ANN001, ANN002, ANN202
    return RNG.uniform(low, high, size=shape)


def _cls(high, *shape):  # noqa: ANN001, ANN002, ANN202
    return RNG.integers(0, high, size=shape).astype(np.int64)


def _probs(*shape, dim=1):  # noqa: ANN001, ANN002, ANN202
    p = RNG.uniform(0.1, 1.0, size=shape)
    return p / p.sum(axis=dim, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(reduction, dtype):
    x, y = _u(3, 4), _u(3, 4)
    y[0, 0] = x[0, 0]  # equal entries: L1's gradient is 0 there
    for name in ("MSELoss", "L1Loss"):
        _run(lambda lib, name=name: getattr(lib.nn, name)(reduction=reduction), [("x", x), ("x", y)], dtype)
    _run(lambda lib: lib.nn.MSELoss(reduction=reduction), [("x", _u(5)), ("c", _u(5))], dtype)
    _run(lambda lib: lib.nn.L1Loss(reduction=reduction), [("x", _u()), ("c", _u())], dtype)


CE_CASES = {
    "2d": lambda: [("x", _u(4, 5)), ("t", _cls(5, 4))],
    "unbatched": lambda: [("x", _u(5)), ("t", np.array(3))],
    "spatial": lambda: [("x", _u(2, 3, 4, 2)), ("t", _cls(3, 2, 4, 2))],
    "ignore": lambda: [("x", _u(5, 3)), ("t", np.array([0, -100, 2, 1, -100]))],
    "probs": lambda: [("x", _u(4, 5)), ("t", _probs(4, 5))],
    "probs-spatial": lambda: [("x", _u(2, 3, 4)), ("t", _probs(2, 3, 4))],
    "probs-unbatched": lambda: [("x", _u(5)), ("t", _probs(5, dim=0))],
    "empty": lambda: [("x", _u(0, 3)), ("t", _cls(3, 0))],
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CE_CASES))
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy(case, reduction, dtype, smoothing, weighted):
    specs = CE_CASES[case]()
    classes = specs[0][1].shape[1 if specs[0][1].ndim > 1 else 0]
    weight = RNG.uniform(0.5, 2.0, size=classes).astype(dtype)

    def make(lib):  # noqa: ANN001, ANN202
        w = lib.tensor(weight) if weighted else None
        return lib.nn.CrossEntropyLoss(weight=w, reduction=reduction, label_smoothing=smoothing)

    _run(make, specs, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ["2d", "unbatched", "spatial", "ignore"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(case, reduction, dtype, weighted):
    specs = CE_CASES[case]()
    classes = specs[0][1].shape[1 if specs[0][1].ndim > 1 else 0]
    weight = RNG.uniform(0.5, 2.0, size=classes).astype(dtype)

    def make(lib):  # noqa: ANN001, ANN202
        w = lib.tensor(weight) if weighted else None
        return lib.nn.NLLLoss(weight=w, reduction=reduction, ignore_index=1 if case == "2d" else -100)

    _run(make, specs, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction, dtype):
    x, y = _u(3, 4, low=0.05, high=0.95), _u(3, 4, low=0.0, high=1.0)
    weight = _u(3, 4, low=0.5, high=1.5)
    _run(lambda lib: lib.nn.BCELoss(reduction=reduction), [("x", x), ("t", y)], dtype)
    _run(lambda lib: lib.nn.BCELoss(weight=lib.tensor(weight.astype(dtype)), reduction=reduction),
         [("x", x), ("x", y)], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits(reduction, dtype):
    x, y = _u(3, 4, low=-30.0, high=30.0), _u(3, 4, low=0.0, high=1.0)
    x[0, 0] = 0.0
    pos = _u(4, low=0.5, high=3.0).astype(dtype)
    weight = _u(3, 4, low=0.5, high=1.5).astype(dtype)
    _run(lambda lib: lib.nn.BCEWithLogitsLoss(reduction=reduction), [("x", x), ("x", y)], dtype)
    _run(lambda lib: lib.nn.BCEWithLogitsLoss(weight=lib.tensor(weight), pos_weight=lib.tensor(pos),
                                              reduction=reduction), [("x", x), ("t", y)], dtype)


def test_cross_entropy_is_stable_for_large_logits():
    x = np.array([[1000.0, -1000.0, 0.0]])
    _run(lambda lib: lib.nn.CrossEntropyLoss(), [("x", x), ("t", np.array([1]))], "float32")


def test_all_targets_ignored_gives_nan_like_torch():
    x, t = np.zeros((2, 3), np.float32), np.array([-100, -100])
    ours = tidu.nn.functional.cross_entropy(tidu.tensor(x), tidu.tensor(t))
    ref = torch.nn.functional.cross_entropy(torch.tensor(x), torch.tensor(t))
    assert np.isnan(ours.item()) and np.isnan(ref.item())


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", [3, -1])
def test_target_out_of_range(fn, bad):
    for lib in (torch, tidu):
        with pytest.raises(IndexError, match=f"Target {bad} is out of bounds"):
            getattr(lib.nn.functional, fn)(lib.zeros(2, 3), lib.tensor([0, bad]))


def test_loss_errors_like_torch():
    for lib in (torch, tidu):
        F = lib.nn.functional
        with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)"):
            F.cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1]))
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
            F.cross_entropy(lib.zeros(2, 3), lib.tensor([0.0, 1.0]))
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
            F.nll_loss(lib.zeros(2, 3), lib.tensor([0, 1], dtype=lib.int32))
        with pytest.raises(ValueError, match="is not a valid value for reduction"):
            F.mse_loss(lib.zeros(2), lib.zeros(2), reduction="avg")
        with pytest.raises(ValueError, match="different to the input size"):
            F.binary_cross_entropy(lib.zeros(2, 1) + 0.5, lib.zeros(2))
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            F.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([1.0]))
        with pytest.raises(ValueError, match="must be the same as input size"):
            F.binary_cross_entropy_with_logits(lib.zeros(2, 1), lib.zeros(2))


@pytest.mark.parametrize(("scores", "target"), [
    ((3,), (2,)), ((3,), (1, 1)), ((2, 3), ()), ((2, 3), (3,)), ((2, 3), (2, 2)), ((2, 3, 4), (2,)),
    ((2, 3, 4), (2, 5)), ((2, 3, 4, 5), (2,)), ((2, 3, 4, 5), (2, 4, 6)), ((2, 3, 4, 5, 6), (2, 4)),
    ((2, 3, 4), ()), ((2, 3, 4, 5), (3, 4, 5)), ((2, 3, 4, 5, 6), (3, 4, 5, 6)),
])
@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_a_target_of_the_wrong_shape_raises_pytorchs_error(fn, scores, target):
    theirs, ours = errors_of(lambda L: getattr(L.nn.functional, fn)(L.zeros(scores), L.zeros(target, dtype=L.int64)))
    assert ours == theirs


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
def test_one_samples_scores_take_a_one_element_target(fn):
    got, want = (getattr(L.nn.functional, fn)(L.tensor([0.1, 0.5, -0.3]), L.tensor([2])) for L in (tidu, torch))
    assert tuple(got.shape) == tuple(want.shape) == ()
    close(got, want, "float32")


def test_mse_broadcast_warns_like_torch():
    with pytest.warns(UserWarning, match="different to the input size"):
        tidu.nn.functional.mse_loss(tidu.zeros(2, 3), tidu.zeros(3))


def _signs(*shape):  # noqa: ANN002, ANN202
    return RNG.choice([-1.0, 1.0], size=shape)


def _near(x, offsets):  # noqa: ANN001, ANN202
    """``x`` minus ``offsets`` in its first entries: differences exactly at the losses' kinks."""
    y = x + RNG.uniform(-2.0, 2.0, size=x.shape)
    y.flat[:len(offsets)] = x.flat[:len(offsets)] - np.array(offsets)
    return y


_X = _u(3, 4)
# name: (module of the library and reduction, operand specs)
MORE_LOSSES = {
    "smooth-l1": (lambda L, r: L.nn.SmoothL1Loss(reduction=r), [("x", _X), ("x", _near(_X, [1.0, -1.0, 0.0]))]),
    "smooth-l1-beta": (lambda L, r: L.nn.SmoothL1Loss(reduction=r, beta=0.5), [("x", _X), ("x", _near(_X, [0.5]))]),
    "smooth-l1-beta0": (lambda L, r: L.nn.SmoothL1Loss(reduction=r, beta=0.0), [("x", _X), ("t", _near(_X, [0.0]))]),
    "smooth-l1-bcast": (lambda L, r: L.nn.SmoothL1Loss(reduction=r), [("x", _u(3, 4)), ("c", _u(4))]),
    "huber": (lambda L, r: L.nn.HuberLoss(reduction=r), [("x", _X), ("x", _near(_X, [1.0, 0.0]))]),
    "huber-delta": (lambda L, r: L.nn.HuberLoss(reduction=r, delta=2.0), [("x", _X), ("x", _near(_X, [-2.0]))]),
    "kl-div": (lambda L, r: L.nn.KLDivLoss(reduction=r), [("x", np.log(_probs(3, 4))), ("x", _probs(3, 4))]),
    "kl-div-zero-target": (lambda L, r: L.nn.KLDivLoss(reduction=r),
                           [("x", np.log(_probs(3, 4))), ("t", np.array([[0.0, 0.5, 0.5, 0.0]] * 3))]),
    "kl-div-log-target": (lambda L, r: L.nn.KLDivLoss(reduction=r, log_target=True),
                          [("x", np.log(_probs(2, 5))), ("x", np.log(_probs(2, 5)))]),
    "kl-div-0d": (lambda L, r: L.nn.KLDivLoss(reduction=r), [("x", np.array(-0.5)), ("x", np.array(0.3))]),
    "soft-margin": (lambda L, r: L.nn.SoftMarginLoss(reduction=r), [("x", _u(3, 4, low=-20, high=20)),
                                                                    ("t", _signs(3, 4))]),
    "margin-ranking": (lambda L, r: L.nn.MarginRankingLoss(reduction=r), [("x", _X), ("x", _near(_X, [0.0])),
                                                                          ("t", _signs(3, 4))]),
    "margin-ranking-margin": (lambda L, r: L.nn.MarginRankingLoss(0.3, reduction=r),
                              [("x", _u(5)), ("x", _u(5)), ("t", _signs(5))]),
    "hinge-embedding": (lambda L, r: L.nn.HingeEmbeddingLoss(reduction=r),
                        [("x", np.array([1.0, 0.5, 2.0, -1.0, 1.0, 0.3])), ("t", np.array([-1.0, -1, -1, 1, 1, 1]))]),
    "hinge-embedding-margin": (lambda L, r: L.nn.HingeEmbeddingLoss(0.5, reduction=r),
                               [("x", _u(3, 4)), ("t", _signs(3, 4))]),
    "cosine-embedding": (lambda L, r: L.nn.CosineEmbeddingLoss(reduction=r),
                         [("x", _u(4, 3)), ("x", _u(4, 3)), ("t", np.array([1.0, -1.0, -1.0, 1.0]))]),
    "cosine-embedding-margin": (lambda L, r: L.nn.CosineEmbeddingLoss(-0.2, reduction=r),
                                [("x", _u(4, 3)), ("x", _u(4, 3)), ("t", np.array([1.0, -1.0, -1.0, -1.0]))]),
    "cosine-embedding-1d": (lambda L, r: L.nn.CosineEmbeddingLoss(reduction=r),
                            [("x", _u(3)), ("x", _u(3)), ("t", np.array(-1.0))]),
    "triplet": (lambda L, r: L.nn.TripletMarginLoss(reduction=r), [("x", _u(4, 3)), ("x", _u(4, 3)), ("x", _u(4, 3))]),
    "triplet-p1-swap": (lambda L, r: L.nn.TripletMarginLoss(2.0, p=1, swap=True, reduction=r),
                        [("x", _u(4, 3)), ("x", _u(4, 3)), ("x", _u(4, 3))]),
    "triplet-1d": (lambda L, r: L.nn.TripletMarginLoss(0.5, eps=1e-3, reduction=r),
                   [("x", _u(3)), ("x", _u(3)), ("x", _u(3))]),
    "gaussian-nll": (lambda L, r: L.nn.GaussianNLLLoss(reduction=r),
                     [("x", _u(3, 4)), ("x", _u(3, 4)), ("x", _u(3, 4, low=0.1, high=2.0))]),
    "gaussian-nll-full-clamped": (lambda L, r: L.nn.GaussianNLLLoss(full=True, eps=0.2, reduction=r),
                                  [("x", _u(3, 4)), ("t", _u(3, 4)), ("x", _u(3, 4, low=0.0, high=0.5))]),
    "gaussian-nll-var-per-row": (lambda L, r: L.nn.GaussianNLLLoss(reduction=r),
                                 [("x", _u(3, 4)), ("x", _u(3, 4)), ("x", _u(3, low=0.1, high=2.0))]),
    "gaussian-nll-var-last-1": (lambda L, r: L.nn.GaussianNLLLoss(reduction=r),
                                [("x", _u(3, 4)), ("t", _u(3, 4)), ("x", _u(3, 1, low=0.1, high=2.0))]),
    "poisson-nll": (lambda L, r: L.nn.PoissonNLLLoss(reduction=r), [("x", _u(3, 4)), ("x", _u(3, 4, low=0, high=5))]),
    "poisson-nll-full": (lambda L, r: L.nn.PoissonNLLLoss(full=True, reduction=r),
                         [("x", _u(3, 4)), ("x", np.array([[0.2, 0.5, 1.0, 1.5], [2.0, 3.0, 4.0, 7.0]] + [[1.2] * 4]))]),
    "poisson-nll-rates": (lambda L, r: L.nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3, reduction=r),
                          [("x", _u(3, 4, low=0.0, high=3.0)), ("t", _u(3, 4, low=0.0, high=5.0))]),
    "multilabel-soft-margin": (lambda L, r: L.nn.MultiLabelSoftMarginLoss(reduction=r),
                               [("x", _u(3, 4, low=-5, high=5)), ("t", RNG.integers(0, 2, (3, 4)).astype(float))]),
    "multilabel-soft-margin-weight": (
        lambda L, r: L.nn.MultiLabelSoftMarginLoss(L.tensor(np.array([0.5, 1.0, 2.0, 1.5])), reduction=r),
        [("x", _u(2, 3, 4)), ("x", _u(2, 3, 4, low=0.0, high=1.0))]),
    "multi-margin": (lambda L, r: L.nn.MultiMarginLoss(reduction=r), [("x", _u(5, 4)), ("t", _cls(4, 5))]),
    "multi-margin-p2-margin": (lambda L, r: L.nn.MultiMarginLoss(p=2, margin=0.7, reduction=r),
                               [("x", _u(5, 4)), ("t", _cls(4, 5))]),
    "multi-margin-weight": (
        lambda L, r: L.nn.MultiMarginLoss(weight=L.tensor(np.array([0.5, 1.0, 2.0, 1.5])), reduction=r),
        [("x", _u(6, 4)), ("t", _cls(4, 6))]),
    "multi-margin-1d": (lambda L, r: L.nn.MultiMarginLoss(p=2, reduction=r), [("x", _u(4)), ("t", np.array(2))]),
    "multi-margin-1d-target": (lambda L, r: L.nn.MultiMarginLoss(reduction=r), [("x", _u(4)), ("t", np.array([1]))]),
    "multilabel-margin": (lambda L, r: L.nn.MultiLabelMarginLoss(reduction=r),
                          [("x", _u(3, 5)), ("t", np.array([[3, 0, -1, 1, 2], [1, 2, 4, 0, 3], [-1, 2, 0, 1, 1]]))]),
    "multilabel-margin-repeat": (lambda L, r: L.nn.MultiLabelMarginLoss(reduction=r),
                                 [("x", _u(2, 4)), ("t", np.array([[2, 2, 0, -1], [3, -1, -1, -1]]))]),
    "multilabel-margin-1d": (lambda L, r: L.nn.MultiLabelMarginLoss(reduction=r),
                             [("x", _u(4)), ("t", np.array([2, 0, -1, 3]))]),
}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", list(MORE_LOSSES))
def test_more_losses_match_torch(name, reduction, dtype):
    make, specs = MORE_LOSSES[name]
    if name.startswith("multilabel-soft") and dtype == "float32":  # the weight's dtype follows the input's
        specs = [(k, v.astype(dtype)) for k, v in specs]
    _run(lambda lib: make(lib, reduction).to(getattr(lib, dtype)), specs, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_kl_div_batchmean_matches_torch(dtype):
    for log_target in (False, True):
        _run(lambda lib, lt=log_target: lib.nn.KLDivLoss(reduction="batchmean", log_target=lt),
             [("x", np.log(_probs(3, 4))), ("x", _probs(3, 4))], dtype)
    _run(lambda lib: lib.nn.KLDivLoss(reduction="batchmean"), [("x", np.array(-0.5)), ("x", np.array(0.3))], dtype)


def test_kl_div_mean_warns_like_torch():
    for lib in (torch, tidu):
        with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
            lib.nn.functional.kl_div(lib.zeros(2, 3), lib.ones(2, 3) / 3)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs,shapes", [({}, [(3, 4), (3, 4)]), ({"p": 1.0, "keepdim": True}, [(3, 4), (4,)]),
                                           ({"p": 3.0, "eps": 0.1}, [(2, 3, 4), (2, 3, 4)]), ({}, [(4,), (4,)])])
def test_pairwise_distance_matches_torch(kwargs, shapes, dtype):
    _run(lambda lib: lib.nn.PairwiseDistance(**kwargs), [("x", _u(*s)) for s in shapes], dtype)
    _run(lambda lib: lib.nn.CosineSimilarity(dim=-1), [("x", _u(*s)) for s in shapes], dtype)


@pytest.mark.parametrize("fn,args", [
    ("smooth_l1_loss", {"beta": 0.7}), ("huber_loss", {"delta": 0.6}), ("gaussian_nll_loss", {}),
    ("multilabel_soft_margin_loss", {}), ("soft_margin_loss", {}), ("poisson_nll_loss", {"full": True}),
])
def test_losses_second_order_match_torch(fn, args):
    """The gradient of ``||d loss / d x||^2``: second derivatives through the losses (float64)."""
    x, y, v = _u(3, 4), _u(3, 4), _u(3, 4, low=0.2, high=2.0)
    if fn == "poisson_nll_loss":
        y = np.abs(y) + 1.0
    if fn == "soft_margin_loss":
        y = np.sign(y)
    grads = []
    for lib in (torch, tidu):
        xt, vt = lib.tensor(x, requires_grad=True), lib.tensor(v, requires_grad=True)
        extra = (vt,) if fn == "gaussian_nll_loss" else ()
        loss = getattr(lib.nn.functional, fn)(xt, lib.tensor(y), *extra, **args)
        g = lib.autograd.grad(loss, [xt, *extra], create_graph=True)
        sum((gi * gi).sum() for gi in g).backward()
        grads.append([xt.grad.numpy(), *(e.grad.numpy() for e in extra)])
    for ours, ref in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.smooth_l1_loss(L.ones(2), L.ones(2), beta=-1.0)", "F.huber_loss(L.ones(2), L.ones(2), delta=0.0)",
    "F.smooth_l1_loss(L.tensor([1, 2]), L.tensor([1, 2]))", "F.kl_div(L.ones(2), L.ones(2), reduction='foo')",
    "F.kl_div(L.tensor([1, 2]), L.tensor([1, 2]))", "F.soft_margin_loss(L.ones(2, 1), L.ones(2))",
    "F.margin_ranking_loss(L.ones(2), L.ones(2, 1), L.ones(2))",
    "F.cosine_embedding_loss(L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2))",
    "F.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(()))",
    "F.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 2))",
    "F.triplet_margin_loss(L.ones(2, 3), L.ones(3), L.ones(2, 3))",
    "F.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=-1.0)", "L.nn.TripletMarginLoss(margin=0)",
    "F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 2))",
    "F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), -L.ones(2, 3))",
    "F.gaussian_nll_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), reduction='x')",
    "F.poisson_nll_loss(L.ones(2), L.ones(2), reduction='x')",
    "F.multilabel_soft_margin_loss(L.ones(2, 3), L.ones(2, 3), reduction='x')",
    "F.hinge_embedding_loss(L.ones(2), L.ones(2), reduction='x')",
    "F.multi_margin_loss(L.ones(2, 3), L.tensor([0, 3]))", "F.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), p=3)",
    "F.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1, 1]))",
    "F.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), weight=L.ones(2))",
    "F.multi_margin_loss(L.ones(2, 3, 2), L.tensor([0, 1]))", "F.multi_margin_loss(L.ones(2, 3), L.tensor([0.0, 1]))",
    "F.multi_margin_loss(L.ones(2, 3), L.tensor([0, 1]), reduction='x')",
    "L.nn.MultiMarginLoss(weight=L.ones(3, 1))", "L.nn.MultiMarginLoss(p=3)",
    "F.multilabel_margin_loss(L.ones(2, 3), L.tensor([[0, 3, -1], [0, 1, 2]]))",
    "F.multilabel_margin_loss(L.ones(2, 3), L.tensor([[0, 1], [0, 1]]))",
    "F.multilabel_margin_loss(L.ones(2, 3), L.tensor([[0, 1, -1], [0, 1, 2]]).float())",
])
def test_more_loss_errors_match_torch(call):
    ref, ours = errors_of(call, lambda L: {"F": L.nn.functional})
    assert (ours[0], ours[1].replace("tidu.", "torch.")) == ref


def test_more_loss_reprs_match_torch():
    for name in ("SmoothL1Loss", "HuberLoss", "KLDivLoss", "SoftMarginLoss", "MarginRankingLoss",
                 "CosineEmbeddingLoss", "HingeEmbeddingLoss", "TripletMarginLoss", "GaussianNLLLoss",
                 "PoissonNLLLoss", "MultiLabelSoftMarginLoss", "PairwiseDistance", "CosineSimilarity",
                 "MultiMarginLoss", "MultiLabelMarginLoss"):
        ours, ref = getattr(tidu.nn, name)(), getattr(torch.nn, name)()
        assert repr(ours) == repr(ref)
        assert list(ours.state_dict()) == list(ref.state_dict())


def test_multi_margin_weight_is_a_buffer_like_torch():
    ours = tidu.nn.MultiMarginLoss(p=2, margin=0.5, weight=tidu.ones(3))
    ref = torch.nn.MultiMarginLoss(p=2, margin=0.5, weight=torch.ones(3))
    assert repr(ours) == repr(ref) and list(ours.state_dict()) == list(ref.state_dict()) == ["weight"]
    assert (ours.p, ours.margin) == (ref.p, ref.margin) and not list(ours.parameters())
