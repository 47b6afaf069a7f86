"""``Tensor.backward``'s plain pass (tidu/autograd/backward.py ``_plain_pass``): a repeated
``loss.backward()`` served from its built step without the general pass's bookkeeping, with the
general pass's gradients, accumulation and errors."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.core import programs

backward_module = sys.modules["tidu.autograd.backward"]


@pytest.fixture
def plain_calls(monkeypatch: Any) -> list[bool]:
    """What each ``_plain_pass`` returned (whether it served the call), with the cache on."""
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    calls: list[bool] = []
    real = backward_module._plain_pass

    def spy(out: Any, walk: Any) -> bool:
        calls.append(real(out, walk))
        return calls[-1]

    monkeypatch.setattr(backward_module, "_plain_pass", spy)
    return calls


def _steps(lib: Any, steps: int, zero: bool = True) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(6), requires_grad=True)
    w = lib.tensor(rng.standard_normal(6), requires_grad=True)
    grads = []
    for _ in range(steps):
        if zero:
            x.grad = w.grad = None
        (lib.tanh(x * w) * x).sum().backward()
        grads.append(np.concatenate([x.grad.numpy(), w.grad.numpy()]))
    return grads


def test_a_repeated_step_is_served_once_built(plain_calls: list[bool]) -> None:
    got, expected = _steps(tidu, 3), _steps(torch, 3)
    assert plain_calls == [False, True, True]  # the first pass builds the step (the general pass)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_gradients_accumulate_in_place(plain_calls: list[bool]) -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        (x * x).sum().backward()
    held = x.grad
    (x * x).sum().backward()
    assert plain_calls[1:] == [True, True]
    assert x.grad is held  # PyTorch's ``grad += new``: a held .grad sees the sum
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(_steps(tidu, 3, zero=False)[-1], _steps(torch, 3, zero=False)[-1], rtol=1e-12)


def test_the_shared_seed_never_becomes_a_grad(plain_calls: list[bool]) -> None:
    """``x.sum()``'s gradient is the seed of ones broadcast: ``.grad`` gets a copy, so writing it
    does not change the next pass's seed."""
    x = tidu.tensor([[2.0, 3.0]], requires_grad=True)
    for _ in range(3):
        x.grad = None
        (x * 1.0).sum().backward()
        assert x.grad.numpy().flags.writeable
        np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 1.0]])
        x.grad.add_(5.0)
    assert plain_calls[-1] is True


def test_a_freed_graph_raises_as_before(plain_calls: list[bool]) -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        loss = (x.exp() * x).sum()
        loss.backward()
    assert plain_calls[-1] is True
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


@pytest.mark.parametrize("case", ["hook", "retain_graph", "gradient", "retain_grad", "create_graph"])
def test_passes_with_more_to_do_take_the_general_path(plain_calls: list[bool], case: str) -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    for _ in range(3):
        x.grad = None
        h = x * x
        if case == "hook":
            h.register_hook(lambda g: seen.append(g.numpy().copy()))
        if case == "retain_grad":
            h.retain_grad()
        loss = h.sum()
        if case == "gradient":
            loss.backward(tidu.tensor(2.0))
        else:
            loss.backward(retain_graph=case == "retain_graph", create_graph=case == "create_graph")
    assert not any(plain_calls)
    scale = 2.0 if case == "gradient" else 1.0
    np.testing.assert_array_equal(x.grad.detach().numpy(), [2.0 * scale, 4.0 * scale])
    if case == "hook":
        assert len(seen) == 3
    if case == "retain_grad":
        np.testing.assert_array_equal(h.grad.numpy(), [1.0, 1.0])


def test_a_non_scalar_output_raises_pytorchs_error(plain_calls: list[bool]) -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        (x * x).sum().backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * x).backward()
