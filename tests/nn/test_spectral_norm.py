"""The hook-based ``nn.utils.spectral_norm`` / ``remove_spectral_norm`` against PyTorch's: the
buffers' power iteration in training (none in eval), the normalised weight, outputs and
gradients step by step from the same ``weight_orig``, ``weight_u`` and ``weight_v``; its
state_dict, ``dim`` for transposed convolutions, and its errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu

MODULES: dict[str, tuple[Callable[[Any], Any], tuple, dict]] = {
    "linear": (lambda L: L.nn.Linear(5, 3), (4, 5), {}),
    "conv2d": (lambda L: L.nn.Conv2d(2, 4, 3), (2, 2, 5, 5), {"n_power_iterations": 3}),
    "conv_transpose2d": (lambda L: L.nn.ConvTranspose2d(3, 2, 2), (1, 3, 3, 3), {}),  # dim 1
    "linear-dim1": (lambda L: L.nn.Linear(4, 6), (2, 4), {"dim": 1, "eps": 1e-6}),
}


def _pair(name: str) -> tuple[Any, Any, tuple]:
    make, shape, kwargs = MODULES[name]
    torch.manual_seed(0)
    ref = torch.nn.utils.spectral_norm(make(torch).double(), **kwargs)
    ours = tidu.nn.utils.spectral_norm(make(tidu).to(tidu.float64), **kwargs)
    state = {k: v.detach().numpy().copy() for k, v in ref.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: tidu.tensor(v) for k, v in state.items()})
    return ours, ref, shape


@pytest.mark.parametrize("name", list(MODULES))
def test_training_steps_match_torch(name: str) -> None:
    ours, ref, shape = _pair(name)
    rng = np.random.default_rng(1)
    for step in range(3):
        if step == 2:  # eval: the buffers stay, the weight is recomputed from them
            ours.eval()
            ref.eval()
        x = rng.standard_normal(shape)
        out, expected = ours(tidu.tensor(x)), ref(torch.tensor(x))
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
        for suffix in ("_u", "_v"):
            np.testing.assert_allclose(getattr(ours, "weight" + suffix).numpy(),
                                       getattr(ref, "weight" + suffix).numpy(), rtol=1e-10, atol=1e-12)
        (out * out).sum().backward()
        (expected * expected).sum().backward()
        np.testing.assert_allclose(ours.weight_orig.grad.numpy(), ref.weight_orig.grad.numpy(), rtol=1e-9, atol=1e-12)
        ours.weight_orig.grad = None
        ref.weight_orig.grad = None


def test_remove_keeps_the_normalised_weight_as_torch() -> None:
    ours, ref, shape = _pair("conv2d")
    x = np.random.default_rng(2).standard_normal(shape)
    ours(tidu.tensor(x))
    ref(torch.tensor(x))
    tidu.nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(ref)
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, tidu.nn.Parameter)
    np.testing.assert_allclose(ours.weight.detach().numpy(), ref.weight.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours(tidu.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10)


def test_the_spectral_norm_converges_to_one() -> None:
    layer = tidu.nn.utils.spectral_norm(tidu.nn.Linear(6, 4).to(tidu.float64), n_power_iterations=5)
    for _ in range(10):
        layer(tidu.ones(1, 6, dtype=tidu.float64))
    sigma = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1.0) < 1e-6


@pytest.mark.parametrize("call,exc,match", [
    (lambda L: L.nn.utils.spectral_norm(L.nn.utils.spectral_norm(L.nn.Linear(2, 2))), RuntimeError,
     "Cannot register two spectral_norm hooks on the same parameter weight"),
    (lambda L: L.nn.utils.spectral_norm(L.nn.Linear(2, 2), n_power_iterations=0), ValueError,
     "Expected n_power_iterations to be positive, but got n_power_iterations=0"),
    (lambda L: L.nn.utils.remove_spectral_norm(L.nn.Linear(2, 2)), ValueError, "spectral_norm of 'weight' not found"),
])
def test_errors_match_torch(call: Callable, exc: type, match: str) -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        with pytest.raises(exc, match=match):
            call(L)
