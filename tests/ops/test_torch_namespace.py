"""Top-level names scripts call, against PyTorch: the copying forms of the views
(``tidu.ops.copies``), the complex-number functions on real tensors (``tidu.ops.complex``),
``unravel_index``, ``nonzero_static``, ``vander`` and the metadata queries (``is_inference``,
``get_device``, ``typename``, ``is_storage``): values, gradients, dtypes and errors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.ops.test_reduce import compare
from tests.test_torch_oracle import assert_same_error

X = np.random.default_rng(0).uniform(-2, 2, size=(2, 3, 4))

# each: a call of the library and a tensor; it returns a fresh tensor (or a tuple of them)
COPIES: dict[str, Callable] = {
    "view_copy": lambda L, x: L.view_copy(x, (6, 4)),
    "view_copy -1": lambda L, x: L.view_copy(x, [4, -1]),
    "permute_copy": lambda L, x: L.permute_copy(x, (2, 0, 1)),
    "transpose_copy": lambda L, x: L.transpose_copy(x, 0, -1),
    "t_copy": lambda L, x: L.t_copy(x[0]),
    "unsqueeze_copy": lambda L, x: L.unsqueeze_copy(x, 1),
    "squeeze_copy": lambda L, x: L.squeeze_copy(x[:1, :, :1]),
    "squeeze_copy dim": lambda L, x: L.squeeze_copy(x[:1, :, :1], 2),
    "squeeze_copy dims": lambda L, x: L.squeeze_copy(x[:1, :, :1], (0, 2)),
    "expand_copy": lambda L, x: L.expand_copy(x[:, :1], (5, 2, 3, 4)),
    "expand_copy implicit": lambda L, x: L.expand_copy(x, (2, -1, -1), implicit=True),
    "select_copy": lambda L, x: L.select_copy(x, 1, -1),
    "slice_copy": lambda L, x: L.slice_copy(x, 2, 1, None, 2),
    "slice_copy clamped": lambda L, x: L.slice_copy(x, -1, -3, 10),
    "slice_copy defaults": lambda L, x: L.slice_copy(x),
    "diagonal_copy": lambda L, x: L.diagonal_copy(x, 1, 1, 2),
    "alias_copy": lambda L, x: L.alias_copy(x),
    "narrow_copy": lambda L, x: L.narrow_copy(x, 2, 1, 2),
    "narrow_copy method": lambda L, x: x.narrow_copy(0, 1, 1),
    "unfold_copy": lambda L, x: L.unfold_copy(x, 2, 2, 1),
    "unfold_copy tiles": lambda L, x: L.unfold_copy(x, 2, 2, 2),
    "unbind_copy": lambda L, x: L.unbind_copy(x, 1),
    "split_copy": lambda L, x: L.split_copy(x, 3, 2),
    "split_with_sizes_copy": lambda L, x: L.split_with_sizes_copy(x, [1, 3], -1),
    "as_strided_copy": lambda L, x: L.as_strided_copy(x, (3, 2), (2, 5), 1),
    "unsafe_chunk": lambda L, x: L.unsafe_chunk(x, 2, 2),
    "unsafe_chunk method": lambda L, x: x.unsafe_chunk(3),
    "unsafe_split": lambda L, x: L.unsafe_split(x, 3, 2),
    "unsafe_split method": lambda L, x: x.unsafe_split(2, 1),
    "unsafe_split_with_sizes": lambda L, x: L.unsafe_split_with_sizes(x, [1, 3], 2),
    "unsafe_split_with_sizes method": lambda L, x: x.unsafe_split_with_sizes([2, 1], 1),
}


@pytest.mark.parametrize("name", list(COPIES))
def test_copies_match_torch_values_and_gradients(name: str) -> None:
    call = COPIES[name]
    compare(call, [X])
    compare(lambda L, x: call(L, x), [X.astype(np.float32)])
    compare(lambda L, x: call(L, x), [np.arange(24).reshape(2, 3, 4)], grad=False)
    if len(name.split()) > 1 and name.split()[1] in ("method",) or name.startswith("unsafe_"):
        return
    out = call(tidu, tidu.tensor(X))
    for piece in out if isinstance(out, tuple) else (out,):  # new storage: a write leaves the input as it was
        assert piece.is_contiguous() and piece.storage_offset() == 0


def test_copies_do_not_share_storage_with_the_input() -> None:
    for name, call in COPIES.items():
        if name.startswith("unsafe_") or "method" in name:
            continue
        x = tidu.tensor(X)
        out = call(tidu, x)
        for piece in out if isinstance(out, tuple) else (out,):
            piece.fill_(7.0)
        np.testing.assert_array_equal(x.numpy(), X, err_msg=name)


def test_detach_copy_and_view_copy_of_a_dtype() -> None:
    compare(lambda L, x: L.detach_copy(x), [X], grad=False)
    # PyTorch 2.13's result requires grad through a node that cannot run (``NotImplemented``); tidu's does not
    assert torch.detach_copy(torch.tensor(X, requires_grad=True)).grad_fn.name().endswith("NotImplemented")
    compare(lambda L, x: L.view_copy(x, L.int64), [X], grad=False)
    compare(lambda L, x: L.view_copy(x, L.int32), [X.astype(np.float32)], grad=False)
    compare(lambda L, x: L.view_copy(x, L.int32), [X], grad=False)  # a last dim of twice the elements
    compare(lambda L, x: L.view_copy(x, L.uint8), [np.arange(6, dtype=np.int16).reshape(2, 3)], grad=False)
    assert not tidu.detach_copy(tidu.tensor(X, requires_grad=True)).requires_grad


@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), None), ((3,), (2,), 1), ((2, 3), (3, 1), 0),
                                                ((2, 2), (4, 1), 2)])
def test_as_strided_scatter_matches_torch(size: tuple, stride: tuple, offset: int | None) -> None:
    """Values and dtypes against PyTorch; gradients against finite differences: PyTorch 2.13 gives
    ``input`` the gradient where ``src`` overwrites it too (docs/guides/pytorch-differences.md)."""
    src = np.random.default_rng(2).uniform(-1, 1, size=size)
    compare(lambda L, x, s: L.as_strided_scatter(x, s, size, stride, offset), [np.arange(8.0).reshape(2, 4) + 0.5, src],
            grad=False)
    compare(lambda L, x, s: x.as_strided_scatter(s, size, stride, offset),
            [np.arange(8, dtype=np.float32).reshape(2, 4), src.astype(np.float32)], grad=False)
    x = tidu.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True)
    s = tidu.tensor(src, requires_grad=True)
    assert tidu.autograd.gradcheck(lambda x, s: tidu.as_strided_scatter(x * x, s * s, size, stride, offset), (x, s))
    assert tidu.autograd.gradgradcheck(lambda x, s: tidu.as_strided_scatter(x * x, s * s, size, stride, offset), (x, s))
    w = np.random.default_rng(3).uniform(0.5, 1.5, size=(2, 4))
    (tidu.as_strided_scatter(x, s, size, stride, offset) * tidu.tensor(w)).sum().backward()
    ts = torch.tensor(src, requires_grad=True)
    (torch.as_strided_scatter(torch.tensor(np.arange(8.0).reshape(2, 4)), ts, size, stride, offset)
     * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(s.grad.numpy(), ts.grad.numpy(), rtol=1e-12)  # src's gradient is PyTorch's
    written = np.zeros(8, bool)
    written[np.asarray(torch.as_strided(torch.arange(8), size, stride, offset or 0)).ravel()] = True
    np.testing.assert_array_equal(x.grad.numpy().ravel(), np.where(written, 0.0, w.ravel()))


@pytest.mark.parametrize("call", [
    "L.view_copy(L.ones(2, 3), (5,))", "L.t_copy(L.ones(2, 3, 4))", "L.slice_copy(L.ones(4), 0, step=0)",
    "L.select_copy(L.ones(2, 3), 1, 3)", "L.narrow_copy(L.ones(4), 0, 2, 3)", "L.unfold_copy(L.ones(4), 0, 5, 1)",
    "L.split_with_sizes_copy(L.ones(4), [1, 2])", "L.expand_copy(L.ones(2, 3), (4, 3))",
    "L.permute_copy(L.ones(2, 3), (0,))", "L.diagonal_copy(L.ones(2, 3), 0, 1, 1)",
    "L.as_strided_copy(L.ones(4), (3,), (2,))", "L.unsafe_split(L.ones(4), [1, 3])", "L.unsafe_chunk(L.ones(4), 0)",
    "L.as_strided_scatter(L.zeros(6), L.ones(3, 2), (2, 2), (1, 2))",
    "L.view_copy(L.ones(3, dtype=L.int16), L.int32)",
])
def test_copy_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


# --- complex-number functions on real tensors -------------------------------------------------
@pytest.mark.parametrize("name", ["conj", "conj_physical", "resolve_conj", "resolve_neg", "real"])
def test_conjugations_of_real_tensors_are_the_input(name: str) -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        for x in (L.tensor(X, requires_grad=True), L.arange(3), L.tensor([True])):
            assert getattr(L, name)(x) is x
            if name != "real":
                assert getattr(x, name)() is x
        assert L.tensor(X).real is not None
    compare(lambda L, x: L.conj(x) * L.conj_physical(x) + L.real(x) + L.resolve_conj(x) - L.resolve_neg(x), [X])
    assert_same_error(f"L.{name}(1.5)", same_message=False)


def test_complex_queries_on_real_tensors() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        for x in (L.ones(2), L.arange(2), L.ones(2, dtype=L.bool)):
            assert (L.is_complex(x), L.is_conj(x), L.is_neg(x)) == (False, False, False)
            assert (x.is_complex(), x.is_conj(), x.is_neg()) == (False, False, False)
    for call in ["L.is_complex(1.0)", "L.is_conj([1])", "L.is_neg(None)", "L.ones(2).imag"]:
        assert_same_error(call, same_message=call.endswith("imag"))


# --- unravel_index, nonzero_static, vander ----------------------------------------------------
@pytest.mark.parametrize("indices,shape", [([5, 7], (2, 4)), ([[0, 11], [3, 8]], (3, 4)), (9, (2, 4)), (-1, (2, 4)),
                                           ([1, 2], 3), ([4], ()), (0, ()), ([3, 0, 5], (2, 1, 3)),
                                           ([2, 3], [0, 4])])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_unravel_index_matches_torch(indices: object, shape: tuple, dtype: str) -> None:
    if dtype == "uint8" and np.min(indices) < 0:
        return
    if shape and 0 in np.atleast_1d(shape):
        assert_same_error(lambda L: L.unravel_index(L.tensor(indices, dtype=getattr(L, dtype)), shape),
                          same_message=False)
        return
    outs = [L.unravel_index(L.tensor(indices, dtype=getattr(L, dtype)), shape) for L in (tidu, torch)]
    assert len(outs[0]) == len(outs[1])
    for ours, ref in zip(*outs):
        assert str(ours.dtype)[5:] == str(ref.dtype)[6:] and tuple(ours.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.parametrize("call", ["L.unravel_index(L.tensor([1.0]), (2,))", "L.unravel_index(L.tensor([True]), (2,))",
                                  "L.unravel_index(L.tensor([1]), (2.0,))", "L.unravel_index(L.tensor([1]), (-2, 3))",
                                  "L.unravel_index(3, (2, 2))"])
def test_unravel_index_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


@pytest.mark.parametrize("data", [[[0, 1], [2, 0]], [0.0, 1.5, 0.0, 2.0], [[True, False, True]], 3, 0, [[0, 0]]])
@pytest.mark.parametrize("size,fill", [(0, -1), (2, -1), (5, -7), (1, 3)])
def test_nonzero_static_matches_torch(data: object, size: int, fill: int) -> None:
    ours = tidu.nonzero_static(tidu.tensor(data), size=size, fill_value=fill)
    ref = torch.nonzero_static(torch.tensor(data), size=size, fill_value=fill)
    assert ours.dtype is tidu.int64 and tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    assert tidu.tensor(data).nonzero_static(size=size).shape == torch.tensor(data).nonzero_static(size=size).shape
    assert_same_error("L.nonzero_static(L.ones(2), size=-1)")
    assert_same_error("L.nonzero_static(L.ones(2), size=1.5)", same_message=False)


@pytest.mark.parametrize("n,increasing", [(None, False), (None, True), (1, False), (0, True), (5, False), (2, True)])
def test_vander_matches_torch(n: int | None, increasing: bool) -> None:
    """Values and dtypes; PyTorch 2.13's backward of ``vander`` fails (it writes in place a value it
    saved), so tidu's gradient is checked against finite differences below."""
    x = np.array([0.5, -1.5, 2.0, 0.0])
    compare(lambda L, x: L.vander(x, n, increasing), [x], grad=False)
    compare(lambda L, x: L.vander(x, N=n, increasing=increasing), [x.astype(np.float32)], grad=False)
    for data in ([1, 2, 3], [True, False]):
        compare(lambda L, x: L.vander(x, n, increasing), [np.array(data)], grad=False)
    compare(lambda L, x: L.vander(x, n), [np.array([1, 2], dtype=np.int32)], grad=False)


@pytest.mark.parametrize("n,increasing", [(4, False), (3, True), (2, False)])
def test_vander_gradient_matches_finite_differences(n: int, increasing: bool) -> None:
    x = tidu.tensor([0.5, -1.5, 2.0, 0.0], dtype=tidu.float64, requires_grad=True)
    assert tidu.autograd.gradcheck(lambda x: tidu.vander(x, n, increasing), (x,))
    assert tidu.autograd.gradgradcheck(lambda x: tidu.vander(x, n, increasing), (x,))


@pytest.mark.parametrize("call", ["L.vander(L.ones(2, 2))", "L.vander(L.ones(2), -1)"])
def test_vander_errors_match_torch(call: str) -> None:
    assert_same_error(call)


# --- metadata -------------------------------------------------------------------------------
def test_metadata_queries_match_torch() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        x = L.ones(2, requires_grad=True)
        assert (L.is_inference(x), x.is_inference(), L.get_device(x), L.is_storage(x), L.is_storage(1)) == (
            False, False, -1, False, False)
        assert L.typename(x) == "torch.FloatTensor" and L.typename(L.arange(2)) == "torch.LongTensor"
        assert (L.typename(1.5), L.typename(int), L.typename(None)) == ("float", "int", "NoneType")
        assert L.typename(L.nn.Linear).endswith(".nn.modules.linear.Linear")
        assert L.typename(L.nn.Linear(1, 1)).endswith(".nn.modules.linear.Linear")
        assert L.typename(L.ones(1, dtype=L.float64)) == "torch.DoubleTensor"
    for call in ["L.is_inference(1.0)", "L.get_device([1])"]:
        assert_same_error(call, same_message=False)
