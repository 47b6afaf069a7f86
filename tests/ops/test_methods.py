"""The in-place forms of ``tidu/ops/methods.py`` against PyTorch: PyTorch's other names and their
in-place forms, the in-place view ops (``t_``, ``squeeze_``...: shape, strides, version, graph),
``fill_diagonal_``, the top-level ``torch.exp_(x)`` forms, and the leaf errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

_X = np.array([[0.5, -1.5, 2.0], [-0.25, 3.0, 1.0]])


def _same(ours: Any, ref: Any) -> None:
    if isinstance(ref, torch.Tensor):
        assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
        assert tuple(ours.shape) == tuple(ref.shape)
        np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-6, equal_nan=True)
    elif isinstance(ref, tuple | list):
        assert len(ours) == len(ref)
        for a, b in zip(ours, ref):
            _same(a, b)
    else:
        assert ours == ref


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.divide(L.tensor([7, -7]), 2, rounding_mode="floor"),
    lambda L: L.tensor(_X).divide(3),
    lambda L: L.multiply(L.tensor(_X), L.tensor([1, 2, 3])),
    lambda L: L.subtract(L.tensor(_X), 1, alpha=2),
    lambda L: L.tensor(_X).subtract(L.tensor(_X), alpha=0.5),
    lambda L: L.rsub(L.tensor(_X), 3),
    lambda L: L.rsub(L.tensor([1, 2]), 1.5),
    lambda L: L.rsub(L.tensor(_X), L.tensor([1.0, 2.0, 3.0]), alpha=2),
    lambda L: L.greater(L.tensor(_X), 0.5), lambda L: L.tensor(_X).greater_equal(1.0),
    lambda L: L.greater_equal(L.tensor([1, 2]), 2), lambda L: L.less_equal(L.tensor([1, 2]), 1),
    lambda L: L.less(L.tensor(_X), 0.5), lambda L: L.tensor(_X).less_equal(1.0),
    lambda L: L.not_equal(L.tensor([1, 2]), 2),
    lambda L: L.arcsinh(L.tensor(_X)), lambda L: L.tensor(_X / 4).arctanh(), lambda L: L.arctanh(L.tensor(_X / 3)), lambda L: L.arccosh(L.tensor(_X) + 2),
    lambda L: L.fix(L.tensor(_X)), lambda L: L.tensor([-2, 0, 5]).fix(),
    lambda L: L.sgn(L.tensor([-2.0, 0.0, 3.0])), lambda L: L.tensor([-2, 0, 5]).sgn(),
    lambda L: L.tensor([-2.0, 0.0, 3.0]).sgn_(),
    lambda L: L.split_with_sizes(L.arange(5), [2, 3]), lambda L: L.arange(6).reshape(2, 3).split_with_sizes([1, 2], 1),
    lambda L: L.fill(L.ones(2, 3, dtype=L.int64), 2.7), lambda L: L.fill(L.ones(2), L.tensor(3.0, dtype=L.float64)),
    lambda L: L.scalar_tensor(3), lambda L: L.scalar_tensor(2.5, dtype=L.float64), lambda L: L.scalar_tensor(True),
    lambda L: L.asarray([1, 2]), lambda L: L.asarray(3.0), lambda L: L.asarray(np.arange(3.0), dtype=L.float32),
    lambda L: L.range(0, 3), lambda L: L.range(1, 2, 0.1), lambda L: L.range(0, 10, 3.5),
    lambda L: L.range(0.5, 3, dtype=L.int64), lambda L: L.range(5, 0, -2),
])
def test_other_names_match_torch(lib_fn: Callable) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(lib_fn(tidu), lib_fn(torch))


def test_range_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        tidu.range(0, 2)


def test_asarray_and_detach_share_memory() -> None:
    a = np.zeros(3)
    t = tidu.asarray(a)
    a[0] = 1.0
    assert t[0].item() == 1.0
    assert tidu.asarray(a, copy=True)._buf is not a
    x = tidu.ones(2, requires_grad=True)
    assert tidu.asarray(x) is x
    d = tidu.detach(x)
    assert not d.requires_grad and np.shares_memory(d.numpy(), x.detach().numpy())
    with pytest.raises(ValueError, match="can't alias"):
        tidu.asarray([1.0], copy=False)
    assert tidu.asarray([1.0, 2.0], requires_grad=True).requires_grad


# name -> (args, data transform so the op is defined)
_INPLACE = {
    "arcsinh_": ((), None), "arccosh_": ((), lambda x: x * x + 1.5), "arctanh_": ((), lambda x: x / 4),
    "fix_": ((), None), "cumsum_": ((1,), None), "divide_": ((2.0,), None),
    "multiply_": (("other",), None), "subtract_": (("other",), None), "true_divide_": (("other",), None),
    "exp_": ((), None), "log_": ((), lambda x: x * x + 0.5), "sqrt_": ((), lambda x: x * x + 0.5),
    "rsqrt_": ((), lambda x: x * x + 0.5), "square_": ((), None), "reciprocal_": ((), None), "clip_": ((-1.0, 1.0),),
    "erfc_": ((), None), "deg2rad_": ((), None), "frac_": ((), None), "log10_": ((), lambda x: x * x + 0.5),
}


@pytest.mark.parametrize("name", list(_INPLACE))
def test_in_place_forms_match_torch_with_gradients(name: str) -> None:
    """tidu's in-place form against PyTorch's out-of-place op (PyTorch has no derivative for
    ``asinh_``, ``acosh_`` and ``atanh_``; tidu's are those of the op)."""
    args, *fix = _INPLACE[name]
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor(_X, requires_grad=True)
        other = L.tensor([[1.0, 2.0, -3.0], [0.5, 4.0, 1.5]], dtype=L.float64)
        x = w * 1.5
        if fix and fix[0] is not None:
            x = fix[0](x)
        call_args = [other if a == "other" else a for a in args]
        if L is torch:
            x = getattr(x, name[:-1])(*call_args)
        else:
            version = x._version.value
            assert getattr(x, name)(*call_args) is x
            assert x._version.value == version + 1
        (x * L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=L.float64)).sum().backward()
        out.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-12)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12)


def test_in_place_comparison_aliases_cast_to_the_tensor_dtype() -> None:
    for name in ("greater_", "greater_equal_", "less_", "less_equal_", "not_equal_"):
        got = [getattr(L.tensor([1.0, 2.0, 3.0]), name)(2).numpy() for L in (torch, tidu)]  # noqa: N806
        np.testing.assert_array_equal(got[1], got[0])


@pytest.mark.parametrize("name", ["exp_", "sigmoid_", "clamp_", "fix_", "arcsinh_", "fill_", "zero_", "nan_to_num_",
                                  "xlogy_", "trunc_"])
def test_top_level_in_place_functions(name: str) -> None:
    args = {"clamp_": (-0.5, 0.5), "fill_": (2.0,), "xlogy_": (3.0,)}.get(name, ())
    got = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(_X)
        assert getattr(L, name)(x, *args) is x
        got.append(x.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-7)


@pytest.mark.parametrize("call", [
    lambda x: x.t_(), lambda x: x.transpose_(0, -1), lambda x: x.swapaxes_(1, 0), lambda x: x.swapdims_(0, 1),
    lambda x: x.unsqueeze_(1), lambda x: x.unsqueeze_(-1), lambda x: x[:, :1].squeeze_(),
    lambda x: x.unsqueeze(0).squeeze_(0), lambda x: x.reshape(2, 1, 3).squeeze_((1, 2)),
    lambda x: x[0].t_(), lambda x: x.t()[1:].squeeze_(),
])
def test_in_place_view_ops_match_torch(call: Callable) -> None:
    """Shape, strides, storage (a write after the op reaches the base) and the gradient through
    the tensor the op changed."""
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        base = L.tensor(_X)
        x = call(base)
        x.mul_(2)  # through the new strides into the shared storage
        w = L.tensor(_X, requires_grad=True)
        y = call(w * 1.0)
        weight = L.arange(float(y.numel()), dtype=L.float64).reshape(tuple(y.shape))
        (y * weight).sum().backward()
        out.append((tuple(x.shape), x.stride(), base.numpy().copy(), w.grad.numpy()))
    assert out[1][:2] == out[0][:2]
    np.testing.assert_array_equal(out[1][2], out[0][2])
    np.testing.assert_array_equal(out[1][3], out[0][3])


def test_in_place_view_op_of_a_view_writes_through_to_the_graph() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor(_X, requires_grad=True)
        y = w * 1.0
        v = y[1]
        v.unsqueeze_(0)
        v.mul_(L.tensor([[3.0, 4.0, 5.0]], dtype=L.float64))
        (y * y).sum().backward()
        out.append((y.detach().numpy(), w.grad.numpy(), tuple(v.shape)))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])
    assert out[1][2] == out[0][2]


def test_saved_tensor_changed_by_an_in_place_view_op_fails_at_backward() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor(_X, requires_grad=True)
        y = w * 2
        z = (y * y).sum()
        y.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.backward()


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 2), True), ((7, 2), True), ((7, 2), False),
                                        ((2, 5), False), ((2, 2, 2), False)])
def test_fill_diagonal_matches_torch(shape: tuple, wrap: bool) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.ones(*shape, dtype=L.float64, requires_grad=True)
        y = w * 2
        assert y.fill_diagonal_(-1.5, wrap=wrap) is y
        (y * L.arange(float(y.numel()), dtype=L.float64).reshape(shape)).sum().backward()
        out.append((y.detach().numpy(), w.grad.numpy()))
    np.testing.assert_array_equal(out[1][0], out[0][0])
    np.testing.assert_array_equal(out[1][1], out[0][1])


@pytest.mark.parametrize("call", [
    "L.ones(3).fill_diagonal_(1)", "L.ones(2, 3, 4).fill_diagonal_(1)", "L.ones(2, 3, 4).t_()",
    "L.ones(2, requires_grad=True).t_()", "L.ones(2, requires_grad=True).unsqueeze_(0)",
    "L.ones(2, 2, requires_grad=True).fill_diagonal_(0)", "L.ones(2, requires_grad=True).exp_()",
    "L.ones(2).squeeze_(3)", "L.ones(2, 3).transpose_(0, 2)",
    "L.split_with_sizes(L.arange(5), [2, 2])", "L.arange(5).split_with_sizes([2, 4])",
    "L.ones(2, dtype=L.int64).sqrt_()", "L.fill(L.ones(2), L.ones(2))",
    "L.range(0, 3, 0)", "L.range(3, 0)",
])
def test_errors_match_torch(call: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(call)


def test_distances_at_top_level_match_torch() -> None:
    a, b = np.random.default_rng(0).normal(size=(2, 3, 4))
    for name, kwargs in (("cosine_similarity", {"dim": 0}), ("pairwise_distance", {"p": 1.5})):
        out = getattr(tidu, name)(tidu.tensor(a), tidu.tensor(b), **kwargs)
        ref = getattr(torch, name)(torch.tensor(a), torch.tensor(b), **kwargs)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
