"""Indexing against PyTorch: ``x[index]`` and ``x[index] = value`` with every index form,
``index_put``, ``gather``, ``scatter_add``, ``index_select``, ``masked_fill``, ``tril``, ``triu``.

Values, dtypes and gradients (repeated indices accumulate); bad indices raise PyTorch's
exception class before any kernel runs; a hypothesis fuzz of index expressions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tests.test_torch_oracle import Arg, T, assert_same, run_both
from tidu.ops.indexing import index_update

RNG = np.random.default_rng(11)
MASK_43 = RNG.uniform(size=(4, 3)) > 0.5
MASK_35 = RNG.uniform(size=(3, 5)) > 0.4


def _lib_index(L: Any, index: Any) -> Any:  # noqa: N803 - L is the library (tidu or torch)
    """An index expression with numpy arrays turned into L's tensors."""
    if isinstance(index, tuple):
        return tuple(_lib_index(L, i) for i in index)
    if isinstance(index, np.ndarray):
        return L.tensor(index)
    return index


def _both_index(index: Any) -> tuple[Any, Any]:
    return _lib_index(tidu, index), _lib_index(torch, index)


# --- reading -----------------------------------------------------------------------------------
READS = [
    1, -1, slice(None, None, 2), slice(-2, None, 3), (slice(1, 3), slice(None, None, 2), 0), (-1, -1, -1),
    None, Ellipsis, (None, 1, slice(0, 2)), (0, Ellipsis, None), (Ellipsis, slice(None, None, 4)), (),
    [0, 2, 0], [-1], [], np.array([3, 0, 3]), np.array([[0, 1], [1, 0]]), np.array(2),
    ([0, 1], [2, 0]), (slice(None), [0, 2, 2]), ([[0], [3]], slice(None), [1, 4]),
    (slice(None), [0, 1], [4, 3]), ([0, 1], slice(1, None, 2), [1, 2]), (0, slice(None), [1, 2]),
    (np.array(0), slice(None), [1, 2]), ([1, 2], 0), (slice(None), None, [0, 2]), (None, [0, 1], [1, 2]),
    (slice(None), [0, 1], None, [1, 2]), (Ellipsis, [0, -1]), ([0, 1], Ellipsis, [0, 1]),
    MASK_43, (slice(None), MASK_35), (MASK_43, [1, 2, 3, 0, 1, 2, 3, 4, 0, 1, 2, 3][: int(MASK_43.sum())]),
    np.zeros((4, 3), bool), np.array([True, False, True, True]), (Ellipsis, np.array([True] * 5)),
    True, False, np.array(True), (True, 0), (None, Ellipsis, False), (slice(None), True, [0, 1]),
]


@pytest.mark.parametrize("index", READS, ids=repr)
@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
def test_getitem_matches_torch(index: Any, layout: str) -> None:
    ours, ref = _both_index(index)
    if layout == "contiguous":
        run_both(lambda x: x[ours], lambda x: x[ref], [Arg((4, 3, 5))], "float64")
    else:
        run_both(lambda x: x.permute(1, 0, 2)[ours],
                 lambda x: x.permute(1, 0, 2)[ref], [Arg((3, 4, 5))], "float64")


@pytest.mark.parametrize(
    "shape,index",
    [
        ((), ()), ((), None), ((), Ellipsis), ((), True), ((), np.array(False)), ((), (None, Ellipsis)),
        ((0, 3), [0, 2][:0]), ((0, 3), (slice(None), 1)), ((0, 3), (Ellipsis, [2, 2])),
        ((2, 0), (slice(None), np.zeros(0, np.int64))), ((2, 0), np.array([True, False])),
        ((3,), np.array([[0, 1], [2, 2]])), (T(3, 2), (slice(None), [1, 0, 1])), (T(3, 2), MASK_43[:2, :3]),
    ],
    ids=repr,
)
def test_getitem_edge_shapes(shape: Any, index: Any) -> None:
    ours, ref = _both_index(index)
    arg = shape if isinstance(shape, Arg) else Arg(shape)
    run_both(lambda x: x[ours], lambda x: x[ref], [arg], "float32")


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_getitem_of_integer_and_bool_tensors(dtype: str) -> None:
    data = RNG.integers(-3, 4, size=(4, 3)).astype(dtype)
    for index in [([0, 0, 3], slice(None, None, 2)), MASK_43, (slice(None), np.array([2, -3]))]:
        ours, ref = _both_index(index)
        assert_same(tidu.tensor(data)[ours], torch.tensor(data)[ref], {"rtol": 0, "atol": 0})


def test_index_tensors_of_int32_and_torch_long() -> None:
    x = tidu.arange(6.0)
    np.testing.assert_array_equal(x[tidu.tensor([1, 5], dtype=tidu.int32)].numpy(), [1.0, 5.0])
    np.testing.assert_array_equal(x[np.array([4], dtype=np.int32)].numpy(), [4.0])


def test_repeated_indices_accumulate_gradients() -> None:
    w = tidu.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = w[[0, 0, 2, 0]] * tidu.tensor([1.0, 10.0, 100.0, 1000.0])
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1011.0, 0.0, 100.0])
    w2 = tidu.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w2[[1, 1], [0, 0]].sum().backward()
    np.testing.assert_array_equal(w2.grad.numpy(), [[0.0, 0.0], [2.0, 0.0]])


def test_getitem_second_order() -> None:
    x = tidu.tensor([1.0, 2.0, 3.0], dtype=tidu.float64, requires_grad=True)
    assert tidu.autograd.gradgradcheck(lambda x: (x[[2, 0, 2]] ** 3)[x.detach() > 0], [x])


BAD_READS: list[tuple[Any, type, str]] = [
    (4, IndexError, "index 4 is out of bounds for dimension 0 with size 4"),
    (-5, IndexError, "out of bounds"),
    ((0, 0, 0, 0), IndexError, "too many indices"),
    ((0, 3), IndexError, "index 3 is out of bounds for dimension 1 with size 3"),
    (slice(None, None, -1), ValueError, "step must be greater than zero"),
    ((slice(None), slice(None, None, 0)), ValueError, "slice step cannot be zero"),
    ([0, 4], IndexError, "index 4 is out of bounds for dimension 0 with size 4"),
    (np.array([-5]), IndexError, "index -5 is out of bounds for dimension 0 with size 4"),
    ((slice(None), [0, 1], [0, 5]), IndexError, "index 5 is out of bounds for dimension 2 with size 5"),
    ((0, 0, [7]), IndexError, "index 7 is out of bounds for dimension 2 with size 5"),
    (([0, 1], [0, 1, 2]), IndexError, "shape mismatch"),
    (np.array([1.0]), IndexError, "must be long, int, byte or bool"),
    (np.array(1.5), IndexError, "must be long, int, byte or bool"),
    (1.5, IndexError, "only integers, slices"),
    ({}, IndexError, "only integers, slices"),
    ("a", TypeError, "str"),
    (np.array([True, False]), IndexError, "The shape of the mask \\[2\\] at index 0 does not match"),
    ((slice(None), np.ones((3, 4), bool)), IndexError, "mask \\[3, 4\\] at index 1"),
    ((slice(None), [0, "a"]), TypeError, "str"),
    # ints and slices are checked in order, before any advanced index
    ((7, slice(None, None, 0)), IndexError, "index 7 is out of bounds for dimension 0 with size 4"),
    ((np.array([True, False]), 9), IndexError, "index 9 is out of bounds for dimension 1 with size 3"),
]


@pytest.mark.parametrize("index,exc,message", BAD_READS, ids=repr)
def test_bad_index_raises_like_torch(index: Any, exc: type, message: str) -> None:
    ours, ref = _both_index(index)
    with pytest.raises(exc):
        torch.zeros(4, 3, 5)[ref]
    with pytest.raises(exc, match=message):
        tidu.zeros(4, 3, 5)[ours]


def test_out_of_range_index_raises_before_any_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from tidu.core.primitive import REGISTRY

    for prim in REGISTRY.values():
        if "cpu" in prim.impls:
            monkeypatch.setitem(prim.impls, "cpu", lambda *a, _n=prim.name, **k: pytest.fail(f"kernel {_n} ran"))
    x = tidu.tensor(np.zeros((4, 3)))
    for index in [(slice(1, None), [3]), ([0, 1], 9), (np.array([[True]]),)]:
        with pytest.raises(IndexError):
            x[_lib_index(tidu, index)]


# --- fuzzing index expressions ------------------------------------------------------------------
@st.composite
def _index_expressions(draw: Any) -> tuple[tuple[int, ...], tuple]:
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    items: list[Any] = []
    dim = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, 4))):
        n = shape[dim] if dim < len(shape) else 3
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "list", "tensor", "mask", "bad-step"]))
        if kind == "int":
            items.append(draw(st.integers(-n - 1, n)))
        elif kind == "slice":
            items.append(slice(draw(st.one_of(st.none(), st.integers(-5, 5))),
                               draw(st.one_of(st.none(), st.integers(-5, 5))),
                               draw(st.one_of(st.none(), st.integers(1, 3)))))
        elif kind == "bad-step":
            items.append(slice(None, None, draw(st.integers(-2, 0))))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis":
            if ellipsis:
                continue
            ellipsis = True
            items.append(Ellipsis)
            continue
        elif kind == "list":
            items.append(draw(st.lists(st.integers(-n - 1, n), max_size=3)))
        elif kind == "tensor":
            size = draw(st.sampled_from([(2,), (1, 2), (2, 1), ()]))
            items.append(np.array(draw(st.lists(st.integers(-n, n), min_size=int(np.prod(size)),
                                                max_size=int(np.prod(size))))).reshape(size).astype(np.int64))
        else:
            k = draw(st.integers(1, 2))
            mshape = shape[dim:dim + k] if dim + k <= len(shape) else (draw(st.integers(0, 3)),)
            bits = draw(st.lists(st.booleans(), min_size=int(np.prod(mshape)), max_size=int(np.prod(mshape))))
            items.append(np.array(bits, dtype=bool).reshape(mshape))
            dim += len(mshape) - 1
        dim += 1
    return shape, tuple(items)


@settings(max_examples=30, deadline=None)
@given(_index_expressions())
def test_fuzz_index_expressions_match_torch(case: tuple) -> None:
    shape, index = case
    data = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    ours, ref = _both_index(index)
    try:
        expected = torch.tensor(data, requires_grad=True)[ref]
    except (IndexError, RuntimeError, TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            tidu.tensor(data, requires_grad=True)[ours]
        return
    run_both(lambda x: x[ours], lambda x: x[ref], [Arg(shape)], "float64")
    assert tuple(expected.shape) == tuple(tidu.tensor(data)[ours].shape)


@settings(max_examples=30, deadline=None)
@given(_index_expressions(), st.booleans())
def test_fuzz_setitem_matches_torch(case: tuple, scalar: bool) -> None:
    shape, index = case
    ours, ref = _both_index(index)
    target_ref = torch.zeros(shape, dtype=torch.float64)
    try:
        region = target_ref[ref]
        if len(set(_flat_positions(shape, ref))) != len(_flat_positions(shape, ref)):
            return  # repeated positions: PyTorch leaves the write order unspecified
        target_ref[ref] = 7.0
    except (IndexError, RuntimeError, TypeError, ValueError) as e:
        with pytest.raises(type(e)):
            tidu.zeros(shape, dtype=tidu.float64)[ours] = 1.0
        return
    value = np.arange(1.0, 1.0 + region.numel()).reshape(tuple(region.shape))
    target = tidu.zeros(shape, dtype=tidu.float64)
    target[ours] = 7.0 if scalar else tidu.tensor(value)
    target_ref[ref] = 7.0 if scalar else torch.tensor(value)
    np.testing.assert_array_equal(target.numpy(), target_ref.numpy())


def _flat_positions(shape: tuple, index: Any) -> list[int]:
    return torch.arange(int(np.prod(shape))).reshape(shape)[index].reshape(-1).tolist()


# --- writing -----------------------------------------------------------------------------------
WRITES: list[tuple[Any, Any]] = [
    # (index into a (4, 3) tensor, value shape or None for a Python number)
    (1, (3,)), (1, None), ((slice(1, 3),), (1, 3)), ((slice(None, None, 2), 0), ()), ((Ellipsis, 2), (4,)),
    ((None, 0), (1, 3)), ([0, 3], (3,)), ((slice(None), [2, 0]), (4, 2)), (([0, 1], [2, 2]), (2,)),
    (np.array([[3], [1]]), (2, 1, 3)), (MASK_43, (int(MASK_43.sum()),)), (MASK_43, ()),
    (np.array([True, False, False, True]), (1, 3)), ((slice(1, None), np.array([True, False, True])), (3, 2)),
    ((0, [0, -1]), (2,)), (True, (3,)), ((), (4, 3)), (Ellipsis, None),
]


def _write_result(L: Any, index: Any, value_shape: Any, dtype: Any) -> Any:  # noqa: N803
    x = L.zeros(4, 3, dtype=dtype)
    if value_shape is None:
        value: Any = 2.5
    else:
        value = L.tensor(np.arange(1.0, 1.0 + np.prod(value_shape)).reshape(value_shape) * 1.5).to(dtype)
    x[_lib_index(L, index)] = value
    return x


@pytest.mark.parametrize("index,value_shape", WRITES, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_setitem_values_match_torch(index: Any, value_shape: Any, dtype: str) -> None:
    ours = _write_result(tidu, index, value_shape, getattr(tidu, dtype))
    ref = _write_result(torch, index, value_shape, getattr(torch, dtype))
    assert_same(ours, ref, {"rtol": 0, "atol": 0})


@pytest.mark.parametrize("index,value_shape", [w for w in WRITES if w[1] is not None], ids=repr)
def test_setitem_gradient_into_a_buffer_matches_torch(index: Any, value_shape: Any) -> None:
    """``y = zeros(); y[index] = w * 2``: the gradient reaches ``w`` through the write."""
    rng = np.random.default_rng(5)
    w_data = rng.standard_normal(value_shape)
    weight = rng.standard_normal((4, 3))
    grads = []
    for L in (tidu, torch):
        w = L.tensor(w_data, requires_grad=True)
        y = L.zeros(4, 3, dtype=L.float64)
        y[_lib_index(L, index)] = w * 2
        (y * L.tensor(weight)).sum().backward()
        grads.append((y.detach(), w.grad))
    assert_same(grads[0][0], grads[1][0], {"rtol": 1e-12, "atol": 1e-12})
    assert_same(grads[0][1], grads[1][1], {"rtol": 1e-12, "atol": 1e-12}, what="grad of value")


@pytest.mark.parametrize("index,value_shape", [w for w in WRITES if w[1] is not None], ids=repr)
def test_functional_update_gradients_match_torch(index: Any, value_shape: Any) -> None:
    """``index_update(x * 1, index, w * 2)``: the value ``y[index] = w * 2`` gives a non-leaf ``y``;
    d/dx is the cotangent with the region zeroed, d/dw the cotangent at the region."""
    ours, ref = _both_index(index)

    def torch_fn(x: Any, w: Any) -> Any:
        y = x * 1
        y[ref] = w * 2
        return y

    run_both(lambda x, w: index_update(x * 1, ours, w * 2), torch_fn, [Arg((4, 3)), Arg(value_shape)], "float64")


def _setitem_on_nonleaf(L: Any, x: Any, w: Any) -> Any:  # noqa: N803
    y = x * 1
    y[1:3] = w * 2
    y[L.tensor([0, 3])] = w[:1] * 3
    return y


def test_setitem_on_a_nonleaf_matches_torch() -> None:
    run_both(lambda x, w: _setitem_on_nonleaf(tidu, x, w), lambda x, w: _setitem_on_nonleaf(torch, x, w),
             [Arg((4, 3)), Arg((2, 3))], "float64")


def test_setitem_keeps_the_last_of_repeated_writes() -> None:
    x = tidu.zeros(3)
    x[[0, 2, 0]] = tidu.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x.numpy(), [3.0, 0.0, 2.0])
    w = tidu.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = index_update(tidu.zeros(3), [0, 2, 0], w * 2)
    np.testing.assert_array_equal(y.detach().numpy(), [6.0, 0.0, 4.0])
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 2.0, 2.0])  # the overwritten value has no effect


def test_setitem_rules_like_torch() -> None:
    for L in (tidu, torch):
        leaf = L.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            leaf[0] = 1.0
        with L.no_grad():
            leaf[0] = 1.0
        assert leaf.detach().numpy()[0] == 1.0
        with pytest.raises(RuntimeError, match="shape mismatch"):
            L.zeros(3, 4)[[0, 1]] = L.ones(3)
    x = tidu.zeros(2, 3)
    before = x._version.value
    x[0] = tidu.ones(1, 3)  # leading 1s of the value are dropped, as in PyTorch
    x[x > 0] = 5
    assert x._version.value == before + 2
    np.testing.assert_array_equal(x.numpy(), [[5.0] * 3, [0.0] * 3])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):  # PyTorch warns and writes one shared element
        tidu.zeros(3).expand(2, 3)[0] = 1.0


def test_setitem_values_of_other_types_like_torch() -> None:
    for L in (tidu, torch):
        x = L.zeros(2, 3)
        x[1, [0, 2]] = np.float64(4.5)
        assert x.numpy()[1].tolist() == [4.5, 0.0, 4.5]
        with pytest.raises(TypeError, match="assign a numpy.ndarray"):
            x[0] = np.array([1, 2, 3])


def test_setitem_through_a_view_writes_the_base() -> None:
    base = tidu.zeros(2, 3)
    row = base[1]
    row[[0, 2]] = 4.0
    np.testing.assert_array_equal(base.numpy(), [[0.0] * 3, [4.0, 0.0, 4.0]])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize(
    "indices,value_shape",
    [((np.array([1, 3]),), (2, 3)), ((np.array([0, 2, 0]),), (3,)), ((np.array([0, 1]), np.array([2, 2])), (2,)),
     ((np.array([[3], [0]]), np.array([1, 2])), ())],
    ids=repr,
)
def test_index_put_matches_torch(indices: tuple, value_shape: tuple, accumulate: bool) -> None:
    positions = _flat_positions((4, 3), tuple(slice(None) if i is None else torch.tensor(i) for i in indices))
    if not accumulate and len(set(positions)) != len(positions):
        indices = tuple(None if i is None else np.unique(i) for i in indices)
        value_shape = ()
    ours, ref = _both_index(indices)
    run_both(lambda x, v: tidu.index_put(x * 1, ours, v, accumulate=accumulate),
             lambda x, v: torch.index_put(x * 1, ref, v, accumulate=accumulate),
             [Arg((4, 3)), Arg(value_shape)], "float64")


def test_index_put_method_and_bad_input() -> None:
    x = tidu.zeros(3)
    out = x.index_put((tidu.tensor([2]),), tidu.tensor(1.0))
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0, 1.0])
    assert x.numpy().sum() == 0.0, "index_put is out of place"
    for L in (tidu, torch):
        with pytest.raises(RuntimeError):
            L.index_put(L.zeros(3), (L.tensor([0]),), L.tensor(1, dtype=L.int64))
        with pytest.raises(IndexError):
            L.index_put(L.zeros(3), (L.tensor([3]),), L.tensor(1.0))


# --- gather, scatter_add, index_select, masked_fill, tril, triu ------------------------------------
IDX_24 = np.array([[0, 2, 2, 1], [1, 1, 0, 2]])
FUNCS: dict[str, tuple[Callable, list]] = {
    "gather": (lambda L: lambda x: L.gather(x, 1, L.tensor(IDX_24)), [(2, 3), (3, 4), T(4, 3)]),
    "gather-dim0": (lambda L: lambda x: x.gather(0, L.tensor(IDX_24[:, :3])), [(3, 3), T(3, 4)]),
    "gather-neg-dim": (lambda L: lambda x: x.gather(-1, L.tensor([[2, 2, 0]])), [(1, 3)]),
    "gather-0d": (lambda L: lambda x: L.gather(x, 0, L.tensor(0)), [()]),
    "gather-empty": (lambda L: lambda x: L.gather(x, 0, L.zeros(0, 2, dtype=L.int64)), [(3, 2)]),
    "scatter_add": (lambda L: lambda x: L.scatter_add(x, 1, L.tensor(IDX_24), L.ones(2, 4, dtype=x.dtype) * 3),
                    [(2, 3), (3, 5), T(4, 3)]),
    "scatter_add-src": (lambda L: lambda s: L.zeros(3, 3, dtype=s.dtype).scatter_add(0, L.tensor(IDX_24[:, :3]), s),
                        [(2, 3), T(3, 2)]),
    "scatter_add-both": (lambda L: lambda x, s: x.scatter_add(0, L.tensor([[2, 0, 2]]), s), [[(3, 3), (1, 3)]]),
    "scatter_add-0d": (lambda L: lambda x, s: L.scatter_add(x, 0, L.tensor(0), s), [[(), ()]]),
    "index_select": (lambda L: lambda x: L.index_select(x, 1, L.tensor([2, 0, 2])), [(2, 3), T(3, 2), (0, 3)]),
    "index_select-0d-index": (lambda L: lambda x: x.index_select(0, L.tensor(1)), [(2, 3)]),
    "index_select-empty": (lambda L: lambda x: x.index_select(-1, L.tensor([], dtype=L.int64)), [(2, 3)]),
    "index_select-0d": (lambda L: lambda x: x.index_select(0, L.tensor([0])), [()]),
    "index_select-int32": (lambda L: lambda x: x.index_select(0, L.tensor([1, 1], dtype=L.int32)), [(2,)]),
    "masked_fill": (lambda L: lambda x: x.masked_fill(L.tensor(MASK_43), -1.5), [(4, 3), T(3, 4)]),
    "masked_fill-broadcast": (lambda L: lambda x: L.masked_fill(x, L.tensor([True, False, True]), 2), [(4, 3), (3,)]),
    "masked_fill-tensor": (lambda L: lambda x, v: x.masked_fill(x > 0, v), [[(4, 3), ()], [(), ()]]),
    "masked_fill-empty": (lambda L: lambda x: x.masked_fill(x > 0, 0.0), [(0, 3)]),
    "masked_fill-mask-broadcasts-input": (lambda L: lambda x: x.masked_fill(L.tensor(MASK_43), 0.0), [(3,)]),
    "tril": (lambda L: lambda x: L.tril(x), [(3, 4), (2, 3, 2), T(4, 3), (0, 3)]),
    "tril-diag": (lambda L: lambda x: x.tril(diagonal=-1), [(3, 4)]),
    "tril-diag-pos": (lambda L: lambda x: x.tril(2), [(4, 3)]),
    "triu": (lambda L: lambda x: L.triu(x), [(3, 4), (2, 3, 2), T(4, 3)]),
    "triu-diag": (lambda L: lambda x: x.triu(diagonal=1), [(4, 3)]),
    "triu-diag-neg": (lambda L: lambda x: x.triu(-2), [(3, 4)]),
}


def _args(shapes: Any) -> list[Arg]:
    items = shapes if isinstance(shapes, list) else [shapes]
    return [s if isinstance(s, Arg) else Arg(s) for s in items]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "name,shape",
    [pytest.param(n, s, id=f"{n}-{_args(s)}") for n, (_, shapes) in FUNCS.items() for s in shapes],
)
def test_indexing_function_matches_torch(name: str, shape: Any, dtype: str) -> None:
    make = FUNCS[name][0]
    run_both(make(tidu), make(torch), _args(shape), dtype)


@pytest.mark.parametrize(
    "lib_fn",
    [
        lambda L: L.tensor([[1, 2], [3, 4]]).gather(1, L.tensor([[1, 1], [0, 1]])),
        lambda L: L.zeros(3, dtype=L.int64).scatter_add(0, L.tensor([0, 0, 2]), L.tensor([1, 2, 3])),
        lambda L: L.tensor([[True, False]]).index_select(1, L.tensor([1, 0, 1])),
        lambda L: L.arange(6).reshape(2, 3).masked_fill(L.tensor([True, False, True]), 1.7),
        lambda L: L.ones(3, 3, dtype=L.int64).tril(),
        lambda L: L.ones(2, 3, dtype=L.bool).triu(1),
        lambda L: L.zeros(3).masked_fill(L.tensor([True, False, True]), L.tensor(2, dtype=L.float64)),
    ],
)
def test_integer_and_bool_results_match_torch(lib_fn: Callable) -> None:
    assert_same(lib_fn(tidu), lib_fn(torch), {"rtol": 0, "atol": 0})


def test_scatter_add_of_a_larger_src_uses_the_index_extent() -> None:
    """PyTorch reads ``src`` only where ``index`` reaches (its backward fails there; tidu's works)."""
    src = np.arange(8.0).reshape(2, 4)
    ours = tidu.zeros(3, 3, dtype=tidu.float64).scatter_add(0, tidu.tensor([[2, 0, 2]]), tidu.tensor(src))
    ref = torch.zeros(3, 3, dtype=torch.float64).scatter_add(0, torch.tensor([[2, 0, 2]]), torch.tensor(src))
    assert_same(ours, ref, {"rtol": 0, "atol": 0})
    s = tidu.tensor(src, requires_grad=True)
    tidu.zeros(3, 3, dtype=tidu.float64).scatter_add(0, tidu.tensor([[2, 0, 2]]), s).sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), [[1.0, 1.0, 1.0, 0.0], [0.0] * 4])


def test_gather_repeated_indices_accumulate() -> None:
    x = tidu.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    tidu.gather(x, 1, tidu.tensor([[2, 2, 2, 0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 3.0]])


BAD_FUNCS: dict[str, tuple[Callable, type, str]] = {
    "gather-oob": (lambda L: L.zeros(3, 2).gather(0, L.tensor([[3]])), RuntimeError,
                   "index 3 is out of bounds for dimension 0 with size 3"),
    "gather-neg": (lambda L: L.zeros(3, 2).gather(0, L.tensor([[-1]])), RuntimeError, "out of bounds"),
    "gather-ndim": (lambda L: L.zeros(3, 2).gather(0, L.tensor([1])), RuntimeError, "same number of dimensions"),
    "gather-float-index": (lambda L: L.zeros(3).gather(0, L.tensor([1.0])), RuntimeError, "int64"),
    "gather-extent": (lambda L: L.zeros(3, 2).gather(0, L.zeros(1, 3, dtype=L.int64)), RuntimeError,
                      "Size does not match at dimension 1"),
    "scatter_add-oob": (lambda L: L.zeros(3).scatter_add(0, L.tensor([5]), L.ones(1)), RuntimeError,
                        "index 5 is out of bounds"),
    "scatter_add-dtype": (lambda L: L.zeros(3).scatter_add(0, L.tensor([0]), L.ones(1, dtype=L.float64)),
                          RuntimeError, "dtype"),
    "index_select-oob": (lambda L: L.zeros(3).index_select(0, L.tensor([5])), IndexError, "index out of range"),
    "index_select-2d": (lambda L: L.zeros(3).index_select(0, L.tensor([[0]])), IndexError, "vector"),
    "index_select-float": (lambda L: L.zeros(3).index_select(0, L.tensor([0.0])), RuntimeError, "int32 or int64"),
    "masked_fill-float-mask": (lambda L: L.zeros(3).masked_fill(L.ones(3), 1.0), RuntimeError, "boolean masks"),
    "masked_fill-1d-value": (lambda L: L.zeros(3).masked_fill(L.ones(3, dtype=L.bool), L.ones(1)), RuntimeError,
                             "0-dimensional value"),
    "masked_fill-shape": (lambda L: L.zeros(3).masked_fill(L.ones(2, dtype=L.bool), 1.0), RuntimeError,
                          "must match"),
    "tril-1d": (lambda L: L.zeros(3).tril(), RuntimeError, "at least 2 dimensions"),
    "triu-0d": (lambda L: L.tensor(1.0).triu(), RuntimeError, "at least 2 dimensions"),
}


@pytest.mark.parametrize("name", list(BAD_FUNCS))
def test_bad_function_arguments_raise_like_torch(name: str) -> None:
    lib_fn, exc, message = BAD_FUNCS[name]
    with pytest.raises(exc):
        lib_fn(torch)
    with pytest.raises(exc, match=message):
        lib_fn(tidu)


def _views_of_a_plain_tensor(L: Any) -> list:
    """Basic indexing of a tensor that does not require grad is a view without a recorded op; a
    write through it, or into its base, later puts both into the graph as for a recorded view."""
    x = L.zeros(3, 4)
    row, corner = x[1], x[1:, ::2]
    w = L.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    row.mul_(0).add_(w * 2)  # a write through the view: x and corner now depend on w
    cell = corner[0, 1]  # a view of a view, read after the write
    (x.sum() + corner.sum() * 10 + cell * 100).backward()
    stale = L.zeros(2, 3)
    first = stale[0]
    v = L.tensor([5.0, 6.0, 7.0], requires_grad=True)
    stale.copy_(L.stack([v, v * 3]))  # a write into the base: the view is stale until it is read
    (first * first).sum().backward()
    return [x, corner, cell, w.grad, first, v.grad, L.tensor(float(row.requires_grad))]


def test_views_of_plain_tensors_join_the_graph_like_torch() -> None:
    for got, want in zip(_views_of_a_plain_tensor(tidu), _views_of_a_plain_tensor(torch), strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())


def test_view_of_a_pending_result_is_read_after_it_is_computed() -> None:
    """``x[None][0]`` of a deferred result has ``x``'s shape: a fused loop (from the third run)
    must not read it as an input while it writes ``x``."""
    a = tidu.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(5):
        x = a * 2
        y = x[None][0] * 3 + 1
        np.testing.assert_array_equal(y.numpy(), np.arange(6).reshape(2, 3) * 6 + 1)


@pytest.mark.parametrize("index", ["[0, 2]", "L.tensor([True, False, True])", "L.tensor([[True, False, True, False]] * 3)",
                                   "(slice(None), L.tensor([0, 0, 3]))", "(0, [1, 3])", "L.tensor(1)", "0",
                                   "(L.tensor([1, 2]), ...)", "L.tensor([], dtype=L.int64)"])
@pytest.mark.parametrize("value", ["L.tensor(5)", "L.tensor(5.0, dtype=L.float64)", "L.tensor([1, 2, 3, 4])", "7",
                                   "L.tensor(True)", "L.tensor([1.5, 2.5, 3.5, 4.5])"])
def test_setitem_value_dtypes_match_torch(index: str, value: str) -> None:
    """An advanced index writes with ``index_put_``, which takes only a value tensor of the
    tensor's dtype (PyTorch's error); a basic index, one mask with a 0-d value, or a number cast."""
    results = []
    for L in (tidu, torch):
        x = L.arange(12.0).reshape(3, 4)
        try:
            x[eval(index, {"L": L})] = eval(value, {"L": L})  # noqa: S307 - the parameters above
            results.append(("ok", x.tolist()))
        except (RuntimeError, IndexError) as e:
            results.append((type(e).__name__, str(e).replace("torch", "tidu")))
    assert results[0] == results[1]
