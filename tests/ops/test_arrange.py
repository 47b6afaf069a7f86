"""Stacking, splitting, tiling, turning and ``diff`` against PyTorch: values, dtypes,
gradients, views where PyTorch's are views, and PyTorch's errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both


def _joined(L: Any, parts: Any) -> Any:  # noqa: N803 - L is the library
    """One tensor from several outputs, each weighted differently (so that grads tell them apart)."""
    return L.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


# name -> (lib -> fn, operand shapes per case)
CASES: dict[str, tuple[Callable, list]] = {
    "hstack": (lambda L: lambda a, b: L.hstack([a, b]), [[(2, 3), (2, 1)], [(3,), ()], [T(3, 2), (2, 2)]]),
    "vstack": (lambda L: lambda a, b: L.vstack((a, b)), [[(3,), (2, 3)], [(), (1,)], [(2, 2, 2), (1, 2, 2)]]),
    "row_stack": (lambda L: lambda a, b: L.row_stack([a, b]), [[(3,), (3,)]]),
    "dstack": (lambda L: lambda a, b: L.dstack([a, b]), [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()]]),
    "column_stack": (lambda L: lambda a, b: L.column_stack([a, b]), [[(3,), (3, 2)], [(), (1, 1)]]),
    "atleast_1d": (lambda L: lambda a: L.atleast_1d(a), [[()], [(2, 3)]]),
    "atleast_2d": (lambda L: lambda a, b: _joined(L, L.atleast_2d(a, b)), [[(), (3,)]]),
    "atleast_3d": (lambda L: lambda a, b, c: _joined(L, L.atleast_3d([a, b, c])), [[(), (3,), (2, 3)]]),
    "meshgrid-ij": (lambda L: lambda a, b, c: _joined(L, L.meshgrid(a, b, c, indexing="ij")), [[(2,), (3,), ()]]),
    "meshgrid-xy": (lambda L: lambda a, b, c: _joined(L, L.meshgrid([a, b, c], indexing="xy")), [[(2,), (3,), (4,)]]),
    "tile": (lambda L: lambda x: x.tile((2, 1, 3)), [[(2, 3)], [()], [T(3, 2)]]),
    "tile-short": (lambda L: lambda x: L.tile(x, (2,)), [[(2, 3)]]),
    "repeat_interleave": (lambda L: lambda x: x.repeat_interleave(2), [[(2, 3)], [()]]),
    "repeat_interleave-dim": (lambda L: lambda x: L.repeat_interleave(x, L.tensor([1, 0, 3]), dim=1), [[(2, 3)]]),
    "repeat_interleave-one": (lambda L: lambda x: x.repeat_interleave(L.tensor([2]), dim=0), [[(2, 3)]]),
    "tensor_split": (lambda L: lambda x: _joined(L, x.tensor_split(3, 1)), [[(2, 7)], [(2, 2)], [T(5, 2)]]),
    "tensor_split-indices": (lambda L: lambda x: _joined(L, L.tensor_split(x, [1, -2, 9])), [[(5, 2)]]),
    "hsplit": (lambda L: lambda x: _joined(L, x.hsplit(2)), [[(2, 4)], [(6,)]]),
    "vsplit": (lambda L: lambda x: _joined(L, L.vsplit(x, [1, 2])), [[(4, 2)]]),
    "dsplit": (lambda L: lambda x: _joined(L, x.dsplit(2)), [[(1, 2, 4)]]),
    "rot90": (lambda L: lambda x: x.rot90(), [[(2, 3)], [(2, 3, 4)]]),
    "rot90-k": (lambda L: lambda x: L.rot90(x, 2), [[(2, 3)]]),
    "rot90-negative": (lambda L: lambda x: x.rot90(-1, [2, 0]), [[(2, 3, 4)]]),
    "rot90-full": (lambda L: lambda x: x.rot90(4), [[(2, 3)]]),
    "fliplr": (lambda L: lambda x: x.fliplr(), [[(2, 3)], [T(3, 2)]]),
    "flipud": (lambda L: lambda x: L.flipud(x), [[(2, 3)], [(3,)]]),
    "diff": (lambda L: lambda x: x.diff(), [[(2, 5)], [(1,)]]),
    "diff-n-dim": (lambda L: lambda x: L.diff(x, 2, 0), [[(4, 3)], [(2, 3)]]),
    "diff-prepend-append": (lambda L: lambda x, p, a: L.diff(x, 1, -1, p, a), [[(2, 3), (2, 1), (2, 2)]]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shapes", [pytest.param(n, s, id=f"{n}-{'-'.join(map(repr, map(Arg, s)))}"
                                         if all(isinstance(a, tuple) for a in s) else f"{n}-{i}")
                                         for n, (_, cases) in CASES.items() for i, s in enumerate(cases)])
def test_arrange_ops_match_torch(name: str, shapes: list, dtype: str) -> None:
    make = CASES[name][0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run_both(make(tidu), make(torch), [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.repeat_interleave(L.tensor([2, 0, 1])),
    lambda L: L.tensor([[True, False]]).repeat_interleave(2, dim=1),
    lambda L: L.hstack([L.tensor([1, 2]), L.tensor([3.0])]),
    lambda L: L.diff(L.tensor([True, True, False, False])),
    lambda L: L.diff(L.tensor([1, 4, 9, 16], dtype=L.int32), 2),
    lambda L: L.arange(6).reshape(2, 3).rot90(3).tile((2,)),
    lambda L: L.column_stack([L.tensor(1), L.tensor([2])]),
])
def test_integer_and_bool_dtypes(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_meshgrid_without_indexing_warns_as_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        with pytest.warns(UserWarning, match="indexing argument"):
            x, y = L.meshgrid(L.tensor([1, 2]), L.tensor([3, 4, 5]))
        assert tuple(x.shape) == (2, 3)


def test_splits_and_meshgrid_are_views_as_in_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.zeros(2, 6)
        x.tensor_split(3, 1)[1].fill_(1.0)
        x.hsplit([5])[1].fill_(2.0)
        g, _ = L.meshgrid(x[0], L.zeros(2), indexing="xy")
        assert tuple(g.shape) == (2, 6)
        np.testing.assert_array_equal(x.numpy(), [[0, 0, 1, 1, 0, 2], [0, 0, 1, 1, 0, 2]])


@pytest.mark.parametrize("call", [
    "L.hstack(L.zeros(2))", "L.vstack([])", "L.meshgrid(L.zeros(2, 2), indexing='ij')",
    "L.meshgrid(L.zeros(2), indexing='ji')", "L.meshgrid(L.zeros(2), L.zeros(2, dtype=L.float64), indexing='ij')",
    "L.zeros(2, 3).repeat_interleave(L.tensor([1, 2]), dim=1)", "L.zeros(3).repeat_interleave(-1)",
    "L.zeros(3).repeat_interleave(L.tensor([1.0]))", "L.zeros(2).repeat_interleave(2, output_size=3)",
    "L.zeros(3).tensor_split(0)", "L.tensor(1.0).tensor_split(2)", "L.zeros(2, 5).hsplit(2)",
    "L.zeros(4).vsplit(2)", "L.zeros(2, 2).dsplit(1)", "L.zeros(3).rot90()", "L.zeros(2, 2).rot90(1, [0, 0])",
    "L.zeros(2, 2).rot90(1, [0])", "L.zeros(3).fliplr()", "L.tensor(1.0).flipud()", "L.tensor(1.0).diff()",
    "L.zeros(3).diff(-1)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=call not in _MESSAGE_DIFFERS)


# where PyTorch's message comes from its argument parser or names its C++ types, the class is compared
_MESSAGE_DIFFERS = {"L.hstack(L.zeros(2))", "L.meshgrid(L.zeros(2, 2), indexing='ij')"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim,size,step", [((10,), 0, 3, 2), ((10,), 0, 4, 3), ((3, 4), 1, 2, 2), ((3, 4), 0, 2, 1),
                                                 ((2, 5, 3), -2, 5, 1), ((4, 6), 1, 1, 4), ((), 0, 1, 1)])
def test_tensor_unfold_matches_torch(shape: tuple, dim: int, size: int, step: int, dtype: str) -> None:
    run_both(lambda x: x.unfold(dim, size, step), None, [Arg(shape)], dtype)


def test_tensor_unfold_tiling_windows_are_views_as_in_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.zeros(2, 6)
        x.unfold(1, 3, 3)[:, 1].fill_(1.0)
        np.testing.assert_array_equal(x.numpy(), [[0, 0, 0, 1, 1, 1]] * 2)


@pytest.mark.parametrize("call", ["L.arange(10.0).unfold(0, 11, 1)", "L.arange(10.0).unfold(0, 3, 0)",
                                  "L.arange(10.0).unfold(1, 2, 1)"])
def test_tensor_unfold_errors_match_torch(call: str) -> None:
    assert_same_error(call)


# --- block_diag, cartesian_prod, combinations -----------------------------------------------------------
SET_CASES: dict[str, tuple[Callable, list]] = {
    "block_diag": (lambda L: lambda a, b, c: L.block_diag(a, b, c), [Arg((2, 3)), Arg(()), Arg((2,))]),
    "cartesian_prod": (lambda L: lambda a, b, c: L.cartesian_prod(a, b, c), [Arg((2,)), Arg((3,)), Arg((2,))]),
    "combinations": (lambda L: lambda a: L.combinations(a, 3), [Arg((4,))]),
    "combinations-replacement": (lambda L: lambda a: L.combinations(a, with_replacement=True), [Arg((3,))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(SET_CASES))
def test_set_products_match_torch(name: str, dtype: str) -> None:
    make, args = SET_CASES[name]
    run_both(make(tidu), make(torch), args, dtype)


@pytest.mark.parametrize("name", list(SET_CASES))
def test_set_products_match_finite_differences(name: str) -> None:
    make, args = SET_CASES[name]
    leaves = [tidu.tensor(np.random.default_rng(5).uniform(-1, 1, a.shape), requires_grad=True) for a in args]
    assert tidu.autograd.gradcheck(make(tidu), leaves)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.block_diag(), lambda L: L.block_diag(L.tensor([[1, 2]]), L.tensor(3.0), L.tensor([4, 5])),
    lambda L: L.block_diag(L.ones(0, 2), L.ones(2, 0, dtype=L.int64)), lambda L: L.cartesian_prod(L.tensor([1, 2])),
    lambda L: L.combinations(L.tensor([1, 2, 3]), r=0), lambda L: L.combinations(L.tensor([1, 2]), r=3),
])
def test_set_product_values_match_torch(lib_fn: Callable) -> None:
    out, ref = lib_fn(tidu), lib_fn(torch)
    assert str(out.dtype)[5:] == str(ref.dtype)[6:] and tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize("call", [
    "L.block_diag(L.ones(1, 1, 1))", "L.cartesian_prod(L.ones(2, 2))", "L.combinations(L.ones(2, 2))",
    "L.combinations(L.ones(2), -1)",
])
def test_set_product_errors_match_torch(call: str) -> None:
    assert_same_error(call)
