"""``Module.register_forward_hook`` and ``get_parameter``/``get_buffer``, against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

from . import copy_weights


def _run_hooks(lib):  # noqa: ANN001, ANN202
    """Feature extraction and output rewriting by forward hooks, the way scripts use them."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model = ref
    if lib is tidu:
        model = tidu.nn.Sequential(tidu.nn.Linear(3, 4), tidu.nn.ReLU(), tidu.nn.Linear(4, 2))
        copy_weights(ref, model)
    calls, features = [], {}
    model[0].register_forward_hook(lambda m, args, out: features.update(fc1=out.detach()))
    model[0].register_forward_hook(lambda m, args, out: calls.append("second"))
    model[0].register_forward_hook(lambda m, args, out: calls.append("first"), prepend=True)
    # a hook's result replaces the output; with_kwargs passes the keyword arguments too
    doubler = model[2].register_forward_hook(lambda m, args, kwargs, out: out * 2, with_kwargs=True)
    x = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    out = model(x)
    out.sum().backward()
    doubled = out.detach().numpy().copy()
    doubler.remove()
    plain = model(x).detach().numpy()
    return calls, features["fc1"].numpy(), doubled, plain, x.grad.numpy()


def test_forward_hooks_match_torch() -> None:
    got, want = _run_hooks(tidu), _run_hooks(torch)
    assert got[0] == want[0] == ["first", "second"] * 2  # two calls of the model
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], 2 * got[3], rtol=1e-6)


@pytest.mark.parametrize("lib", [torch, tidu], ids=["torch", "tidu"])
def test_forward_hook_always_call_sees_the_failure(lib) -> None:  # noqa: ANN001
    layer = lib.nn.Linear(3, 2)
    seen = []
    layer.register_forward_hook(lambda m, args, out: seen.append(("always", out)), always_call=True)
    layer.register_forward_hook(lambda m, args, out: seen.append(("normal", out)))
    with pytest.raises(RuntimeError):
        layer(lib.ones(2, 5))
    assert seen == [("always", None)]


@pytest.mark.parametrize("lib", [torch, tidu], ids=["torch", "tidu"])
def test_get_parameter_and_buffer(lib) -> None:  # noqa: ANN001
    model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
    assert model.get_parameter("0.bias") is model[0].bias
    assert model.get_buffer("1.running_var") is model[1].running_var
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        model.get_parameter("1.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        model.get_buffer("0.weight")
    with pytest.raises(AttributeError, match="Linear has no attribute `foo`"):
        model.get_parameter("0.foo")
