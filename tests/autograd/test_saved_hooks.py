"""``tidu.autograd.graph.saved_tensors_hooks``, ``disable_saved_tensors_hooks`` and ``save_on_cpu``
against PyTorch's: which tensors are packed and unpacked, in which order, and what backward uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.graph as tgraph

import tidu
import tidu.autograd.graph as graph
from tidu.core import dispatch


def _lib(x: Any) -> Any:
    return tidu if isinstance(x, tidu.Tensor) else torch


# name: function of two leaves that require grad, written once for both libraries
GRAPHS: dict[str, Callable] = {
    "mul": lambda x, y: (x * y).sum(),
    "pow-exp": lambda x, y: x.pow(2).exp().sum(),
    "sin-exp": lambda x, y: x.sin().exp().sum(),
    "scalar-mul": lambda x, y: (x * 2).sum(),
    "mul-detached": lambda x, y: (x * y.detach()).sum(),
    "div": lambda x, y: (x / y).sum(),
    "matmul": lambda x, y: (x.view(1, 2) @ y.view(2, 1)).sum(),
    "relu-mean": lambda x, y: x.relu().mean(),
    "softmax": lambda x, y: _lib(x).softmax(x * y, 0).sum(),
    "chain": lambda x, y: ((x * y).tanh() + y.exp()).sum(),
}
BRANCHING = {"chain"}


def _events(lib: Any, hooks: Any, fn: Callable) -> tuple[list, list, list]:
    log: list = []

    def pack(t: Any) -> Any:
        log.append(("pack", t.tolist()))
        return t

    def unpack(t: Any) -> Any:
        log.append(("unpack", t.tolist()))
        return t

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, -4.0], requires_grad=True)
    with hooks(pack, unpack):
        loss = fn(x, y)
    packs = list(log)
    log.clear()
    loss.backward()
    return packs, list(log), [x.grad.tolist(), None if y.grad is None else y.grad.tolist()]


@pytest.mark.parametrize("name", list(GRAPHS))
def test_pack_and_unpack_calls_match_pytorch(name: str) -> None:
    ours = list(_events(tidu, graph.saved_tensors_hooks, GRAPHS[name]))
    theirs = list(_events(torch, tgraph.saved_tensors_hooks, GRAPHS[name]))
    if name in BRANCHING:  # the order in which independent branches run back differs (see the guide)
        ours[1], theirs[1] = sorted(ours[1]), sorted(theirs[1])
    for a, b in zip(ours[:2], theirs[:2]):
        assert [e[0] for e in a] == [e[0] for e in b]
        for (_, u), (_, v) in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2][0], theirs[2][0], rtol=1e-5, atol=1e-6)


def test_one_tensor_read_twice_is_packed_once() -> None:
    """``x * x`` saves ``x`` once in tidu (PyTorch packs it twice); the gradient is the same."""
    packs, unpacks, grads = _events(tidu, graph.saved_tensors_hooks, lambda x, y: (x * x).sum())
    assert [e[0] for e in packs] == ["pack"] and [e[0] for e in unpacks] == ["unpack"]
    assert grads[0] == [2.0, 4.0]


def test_backward_uses_the_unpacked_value() -> None:
    results = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        q = lib.tensor([1.0, 2.0], requires_grad=True)
        with hooks(lambda t: t * 0 + 5, lambda t: t):
            (q * q.exp()).sum().backward()
        results.append(q.grad.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_scaled_pack_and_unpack_give_the_same_gradients() -> None:
    x = tidu.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t * 10, lambda p: p / 10):
        (x.sin() * x.exp()).sum().backward()
    expected = (x.detach().cos() * x.detach().exp() + x.detach().sin() * x.detach().exp()).tolist()
    np.testing.assert_allclose(x.grad.tolist(), expected, rtol=1e-6)


def test_packing_a_copy_makes_in_place_changes_harmless() -> None:
    """Pack to a copy, then modify the original in place: no error, the copy is used (PyTorch's)."""
    results = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        with hooks(lambda t: t.clone(), lambda t: t):
            loss = (b * a).sum()
        with lib.no_grad():
            b.mul_(100)
        loss.backward()
        results.append(a.grad.tolist())
    assert results[0] == results[1] == [2.0, 4.0]


def test_without_hooks_the_same_change_raises() -> None:
    a = tidu.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    loss = (b * a).sum()
    with tidu.no_grad():
        b.mul_(100)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_nested_hooks_use_the_innermost_pair() -> None:
    logs = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        def hook(event: str, log: list = log) -> Callable:
            return lambda t: (log.append(event), t)[1]

        with hooks(hook("pack outer"), hook("unpack outer")):
            with hooks(hook("pack inner"), hook("unpack inner")):
                y = x.exp()
            z = (y.sin() * 2).sum()
        z.backward()
        logs.append(log)
    assert logs[0] == logs[1]


def test_retain_graph_unpacks_on_every_backward() -> None:
    counts = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        n = [0]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with hooks(lambda t: t, lambda t, n=n: (n.__setitem__(0, n[0] + 1), t)[1]):
            y = x.exp().sum()
        y.backward(retain_graph=True)
        y.backward()
        counts.append((n[0], x.grad.tolist()))
    assert counts[0][0] == counts[1][0] == 2
    np.testing.assert_allclose(counts[0][1], counts[1][1], rtol=1e-6)


def test_double_backward_through_unpacked_values() -> None:
    results = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        with hooks(lambda t: t.clone(), lambda t: t):
            y = (x ** 3 * x.sin()).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        results.append((g.tolist(), x.grad.tolist()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


@pytest.mark.parametrize("op", ["pow", "exp", "tanh", "sqrt"])
def test_double_backward_through_an_unpacked_saved_output(op: str) -> None:
    """A saved output (``x ** w``'s, read by its gradient in ``w``) unpacks in its node's place in
    the graph: the gradient's own gradient reaches the exponent."""
    results = []
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        x = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, -0.2], dtype=lib.float64, requires_grad=True)
        with hooks(lambda t: (t,), lambda packed: packed[0]):
            y = x ** w if op == "pow" else getattr(lib, op)(x * w)
        (g,) = lib.autograd.grad(y.sum(), w, create_graph=True)
        (g * g).sum().backward()
        results.append((g.tolist(), x.grad.tolist(), w.grad.tolist()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_unpack_hook_must_return_a_tensor() -> None:
    for lib, hooks in ((tidu, graph.saved_tensors_hooks), (torch, tgraph.saved_tensors_hooks)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with hooks(lambda t: t, lambda t: 3):
            y = x.exp().sum()
        with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor but got "
                                            "result of type int"):
            y.backward()


def test_disable_saved_tensors_hooks_matches_pytorch() -> None:
    for lib, g in ((tidu, graph), (torch, tgraph)):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with g.disable_saved_tensors_hooks("no hooks here"), pytest.raises(RuntimeError, match="no hooks here"):
            with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t), pytest.raises(RuntimeError, match="disabled"):
            with g.disable_saved_tensors_hooks("disabled"):
                pass
        with g.disable_saved_tensors_hooks("unused"):
            (x * x).sum().backward()  # no hooks: nothing to refuse


def test_save_on_cpu_gives_the_same_gradients() -> None:
    tidu.manual_seed(0)
    model = tidu.nn.Sequential(tidu.nn.Conv2d(2, 3, 3, padding=1), tidu.nn.ReLU(), tidu.nn.Flatten(),
                               tidu.nn.Linear(3 * 4 * 4, 5), tidu.nn.LayerNorm(5))
    x, target = tidu.randn(4, 2, 4, 4), tidu.tensor([0, 3, 1, 4])

    def grads(context: Any) -> list:
        model.zero_grad()
        with context:
            loss = tidu.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        return [p.grad.clone() for p in model.parameters()]

    import contextlib

    expected = grads(contextlib.nullcontext())
    for got, want in zip(grads(graph.save_on_cpu()), expected):
        np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=1e-6, atol=1e-7)
    for got, want in zip(grads(graph.save_on_cpu(pin_memory=True)), expected):
        np.testing.assert_allclose(got.tolist(), want.tolist(), rtol=1e-6, atol=1e-7)


def test_gradients_match_pytorch_under_hooks_on_a_training_step() -> None:
    rng = np.random.default_rng(0)
    w0, x0 = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    results = []
    for lib, g in ((tidu, graph), (torch, tgraph)):
        w = lib.tensor(w0, requires_grad=True)
        with g.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            out = lib.tanh(lib.tensor(x0) @ w.t()).log_softmax(dim=1).mean()
        out.backward()
        results.append(w.grad.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10)


def test_recording_is_restored_after_the_hooks() -> None:
    """Note [saved tensors hooks]: outside the contexts, recording takes its usual paths."""
    original, grouped = dispatch._record, dispatch.GROUPED
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        assert dispatch._record is graph._record_packed and dispatch.GROUPED is False
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
        assert dispatch._record is graph._record_packed
    assert dispatch._record is original and dispatch.GROUPED is grouped
    with pytest.raises(ZeroDivisionError), graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        1 / 0  # noqa: B018
    assert dispatch._record is original and dispatch.GROUPED is grouped
