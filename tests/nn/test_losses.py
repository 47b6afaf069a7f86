"""Losses against PyTorch: values and gradients for every reduction, class indices and
probabilities, ignore_index, weights, label smoothing; bad targets raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

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


def test_mse_broadcast_warns_like_torch():
    with pytest.warns(UserWarning, match="different to the input size"):
        tidu.nn.functional.mse_loss(tidu.zeros(2, 3), tidu.zeros(3))
