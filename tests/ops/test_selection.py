"""Selection and positional writes against PyTorch: ``nonzero``, ``masked_select``, ``take``,
``take_along_dim``, ``scatter``, ``index_add``/``index_copy``/``index_fill`` and their in-place
forms: values, dtypes, gradients and PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both

_IDX = [[0, 2, 1, 0], [2, 0, 0, 1]]  # no repeated target along dim 0 of a (3, 4)

# name -> (lib -> fn of float operands, operand shapes per case)
CASES: dict[str, tuple[Callable, list]] = {
    "masked_select": (lambda L: lambda x: x.masked_select(x > 0), [[(3, 4)], [T(4, 3)], [()]]),
    "masked_select-broadcast": (lambda L: lambda x: L.masked_select(x, L.tensor([True, False, True])), [[(2, 3)],
                                                                                                      [()]]),
    "take": (lambda L: lambda x: x.take(L.tensor([[0, -1], [5, 5]])), [[(2, 3)], [T(3, 2)]]),
    "take_along_dim": (lambda L: lambda x: L.take_along_dim(x, x.argsort(dim=1), dim=1), [[(3, 4)]]),
    "take_along_dim-broadcast": (lambda L: lambda x: x.take_along_dim(L.tensor([[2], [0]]), 1), [[(2, 3)], [(1, 3)]]),
    "take_along_dim-flat": (lambda L: lambda x: L.take_along_dim(x, L.tensor([0, 4, 4])), [[(2, 3)]]),
    "scatter": (lambda L: lambda x, s: x.scatter(0, L.tensor(_IDX), s), [[(3, 4), (2, 4)]]),
    "scatter-value": (lambda L: lambda x: L.scatter(x, 1, L.tensor([[1], [3], [0]]), 2.5), [[(3, 4)], [T(4, 3)]]),
    "index_add": (lambda L: lambda x, s: x.index_add(0, L.tensor([0, 0, 2]), s, alpha=2), [[(3, 2), (3, 2)]]),
    "index_add-dim": (lambda L: lambda x, s: L.index_add(x, -1, L.tensor([2, 0]), s), [[(2, 3), (2, 2)],
                                                                                     [T(3, 2), (2, 2)]]),
    "index_copy": (lambda L: lambda x, s: x.index_copy(0, L.tensor([2, 0]), s), [[(3, 2), (2, 2)]]),
    "index_copy-dim": (lambda L: lambda x, s: L.index_copy(x, 1, L.tensor([1]), s), [[(2, 3), (2, 1)]]),
    "index_fill": (lambda L: lambda x: x.index_fill(1, L.tensor([0, 2]), -1.0), [[(2, 3)], [T(3, 2)]]),
    "index_fill-tensor": (lambda L: lambda x, v: L.index_fill(x, 0, L.tensor([1]), v), [[(2, 3), ()]]),
    "count_nonzero-as-weight": (lambda L: lambda x: x * L.count_nonzero(x > 0, dim=0), [[(3, 4)]]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shapes", [pytest.param(n, s, id=f"{n}-{i}") for n, (_, cases) in CASES.items()
                                         for i, s in enumerate(cases)])
def test_selection_ops_match_torch(name: str, shapes: list, dtype: str) -> None:
    make = CASES[name][0]
    run_both(make(tidu), make(torch), [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


_A = np.array([[0.0, 1.5, -2.0, 0.0], [3.0, 0.0, 0.0, -1.0], [0.0, 0.0, 4.0, 0.0]])


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.tensor(_A).nonzero(),
    lambda L: L.nonzero(L.tensor(_A), as_tuple=True),
    lambda L: L.tensor(5).nonzero(),
    lambda L: L.tensor(0).nonzero(as_tuple=True),
    lambda L: L.zeros(0, 3).nonzero(),
    lambda L: L.argwhere(L.tensor([[True, False], [False, True]])),
    lambda L: L.tensor(_A).count_nonzero(),
    lambda L: L.count_nonzero(L.tensor(_A, dtype=L.int32), dim=(0, 1)),
    lambda L: L.tensor([1, 2, 3]).masked_select(L.tensor([True, False, True])),
    lambda L: L.arange(6).take(L.tensor([[5, -6]])),
    lambda L: L.zeros(3, dtype=L.int64).scatter(0, L.tensor([0, 0, 2]), L.tensor([4, 5, 6])),
    lambda L: L.zeros(3).scatter(0, L.tensor([0, 0, 1, 0]), L.tensor([1.0, 2.0, 3.0, 4.0])),
    lambda L: L.zeros(3, 4).scatter(1, L.tensor([[1], [3], [0]]), L.arange(15.0).reshape(3, 5)),  # src larger
    lambda L: L.ones(2, 2).scatter(0, L.tensor([[0, 0], [0, 1]]), L.full((2, 2), 3.0), reduce="add"),
    lambda L: L.zeros(2, 2, dtype=L.int32).index_add(1, L.tensor([1, 1]), L.ones(2, 2, dtype=L.int32)),
    lambda L: L.zeros(3, 2).index_copy(0, L.tensor([0, 0]), L.tensor([[1.0, 2.0], [3.0, 4.0]])),
    lambda L: L.ones(2, 2, dtype=L.bool).index_fill(0, L.tensor([1]), False),
])
def test_integer_bool_and_repeated_index_cases(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    ours, ref = (ours, ref) if isinstance(ref, tuple) else ((ours,), (ref,))
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert str(a.dtype).removeprefix("tidu.") == str(b.dtype).removeprefix("torch.")
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_in_place_forms_match_torch() -> None:
    outs = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([1.0, -2.0], requires_grad=True)
        x = L.zeros(3, 2) + 1
        x.scatter_(0, L.tensor([[2, 0]]), (w * 3).reshape(1, 2))
        x.index_add_(0, L.tensor([1]), (w * w).reshape(1, 2))
        x.index_copy_(1, L.tensor([0]), x[:, 1:] * 2)
        x.index_fill_(0, L.tensor([0]), 7.0)
        x.scatter_add_(1, L.tensor([[1], [1], [0]]), L.ones(3, 1))
        (x * L.arange(6.0).reshape(3, 2)).sum().backward()
        outs.append((x.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(outs[1][0], outs[0][0])
    np.testing.assert_allclose(outs[1][1], outs[0][1])


@pytest.mark.parametrize("call", [
    "x.masked_select(L.ones(3, 4))", "x.masked_select(L.ones(2, dtype=L.bool))", "x.take(L.tensor([12]))",
    "x.take(L.tensor([0.0]))", "L.take_along_dim(x, L.tensor([0]), dim=1)", "x.scatter(0, L.tensor([[5]]), 1.0)",
    "x.scatter(0, L.tensor([[1]]), L.ones(1, 1, dtype=L.float64))", "x.scatter(0, L.tensor([[1]]), 1.0, reduce='max')",
    "x.scatter(0, L.tensor([[0, 1, 2, 0, 1]]), L.ones(1, 5))", "x.index_add(0, L.tensor([0]), L.ones(1, 2))",
    "x.index_add(0, L.tensor([0]), L.ones(2))", "x.index_add(0, L.tensor([[0]]), L.ones(1, 4))",
    "x.index_add(0, L.tensor([5]), L.ones(1, 4))", "x.index_add(0, L.tensor([0]), L.ones(1, 4, dtype=L.float64))",
    "x.index_copy(0, L.tensor([0]), L.ones(4))", "x.index_copy(0, L.tensor([[0]]), L.ones(1, 4))",
    "x.index_copy(0, L.tensor([5]), L.ones(1, 4))", "x.index_copy(1, L.tensor([2]), L.ones(3, 2))",
    "x.index_copy(0, L.tensor([0]), L.ones(1, 2))", "x.index_fill(0, L.tensor([5]), 1.0)",
    "x.index_fill(0, L.tensor([0]), L.ones(2))",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"x": L.zeros(3, 4)}, same_message=call not in _MESSAGE_DIFFERS)


# PyTorch's message here names its internal kernels or argument parser; the class is compared
_MESSAGE_DIFFERS = {
    "x.masked_select(L.ones(2, dtype=L.bool))",  # tidu's names the op and both shapes too
    "x.take(L.tensor([0.0]))", "L.take_along_dim(x, L.tensor([0]), dim=1)",
    "x.scatter(0, L.tensor([[0, 1, 2, 0, 1]]), L.ones(1, 5))", "x.index_fill(0, L.tensor([0]), L.ones(2))",
}


# --- scatter_reduce, index_reduce, masked_scatter, put and the *_scatter embeddings ---------------------
_REPEATS = [[0, 1, 0, 1, 2], [1, 1, 0, 0, 2]]  # targets along dim 1 of a (2, 4), two of them repeated


def _scatter_reduce(reduce: str, include_self: bool) -> Callable:
    return lambda L: lambda x, s: x.scatter_reduce(1, L.tensor(_REPEATS), s, reduce, include_self=include_self)


WRITE_CASES: dict[str, tuple[Callable, list]] = {
    **{f"scatter_reduce-{r}-{inc}": (_scatter_reduce(r, inc), [(2, 4), (2, 5)])
       for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)},
    "index_reduce-prod": (lambda L: lambda x, s: x.index_reduce(0, L.tensor([0, 0, 2]), s, "prod"), [(3, 2), (3, 2)]),
    "index_reduce-amin": (lambda L: lambda x, s: L.index_reduce(x, 1, L.tensor([1, 1]), s, "amin", include_self=False),
                          [(2, 3), (2, 2)]),
    "index_reduce-mean": (lambda L: lambda x, s: x.index_reduce(0, L.tensor([1, 1, 0]), s, "mean"), [(2, 3), (3, 3)]),
    "masked_scatter": (lambda L: lambda x, s: x.masked_scatter(L.tensor([[True, False, True], [False, True, True]]), s),
                       [(2, 3), (5,)]),
    "masked_scatter-broadcast": (lambda L: lambda x, s: L.masked_scatter(x, L.tensor([True, False, True]), s),
                                 [(2, 3), (2, 3)]),
    "put": (lambda L: lambda x, s: x.put(L.tensor([0, 5, -2]), s), [(2, 3), (3,)]),
    "put-accumulate": (lambda L: lambda x, s: L.put(x, L.tensor([[0, 5], [0, 1]]), s, accumulate=True), [(2, 3), (2, 2)]),
    "select_scatter": (lambda L: lambda x, s: L.select_scatter(x, s, 1, -1), [(2, 3), (2,)]),
    "slice_scatter": (lambda L: lambda x, s: x.slice_scatter(s, 1, 1, None, 2), [(3, 4), (3, 2)]),
    "diagonal_scatter": (lambda L: lambda x, s: x.diagonal_scatter(s, 1), [(3, 4), (3,)]),
    "diagonal_scatter-dims": (lambda L: lambda x, s: L.diagonal_scatter(x, s, -1, 2, 0), [(3, 2, 3), (2, 2)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(WRITE_CASES))
def test_reducing_and_embedding_writes_match_torch(name: str, dtype: str) -> None:
    make, shapes = WRITE_CASES[name]
    run_both(make(tidu), make(torch), [Arg(s) for s in shapes], dtype)


@pytest.mark.parametrize("name", [n for n in WRITE_CASES if "put" in n or "scatter" in n])
def test_reducing_and_embedding_writes_match_finite_differences(name: str) -> None:
    fn = WRITE_CASES[name][0](tidu)
    rng = np.random.default_rng(1)
    args = [tidu.tensor(rng.uniform(-2, 2, s), requires_grad=True) for s in WRITE_CASES[name][1]]
    assert tidu.autograd.gradcheck(fn, args)


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
def test_scatter_reduce_at_ties_and_zeros_matches_torch(reduce: str) -> None:
    """``amax``/``amin`` split the gradient between equal elements; ``prod`` with one zero (or two)
    in a group passes the product of the others."""
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([[2.0, 0.0, 1.0], [3.0, 3.0, 0.0]], dtype=L.float64, requires_grad=True)
        s = L.tensor([[2.0, 0.0, 2.0, 5.0], [3.0, 0.0, 0.0, 1.0]], dtype=L.float64, requires_grad=True)
        y = x.scatter_reduce(1, L.tensor([[0, 1, 0, 2], [0, 2, 2, 1]]), s, reduce)
        (y * L.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=L.float64)).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), s.grad.numpy()))
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_put_and_masked_scatter_in_place() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.zeros(2, 2)
        assert x.put_(L.tensor([3, 0]), L.tensor([1.0, 2.0])) is x
        assert x.masked_scatter_(L.tensor([False, True]), L.tensor([7.0, 8.0])) is x
        assert x.scatter_reduce_(0, L.tensor([[1, 1]]), L.tensor([[4.0, 4.0]]), "amax") is x
        np.testing.assert_array_equal(x.numpy(), [[2.0, 7.0], [4.0, 8.0]])


@pytest.mark.parametrize("call", [
    "L.zeros(2).scatter_reduce(0, L.tensor([0]), L.ones(1), 'maximum')",
    "L.zeros(2).scatter_reduce(0, L.tensor([0]), L.ones(1, dtype=L.float64), 'sum')",
    "L.zeros(2).index_reduce(0, L.tensor([0]), L.ones(1), 'sum')",
    "L.zeros(2, 2).masked_scatter(L.tensor([True, True]), L.tensor([5.0, 6.0, 7.0]))",
    "L.zeros(2).put(L.tensor([0, 1]), L.ones(3))",
    "L.zeros(2, 3).select_scatter(L.ones(3), 1, 0)", "L.zeros(3, 4).slice_scatter(L.ones(3, 2), 1)",
    "L.zeros(2, 3).diagonal_scatter(L.tensor([1.0, 2.0, 3.0]))",
])
def test_write_errors_match_torch(call: str) -> None:
    assert_same_error(call)
