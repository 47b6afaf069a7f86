"""nn.utils.prune against PyTorch's: masks, the reparametrization, iterative pruning, removal."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import tidu
from tidu.nn.utils import prune


def _pair(shape: tuple[int, ...], seed: int = 0) -> tuple[tidu.nn.Module, torch.nn.Module]:
    """A Linear (2-D weight) or Conv2d (4-D weight) in both libraries with the same weights, all
    of distinct magnitudes (no ties in the pruning order)."""
    rng = np.random.default_rng(seed)
    weight = rng.permutation(np.arange(1, int(np.prod(shape)) + 1)).reshape(shape).astype(np.float32)
    weight *= rng.choice([-1.0, 1.0], size=shape).astype(np.float32) / weight.size
    bias = rng.standard_normal(shape[0]).astype(np.float32)
    if len(shape) == 2:
        ours, theirs = tidu.nn.Linear(shape[1], shape[0]), torch.nn.Linear(shape[1], shape[0])
    else:
        ours, theirs = tidu.nn.Conv2d(shape[1], shape[0], shape[2]), torch.nn.Conv2d(shape[1], shape[0], shape[2])
    with tidu.no_grad():
        ours.weight.copy_(tidu.tensor(weight))
        ours.bias.copy_(tidu.tensor(bias))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(weight))
        theirs.bias.copy_(torch.tensor(bias))
    return ours, theirs


def _same(a: tidu.Tensor, b: torch.Tensor) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("amount", [0, 3, 0.3, 1.0])
def test_l1_unstructured_matches_torch(amount: float) -> None:
    ours, theirs = _pair((4, 5))
    prune.l1_unstructured(ours, "weight", amount=amount)
    tprune.l1_unstructured(theirs, "weight", amount=amount)
    _same(ours.weight_mask, theirs.weight_mask)
    _same(ours.weight, theirs.weight)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize(("shape", "n", "dim", "amount"), [((4, 3, 2, 2), 2, 0, 2), ((4, 3, 2, 2), 1, 1, 0.5),
                                                          ((4, 3, 2, 2), float("inf"), -1, 1), ((4, 6), "fro", 0, 0.25),
                                                          ((4, 6), -float("inf"), 1, 3)])
def test_ln_structured_matches_torch(shape: tuple[int, ...], n: object, dim: int, amount: float) -> None:
    ours, theirs = _pair(shape, seed=1)
    prune.ln_structured(ours, "weight", amount=amount, n=n, dim=dim)
    tprune.ln_structured(theirs, "weight", amount=amount, n=n, dim=dim)
    _same(ours.weight_mask, theirs.weight_mask)
    _same(ours.weight, theirs.weight)


def test_forward_and_gradients_flow_through_the_mask() -> None:
    ours, theirs = _pair((3, 4), seed=2)
    prune.l1_unstructured(ours, "weight", amount=5)
    tprune.l1_unstructured(theirs, "weight", amount=5)
    x = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    for _ in range(2):  # the pre-hook recomputes the weight before each forward
        ours(tidu.tensor(x)).pow(2).sum().backward()
        theirs(torch.tensor(x)).pow(2).sum().backward()
    _same(ours.weight_orig.grad, theirs.weight_orig.grad)
    _same(ours.bias.grad, theirs.bias.grad)
    assert float((ours.weight_orig.grad * (1 - ours.weight_mask)).abs().sum()) == 0.0


def test_iterative_pruning_prunes_within_what_is_left() -> None:
    ours, theirs = _pair((6, 5), seed=4)
    scores = np.random.default_rng(5).standard_normal((6, 5)).astype(np.float32)
    prune.l1_unstructured(ours, "weight", amount=0.2)
    tprune.l1_unstructured(theirs, "weight", amount=0.2)
    prune.ln_structured(ours, "weight", amount=2, n=1, dim=0)
    tprune.ln_structured(theirs, "weight", amount=2, n=1, dim=0)
    prune.l1_unstructured(ours, "weight", amount=3, importance_scores=tidu.tensor(scores))
    tprune.l1_unstructured(theirs, "weight", amount=3, importance_scores=torch.tensor(scores))
    prune.custom_from_mask(ours, "weight", tidu.tensor((scores > 0).astype(np.float32)))
    tprune.custom_from_mask(theirs, "weight", torch.tensor(scores > 0))
    _same(ours.weight_mask, theirs.weight_mask)
    _same(ours.weight, theirs.weight)
    hooks = [h for h in ours._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer) and len(hooks[0]) == 4


def test_global_unstructured_matches_torch() -> None:
    (a, ta), (b, tb) = _pair((3, 4), seed=6), _pair((2, 2, 2, 2), seed=7)
    prune.l1_unstructured(a, "weight", amount=2)
    tprune.l1_unstructured(ta, "weight", amount=2)
    prune.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")], prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured([(ta, "weight"), (tb, "weight"), (tb, "bias")], tprune.L1Unstructured, amount=0.4)
    for ours, theirs in ((a.weight_mask, ta.weight_mask), (b.weight_mask, tb.weight_mask), (b.bias_mask, tb.bias_mask)):
        _same(ours, theirs)
    with pytest.raises(TypeError, match="unstructured"):
        prune.global_unstructured([(a, "bias")], prune.LnStructured, amount=1, n=2, dim=0)


def test_remove_makes_the_pruned_value_the_parameter() -> None:
    ours, theirs = _pair((3, 3), seed=8)
    param = ours.weight
    prune.l1_unstructured(ours, "weight", amount=4)
    tprune.l1_unstructured(theirs, "weight", amount=4)
    assert ours.weight_orig is param  # the same Parameter, renamed
    assert prune.is_pruned(ours) and tprune.is_pruned(theirs)
    prune.remove(ours, "weight")
    tprune.remove(theirs, "weight")
    assert ours.weight is param and isinstance(ours.weight, tidu.nn.Parameter)
    _same(ours.weight, theirs.weight)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert not prune.is_pruned(ours)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(ours, "weight")


def test_random_methods_prune_the_asked_amount() -> None:
    tidu.manual_seed(0)
    layer = prune.random_unstructured(tidu.nn.Linear(10, 10), "weight", amount=0.37)
    assert int((layer.weight_mask == 0).sum()) == 37
    prune.random_unstructured(layer, "weight", amount=13)  # 13 more, among the 63 left
    assert int((layer.weight_mask == 0).sum()) == 50
    conv = prune.random_structured(tidu.nn.Conv2d(3, 8, 3), "weight", amount=3, dim=0)
    channel_sums = conv.weight_mask.sum(dim=(1, 2, 3))
    assert int((channel_sums == 0).sum()) == 3 and int((channel_sums == 27).sum()) == 5
    prune.random_structured(conv, "weight", amount=0.4, dim=0)  # 2 of the 5 channels left
    assert int((conv.weight_mask.sum(dim=(1, 2, 3)) == 0).sum()) == 5


def test_identity_and_prune_method() -> None:
    layer = prune.identity(tidu.nn.Linear(2, 3), "weight")
    assert float(layer.weight_mask.sum()) == 6.0
    t = tidu.tensor([[0.5, -3.0], [1.0, 0.1]])
    tt = torch.tensor(t.numpy())
    _same(prune.L1Unstructured(amount=2).prune(t), tprune.L1Unstructured(amount=2).prune(tt))


@pytest.mark.parametrize("amount", [-1, 1.5, -0.1])
def test_bad_amounts_raise_value_error_as_torch(amount: float) -> None:
    for module in (prune, tprune):
        with pytest.raises(ValueError, match="should either be a float in the range"):
            module.L1Unstructured(amount=amount)


def test_errors_match_torch() -> None:
    ours, theirs = _pair((2, 2))
    for module, layer in ((prune, ours), (tprune, theirs)):
        with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
            module.l1_unstructured(layer, "bias", amount=3)
        with pytest.raises(ValueError, match="multidimensional"):
            module.ln_structured(layer, "bias", amount=1, n=2, dim=0)
        with pytest.raises(TypeError):
            module.L1Unstructured(amount="half")
    assert [n for n, _ in ours.named_parameters()] == ["weight", "bias"]  # a failed pruning leaves it as it was
