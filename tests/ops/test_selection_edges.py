"""``scatter_reduce``/``index_reduce`` (``prod``, ``amax``, ``amin``) against PyTorch where
infinities, NaNs, zeros and ties meet: values, gradients, second derivatives and forward mode;
``take_along_dim``'s wrapped indices, scatters into 0-d tensors and ``index_reduce``'s errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

_INF, _NAN = float("inf"), float("nan")


def _reduce(L, x, idx, s, reduce: str, include_self: bool, by_index: bool):  # noqa: ANN001, ANN202, N803
    with warnings.catch_warnings():  # PyTorch's index_reduce is in beta and says so
        warnings.simplefilter("ignore")
        if by_index:
            return L.index_reduce(x, 0, L.tensor(idx), s, reduce, include_self=include_self)
        return x.scatter_reduce(0, L.tensor(idx), s, reduce, include_self=include_self)


def _derivatives(L, x, idx, s, reduce, include_self, by_index, second=True) -> list:  # noqa: ANN001, N803
    """The result, the gradients of ``sum(w * out)`` and, when ``second``, the gradients of a
    weighted sum of those (or PyTorch's error message for the second)."""
    xs = L.tensor(x, dtype=L.float64, requires_grad=True)
    ss = L.tensor(s, dtype=L.float64, requires_grad=True)
    out = _reduce(L, xs, idx, ss, reduce, include_self, by_index)
    w = L.tensor(np.linspace(-1.0, 2.0, out.numel()).reshape(tuple(out.shape)), dtype=L.float64)
    gx, gs = L.autograd.grad((out * w).sum(), (xs, ss), create_graph=second)
    found = [out.detach().numpy(), gx.detach().numpy(), gs.detach().numpy()]
    if second:
        try:
            hx, hs = L.autograd.grad((gx * w).sum() + (gs * ss).sum(), (xs, ss), allow_unused=True)
            found += [np.zeros(np.shape(x)) if hx is None else hx.numpy(),
                      np.zeros(np.shape(s)) if hs is None else hs.numpy()]
        except RuntimeError as e:
            found.append(str(e))
    return found


def _assert_all_same(ours: list, ref: list) -> None:
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        if isinstance(b, str):
            assert a == b
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, equal_nan=True)


# (input, index, src, reduce, include_self, through index_reduce)
CASES = {
    "amax-from-minus-inf": ([-_INF, -_INF], [0, 0, 1, 1], [1.0, 5.0, 2.0, 4.0], "amax", False, False),
    "amin-from-inf": ([_INF, _INF], [0, 1, 1, 0], [1.0, 5.0, 2.0, 4.0], "amin", False, True),
    "amax-inf-chosen": ([1.0, 2.0], [0, 0, 1], [_INF, 5.0, -_INF], "amax", True, False),
    "amin-minus-inf-chosen": ([1.0, 2.0], [0, 0, 1], [_INF, 5.0, -_INF], "amin", True, False),
    "amax-inf-tie": ([_INF, 0.0], [0, 0], [_INF, 3.0], "amax", True, True),
    "amax-nan-in-src": ([1.0, 1.0, 2.0], [1, 1], [_NAN, 4.0], "amax", True, False),
    "amax-nan-in-src-excluded-self": ([1.0, 1.0, 2.0], [1, 1], [_NAN, 4.0], "amax", False, False),
    "amax-nan-self-unwritten": ([_NAN, 1.0, 2.0], [1, 1], [3.0, 4.0], "amax", True, False),
    "prod-nan-self-excluded": ([1.0, _NAN], [1], [3.0], "prod", False, True),
    "prod-nan-self-included": ([1.0, _NAN], [0], [3.0], "prod", True, False),
    "prod-inf-self-excluded": ([_INF, 3.0], [0, 1], [2.0, 5.0], "prod", False, False),
    "prod-inf-self": ([_INF, 3.0], [0, 1], [2.0, 5.0], "prod", True, True),
    "prod-inf-src-and-zero": ([2.0, 3.0], [0, 0, 1], [_INF, 2.0, 0.0], "prod", True, False),
    "prod-zero-self-inf-src": ([0.0, 3.0], [0, 0, 1], [_INF, 2.0, 5.0], "prod", True, False),
    "prod-one-zero-excluded-self": ([2.0, 3.0], [0, 0, 1], [0.0, 4.0, 5.0], "prod", False, False),
    "prod-zero-self-excluded": ([0.0, 3.0], [0, 0, 1], [1.0, 4.0, 5.0], "prod", False, True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_non_finite_values_match_torch_to_second_order(name: str) -> None:
    """An infinity or NaN where it is not the chosen value passes no NaN on; where it is, the
    gradients are PyTorch's formulas' (NaN where PyTorch's are)."""
    x, idx, s, reduce, include_self, by_index = CASES[name]
    _assert_all_same(_derivatives(tidu, x, idx, s, reduce, include_self, by_index),
                     _derivatives(torch, x, idx, s, reduce, include_self, by_index))


@pytest.mark.parametrize("by_index", [False, True])
@pytest.mark.parametrize("reduce", ["amax", "amin"])
def test_excluded_self_equal_to_the_result_counts_as_a_tie(reduce: str, by_index: bool) -> None:
    """PyTorch's backward counts ``input`` in the ties even when ``include_self=False``."""
    for L in (torch, tidu):  # noqa: N806 - the library
        x, s = L.ones(2, requires_grad=True), L.ones(3, requires_grad=True)
        _reduce(L, x, [0, 0, 1], s, reduce, False, by_index).sum().backward()
        np.testing.assert_allclose(s.grad.numpy(), [1 / 3, 1 / 3, 1 / 2], rtol=1e-6)
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])
    _assert_all_same(_derivatives(tidu, [1.0, 2.0, 0.0], [0, 0, 1, 2], [1.0, 0.5, 2.0, -1.0], reduce, False, by_index),
                     _derivatives(torch, [1.0, 2.0, 0.0], [0, 0, 1, 2], [1.0, 0.5, 2.0, -1.0], reduce, False, by_index))


@pytest.mark.parametrize("by_index", [False, True])
def test_double_backward_with_two_zeros_in_a_place_raises_torchs_error(by_index: bool) -> None:
    first = [_derivatives(L, [2.0, 3.0], [0, 0, 1], [0.0, 0.0, 2.0], "prod", True, by_index) for L in (tidu, torch)]
    assert isinstance(first[1][-1], str) and "Double backward is unsupported" in first[1][-1]
    _assert_all_same(*first)


@pytest.mark.parametrize("seed", range(4))
def test_random_specials_match_torch(seed: int) -> None:
    """Small random cases drawn from zeros, ties, infinities and NaNs, both functions, all three
    reductions, with and without ``input``: values and two orders of derivatives."""
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, 1.0, 2.0, -1.0, 0.5, _INF, -_INF, _NAN])
    for _ in range(25):
        n, k = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        x = rng.choice(pool[:5], n)
        s = rng.choice(pool[:5], k)
        for a in (x, s):
            special = rng.random(a.shape) < 0.25
            a[special] = rng.choice(pool, int(special.sum()))
        args = (x, rng.integers(0, n, k), s, str(rng.choice(["prod", "amax", "amin"])), bool(rng.integers(2)),
                bool(rng.integers(2)))
        _assert_all_same(_derivatives(tidu, *args), _derivatives(torch, *args))


def test_prod_second_derivatives_pass_gradgradcheck() -> None:
    rng = np.random.default_rng(0)
    x = tidu.tensor(rng.uniform(0.5, 2.0, (3, 2)), requires_grad=True)
    s = tidu.tensor(rng.uniform(0.5, 2.0, (4, 2)), requires_grad=True)
    idx = tidu.tensor([[0, 1], [0, 2], [2, 2], [0, 1]])
    for include_self in (True, False):
        def fn(a, b):  # noqa: ANN001, ANN202
            return a.scatter_reduce(0, idx, b, "prod", include_self=include_self)  # noqa: B023
        assert tidu.autograd.gradcheck(fn, (x, s))
        assert tidu.autograd.gradgradcheck(fn, (x, s))


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_forward_mode_applies_torchs_reverse_mode_jacobian(reduce: str, include_self: bool) -> None:
    """``jvp`` is the transpose of the backward, so the Jacobian PyTorch's backward defines (its own
    forward mode differs: zero for ``prod``, ``amax`` ties counted without ``input``)."""
    x = np.array([[2.0, 0.0, 1.0], [3.0, 3.0, 0.0]])
    s = np.array([[2.0, 0.0, 2.0, 5.0], [3.0, 0.0, 0.0, 3.0]])
    idx = [[0, 1, 0, 2], [0, 2, 2, 1]]
    tx, ts = np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.linspace(2.0, -1.0, 8).reshape(2, 4)

    def fn(L):  # noqa: ANN001, ANN202, N803
        return lambda a, b: a.scatter_reduce(1, L.tensor(idx), b, reduce, include_self=include_self)

    jx, js = torch.autograd.functional.jacobian(fn(torch), (torch.tensor(x), torch.tensor(s)))
    ref = jx.reshape(6, 6) @ torch.tensor(tx).reshape(6) + js.reshape(6, 8) @ torch.tensor(ts).reshape(8)
    _, ours = tidu.func.jvp(fn(tidu), (tidu.tensor(x), tidu.tensor(s)), (tidu.tensor(tx), tidu.tensor(ts)))
    np.testing.assert_allclose(ours.numpy().reshape(6), ref.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dim,index", [(1, [[-1], [5], [-9]]), (0, [[-1, 3, 4, 100]]), (1, [[7, -4, 0, 2]]),
                                       (0, [[-100]])])
def test_take_along_dim_wraps_indices_as_torch(dim: int, index: list) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4).requires_grad_()
        y = L.take_along_dim(x, L.tensor(index), dim=dim)
        (y * L.arange(1.0, y.numel() + 1, dtype=L.float64).reshape(tuple(y.shape))).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.scatter(L.tensor(5.0), 0, L.tensor(0), L.tensor(7.0)),
    lambda L: L.scatter(L.tensor(5.0), -1, L.tensor([0]), L.tensor([7.0])),
    lambda L: L.tensor(5.0).scatter(0, L.tensor([0, 0]), L.tensor([7.0, 8.0])),
    lambda L: L.scatter(L.tensor(5.0), 0, L.tensor(0), 7.0),
    lambda L: L.scatter(L.tensor(5.0), 0, L.tensor(0), 3.0, reduce="multiply"),
    lambda L: L.scatter_reduce(L.tensor(5.0), 0, L.tensor(0), L.tensor(7.0), "amax"),
    lambda L: L.scatter_reduce(L.tensor(5.0), 0, L.tensor([0, 0]), L.tensor([7.0, 9.0]), "prod", include_self=False),
    lambda L: L.scatter_reduce(L.tensor(5.0), 0, L.tensor(0), L.tensor(7.0), "mean"),
    lambda L: L.take_along_dim(L.tensor(3.0), L.tensor(0)),
])
def test_zero_dim_targets_match_torch(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_zero_dim_scatter_reduce_gradients_match_torch() -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(5.0, dtype=L.float64, requires_grad=True)
        s = L.tensor([7.0, 2.0], dtype=L.float64, requires_grad=True)
        L.scatter_reduce(x, 0, L.tensor([0, 0]), s, "prod").backward()
        grads.append((x.grad.numpy(), s.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call", [
    "L.index_reduce(L.tensor([1.0, 2.0]), 0, L.tensor([5]), L.tensor([3.0]), 'prod')",
    "L.index_reduce(L.tensor([1.0, 2.0]), 0, L.tensor([-1]), L.tensor([3.0]), 'amax')",
    "L.index_reduce(L.tensor([[1.0, 2.0]]), 1, L.tensor([2]), L.tensor([[3.0]]), 'mean')",
    "L.index_reduce(L.tensor(1.0), 0, L.tensor([1]), L.tensor(3.0), 'amin')",
    "L.take_along_dim(L.ones(1, 3), L.tensor([[1]], dtype=L.int32), dim=1)",
    "L.take_along_dim(L.ones(1, 3), L.tensor([[1.0]]), dim=1)",
    "L.take_along_dim(L.zeros(2, 0), L.tensor([[1]]), dim=1)",
    "L.take_along_dim(L.tensor(3.0), L.tensor(0), dim=-1)",
    "L.scatter(L.tensor(5.0), 0, L.tensor([[0]]), L.tensor([[7.0]]))",
    "L.scatter(L.tensor(5.0), 0, L.tensor([0]), L.tensor([[7.0]]))",
    "L.scatter_reduce(L.tensor(5.0), 0, L.tensor([[0]]), L.tensor([[7.0]]), 'amax')",
])
def test_errors_match_torch(call: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(call)
