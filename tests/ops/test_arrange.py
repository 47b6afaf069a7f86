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


# ``as_strided``: (size, stride, storage_offset) per case, applied to the operand (a fresh tensor,
# or a transposed view of one (``T``), read at its own layout in the storage)
STRIDED = [
    ((5,), ((3, 3), (1, 1))),  # overlapping windows
    ((2, 3), ((2, 2, 2), (0, 1, 3), 1)),  # a zero stride, an offset
    (T(3, 2), ((2, 2), (1, 2), 1)),
    (T(3, 2), ((3, 2), (1, 3))),  # the transpose's own layout
    ((2, 3), ((6,), (1,))),
    ((4, 3), ((0, 3), (1, 2), 5)),  # nothing read
    ((3,), ((), (), 2)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("operand,layout", STRIDED, ids=[str(i) for i in range(len(STRIDED))])
def test_as_strided_matches_torch(operand: Any, layout: tuple, dtype: str) -> None:
    def fn(x: Any) -> Any:
        return x.as_strided(*layout) ** 2  # nonlinear, so the gradient reads the values too

    run_both(fn, None, [operand if isinstance(operand, Arg) else Arg(operand)], dtype)


def _strided_programs(L: Any) -> dict[str, Callable]:  # noqa: N803 - the library
    return {
        # an overlapping input: its elements that share a location divide the gradient there
        "expanded": lambda x: x.expand(3, 4).as_strided((2, 3), (1, 1)),
        # locations outside the input (x[1:3] covers 1 and 2 of 0..3) are constants
        "outside": lambda x: x[1:3].as_strided((4,), (1,), 0) * L.arange(1.0, 5.0, dtype=x.dtype),
        "offset-kept": lambda x: x[1:].as_strided((2, 2), (1, 1)),  # the view's own offset, 1
        "of-a-view": lambda x: x.t()[1:].as_strided((2, 2), (2, 1), 1).exp(),
        "twice": lambda x: x.as_strided((3, 2), (1, 1)).as_strided((2, 2), (1, 1), 1),
        "nonleaf": lambda x: (x * 2).as_strided((2, 2), (1, 0), 1).sin(),
    }


@pytest.mark.parametrize("name", list(_strided_programs(tidu)))
def test_as_strided_programs_grads_match_torch(name: str) -> None:
    data = np.random.default_rng(1).uniform(-1, 1, (4,) if name in ("expanded", "twice", "nonleaf", "outside") else (3, 4))
    grads = {}
    for L in (tidu, torch):  # noqa: N806 - the library
        x = L.tensor(data, requires_grad=True)
        out = _strided_programs(L)[name](x)
        w = L.tensor(np.random.default_rng(2).uniform(-1, 1, tuple(out.shape)))
        (g,) = L.autograd.grad((out * out * w).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), x)  # second order
        grads[L.__name__] = [t.detach().numpy() for t in (out, g, gg)]
    for ours, ref in zip(grads["tidu"], grads["torch"]):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


def test_as_strided_gradcheck_to_second_order() -> None:
    x = tidu.tensor(np.random.default_rng(2).uniform(-1, 1, (3, 4)), requires_grad=True)

    def fn(x: Any) -> Any:
        return x.t().as_strided((3, 3), (1, 2), 2).tanh() * x.expand(2, 3, 4).as_strided((3, 3), (1, 1), 3)

    assert tidu.autograd.gradcheck(fn, (x,))
    assert tidu.autograd.gradgradcheck(fn, (x,))


def _version(t: Any) -> int:
    return t._version if isinstance(t, torch.Tensor) else t._version.value  # tidu's counter is an object


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_as_strided_is_a_view_as_in_torch(device: str) -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        on = device if L is tidu else "cpu"
        base = L.arange(12.0, device=on).reshape(3, 4)
        view = base.t().as_strided((2, 3), (4, 1), 2)
        assert view.stride() == (4, 1) and view.storage_offset() == 2
        assert view.data_ptr() == base.data_ptr() + 2 * base.element_size()

        before = _version(base)
        view[1, 2] = -1.0  # through the view into the base ...
        base[0, 3] = -2.0  # ... and from the base into the view
        assert _version(base) == _version(view) == before + 2
        np.testing.assert_array_equal(base.cpu().numpy().reshape(-1), [0, 1, 2, -2, 4, 5, 6, 7, -1, 9, 10, 11])
        np.testing.assert_array_equal(view.cpu().numpy(), [[2, -2, 4], [6, 7, -1]])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_as_strided_write_through_view_in_graph_matches_torch(device: str) -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        on = device if L is tidu else "cpu"
        x = L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True, device=on)
        y = x * 1.0
        y.as_strided((2, 2), (3, 1), 1).mul_(L.tensor([[2.0, 3.0], [4.0, 5.0]], device=on))
        (y * L.arange(6.0, device=on)).sum().backward()
        grads.append((y.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for ref, ours in zip(*grads):
        np.testing.assert_array_equal(ours, ref)


def test_as_strided_overlapping_windows_refuse_writes() -> None:
    """PyTorch runs this write, its result depending on the order of the writes (its overlap check
    catches zero strides only); tidu refuses every view whose elements overlap, as for an expanded
    tensor (docs/guides/pytorch-differences.md)."""
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tidu.arange(6.0).as_strided((2, 2), (1, 1)).mul_(2)


def test_as_strided_grad_fn_dtype_and_integers() -> None:
    x = tidu.zeros(4, requires_grad=True)
    assert x.as_strided((2,), (2,)).grad_fn is not None
    for L in (torch, tidu):  # noqa: N806 - the library
        out = L.arange(6, dtype=L.int32).as_strided((2, 2), (1, 2), 1)
        assert str(out.dtype).endswith("int32")
        np.testing.assert_array_equal(out.numpy(), [[1, 3], [2, 4]])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_as_strided_on_cuda_matches_cpu(device: str) -> None:
    rng = np.random.default_rng(3)
    data = rng.uniform(-1, 1, (3, 4))
    results = []
    for on in ("cpu", device):
        x = tidu.tensor(data, requires_grad=True, device=on)
        out = x.t().as_strided((3, 3), (1, 1), 2).pow(3) * x.expand(2, 3, 4).as_strided((3,), (0,), 5)
        (g,) = tidu.autograd.grad(out.sum(), x, create_graph=True)
        (gg,) = tidu.autograd.grad((g * g).sum(), x)
        _, tangent = tidu.func.jvp(lambda x: x.as_strided((2, 3), (1, 2)) ** 2, (x.detach(),), (x.detach() + 1,))
        assert out.device.type == g.device.type == on
        results.append([t.detach().cpu().numpy() for t in (out, g, gg, tangent)])
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    "L.arange(6.0).as_strided((2, 3), (3, 1), 1)", "L.arange(6.0).as_strided((2,), (-1,))",
    "L.arange(6.0).as_strided((2,), (1,), -1)", "L.arange(6.0).as_strided((2, 3), (1,))",
    "L.arange(6.0).as_strided((-1,), (1,))", "L.arange(6.0).as_strided((2, 2), (0, 1), 5)",
    "L.arange(6, dtype=L.float64)[2:].as_strided((5,), (1,))",
    "L.arange(6.0).as_strided((3,), (0,)).add_(1)",
    "L.as_strided([1.0], (1,), (1,))",
])
def test_as_strided_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message="L.as_strided([" not in call)


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
