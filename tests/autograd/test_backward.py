"""The plain passes of ``Tensor.backward`` and ``autograd.grad`` (tidu/autograd/backward.py
``_plain_pass``, ``_plain_grad``): a repeated ``loss.backward()`` or ``grad(loss, leaves)`` served
from its built step without the general pass's bookkeeping, with the general pass's gradients,
accumulation and errors."""

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


def _served(monkeypatch: Any, name: str) -> list[bool]:
    """Whether each call of ``backward_module.<name>`` served its pass, with the cache on."""
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    calls: list[bool] = []
    real = getattr(backward_module, name)

    def spy(*args: Any) -> Any:
        result = real(*args)
        calls.append(result is not None and result is not False)
        return result

    monkeypatch.setattr(backward_module, name, spy)
    return calls


@pytest.fixture
def plain_calls(monkeypatch: Any) -> list[bool]:
    return _served(monkeypatch, "_plain_pass")


@pytest.fixture
def plain_grads(monkeypatch: Any) -> list[bool]:
    return _served(monkeypatch, "_plain_grad")


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


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_a_queued_output_is_computed_before_the_step_reads_it(monkeypatch: Any, how: str) -> None:
    """A one-element output made by queued elementwise work (tidu/core/deferred.py) whose backward
    reads only saved outputs (``tanh``'s): the plain pass runs the queue before the step reads
    them, on every repetition, fused or not."""
    calls = _served(monkeypatch, "_plain_pass" if how == "backward" else "_plain_grad")
    results = {}
    for lib in (tidu, torch):
        x = lib.tensor([0.5], requires_grad=True)
        results[lib] = []
        for _ in range(6):
            if how == "backward":
                x.grad = None
                lib.exp(lib.tanh(x)).backward()
                results[lib].append(x.grad.numpy().copy())
            else:
                results[lib].append(lib.autograd.grad(lib.tanh(x), x)[0].numpy().copy())
    assert calls == [False] + [True] * 5
    for got, want in zip(results[tidu], results[torch]):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_queued_gradient_argument_is_computed_before_the_step_reads_it() -> None:
    """A ``gradient=`` / ``grad_outputs`` tensor made by queued elementwise work: the compiled step
    reads the seed's array as it is, so the queue runs first (``compiled._execute``), on every
    repetition, fused or not, with and without ``create_graph``."""
    for create_graph in (False, True):
        results = {}
        for lib in (tidu, torch):
            w = lib.tensor(np.array([0.5, -1.5, 2.0]), requires_grad=True)
            s = lib.tensor(np.array([1.0, 2.0, 3.0]))
            results[lib] = []
            for _ in range(6):
                y = lib.tanh(w * w)
                lib.cpu.synchronize()  # the forward's work done: only the seed is queued
                seed = s * 2.0 + 1.0  # queued in tidu
                (g,) = lib.autograd.grad(y, w, grad_outputs=seed, create_graph=create_graph)
                results[lib].append(g.detach().numpy().copy())
        for got, want in zip(results[tidu], results[torch]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


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


def _grads(lib: Any, steps: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    w = lib.tensor(rng.standard_normal(4), requires_grad=True)
    out = []
    for _ in range(steps):
        gx, gw = lib.autograd.grad((lib.sin(x * w) + x).sum(), (x, w))
        out.append(np.concatenate([gx.numpy().ravel(), gw.numpy()]))
    return out


def test_a_repeated_grad_is_served_once_built(plain_grads: list[bool]) -> None:
    got, expected = _grads(tidu, 3), _grads(torch, 3)
    assert plain_grads == [False, True, True]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_grads_are_the_users_to_write(plain_grads: list[bool]) -> None:
    """``x.sum()``'s gradient is the shared seed of ones broadcast: the result is a writable copy,
    a tensor per input (``(x, x)`` gives two)."""
    x = tidu.tensor([[2.0, 3.0]], requires_grad=True)
    for _ in range(3):
        g, h = tidu.autograd.grad((x * 1.0).sum(), (x, x))
        assert g is not h and not g.requires_grad
        np.testing.assert_array_equal(g.numpy(), [[1.0, 1.0]])
        g.add_(5.0)
    assert plain_grads[-1] is True


def test_non_leaf_inputs_take_the_general_path(plain_grads: list[bool]) -> None:
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        h = x * 2.0
        (gh,) = tidu.autograd.grad((h * h).sum(), h)
        np.testing.assert_array_equal(gh.numpy(), [4.0, 8.0])
    assert not any(plain_grads)


def test_unused_inputs_as_in_the_general_pass(plain_grads: list[bool]) -> None:
    """Inputs no gradient reaches (off the graph, or read only through a comparison) get ``None``,
    zeros or the error. (Leaves on the graph that no cotangent reaches: the random second-order
    graphs of tests/test_compiled_backward.py.)"""
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = tidu.tensor([3.0, 4.0], requires_grad=True)
    w = tidu.tensor([0.5, 5.0], requires_grad=True)
    for _ in range(3):
        gx, gy, gw = tidu.autograd.grad((x * x * (w > 1.0)).sum(), (x, y, w), allow_unused=True)
        assert gy is None and gw is None
        np.testing.assert_array_equal(gx.numpy(), [0.0, 4.0])
        (gy,) = tidu.autograd.grad((x * x).sum(), (y,), allow_unused=True, materialize_grads=True)
        np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0])
        with pytest.raises(RuntimeError, match="index 1 appears to not have been used in the graph"):
            tidu.autograd.grad((x * x).sum(), (x, y))
    assert plain_grads.count(True) >= 4  # the repeats are served, with the general pass's results


def test_a_hessian_vector_product_is_unchanged(plain_grads: list[bool]) -> None:
    """W7's step: the ``create_graph`` pass takes the general path, the second pass the plain one."""
    rng = np.random.default_rng(2)
    a, xs, vs = rng.standard_normal((5, 5)), rng.standard_normal(5), rng.standard_normal(5)

    def hvp(lib: Any) -> np.ndarray:
        x = lib.tensor(xs, requires_grad=True)
        (g,) = lib.autograd.grad(lib.tanh(lib.tensor(a) @ x).sum(), x, create_graph=True)
        (hv,) = lib.autograd.grad((g * lib.tensor(vs)).sum(), x)
        return hv.numpy()

    for _ in range(3):
        np.testing.assert_allclose(hvp(tidu), hvp(torch), rtol=1e-12)
    assert plain_grads[-1] is True


def _hidden_calls(fn: Any) -> set[tuple[str, str, int]]:
    """The importlib and weak-mapping functions that tidu's code calls while ``fn()`` runs, as
    (function, tidu file, line): an import statement in a function runs importlib's Python-level
    name resolution at every call, and a weak mapping's truth test and ``get`` are Python-level
    too (the CUDA simulator's own imports are numba's, not tidu's)."""
    found: set[tuple[str, str, int]] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        code = frame.f_code
        if event == "call" and ("importlib" in code.co_filename or code.co_filename.endswith("weakref.py")):
            caller = frame.f_back
            while caller is not None and ("importlib" in caller.f_code.co_filename
                                          or caller.f_code.co_filename.endswith("weakref.py")):
                caller = caller.f_back
            if caller is not None and "/tidu/" in caller.f_code.co_filename.replace("\\", "/"):
                found.add((code.co_name, caller.f_code.co_filename, caller.f_lineno))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return found


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not tidu.cuda.is_available(), reason="needs a GPU or the CUDA simulator"))])
@pytest.mark.parametrize("create_graph", [False, True])
def test_a_warm_step_runs_no_import_and_no_weak_mapping_method(monkeypatch: Any, create_graph: bool,
                                                                device: str) -> None:
    """A repeated training step (forward, backward or a ``create_graph`` gradient, SGD with
    momentum) calls neither importlib nor a weak mapping's methods from tidu's code."""
    monkeypatch.setattr(programs, "ENABLED", True)
    rng = np.random.default_rng(0)
    model = tidu.nn.Sequential(tidu.nn.Linear(6, 5), tidu.nn.Tanh(), tidu.nn.Linear(5, 3)).to(device)
    opt = tidu.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = tidu.tensor(rng.standard_normal((4, 6)).astype(np.float32), device=device)
    labels = tidu.tensor(np.array([0, 2, 1, 2]), device=device)

    def step() -> None:
        opt.zero_grad()
        loss = tidu.nn.functional.mse_loss(model(x), tidu.nn.functional.one_hot(labels, 3).float())
        if create_graph:
            (g,) = tidu.autograd.grad(loss, model[0].weight, create_graph=True)
            loss = loss + (g * g).sum()
        loss.backward()
        opt.step()

    for _ in range(4):  # built, fused and imported
        step()
    hidden = _hidden_calls(step)
    assert not hidden, sorted(hidden)


def test_grad_with_batched_seeds_matches_torch() -> None:
    """``is_grads_batched``: each seed's gradient, stacked (a Jacobian from the identity's rows)."""
    results = []
    for L in (tidu, torch):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        u = L.tensor(1.0, requires_grad=True)
        y = x.sin() * x
        (jac, none) = L.autograd.grad(y, [x, u], grad_outputs=L.eye(3), is_grads_batched=True, allow_unused=True,
                                      retain_graph=True)
        (rows,) = L.autograd.grad([y, y.sum()], x, grad_outputs=[L.ones(2, 3), L.tensor([1.0, -1.0])],
                                  is_grads_batched=True, create_graph=True)
        (second,) = L.autograd.grad(rows.sum(), x)  # the batched gradients are in the graph
        results.append((jac.detach().numpy(), none, rows.detach().numpy(), second.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    assert results[0][1] is None and results[1][1] is None
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-6)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-6)


def test_grad_with_batched_seeds_of_different_sizes_raises_like_torch() -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error("L.autograd.grad([y, y.sum()], x, grad_outputs=[L.eye(3), L.ones(2)], is_grads_batched=True)",
                      lambda L: {"x": (x := L.ones(3, requires_grad=True)), "y": x * x})
