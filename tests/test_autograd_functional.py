"""``tidu.autograd.functional`` against ``torch.autograd.functional``: results, their nesting,
``create_graph`` (results in the inputs' graph), ``strict`` and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _f_one(L: Any) -> Callable:  # noqa: N803 - L is the library
    return lambda x: (x.sin() * x).sum()


def _f_two(L: Any) -> Callable:  # noqa: N803
    return lambda x, y: (x * y.tanh() + x * x).sum()


def _g_vec(L: Any) -> Callable:  # noqa: N803
    return lambda x: x * x.exp()


def _g_two_out(L: Any) -> Callable:  # noqa: N803
    return lambda x, y: ((x * y.sin()).sum(), x * 2 + y)


_X, _Y = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.75])


def _run(L: Any, call: Callable) -> Any:  # noqa: N803
    AF = L.autograd.functional  # noqa: N806 - PyTorch's module
    x, y = L.tensor(_X, dtype=L.float64), L.tensor(_Y, dtype=L.float64)
    return call(L, AF, x, y)


CALLS = {
    "vjp": lambda L, AF, x, y: AF.vjp(_g_vec(L), x, y),
    "vjp-scalar-no-v": lambda L, AF, x, y: AF.vjp(_f_one(L), x),
    "vjp-tuples": lambda L, AF, x, y: AF.vjp(_g_two_out(L), (x, y), (L.tensor(2.0, dtype=L.float64), y)),
    "jvp": lambda L, AF, x, y: AF.jvp(_g_vec(L), x, y),
    "jvp-tuples": lambda L, AF, x, y: AF.jvp(_g_two_out(L), (x, y), (y, x)),
    "jacobian": lambda L, AF, x, y: AF.jacobian(_g_vec(L), x),
    "jacobian-tuples": lambda L, AF, x, y: AF.jacobian(_g_two_out(L), (x, y)),
    "jacobian-matrix": lambda L, AF, x, y: AF.jacobian(lambda a: a.reshape(3, 1) @ a.reshape(1, 3), x),
    "jacobian-vectorized": lambda L, AF, x, y: AF.jacobian(_g_vec(L), x, vectorize=True, strategy="forward-mode"),
    "jacobian-unused": lambda L, AF, x, y: AF.jacobian(lambda a, b: a * 2, (x, y)),
    "hessian": lambda L, AF, x, y: AF.hessian(_f_one(L), x),
    "hessian-tuples": lambda L, AF, x, y: AF.hessian(_f_two(L), (x, y)),
    "vhp": lambda L, AF, x, y: AF.vhp(_f_one(L), x, y),
    "hvp": lambda L, AF, x, y: AF.hvp(_f_two(L), (x, y), (y, x)),
}


def _flat(value: Any) -> list:
    if isinstance(value, tuple | list):
        return [("tuple", len(value))] + [item for v in value for item in _flat(v)]
    return [value]


@pytest.mark.parametrize("name", list(CALLS))
def test_results_and_nesting_match_torch(name: str) -> None:
    ours, ref = _flat(_run(tidu, CALLS[name])), _flat(_run(torch, CALLS[name]))
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        if isinstance(b, tuple):
            assert a == b
            continue
        assert tuple(a.shape) == tuple(b.shape) and not a.requires_grad and not b.requires_grad
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


def test_create_graph_keeps_the_results_in_the_inputs_graph() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        AF = L.autograd.functional  # noqa: N806
        x = L.tensor(_X, dtype=L.float64, requires_grad=True)
        _, g = AF.vjp(_g_vec(L), x * 1.0, L.ones(3, dtype=L.float64), create_graph=True)
        h = AF.hessian(_f_one(L), x, create_graph=True)
        _, hv = AF.hvp(_f_one(L), x, L.ones(3, dtype=L.float64), create_graph=True)
        assert g.requires_grad and h.requires_grad and hv.requires_grad
        (dx,) = L.autograd.grad(g.sum() + h.sum() + hv.sum(), x)
        out.append(dx.numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


@pytest.mark.parametrize("call", [
    "AF.vjp(lambda a: a * 2, x)",
    "AF.jacobian(lambda a: y * 2, x, strict=True)",
    "AF.jacobian(lambda a, b: a * 2, (x, y), strict=True)",
    "AF.hvp(lambda a: a * 2, x, L.ones(3))",
    "AF.vjp(lambda a: a.sum(), x, L.ones(2))",
    "AF.vjp(lambda a: a * 2, x, (L.ones(3), L.ones(3)))",
    "AF.jacobian(lambda a: a, x, strategy='sideways')",
    "AF.jacobian(lambda a: a, x, strategy='forward-mode')",
    "AF.vjp(lambda a: a, [x, 1.0])",
    "AF.vjp(lambda a, b: a * 2, (x, y), x, strict=True)", "AF.jvp(lambda a, b: a * 2, (x, y), (x, y), strict=True)",
    "AF.hessian(lambda a, b: (a * 2).sum(), (x, y), strict=True)",
    "AF.vhp(lambda a, b: (a * 2).sum(), (x, y), (x, y), strict=True)", "AF.jvp(lambda a: a * 2, x, (x, x))",
    "AF.hessian(lambda a: a, x)", "AF.hessian(lambda a: (y * 2).sum(), x, strict=True)",
    "AF.jvp(lambda a: y * 2, x, x, strict=True)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"AF": L.autograd.functional, "x": L.ones(3), "y": L.ones(3)}, same_message=call not in _MESSAGE_DIFFERS)


# PyTorch's messages here: its type error names its classes, its size error prints torch.Size, its
# strategy assertion is a tuple of strings, and "isonly" lacks a space
_MESSAGE_DIFFERS = {
    "AF.vjp(lambda a: a, [x, 1.0])", "AF.vjp(lambda a: a.sum(), x, L.ones(2))",
    "AF.jacobian(lambda a: a, x, strategy='sideways')", "AF.jacobian(lambda a: a, x, strategy='forward-mode')",
}
