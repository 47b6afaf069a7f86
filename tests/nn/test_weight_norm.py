"""Weight and spectral normalisation and ``parametrize`` against PyTorch: parameter and state-dict
names, values and gradients from PyTorch's own parameters and power-iteration buffers, removal,
and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu

LAYERS: dict[str, tuple[Callable[[Any], Any], tuple[int, ...]]] = {
    "linear": (lambda L: L.nn.Linear(3, 4), (2, 3)),
    "conv2d": (lambda L: L.nn.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    "conv-transpose2d": (lambda L: L.nn.ConvTranspose2d(2, 3, 3), (2, 2, 4, 4)),
}


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _pair(make: Callable[[Any], Any], wrap: Callable[[Any, Any], Any]) -> tuple[Any, Any]:
    """The same layer in both libraries, wrapped, with tidu's state loaded from PyTorch's."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ref = wrap(torch, make(torch).double())
        ours = wrap(tidu, make(tidu).double())
    assert list(ours.state_dict()) == list(ref.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    ours.load_state_dict({k: tidu.tensor(_np(v)) for k, v in ref.state_dict().items()})
    return ref, ours


def _forward_backward(ref: Any, ours: Any, shape: tuple[int, ...], calls: int = 1) -> None:
    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib, module in ((torch, ref), (tidu, ours)):
        xt = lib.tensor(x, requires_grad=True)
        outs = [module(xt) for _ in range(calls)]
        sum((o * lib.linspace(-1, 1, o.numel(), dtype=lib.float64).reshape(o.shape)).sum() for o in outs).backward()
        results.append([*outs, xt.grad, *(p.grad for p in module.parameters()), *module.buffers()])
    for a, b in zip(results[1], results[0], strict=True):
        assert _np(a).shape == _np(b).shape
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layer", list(LAYERS))
@pytest.mark.parametrize("dim", [0, 1, None])
def test_hook_weight_norm_matches_torch(layer: str, dim: int | None) -> None:
    make, shape = LAYERS[layer]
    ref, ours = _pair(make, lambda L, m: L.nn.utils.weight_norm(m, dim=dim))
    _forward_backward(ref, ours, shape)
    torch.nn.utils.remove_weight_norm(ref)
    tidu.nn.utils.remove_weight_norm(ours)
    assert list(ours.state_dict()) == list(ref.state_dict())
    _forward_backward(ref, ours, shape)


def test_hook_weight_norm_warns_and_errors_like_torch() -> None:
    with pytest.warns(FutureWarning, match="deprecated in favor of"):
        layer = tidu.nn.utils.weight_norm(tidu.nn.Linear(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ref = torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))
        for lib, module in ((torch, ref), (tidu, layer)):
            with pytest.raises(RuntimeError, match="^Cannot register two weight_norm hooks on the same parameter weight$"):
                lib.nn.utils.weight_norm(module)
    tidu.nn.utils.remove_weight_norm(layer)
    torch.nn.utils.remove_weight_norm(ref)
    for module, lib in ((ref, torch), (layer, tidu)):
        with pytest.raises(ValueError, match="^weight_norm of 'weight' not found in Linear"):
            lib.nn.utils.remove_weight_norm(module)


@pytest.mark.parametrize("layer", list(LAYERS))
@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm_matches_torch(layer: str, dim: int | None) -> None:
    make, shape = LAYERS[layer]
    ref, ours = _pair(make, lambda L, m: L.nn.utils.parametrizations.weight_norm(m, dim=dim))
    assert repr(ours) == repr(ref)
    _forward_backward(ref, ours, shape)
    for lib, module in ((torch, ref), (tidu, ours)):
        with pytest.raises(ValueError, match=r"^Cannot leave unparametrized \(`leave_parametrized=False`\)"):
            lib.nn.utils.parametrize.remove_parametrizations(module, "weight", leave_parametrized=False)
        lib.nn.utils.parametrize.remove_parametrizations(module, "weight")
    assert type(ours).__name__ == type(ref).__name__
    assert not tidu.nn.utils.parametrize.is_parametrized(ours)
    _forward_backward(ref, ours, shape)


@pytest.mark.parametrize("layer", list(LAYERS))
@pytest.mark.parametrize("iterations", [1, 3])
def test_spectral_norm_matches_torch_from_the_same_buffers(layer: str, iterations: int) -> None:
    make, shape = LAYERS[layer]
    ref, ours = _pair(make, lambda L, m: L.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=iterations))
    assert repr(ours) == repr(ref)
    _forward_backward(ref, ours, shape, calls=2)  # two power-iteration rounds in training mode
    ref.eval()
    ours.eval()
    _forward_backward(ref, ours, shape)  # none in evaluation mode
    for lib, module in ((torch, ref), (tidu, ours)):
        lib.nn.utils.parametrize.remove_parametrizations(module, "weight")
    assert list(ours.state_dict()) == list(ref.state_dict())
    _forward_backward(ref, ours, shape)


def test_spectral_norm_of_a_vector_and_with_a_dim_matches_torch() -> None:
    ref, ours = _pair(LAYERS["linear"][0], lambda L, m: L.nn.utils.parametrizations.spectral_norm(m, "bias"))
    _forward_backward(ref, ours, (2, 3))
    ref, ours = _pair(LAYERS["conv2d"][0], lambda L, m: L.nn.utils.parametrizations.spectral_norm(m, dim=-1))
    _forward_backward(ref, ours, (2, 2, 5, 5))


PARAMETRIZATION_ERRORS: dict[str, Callable[[Any], Any]] = {
    "no-such-tensor": lambda L: L.nn.utils.parametrize.register_parametrization(
        L.nn.Linear(2, 2), "foo", L.nn.Identity()),
    "spectral-no-such-tensor": lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), "foo"),
    "spectral-dim": lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2), dim=3),
    "spectral-iterations": lambda L: L.nn.utils.parametrizations.spectral_norm(L.nn.Linear(2, 2),
                                                                               n_power_iterations=0),
    "remove-missing": lambda L: L.nn.utils.parametrize.remove_parametrizations(L.nn.Linear(2, 2), "weight"),
}


@pytest.mark.parametrize("name", list(PARAMETRIZATION_ERRORS))
def test_parametrization_errors_match_torch(name: str) -> None:
    with pytest.raises(Exception) as ref:
        PARAMETRIZATION_ERRORS[name](torch)
    with pytest.raises(type(ref.value)) as ours:
        PARAMETRIZATION_ERRORS[name](tidu)
    assert str(ours.value) == str(ref.value)


def _custom(lib: Any) -> tuple[type, type]:
    class Symmetric(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.triu() + x.triu(1).transpose(0, 1)

    class Scale(lib.nn.Module):
        def forward(self, x: Any) -> Any:
            return 3 * x

        def right_inverse(self, x: Any) -> Any:
            return x / 3

    return Symmetric, Scale


def test_custom_chained_parametrizations_match_torch() -> None:
    results = []
    for lib in (torch, tidu):
        symmetric, scale = _custom(lib)
        layer = lib.nn.Linear(3, 3).double()
        with lib.no_grad():
            layer.weight.copy_(lib.arange(9, dtype=lib.float64).reshape(3, 3))
            layer.bias.zero_()
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", symmetric())
        lib.nn.utils.parametrize.register_parametrization(layer, "weight", scale())
        flags = (lib.nn.utils.parametrize.is_parametrized(layer), lib.nn.utils.parametrize.is_parametrized(layer, "bias"),
                 lib.nn.utils.parametrize.type_before_parametrizations(layer).__name__, type(layer).__name__,
                 [n for n, _ in layer.named_parameters()])
        out = layer(lib.linspace(-1, 1, 6, dtype=lib.float64).reshape(2, 3))
        out.square().sum().backward()
        first = [out, layer.weight, layer.parametrizations.weight.original, layer.parametrizations.weight.original.grad]
        with pytest.raises(RuntimeError, match="^parametrization Symmetric does not implement right_inverse.$"):
            layer.weight = lib.eye(3, dtype=lib.float64)
        lib.nn.utils.parametrize.register_parametrization(layer, "bias", scale())
        layer.bias = lib.ones(3, dtype=lib.float64)  # through right_inverse: the original becomes 1 / 3
        first += [layer.parametrizations.bias.original, layer.bias]
        lib.nn.utils.parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
        results.append((flags, [*first, layer.weight], type(layer).__name__))
    (ours_flags, ours, ours_type), (ref_flags, ref, ref_type) = results[1], results[0]
    assert ours_flags == ref_flags and ours_type == ref_type
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12, atol=1e-12)
