"""The autograd surface against PyTorch: hooks, retain_grad, detach, backward/grad options, grad mode."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu


def _same(a: Any, b: Any) -> None:
    if b is None:
        assert a is None
        return
    assert a is not None
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def both(fn: Callable) -> None:
    """``fn(L)`` returns a list of tensors (or None); they must agree."""
    for a, b in zip(fn(tidu), fn(torch), strict=True):
        _same(a, b)


# --- hooks -----------------------------------------------------------------------------------------
def _leaf_hook(L: Any) -> list:
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    return [x.grad, seen[0]]


def _non_leaf_hook(L: Any) -> list:
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 2)
    z = y.exp().sum() + y.sum()
    z.backward()
    return [x.grad]


def _hook_on_shared_intermediate(L: Any) -> list:
    x = L.tensor([0.5, -1.0], requires_grad=True)
    y = x.sin()
    seen = []
    y.register_hook(lambda g: seen.append(g))
    (y * y + y * 3).sum().backward()
    return [x.grad, seen[0]]


def _removed_hook(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 3).sum().backward()
    return [x.grad]


def _hook_on_output(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.register_hook(lambda g: g * 5)
    y.backward()
    return [x.grad]


def _hook_with_autograd_grad(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: g + 1)
    return list(L.autograd.grad((y * y).sum(), x))


def _hook_and_retain_grad(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    (y * y).sum().backward()
    return [x.grad, y.grad]


def _hook_once_for_many_outputs(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x.sin()
    seen = []
    y.register_hook(lambda g: seen.append(g) or g * g)  # not linear: partial gradients would differ
    y.register_hook(lambda g: seen.append(g))
    L.autograd.backward([(y * 3).sum(), (y * y).sum()], [L.tensor(1.0), L.tensor(2.0)])
    return [x.grad, L.tensor(float(len(seen))), seen[0]]


def _hook_then_in_place(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    y.register_hook(lambda g: g * 2)  # stays with this value of y
    z = y * 3
    y.add_(1.0)
    y.register_hook(lambda g: g * 5)  # the written value's
    y.retain_grad()  # follows the tensor
    (y.sum() + z.sum()).backward()
    return [x.grad, y.grad]


def _retain_grad_with_autograd_grad(L: Any) -> list:
    """A pass that differentiates a retain_grad tensor fills its .grad (accumulating), whether
    it runs for ``grad`` or for ``backward(inputs=...)``; one that does not leaves it alone."""
    x, w = L.tensor([1.0, 2.0], requires_grad=True), L.tensor([3.0, 4.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = (y * w).sum()
    L.autograd.grad(z, w, retain_graph=True)  # y's gradient is not needed
    seen = [L.zeros(2) if y.grad is None else y.grad * 100]
    (gx,) = L.autograd.grad(z, x, retain_graph=True)
    seen.append(y.grad.clone())
    L.autograd.grad(z, [x, y], retain_graph=True)
    seen.append(y.grad.clone())
    z.backward(inputs=[w], retain_graph=True)
    seen.append(y.grad.clone())
    z.backward(inputs=[x])
    return [gx, *seen, y.grad, x.grad, w.grad]


def _hook_on_a_tensor_gone_before_backward(L: Any) -> list:
    """A hook lives as long as the graph, not the tensor: ``y`` is gone when the backward runs."""
    x = L.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def forward(x: Any) -> Any:
        y = x.exp()
        y.register_hook(lambda g: g * 10)
        z = y * 3.0  # grouped with y's call
        z.register_hook(lambda g: seen.append(g) or g + 1)
        return z.sin()

    forward(x).sum().backward()
    return [x.grad, seen[0]]


def _hook_on_a_view_written_through_a_view(L: Any) -> list:
    """A write through a view reads its base's region directly (PyTorch's CopySlices): a hook on
    a view between them, or on the written view's old value, sees only the other reads' gradient."""
    x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    w = L.tensor([1.0, 10.0, 100.0, 1000.0])
    base = x * 1.0
    v = base.view(2, 2)
    v.register_hook(lambda g: g * 2)  # fires for z's gradient only
    z = v * 3
    row = v[1]
    row.register_hook(lambda g: g * 7)  # never reached: the write reads the base
    row.add_(1.0)
    v[0] = v[1] * 2  # reads the new v
    return [((base * w).sum() + z.sum()).backward() or x.grad]


def _hook_on_a_base_written_through_a_view(L: Any) -> list:
    """A hook on a base written through a view sees the gradient of the base's old value, the
    written region's included; the base dies before the backward."""
    x = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)

    def forward(x: Any) -> Any:
        base = x * 1.0
        base.register_hook(lambda g: g * 2)
        base[1:3].mul_(5.0)
        return base * L.tensor([1.0, 10.0, 100.0, 1000.0])

    forward(x).sum().backward()
    return [x.grad]


HOOKS = [_hook_on_a_tensor_gone_before_backward, _hook_on_a_view_written_through_a_view,
         _hook_on_a_base_written_through_a_view, _hook_once_for_many_outputs, _leaf_hook, _non_leaf_hook, _hook_on_shared_intermediate, _removed_hook, _hook_on_output,
         _hook_with_autograd_grad, _hook_and_retain_grad, _hook_then_in_place, _retain_grad_with_autograd_grad]


@pytest.mark.parametrize("fn", HOOKS, ids=lambda f: f.__name__)
def test_hooks_match_torch(fn: Callable) -> None:
    both(fn)


def _named_hook(g: Any) -> Any:
    return g[:1]


class _CallableHook:
    def __call__(self, g: Any) -> Any:
        return g.sum()


@pytest.mark.parametrize(("hook", "error", "message"), [
    (lambda g: 3.0, TypeError, "expected Variable, but hook returned 'float'"),
    (lambda g: g.sum(), RuntimeError, "hook '<lambda>' has changed the size of value"),
    (_named_hook, RuntimeError, "hook '_named_hook' has changed the size of value"),
    (_CallableHook(), RuntimeError, "hook '<unknown>' has changed the size of value"),
    (lambda g: g.double(), RuntimeError,
     r"hook '<lambda>' has changed the type of value \(was torch.FloatTensor got torch.DoubleTensor\)"),
])
@pytest.mark.parametrize("leaf", [True, False])
def test_a_hook_returning_another_gradient_raises_pytorchs_error(hook: Any, error: type, message: str, leaf: bool) -> None:
    for L in (torch, tidu):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = x if leaf else x * 3.0
        y.register_hook(hook)
        with pytest.raises(error, match=message):
            y.sum().backward()


def test_hook_on_tensor_not_requiring_grad_raises() -> None:
    for L in (torch, tidu):
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
            L.ones(2).register_hook(lambda g: g)


# --- retain_grad, requires_grad_, detach -------------------------------------------------------------
def _retain_after_use(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    y.retain_grad()  # after y was used: still retained
    z.backward()
    return [y.grad, x.grad]


def _retain_accumulates(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.retain_grad()
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    return [y.grad, x.grad]


def _grad_accumulates_in_place(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    held, view = x.grad, x.grad[1:]
    (x * 3).sum().backward()
    return [held, view, x.grad, L.tensor(float(held is x.grad))]


def _retain_on_leaf_is_noop(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    x.retain_grad()
    (x * 2).sum().backward()
    return [x.grad]


def _detach_stops_gradient(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    z = (y.detach() * x).sum()
    z.backward()
    return [x.grad]


def _detach_in_place(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.detach_()
    out = (y * x).sum()
    out.backward()
    return [x.grad, L.tensor(float(y.requires_grad)), L.tensor(float(y.is_leaf))]


def _requires_grad_toggle(L: Any) -> list:
    x = L.tensor([1.0, 2.0])
    x.requires_grad_()
    (x * 3).sum().backward()
    x.requires_grad_(False)
    return [x.grad, L.tensor(float(x.requires_grad)), L.tensor(float((x * 2).requires_grad))]


SURFACE = [_retain_after_use, _retain_accumulates, _grad_accumulates_in_place, _retain_on_leaf_is_noop,
           _detach_stops_gradient, _detach_in_place, _requires_grad_toggle]


@pytest.mark.parametrize("fn", SURFACE, ids=lambda f: f.__name__)
def test_surface_matches_torch(fn: Callable) -> None:
    both(fn)


@pytest.mark.parametrize(("value", "error", "message"), [
    (lambda L: L.zeros(3), RuntimeError, r"attempting to assign a gradient of size '\[3\]' to a tensor of size '\[2\]'"),
    (lambda L: L.zeros(2, dtype=L.float64), RuntimeError,
     r"attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'\. The gradient must"),
    (lambda L: L.zeros(2, dtype=L.int64), RuntimeError, "with dtype 'long int' to a tensor with grad_dtype 'Float'"),
    (lambda L: 3, TypeError, "assigned grad expected to be a Tensor or None but got grad of type int"),
])
def test_assigning_a_gradient_of_another_size_or_dtype_raises_pytorchs_error(value: Any, error: type, message: str) -> None:
    for L in (torch, tidu):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(error, match=message):
            x.grad = value(L)


def test_reading_a_non_leafs_grad_warns_as_pytorch_does() -> None:
    for L in (torch, tidu):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y, kept = x * 2, x * 3
        kept.retain_grad()
        ((y * kept).sum()).backward()
        with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
            assert y.grad is None
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert x.grad is not None and kept.grad is not None  # a leaf's, a retained one's: no warning


# --- backward and grad options ------------------------------------------------------------------------
def _backward_gradient(L: Any) -> list:
    x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * x
    y.backward(gradient=L.tensor([[1.0, 0.5], [0.0, 2.0]]))
    return [x.grad]


def _backward_inputs(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    w = L.tensor([3.0, 4.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    return [x.grad, w.grad]


def _backward_inputs_non_leaf(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    return [x.grad, y.grad]


def _backward_create_graph(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.sum().backward()
    return [g, x.grad]


def _grad_many(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    w = L.tensor([0.5, -1.0], requires_grad=True)
    out = [(x * w).sum(), (x * x).sum()]
    return list(L.autograd.grad(out, [x, w], grad_outputs=[L.tensor(1.0), L.tensor(2.0)]))


def _grad_allow_unused(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    u = L.tensor([1.0], requires_grad=True)
    return list(L.autograd.grad((x * x).sum(), [x, u], allow_unused=True))


def _grad_second_order(L: Any) -> list:
    x = L.tensor([0.3, -1.2], requires_grad=True)
    (g,) = L.autograd.grad(x.sin().sum(), x, create_graph=True)
    (h,) = L.autograd.grad(g.sum(), x)
    return [g, h]


def _grad_retain_graph(L: Any) -> list:
    x = L.tensor([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    a = L.autograd.grad(y, x, retain_graph=True)[0]
    b = L.autograd.grad(y, x)[0]
    return [a, b, x.grad]


OPTIONS = [_backward_gradient, _backward_inputs, _backward_inputs_non_leaf, _backward_create_graph, _grad_many,
           _grad_allow_unused, _grad_second_order, _grad_retain_graph]


@pytest.mark.parametrize("fn", OPTIONS, ids=lambda f: f.__name__)
def test_backward_and_grad_options_match_torch(fn: Callable) -> None:
    both(fn)


ERRORS = {
    "unused": (lambda L: L.autograd.grad((L.ones(2, requires_grad=True) * 2).sum(),
                                         [L.ones(2, requires_grad=True)]), RuntimeError),
    "input-no-grad": (lambda L: L.autograd.grad(L.ones(2, requires_grad=True).sum(), [L.ones(2)]), RuntimeError),
    "freed-graph": (lambda L: (lambda y: (y.backward(), y.backward()))((L.ones(2, requires_grad=True).exp()).sum()),
                    RuntimeError),
    "non-scalar": (lambda L: (L.ones(2, requires_grad=True) * 2).backward(), RuntimeError),
    "no-grad-fn": (lambda L: L.ones(2).sum().backward(), RuntimeError),
    "empty-inputs": (lambda L: (L.ones(2, requires_grad=True) * 2).sum().backward(inputs=[]), RuntimeError),
    "clear-requires-grad-non-leaf": (lambda L: (L.ones(2, requires_grad=True) * 2).requires_grad_(False),
                                     RuntimeError),
    "retain-grad-no-grad": (lambda L: L.ones(2).retain_grad(), RuntimeError),
    "detach_-view": (lambda L: L.ones(3)[:2].detach_(), RuntimeError),
}
EXACT = {"unused", "input-no-grad", "non-scalar", "empty-inputs", "retain-grad-no-grad", "detach_-view"}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    fn, exc = ERRORS[name]
    with pytest.raises(exc) as ref:
        fn(torch)
    with pytest.raises(exc) as ours:
        fn(tidu)
    if name in EXACT:
        assert str(ours.value) == str(ref.value)
    else:
        assert str(ours.value).split()[:2] == str(ref.value).split()[:2]


def test_a_seed_of_another_shape_raises_pytorchs_error() -> None:
    for L in (torch, tidu):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match=rf"Mismatch in shape: grad_output\[0\] has a shape of {L.__name__}\.Size\("
                                               rf"\[3\]\) and output\[0\] has a shape of {L.__name__}\.Size\(\[2\]\)\."):
            (x * 2).backward(L.ones(3))


# --- grad mode ---------------------------------------------------------------------------------------
def test_grad_mode_context_managers_and_decorators() -> None:
    for L in (tidu, torch):
        x = L.ones(2, requires_grad=True)

        @L.no_grad()
        def f(t: Any) -> Any:
            return t * 2

        @L.enable_grad()
        def g(t: Any) -> Any:
            return t * 2

        @L.set_grad_enabled(False)
        def h(t: Any) -> Any:
            return t * 2

        assert L.is_grad_enabled()
        assert not f(x).requires_grad and not h(x).requires_grad
        with L.no_grad():
            assert g(x).requires_grad and not (x * 2).requires_grad
            with L.enable_grad():
                assert (x * 2).requires_grad
            with L.set_grad_enabled(True):
                assert (x * 2).requires_grad
            assert not L.is_grad_enabled()
        L.set_grad_enabled(False)
        assert not L.is_grad_enabled()
        L.set_grad_enabled(True)
        assert L.is_grad_enabled()


def test_inference_mode_matches_torch() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        x = L.ones(2, requires_grad=True)

        @L.inference_mode()
        def f(t: Any) -> Any:
            return t * 2

        @L.inference_mode
        def g(t: Any) -> Any:
            return t * 2

        assert not L.is_inference_mode_enabled()
        assert not f(x).requires_grad and not g(x).requires_grad
        with L.inference_mode():
            assert L.is_inference_mode_enabled() and not L.is_grad_enabled()
            assert not (x * 2).requires_grad
            with L.inference_mode(False):  # leaves it: grad mode on again
                assert not L.is_inference_mode_enabled() and (x * 2).requires_grad
            assert not (x * 2).requires_grad
        with L.no_grad(), L.inference_mode(False):
            assert not L.is_inference_mode_enabled() and (x * 2).requires_grad
        assert L.is_grad_enabled() and not L.is_inference_mode_enabled()


@pytest.mark.smoke
def test_grad_mode_is_per_thread() -> None:
    results = {}
    entered, release = threading.Event(), threading.Event()

    def worker() -> None:
        x = tidu.ones(2, requires_grad=True)
        with tidu.no_grad():
            entered.set()
            release.wait(5)
            results["worker"] = (x * 2).requires_grad
        results["worker-after"] = (x * 2).requires_grad

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    results["main"] = (tidu.ones(2, requires_grad=True) * 2).requires_grad  # main thread unaffected
    release.set()
    thread.join()
    assert results == {"worker": False, "worker-after": True, "main": True}


def test_in_place_write_into_view_under_grad_is_exact() -> None:
    """A write into a view of a big-magnitude base keeps exact values (no base + (v - base) rounding)."""
    x = tidu.tensor([1e8, 3.0, 5.0], requires_grad=True)
    b = x * 1
    b[0:1].copy_(tidu.tensor([1.0]))
    assert b.tolist() == [1.0, 3.0, 5.0]
    b.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_grads_of_different_leaves_never_share_memory() -> None:
    a = tidu.ones(2, 2, requires_grad=True)
    b = tidu.ones(4, requires_grad=True)
    c = tidu.ones(4, requires_grad=True)
    ((a.reshape(4) + b + c) * tidu.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    b.grad.zero_()
    assert a.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]] and c.grad.tolist() == [1.0, 2.0, 3.0, 4.0]
