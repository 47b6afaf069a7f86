"""cumprod, cummax/cummin and logcumsumexp against PyTorch: values, indices (ties, NaN), dtypes,
gradients with zeros to second order, stability, errors."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, run_both

_ROWS = np.array([[1.0, 3.0, 3.0, 2.0, math.nan, 5.0, math.nan],
                  [-1.0, -1.0, 0.0, -math.inf, math.inf, 2.0, 2.0]])


@pytest.mark.parametrize("call", [
    lambda L, x: L.cummax(x, 1), lambda L, x: L.cummin(x, 1), lambda L, x: x.cummax(0), lambda L, x: x.cummin(-1),
    lambda L, x: L.cumprod(x, 1), lambda L, x: L.logcumsumexp(x, 1), lambda L, x: x.logcumsumexp(0),
    lambda L, x: L.cummax(x.nan_to_num(), 1),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_indices_match_torch(call: Callable, dtype: str) -> None:
    ours, ref = call(tidu, tidu.tensor(_ROWS.astype(dtype))), call(torch, torch.tensor(_ROWS.astype(dtype)))
    for a, b in zip(ours, ref) if isinstance(ref, tuple) else [(ours, ref)]:
        assert str(a.dtype) == str(b.dtype).replace("torch", "tidu")
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("data", [[3, 1, 3, 0, 2, 3], [True, False, True]])
def test_integer_and_bool_inputs(data: list) -> None:
    for call in (lambda L, x: L.cumprod(x, 0), lambda L, x: L.cummax(x, 0), lambda L, x: x.cummin(0),
                 lambda L, x: L.cumprod(x, 0, dtype=L.float64)):
        ours, ref = call(tidu, tidu.tensor(data)), call(torch, torch.tensor(data))
        for a, b in zip(ours, ref) if isinstance(ref, tuple) else [(ours, ref)]:
            assert str(a.dtype) == str(b.dtype).replace("torch", "tidu")
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_logcumsumexp_is_stable_where_exp_overflows() -> None:
    x = np.array([-1000.0, 1000.0, 999.0, -math.inf, 1e4])
    np.testing.assert_allclose(tidu.logcumsumexp(tidu.tensor(x), 0).numpy(),
                               torch.logcumsumexp(torch.tensor(x), 0).numpy(), rtol=1e-12)
    x = tidu.tensor([-800.0, 0.0, 700.0], dtype=tidu.float64, requires_grad=True)
    tidu.logcumsumexp(x, 0).sum().backward()
    y = torch.tensor([-800.0, 0.0, 700.0], dtype=torch.float64, requires_grad=True)
    torch.logcumsumexp(y, 0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-12)


GRAD_CASES: dict[str, tuple[Callable, list]] = {
    "cumprod": (lambda L: lambda x: L.cumprod(x, 1), [Arg((3, 4))]),
    "cumprod-dim0": (lambda L: lambda x: x.cumprod(0), [Arg((4, 3), transposed=True)]),
    "logcumsumexp": (lambda L: lambda x: L.logcumsumexp(x, 1), [Arg((2, 5), low=-5.0, high=5.0)]),
    "cummax": (lambda L: lambda x: L.cummax(x, 1).values, [Arg((3, 5))]),
    "cummin": (lambda L: lambda x: x.cummin(0).values, [Arg((5, 2))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradients_match_torch(name: str, dtype: str) -> None:
    make, args = GRAD_CASES[name]
    run_both(make(tidu), make(torch), args, dtype)


@pytest.mark.parametrize("row", [[2.0, 0.0, 3.0, 4.0], [0.0, 0.0, 3.0, -1.0], [1.5, -2.0, 0.5, 0.0],
                                 [0.0, 2.0, 0.0, 5.0]])
def test_cumprod_derivatives_with_zeros_match_torch(row: list) -> None:
    """First and second derivatives with one and two zeros (PyTorch's gradient there is exact)."""
    out = []
    weights = [1.0, -2.0, 0.5, 3.0]
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(row, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad((L.cumprod(x, 0) * L.tensor(weights, dtype=L.float64)).sum(), x, create_graph=True)
        (h,) = L.autograd.grad((g * L.tensor(weights[::-1], dtype=L.float64)).sum(), x)
        out.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12)


def test_cumprod_in_place_matches_torch() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([[0.5, 2.0, -1.0], [0.0, 3.0, 2.0]], dtype=L.float64, requires_grad=True)
        x = w * 1.0
        assert x.cumprod_(1) is x
        (x * L.tensor([1.0, -2.0, 3.0], dtype=L.float64)).sum().backward()
        out.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0])
    np.testing.assert_allclose(out[1][1], out[0][1])


def test_cummax_gradient_goes_to_the_indexed_ties() -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([1.0, 3.0, 3.0, 2.0, 3.0], requires_grad=True)
        L.cummax(x, 0).values.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_zero_dim_and_empty_inputs() -> None:
    for call in (lambda L, x: L.cumprod(x, 0), lambda L, x: L.logcumsumexp(x, -1), lambda L, x: L.cummax(x, 0)[1]):
        for data in (2.5, np.zeros((0, 3))):
            ours, ref = call(tidu, tidu.tensor(data)), call(torch, torch.tensor(data))
            assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == str(ref.dtype).replace("torch", "tidu")
            np.testing.assert_allclose(ours.numpy(), ref.numpy())


@pytest.mark.parametrize("call,exc", [
    (lambda L: L.cumprod(L.tensor([1.0]), 1), IndexError),
    (lambda L: L.cummax(L.tensor([[1.0]]), 2), IndexError),
    (lambda L: L.logcumsumexp(L.tensor([1.0]), 0.5), TypeError),
    (lambda L: L.cumprod([1.0], 0), TypeError),
    (lambda L: L.logcumsumexp(L.tensor([1, 2]), 0), NotImplementedError),
])
def test_errors_match_torch(call: Callable, exc: type) -> None:
    with pytest.raises(exc):
        call(torch)
    with pytest.raises(exc):
        call(tidu)
