"""``cumprod`` and ``logcumsumexp`` against PyTorch at the edges: an infinite or NaN first
element, and the backward of empty tensors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu

_INF, _NAN = float("inf"), float("nan")


@pytest.mark.parametrize("data,dim", [
    ([_INF, 2.0, 3.0], 0), ([-_INF], 0), ([-_INF, 0.5, -2.0], 0), ([_INF, 0.0, 2.0], 0), ([_NAN, 2.0], 0),
    ([[_INF, 2.0], [1.0, -_INF]], 0), ([[_INF, 2.0], [1.0, -_INF]], 1), ([[2.0, _INF], [-_INF, 3.0]], -1),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cumprod_of_an_infinite_first_element_matches_torch(data: list, dim: int, dtype: str) -> None:
    ours = tidu.cumprod(tidu.tensor(np.array(data, dtype)), dim)
    ref = torch.cumprod(torch.tensor(np.array(data, dtype)), dim)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_cumprod_gradient_at_an_infinite_first_element_is_exact() -> None:
    """d/dx0 of sum(cumprod([x0, 2, 3])) is 1 + 2 + 6 at any x0 (PyTorch's divides and gives NaN)."""
    x = tidu.tensor([_INF, 2.0, 3.0], requires_grad=True)
    tidu.cumprod(x, 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [9.0, _INF, _INF])


@pytest.mark.parametrize("call", [lambda L, x, d: L.cumprod(x, d), lambda L, x, d: x.logcumsumexp(d),
                                  lambda L, x, d: L.cumprod(x, d, dtype=L.float64)])
@pytest.mark.parametrize("shape,dim", [((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((0,), 0), ((2, 0, 3), -1)])
def test_backward_of_empty_tensors_matches_torch(call: Callable, shape: tuple, dim: int) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.zeros(*shape, requires_grad=True)
        y = call(L, x, dim)
        (g,) = L.autograd.grad(y.sum(), x)
        out.append((tuple(y.shape), str(y.dtype).split(".")[-1], tuple(g.shape), str(g.dtype).split(".")[-1]))
    assert out[1] == out[0]


def test_empty_cumprod_has_second_derivatives() -> None:
    x = tidu.zeros(0, 3, dtype=tidu.float64, requires_grad=True)
    assert tidu.autograd.gradgradcheck(lambda t: tidu.cumprod(t, 0), (x,))
