"""Autograd: backward, .grad accumulation, retain_graph, create_graph, grad modes, in-place checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import grad


def leaf(*values: float, dtype=tidu.float64) -> tidu.Tensor:  # noqa: ANN001
    return tidu.tensor(list(values) if len(values) != 1 else values[0], dtype=dtype, requires_grad=True)


# --- backward and .grad ----------------------------------------------------------------------
@pytest.mark.smoke
def test_backward_accumulates_into_grad_with_retain_graph() -> None:
    x = leaf(1.0, 2.0)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    assert x.grad.tolist() == [2.0, 4.0]
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    assert x.grad.grad_fn is None and not x.grad.requires_grad


def test_backward_twice_without_retain_graph_raises() -> None:
    x = leaf(1.0, 2.0)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_non_scalar_backward_needs_a_gradient() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_backward_with_explicit_gradient() -> None:
    x = leaf(1.0, 2.0, 3.0)
    (x * x).backward(gradient=tidu.tensor([1.0, 0.5, -1.0], dtype=tidu.float64))
    assert x.grad.tolist() == [2.0, 2.0, -6.0]
    x2 = leaf(1.0, 2.0)
    tidu.autograd.backward([x2 * 3], [tidu.tensor([1.0, 2.0], dtype=tidu.float64)])
    assert x2.grad.tolist() == [3.0, 6.0]


def test_backward_gradient_shape_mismatch_raises() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="shape"):
        (x * x).backward(gradient=tidu.ones(3, dtype=tidu.float64))


def test_backward_of_tensor_not_requiring_grad_raises() -> None:
    x = tidu.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x * 2).sum().backward()
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.tensor([1.0]).sum().backward()


def test_is_leaf_and_grad_fn() -> None:
    x = leaf(1.0, 2.0)
    c = tidu.tensor([1.0])
    assert x.is_leaf and x.grad_fn is None
    assert c.is_leaf and c.grad_fn is None
    y = x * x
    assert not y.is_leaf and y.requires_grad
    assert y.grad_fn is not None and y.grad_fn.name() == "mul"
    assert x.sum().grad_fn.name() == "reduce_sum"
    assert (c * 2).grad_fn is None and (c * 2).is_leaf
    assert x.detach().is_leaf and not x.detach().requires_grad


def test_requires_grad_on_integer_tensor_raises() -> None:
    with pytest.raises(RuntimeError, match="floating point"):
        tidu.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        tidu.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2], requires_grad=True)


def test_requires_grad_of_non_leaf_cannot_be_cleared() -> None:
    y = leaf(1.0) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False


def test_integer_results_do_not_require_grad() -> None:
    x = leaf(1.5, -2.0)
    assert not (x > 0).requires_grad
    assert not x.long().requires_grad


# --- grad modes ------------------------------------------------------------------------------
@pytest.mark.smoke
def test_grad_mode_context_managers() -> None:
    x = leaf(1.0)
    assert tidu.is_grad_enabled()
    with tidu.no_grad():
        assert not tidu.is_grad_enabled()
        assert not (x * 2).requires_grad
        with tidu.enable_grad():
            assert (x * 2).requires_grad
        assert not tidu.is_grad_enabled()
    assert tidu.is_grad_enabled()
    with tidu.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tidu.is_grad_enabled()
    tidu.set_grad_enabled(False)
    try:
        assert not tidu.is_grad_enabled()
    finally:
        tidu.set_grad_enabled(True)
    assert tidu.autograd.no_grad is tidu.no_grad


def test_grad_mode_decorators() -> None:
    x = leaf(1.0)

    @tidu.no_grad()
    def off() -> tidu.Tensor:
        return x * 2

    @tidu.enable_grad()
    def on() -> tidu.Tensor:
        return x * 2

    @tidu.set_grad_enabled(False)
    def off2() -> tidu.Tensor:
        return x * 2

    assert tidu.is_grad_enabled(), "decorating must not change the mode"
    assert not off().requires_grad and not off2().requires_grad
    with tidu.no_grad():
        assert on().requires_grad
    assert tidu.is_grad_enabled()


def test_grad_mode_restored_after_exception() -> None:
    with pytest.raises(ValueError):
        with tidu.no_grad():
            raise ValueError
    assert tidu.is_grad_enabled()


# --- autograd.grad and higher order ----------------------------------------------------------
@pytest.mark.smoke
def test_higher_order_of_cube() -> None:
    x = leaf(3.0)
    y = x**3
    expected = [27.0, 18.0, 6.0, 0.0]
    for order, want in enumerate(expected, start=1):
        (y,) = grad(y, x, create_graph=True, allow_unused=True, materialize_grads=True)
        assert y.item() == pytest.approx(want), f"order {order}"


def test_higher_order_of_sin_chain() -> None:
    """f = sin(2x): derivatives 2cos(2x), -4sin(2x), -8cos(2x), 16sin(2x)."""
    x0 = 0.7
    x = leaf(x0)
    y = tidu.sin(x * 2)
    want = [2 * math.cos(2 * x0), -4 * math.sin(2 * x0), -8 * math.cos(2 * x0), 16 * math.sin(2 * x0)]
    for order, w in enumerate(want, start=1):
        (y,) = grad(y, x, create_graph=True)
        assert y.item() == pytest.approx(w, rel=1e-12), f"order {order}"
        assert y.requires_grad


def test_higher_order_matches_torch() -> None:
    def f(lib, x):  # noqa: ANN001, ANN202
        return (lib.tanh(x) * x.exp()).sum()

    xs = [0.3, -0.8]
    x, xt = leaf(*xs), torch.tensor(xs, dtype=torch.float64, requires_grad=True)
    g, gt = f(tidu, x), f(torch, xt)
    for _ in range(3):
        (g,) = grad(g.sum(), x, create_graph=True)
        (gt,) = torch.autograd.grad(gt.sum(), xt, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-12)


def test_grad_returns_without_touching_dot_grad() -> None:
    x, y = leaf(2.0), leaf(5.0)
    gx, gy = grad(x * y + x, [x, y])
    assert (gx.item(), gy.item()) == (6.0, 2.0)
    assert x.grad is None and y.grad is None


def test_allow_unused() -> None:
    x, unused = leaf(2.0), leaf(1.0)
    with pytest.raises(RuntimeError, match="allow_unused"):
        grad(x * x, [x, unused])
    gx, gu = grad(x * x, [x, unused], allow_unused=True)
    assert gx.item() == 4.0 and gu is None
    _, gz = grad(x * x, [x, unused], materialize_grads=True)
    assert gz.item() == 0.0


def test_grad_of_input_not_requiring_grad_raises() -> None:
    x, c = leaf(2.0), tidu.tensor(1.0)
    with pytest.raises(RuntimeError, match="does not require grad"):
        grad(x * c, c)


def test_fan_out_accumulates() -> None:
    x = leaf(3.0)
    (x * x + x).backward()
    assert x.grad.item() == 7.0


def test_diamond() -> None:
    x = leaf(0.5)
    a = x.exp()
    b, c = a * 2, a.sin()
    (b * c).backward()
    e = math.exp(0.5)
    want = 2 * e * math.sin(e) + 2 * e * math.cos(e) * e  # d/dx [2 e^x sin(e^x)]
    assert x.grad.item() == pytest.approx(want, rel=1e-12)


def test_same_tensor_twice_in_one_op() -> None:
    x = leaf(1.5, -2.0)
    (x * x).sum().backward()
    assert x.grad.tolist() == [3.0, -4.0]
    x.grad = None
    (x - x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_retain_grad_keeps_intermediate_gradient() -> None:
    x = leaf(1.0, 2.0)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    assert h.grad is not None and h.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]


def test_backward_inputs_restricts_accumulation() -> None:
    x, y = leaf(2.0), leaf(3.0)
    (x * y).backward(inputs=[x])
    assert x.grad.item() == 3.0 and y.grad is None


def test_create_graph_backward_gives_differentiable_grad() -> None:
    x = leaf(2.0)
    (x**3).backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 12.0
    (g2,) = grad(x.grad, x)
    assert g2.item() == 12.0


# --- recorder --------------------------------------------------------------------------------
def test_recorder_prints_live_nodes() -> None:
    x = leaf(1.0, 2.0)
    y = x * x
    text = str(tidu.autograd.current_recorder())
    assert "mul" in text
    assert y.grad_fn in [tidu.eager.Trace(n) for n in tidu.autograd.current_recorder().live_nodes()]


# --- in-place --------------------------------------------------------------------------------
def test_inplace_on_leaf_requiring_grad_raises() -> None:
    x = leaf(1.0, 2.0)
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1)
    with pytest.raises(RuntimeError):
        torch.tensor([1.0], requires_grad=True).add_(1)


def test_inplace_under_no_grad_works_and_bumps_version() -> None:
    x = leaf(1.0, 2.0)
    v = x._version.value
    with tidu.no_grad():
        x.mul_(2).add_(1)
        x -= 1
    assert x.detach().tolist() == [2.0, 4.0]
    assert x._version.value == v + 3
    assert x.is_leaf and x.requires_grad and x.grad_fn is None


def test_inplace_on_plain_tensor() -> None:
    t = tidu.tensor([1.0, 2.0])
    t.add_(tidu.tensor([1.0, 1.0]), alpha=2).div_(2)
    assert t.tolist() == [1.5, 2.0]
    t.zero_()
    assert t.tolist() == [0.0, 0.0]


def test_modifying_a_saved_tensor_raises_at_backward() -> None:
    x = leaf(1.0, 2.0)
    w = tidu.tensor([3.0, 4.0], dtype=tidu.float64)  # no grad; saved by mul for d/dx
    y = (x * w).sum()
    with tidu.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_modifying_a_saved_tensor_through_detach_raises() -> None:
    x = leaf(1.0, 2.0)
    y = x.exp()  # saves its output
    z = y.sum()
    with tidu.no_grad():
        y.detach().mul_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


@pytest.mark.parametrize("create_graph", [False, True])
def test_grad_outputs_that_depend_on_the_inputs_are_constants_of_the_pass(create_graph) -> None:
    """Several outputs, one seed computed from the input: the pass computes sum_i J_i^T seed_i
    (no gradient flows into a seed's own graph); with create_graph the result is differentiable
    in the seeds, as in PyTorch."""

    def run(lib):
        b = lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64, requires_grad=True)
        u, w = lib.sin(b) * 2, b * b
        (g,) = lib.autograd.grad([u.sum(), w], [b], grad_outputs=[None, b * 1.5], create_graph=create_graph)
        if not create_graph:
            return [g.numpy()]
        (h,) = lib.autograd.grad((g * g).sum(), [b])
        return [g.detach().numpy(), h.numpy()]

    for got, ref in zip(run(tidu), run(torch)):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


# --- rules --------------------------------------------------------------------------------------
_exp_calls: list[int] = []
_counted_exp = tidu.Primitive("test_autograd_counted_exp")
_counted_exp.def_impl(lambda x: (_exp_calls.append(1), np.exp(x))[1])
_counted_exp.def_abstract_eval(lambda x: x)
_counted_exp.def_jvp(lambda dx, x, out: out * dx)

_scaled_exp = tidu.Primitive("test_autograd_scaled_exp")  # exp(x) * y
_scaled_exp.def_impl(lambda x, y: np.exp(x) * y)
_scaled_exp.def_abstract_eval(lambda x, y: x)
_scaled_exp.def_jvp(lambda dx, x, y, out: _counted_exp.bind(x) * y * dx, lambda dy, x, y, out: _counted_exp.bind(x) * dy)


@pytest.mark.parametrize("create_graph", [False, True])
def test_the_rules_of_one_call_compute_a_shared_primal_once(create_graph: bool) -> None:
    x, y = leaf(0.5, -1.0), leaf(2.0, 3.0)
    total = _scaled_exp.bind(x, y).sum()
    _exp_calls.clear()
    gx, gy = grad(total, [x, y], create_graph=create_graph)
    assert len(_exp_calls) == 1  # both rules bind exp(x): one kernel call
    np.testing.assert_allclose(gx.detach().numpy(), np.exp([0.5, -1.0]) * [2.0, 3.0])
    np.testing.assert_allclose(gy.detach().numpy(), np.exp([0.5, -1.0]))
