"""Diagonals against PyTorch: values, dtypes and gradients, views where PyTorch's are views,
the index lists, and PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both

# name -> (lib -> fn, operand shapes)
CASES: dict[str, tuple[Callable, list]] = {
    "diagonal": (lambda L: lambda x: x.diagonal(), [(3, 3), (3, 5), (5, 3), T(4, 3), (0, 3)]),
    "diagonal-offset": (lambda L: lambda x: x.diagonal(2), [(3, 5), (4, 4), (2, 2)]),
    "diagonal-negative": (lambda L: lambda x: L.diagonal(x, -1), [(4, 3), (3, 3)]),
    "diagonal-dims": (lambda L: lambda x: x.diagonal(1, 2, 0), [(3, 4, 5), (2, 0, 2)]),
    "diagonal-negative-dims": (lambda L: lambda x: x.diagonal(-2, -1, -3), [(4, 2, 5)]),
    "diagonal-too-far": (lambda L: lambda x: x.diagonal(7), [(3, 3)]),
    "diag-of-vector": (lambda L: lambda x: L.diag(x), [(3,), (0,), (1,)]),
    "diag-of-vector-offset": (lambda L: lambda x: x.diag(-2), [(3,)]),
    "diag-of-matrix": (lambda L: lambda x: L.diag(x, 1), [(3, 4), T(4, 3)]),
    "diag_embed": (lambda L: lambda x: L.diag_embed(x), [(3,), (2, 3), (2, 0)]),
    "diag_embed-offset": (lambda L: lambda x: L.diag_embed(x, 2), [(2, 3)]),
    "diag_embed-negative": (lambda L: lambda x: x.diag_embed(-1, 0, 2), [(2, 3)]),
    "diag_embed-dims": (lambda L: lambda x: L.diag_embed(x, 1, -1, 0), [(4, 2, 3)]),
    "diagflat": (lambda L: lambda x: L.diagflat(x), [(2, 2), ()]),
    "diagflat-offset": (lambda L: lambda x: L.diagflat(x, -1), [(3,)]),
    "trace": (lambda L: lambda x: x.trace(), [(3, 3), (2, 4), T(4, 2)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shape", [pytest.param(n, s, id=f"{n}-{Arg(s) if isinstance(s, tuple) else s!r}")
                                        for n, (_, shapes) in CASES.items() for s in shapes])
def test_diagonal_ops_match_torch(name: str, shape: Any, dtype: str) -> None:
    make = CASES[name][0]
    run_both(make(tidu), make(torch), [shape if isinstance(shape, Arg) else Arg(shape)], dtype)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.arange(9, dtype=L.int32).reshape(3, 3).trace(),
    lambda L: L.diag(L.tensor([True, False])),
    lambda L: L.diag_embed(L.tensor([[1, 2]]), 1),
    lambda L: L.arange(12).reshape(3, 4).diagonal(-1),
])
def test_integer_and_bool_dtypes(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_diagonal_is_a_view_and_diag_a_copy_as_in_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.arange(12.0).reshape(3, 4)
        x.diagonal(1).mul_(10)
        L.diag(x).fill_(-1)
        np.testing.assert_array_equal(x.numpy(), [[0, 10, 2, 3], [4, 5, 60, 7], [8, 9, 10, 110]])


def test_write_through_diagonal_is_differentiable() -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = L.zeros(3, 3)
        x.diagonal().copy_(w * w)
        (x * L.arange(9.0).reshape(3, 3)).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


@pytest.mark.parametrize("args", [(3, 4), (4, 3, 1), (3, 3, -2), (0, 3), (3, 0, 5), (1, 1, -3)])
@pytest.mark.parametrize("which", ["tril_indices", "triu_indices"])
def test_triangle_indices_match_torch(which: str, args: tuple) -> None:
    ours, ref = getattr(tidu, which)(*args), getattr(torch, which)(*args)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    assert getattr(tidu, which)(3, 3, dtype=tidu.int32).dtype is tidu.int32


@pytest.mark.parametrize("call", [
    "L.zeros(3).diagonal()", "L.zeros(2, 2).diagonal(0, 1, 1)", "L.zeros(2, 2).diagonal(0, 0, 2)",
    "L.diag(L.zeros(2, 2, 2))", "L.trace(L.zeros(3))", "L.diag_embed(L.zeros(2), 0, 0, 0)",
    "L.tril_indices(-1, 2)", "L.triu_indices(2, -3)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_second_derivative_through_diag_embed_and_trace_matches_torch() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        v = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
        m = L.diag_embed(v * v, 1)
        y = L.trace(m @ m.T + L.diag_embed(v.sin(), -1))
        (g,) = L.autograd.grad(y, v, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), v)
        out.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1])
