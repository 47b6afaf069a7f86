"""Forward mode: ``tidu.func.jvp`` against ``torch.func.jvp``; ``tidu.linearize``; forward-over-reverse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.func

import tidu


def _lib(x: Any) -> Any:
    return tidu if isinstance(x, tidu.Tensor) else torch


def _gelu(x: Any) -> Any:
    return tidu.gelu(x) if isinstance(x, tidu.Tensor) else torch.nn.functional.gelu(x)


# name: (function of tensors written once for both libraries, argument shapes)
FUNCS: dict[str, tuple[Callable, list[tuple]]] = {
    "elementwise-chain": (lambda x: (_lib(x).sin(x) * _lib(x).exp(x) + x * x).tanh(), [(2, 3)]),
    "two-inputs": (lambda x, y: x * y - y / (x * x + 1) + _lib(x).maximum(x, y), [(2, 3), (3,)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "batched-matmul": (lambda a, b: (a @ b).sum(dim=0), [(2, 2, 3), (3, 2)]),
    "sum-mean": (lambda x: x.sum(dim=1) * x.mean() + x.mean(dim=0, keepdim=True).sum(), [(3, 4)]),
    "gelu": (_gelu, [(5,)]),
    "gelu-mlp": (lambda x, w: _gelu(x @ w).sum(), [(4, 3), (3, 2)]),
    "scalar-out": (lambda x: (x.exp() * 2).sum(), [(3,)]),
    "shape-ops": (lambda x: x.t().reshape(-1).unsqueeze(0).expand(2, 6) * x.sum(), [(2, 3)]),
    "amax": (lambda x: x.amax(dim=1), [(2, 4)]),
}


def _args(shapes: list[tuple], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, size=s) for s in shapes]


@pytest.mark.parametrize("name", list(FUNCS))
def test_jvp_matches_torch(name: str) -> None:
    fn, shapes = FUNCS[name]
    primals, tangents = _args(shapes, 0), _args(shapes, 1)
    out, tout = tidu.func.jvp(fn, tuple(map(tidu.tensor, primals)), tuple(map(tidu.tensor, tangents)))
    ref, tref = torch.func.jvp(fn, tuple(map(torch.tensor, primals)), tuple(map(torch.tensor, tangents)))
    for a, b, what in ((out, ref, "primal"), (tout, tref, "tangent")):
        assert tuple(a.shape) == tuple(b.shape), what
        assert a.dtype.name == str(b.dtype).removeprefix("torch."), what
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=what)
    assert not out.requires_grad and not tout.requires_grad


def test_jvp_float32_and_single_tensor_arguments() -> None:
    x, t = np.array([0.1, 0.7], np.float32), np.array([1.0, -2.0], np.float32)
    out, tout = tidu.func.jvp(tidu.tanh, tidu.tensor(x), tidu.tensor(t))
    ref, tref = torch.func.jvp(torch.tanh, (torch.tensor(x),), (torch.tensor(t),))
    assert tout.dtype is tidu.float32
    np.testing.assert_allclose(tout.numpy(), tref.numpy(), rtol=1e-6)


def test_jvp_of_multiple_outputs() -> None:
    def f(x: Any) -> tuple:
        return x.sin(), (x * x).sum()

    out, (t1, t2) = tidu.func.jvp(
        f, (tidu.tensor([0.5, 1.0], dtype=tidu.float64),), (tidu.tensor([1.0, 2.0], dtype=tidu.float64),)
    )
    np.testing.assert_allclose(t1.numpy(), np.cos([0.5, 1.0]) * [1.0, 2.0], rtol=1e-14)
    assert t2.item() == pytest.approx(2 * 0.5 * 1.0 + 2 * 1.0 * 2.0)


def test_jvp_length_mismatch_raises() -> None:
    with pytest.raises(RuntimeError):
        tidu.func.jvp(tidu.sin, (tidu.tensor(1.0),), (tidu.tensor(1.0), tidu.tensor(2.0)))


def test_jvp_of_output_independent_of_input_is_zero() -> None:
    c = tidu.tensor([1.0, 2.0])
    _, t = tidu.func.jvp(lambda x: c * 2, (tidu.tensor([3.0, 4.0]),), (tidu.tensor([1.0, 1.0]),))
    assert t.tolist() == [0.0, 0.0]


@pytest.mark.smoke
def test_linearize_returns_outputs_and_printable_jvp_fn() -> None:
    x = tidu.tensor([3.0, 0.5], dtype=tidu.float64)
    out, jvp_fn = tidu.linearize(lambda a: a * a.sin(), x)
    np.testing.assert_allclose(out.numpy(), [3 * np.sin(3), 0.5 * np.sin(0.5)], rtol=1e-15)
    assert "mul" in str(jvp_fn.graph)
    t = tidu.tensor([1.0, 2.0], dtype=tidu.float64)
    want = (np.sin([3.0, 0.5]) + np.array([3.0, 0.5]) * np.cos([3.0, 0.5])) * [1.0, 2.0]
    np.testing.assert_allclose(jvp_fn(t).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(jvp_fn(t * 2).numpy(), 2 * want, rtol=1e-14)  # reusable and linear


def test_linearize_rejects_bad_tangents() -> None:
    _, jvp_fn = tidu.linearize(lambda a: a * a, tidu.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="shape"):
        jvp_fn(tidu.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError):
        jvp_fn(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 2.0]))


def test_forward_over_reverse_hessian_vector_product() -> None:
    """d/dv of grad(sum(x**3)) in direction v is 6 x v."""
    x0 = np.array([0.5, -1.0, 2.0])
    v = np.array([1.0, 0.25, -2.0])

    def gradient(x: tidu.Tensor) -> tidu.Tensor:
        (g,) = tidu.autograd.grad((x**3).sum(), x, create_graph=True)
        return g

    g, hvp = tidu.func.jvp(gradient, (tidu.tensor(x0),), (tidu.tensor(v),))
    np.testing.assert_allclose(g.detach().numpy(), 3 * x0**2, rtol=1e-14)
    np.testing.assert_allclose(hvp.detach().numpy(), 6 * x0 * v, rtol=1e-14)


def test_forward_over_reverse_matches_torch() -> None:
    x0, v = np.array([0.3, -0.4, 0.9]), np.array([1.0, -1.0, 0.5])

    def gradient(lib: Any) -> Callable:
        def g(x: Any) -> Any:
            loss = (lib.tanh(x) * x.exp()).sum() + (x @ x) * x.sum()
            return lib.autograd.grad(loss, x, create_graph=True)[0]

        return g

    _, hvp = tidu.func.jvp(gradient(tidu), (tidu.tensor(x0),), (tidu.tensor(v),))
    _, ref = torch.autograd.functional.hvp(
        lambda x: (torch.tanh(x) * x.exp()).sum() + (x @ x) * x.sum(), torch.tensor(x0), torch.tensor(v)
    )
    np.testing.assert_allclose(hvp.detach().numpy(), ref.numpy(), rtol=1e-12)


def test_forward_over_forward() -> None:
    """Second derivative of sin by nesting jvp: -sin(x)."""
    x0 = 0.9

    def dsin(x: tidu.Tensor) -> tidu.Tensor:
        return tidu.func.jvp(tidu.sin, (x,), (tidu.ones_like(x),))[1]

    _, second = tidu.func.jvp(
        dsin, (tidu.tensor(x0, dtype=tidu.float64),), (tidu.tensor(1.0, dtype=tidu.float64),)
    )
    assert second.item() == pytest.approx(-np.sin(x0), rel=1e-12)
