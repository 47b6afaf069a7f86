"""Shape ops against PyTorch: values, dtypes and gradients on 0-d, empty, broadcast and
non-contiguous inputs; bad arguments raise PyTorch's exception class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both


def _args(shapes: Any) -> list[Arg]:
    items = shapes if isinstance(shapes, list) else [shapes]
    return [s if isinstance(s, Arg) else Arg(s) for s in items]


def _pieces(L: Any, parts: tuple) -> Any:  # noqa: N803 - L is the library (tidu or torch)
    """One tensor from the pieces of split/chunk, each weighted differently (so that grads tell them apart)."""
    return L.cat([p.reshape(-1) * (i + 1) for i, p in enumerate(parts)])


# name -> (lib -> fn, shapes); fn is called on tidu tensors with L=tidu and on torch's with L=torch.
CASES: dict[str, tuple[Callable, list]] = {
    "reshape": (lambda L: lambda x: x.reshape(-1, 2), [(2, 3), T(3, 2), (0, 2)]),
    "reshape-fn": (lambda L: lambda x: L.reshape(x, (3, -1)), [(2, 3)]),
    "reshape-0d": (lambda L: lambda x: x.reshape(1, 1), [()]),
    "view": (lambda L: lambda x: x.view(6), [(2, 3)]),
    "view-tuple": (lambda L: lambda x: x.view((3, 2)), [(6,)]),
    "flatten": (lambda L: lambda x: x.flatten(1), [(2, 3, 4), T(3, 2), (2, 0, 3)]),
    "flatten-fn": (lambda L: lambda x: L.flatten(x, 0, -2), [(2, 3, 4)]),
    "unflatten": (lambda L: lambda x: x.unflatten(1, (2, -1)), [(3, 4), T(4, 3)]),
    "unflatten-fn": (lambda L: lambda x: L.unflatten(x, -1, (2, 1, 2)), [(3, 4), (0, 4)]),
    "squeeze-tuple": (lambda L: lambda x: x.squeeze((0, -1)), [(1, 3, 1), (1, 0, 1)]),
    "squeeze-0d": (lambda L: lambda x: x.squeeze(0), [()]),
    "squeeze-fn": (lambda L: lambda x: L.squeeze(x, -1), [(2, 1)]),
    "unsqueeze": (lambda L: lambda x: x.unsqueeze(-1), [(2, 3), (), (0,)]),
    "unsqueeze-fn": (lambda L: lambda x: L.unsqueeze(x, 1), [T(3, 2)]),
    "transpose": (lambda L: lambda x: x.transpose(-1, 0), [(2, 3, 4), T(3, 2), ()]),
    "transpose-fn": (lambda L: lambda x: L.transpose(x, 0, 1), [(2, 3)]),
    "permute": (lambda L: lambda x: x.permute((2, 0, 1)), [(2, 3, 4)]),
    "permute-neg": (lambda L: lambda x: x.permute(-1, 0), [T(3, 2), (0, 3)]),
    "t": (lambda L: lambda x: x.t(), [(2, 3), (3,), (), T(3, 2)]),
    "t-fn": (lambda L: lambda x: L.t(x), [(2, 3)]),
    "T": (lambda L: lambda x: x.T, [(2, 3), T(3, 2), (0, 2)]),
    "mT": (lambda L: lambda x: x.mT, [(4, 2, 3), T(3, 2), (0, 2, 3)]),
    "expand": (lambda L: lambda x: x.expand(2, -1, 3), [(3, 1)]),
    "expand-0d": (lambda L: lambda x: x.expand(3, 2), [()]),
    "expand-tuple": (lambda L: lambda x: x.expand((2, 3)), [T(3, 1)]),
    "expand_as": (lambda L: lambda x: x.expand_as(L.zeros(4, 2, 3)), [(2, 1), ()]),
    "broadcast_to": (lambda L: lambda x: L.broadcast_to(x, (2, -1, 3)), [(1, 3), (3, 1)]),
    "broadcast_to-method": (lambda L: lambda x: x.broadcast_to((2, 3)), [(3,), ()]),
    "repeat": (lambda L: lambda x: x.repeat(2, 1, 3), [(2, 3), T(3, 2), (0, 3), (3,)]),
    "repeat-0d": (lambda L: lambda x: x.repeat(2, 3), [()]),
    "repeat-tuple": (lambda L: lambda x: x.repeat((1, 2)), [(2, 3)]),
    "repeat-once": (lambda L: lambda x: x.repeat(1, 1), [(2, 3), ()]),
    "flip": (lambda L: lambda x: x.flip(0, -1), [(2, 3, 4), T(3, 2), (0, 3)]),
    "flip-fn": (lambda L: lambda x: L.flip(x, (-1,)), [(2, 3), ()]),
    "flip-0d": (lambda L: lambda x: x.flip(0), [()]),
    "flip-keyword": (lambda L: lambda x: L.flip(x, dims=[1]), [(2, 3)]),
    "permute-keyword": (lambda L: lambda x: L.permute(x, dims=(1, 0)), [(2, 3)]),
    "reshape-keyword": (lambda L: lambda x: L.reshape(x, shape=(3, 2)), [(2, 3)]),
    "roll": (lambda L: lambda x: x.roll(4), [(2, 3), T(3, 2), (), (0, 3)]),
    "roll-dims": (lambda L: lambda x: x.roll((1, -4), (0, 1)), [(2, 3), T(3, 2)]),
    "roll-fn": (lambda L: lambda x: L.roll(x, 2, -1), [(2, 3), (2, 0)]),
    "roll-same-dim": (lambda L: lambda x: L.roll(x, (1, 1), (0, 0)), [(4,)]),
    "roll-zero": (lambda L: lambda x: x.roll(0, 1), [(2, 3), (2, 0)]),
    "cat": (lambda L: lambda x: L.cat([x, x * 2, x[:1]]), [(2, 3), T(3, 2), (0, 3)]),
    "cat-dim": (lambda L: lambda x: L.cat((x, x.exp()), dim=-1), [(2, 3), T(3, 2)]),
    "cat-one": (lambda L: lambda x: L.cat([x]), [(2, 3)]),
    "concat": (lambda L: lambda x: L.concat([x, x]), [(3,)]),
    "concatenate": (lambda L: lambda x: L.concatenate([x, x], axis=1), [(2, 3)]),
    "cat-empty-1d": (lambda L: lambda x: L.cat([L.zeros(0, dtype=x.dtype), x, L.zeros(0, dtype=x.dtype)]), [(2, 3)]),
    "cat-promote": (lambda L: lambda x: L.cat([L.ones(1, 3, dtype=L.int64), x]), [(2, 3)]),
    "stack": (lambda L: lambda x: L.stack([x, x * 2], dim=-1), [(2, 3), (), (0, 3), T(3, 2)]),
    "stack-0": (lambda L: lambda x: L.stack((x, x, x)), [(2,)]),
    "split": (lambda L: lambda x: _pieces(L, x.split(2, dim=1)), [(2, 5), T(5, 2), (2, 0)]),
    "split-sizes": (lambda L: lambda x: _pieces(L, L.split(x, [1, 0, 3])), [(4, 2)]),
    "chunk": (lambda L: lambda x: _pieces(L, x.chunk(3, -1)), [(2, 7), (2, 3), T(4, 2)]),
    "chunk-fn": (lambda L: lambda x: _pieces(L, L.chunk(x, 2)), [(5,)]),
    "narrow": (lambda L: lambda x: x.narrow(1, -2, 2), [(2, 3), T(3, 2)]),
    "narrow-fn": (lambda L: lambda x: L.narrow(x, 0, 1, 0), [(3,)]),
    "chain": (lambda L: lambda x: L.stack([x.flip(0), x.roll(1, 0)]).repeat(1, 2, 1).mT.flatten(), [(3, 2)]),
    "select": (lambda L: lambda x: x.select(1, -1) * 2 + x.select(0, 0)[:1], [(3, 3), T(3, 3)]),
    "select-fn": (lambda L: lambda x: L.select(x, 0, 1), [(2, 3), (2,)]),
    "unbind": (lambda L: lambda x: _pieces(L, x.unbind(1)), [(2, 3), T(3, 2), (0, 2)]),
    "unbind-fn": (lambda L: lambda x: _pieces(L, L.unbind(x)), [(3,), (3, 2)]),
    "movedim": (lambda L: lambda x: x.movedim(-1, 0), [(2, 3, 4), T(3, 2), ()]),
    "movedim-seq": (lambda L: lambda x: L.movedim(x, (0, 2), (2, 0)), [(2, 3, 4)]),
    "moveaxis": (lambda L: lambda x: L.moveaxis(x, [0, 1], [-1, -2]), [(2, 3, 4)]),
    "swapaxes": (lambda L: lambda x: x.swapaxes(0, -1), [(2, 3, 4)]),
    "swapdims-fn": (lambda L: lambda x: L.swapdims(x, 1, 0), [T(3, 2)]),
    "ravel": (lambda L: lambda x: x.ravel(), [(2, 3), T(3, 2), ()]),
    "view_as": (lambda L: lambda x: x.view_as(L.zeros(3, 2)), [(2, 3), (6,)]),
    "reshape_as": (lambda L: lambda x: x.reshape_as(L.zeros(3, 2)), [T(3, 2)]),
    "type_as": (lambda L: lambda x: x.type_as(L.zeros(1, dtype=L.float64)) * 2, [(2, 3)]),
    "broadcast_tensors": (lambda L: lambda x: _pieces(L, L.broadcast_tensors(x, L.ones(3, 1, 1), x[:1])), [(2, 3), T(3, 2)]),
}


def _params() -> list:
    return [
        pytest.param(name, shape, id=f"{name}-{_args(shape)[0]!r}")
        for name, (_, shapes) in CASES.items()
        for shape in shapes
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shape", _params())
def test_shape_op_matches_torch(name: str, shape: Any, dtype: str) -> None:
    make = CASES[name][0]
    run_both(make(tidu), make(torch), _args(shape), dtype)


@pytest.mark.parametrize(
    "lib_fn",
    [
        lambda L: L.cat([L.tensor([1, 2]), L.tensor([True])]),
        lambda L: L.stack([L.tensor([1, 2], dtype=L.int32), L.tensor([3, 4], dtype=L.int32)]),
        lambda L: L.arange(6).reshape(2, 3).roll(1, 1).flip(0).repeat(2, 1),
        lambda L: L.tensor([[True, False]]).expand(3, 2).T,
        lambda L: L.cat([L.zeros(0), L.zeros(0)]),
    ],
)
def test_integer_and_bool_dtypes(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_split_and_chunk_pieces_match_torch() -> None:
    for lib_fn in [
        lambda L: L.arange(10).reshape(2, 5).split(2, 1),
        lambda L: L.arange(10).split([3, 7]),
        lambda L: L.arange(3).chunk(5),
        lambda L: L.arange(6).chunk(4),
        lambda L: L.zeros(0).chunk(3),
        lambda L: L.zeros(0, 2).split(2),
    ]:
        ours, ref = lib_fn(tidu), lib_fn(torch)
        assert isinstance(ours, tuple)
        assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in ref]
        for a, b in zip(ours, ref):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_views_share_storage() -> None:
    x = tidu.zeros(2, 3)
    x.view(6).numpy()[0] = 1.0
    x.transpose(0, 1).numpy()[2, 1] = 2.0
    x.narrow(1, 1, 1).numpy()[0, 0] = 3.0
    x.split(1)[1].numpy()[0, 0] = 4.0
    np.testing.assert_array_equal(x.numpy(), [[1.0, 3.0, 0.0], [4.0, 0.0, 2.0]])
    for copy in (x.flip(0), x.roll(0), x.roll(3, 1), x.repeat(1, 1), tidu.cat([x]), x.roll(1)):
        copy.numpy()[...] = 9.0
    assert x.numpy().max() == 4.0, "flip, roll, repeat and cat copy, as in PyTorch"


@pytest.mark.parametrize("call", [
    "x.select(0, 5)", "x.select(2, 0)", "L.zeros(()).select(0, 0)", "x.select(0, -3)",
    "x.movedim(0, 5)", "x.movedim((0, 1), (1,))", "x.movedim((0, 0), (1, 0))", "x.movedim((0, 1), (1, 1))",
    "x.unbind(2)", "L.zeros(()).unbind()", "x.view_as(L.zeros(2, 2))", "x.t().view_as(L.zeros(6))",
])
def test_select_unbind_movedim_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"x": L.zeros(2, 3)})


def test_select_of_a_float_index_is_a_type_error_as_in_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library (PyTorch's message varies by version)
        with pytest.raises(TypeError, match="select"):
            L.zeros(2, 3).select(1, 1.0)


def test_select_unbind_and_movedim_are_views_as_in_torch() -> None:
    for L in (torch, tidu):  # noqa: N806
        x = L.zeros(2, 3)
        x.select(1, 2)[0] = 1.0
        x.unbind(0)[1][0] = 2.0
        x.movedim(0, 1)[1, 0] = 3.0
        x.ravel()[3] = 4.0 if x.ravel()[3] == 2.0 else -1.0
        assert x.tolist() == [[0.0, 3.0, 1.0], [4.0, 0.0, 0.0]]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_view_shares_storage_or_raises_as_in_torch(device: str) -> None:
    """``view`` never copies: where the strides allow no view it raises PyTorch's error (a copy
    would silently drop writes through it); ``reshape`` copies there."""
    calls = ["x.t().view(6)", "x.t().view(3, 2)", "x[:, 1:].view(4)", "x[:, ::2].view(4)", "x[:1].view(3)",
             "x.t()[:1].view(2)", "x.expand(2, 2, 3).view(12)", "x.unsqueeze(0).expand(2, 2, 3).view(2, 6)",
             "x[:, 0].view(2, 1)", "x.t().view(3, 1, 2)", "x[:0].t().view(0)", "x.t().reshape(6)"]
    for call in calls:
        results = []
        for lib, where in ((torch, "cpu"), (tidu, device)):
            x = lib.arange(6.0, device=where).reshape(2, 3)
            try:
                y = eval(call)  # noqa: S307 - the calls above
                y[...] = -1.0  # a view's write reaches its base (one into an expanded view raises)
            except RuntimeError as e:
                results.append(str(e))
                continue
            results.append((tuple(y.shape), x.cpu().numpy().tolist()))
        assert results[1] == results[0], call


def test_cat_of_many_tensors_is_one_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    from tidu.primitives.structural import concatenate

    calls = []
    kernel = concatenate.impls["cpu"]
    monkeypatch.setitem(concatenate.impls, "cpu", lambda *a, **k: calls.append(len(a)) or kernel(*a, **k))
    parts = [tidu.randn(2, 3, requires_grad=True) for _ in range(50)]
    out = tidu.cat(parts, dim=1)
    assert calls == [50]
    (out * out).sum().backward()
    np.testing.assert_allclose(parts[7].grad.numpy(), 2 * parts[7].detach().numpy(), rtol=1e-6)


BAD: dict[str, tuple[Callable, type, str]] = {
    "cat-sizes": (lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 4)]), RuntimeError, "Expected size 3 but got size 4"),
    "cat-ndim": (lambda L: L.cat([L.zeros(2, 3), L.zeros(3)]), RuntimeError, "same number of dimensions"),
    "cat-0d": (lambda L: L.cat([L.tensor(1.0)]), RuntimeError, "zero-dimensional"),
    "cat-empty-list": (lambda L: L.cat([]), ValueError, "non-empty"),
    "cat-tensor": (lambda L: L.cat(L.zeros(2, 3)), TypeError, "tuple of Tensors"),
    "cat-dim": (lambda L: L.cat([L.zeros(2, 3)], dim=2), IndexError, "Dimension out of range"),
    "stack-sizes": (lambda L: L.stack([L.zeros(2, 3), L.zeros(2, 4)]), RuntimeError, "equal size"),
    "stack-empty": (lambda L: L.stack([]), RuntimeError, "non-empty"),
    "reshape": (lambda L: L.zeros(2, 3).reshape(4, -1), RuntimeError, "invalid for input of size 6"),
    "reshape-two-inferred": (lambda L: L.zeros(2, 3).reshape(-1, -1), RuntimeError, "only one dimension"),
    "permute-dup": (lambda L: L.zeros(2, 3).permute(0, 0), RuntimeError, "duplicate dims"),
    "permute-count": (lambda L: L.zeros(2, 3).permute(0), RuntimeError, "number of dims"),
    "transpose-dim": (lambda L: L.zeros(2, 3).transpose(0, 2), IndexError, "Dimension out of range"),
    "t-3d": (lambda L: L.zeros(2, 3, 4).t(), RuntimeError, "<= 2 dimensions"),
    "mT-1d": (lambda L: L.zeros(3).mT, RuntimeError, "matrices"),
    "expand": (lambda L: L.zeros(2, 3).expand(2, 4), RuntimeError, "must match"),
    "expand-fewer": (lambda L: L.zeros(2, 3).expand(3), RuntimeError, "greater or equal"),
    "repeat-fewer": (lambda L: L.zeros(2, 3).repeat(2), RuntimeError, "can not be smaller"),
    "flip-dup": (lambda L: L.zeros(2, 3).flip(0, 0), RuntimeError, "multiple times"),
    "flip-dim": (lambda L: L.zeros(2, 3).flip(2), IndexError, "Dimension out of range"),
    "roll-align": (lambda L: L.zeros(2, 3).roll((1, 2), (0,)), RuntimeError, "must align"),
    "roll-0d-dim": (lambda L: L.tensor(1.0).roll(1, 0), IndexError, "no dimensions"),
    "narrow": (lambda L: L.zeros(6).narrow(0, 5, 2), RuntimeError, "exceeds dimension size"),
    "narrow-start": (lambda L: L.zeros(6).narrow(0, 7, 0), IndexError, "out of range"),
    "split-sizes": (lambda L: L.zeros(6).split([1, 2]), RuntimeError, "sum exactly to 6"),
    "split-zero": (lambda L: L.zeros(3).split(0), RuntimeError, "split_size can only be 0"),
    "chunk-zero": (lambda L: L.zeros(3).chunk(0), RuntimeError, "greater than 0"),
    "unflatten": (lambda L: L.zeros(2, 3).unflatten(1, (2, 2)), RuntimeError, "multiply up to"),
    "squeeze-dim": (lambda L: L.zeros(2, 3).squeeze(3), IndexError, "Dimension out of range"),
    "unsqueeze-dim": (lambda L: L.zeros(2).unsqueeze(3), IndexError, "Dimension out of range"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_like_torch(name: str) -> None:
    lib_fn, exc, message = BAD[name]
    with pytest.raises(exc):
        lib_fn(torch)
    with pytest.raises(exc, match=message):
        lib_fn(tidu)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_views_take_the_short_path_as_the_general_bind(device: str, monkeypatch: Any) -> None:
    """``transpose``, ``permute``, ``reshape`` and basic indexing bind through
    ``dispatch.bind_one``: PyTorch's values and gradients for a queued operand, a stale view, a
    reshape that must copy and a ``Parameter``, on a first and a repeated (cached) call; a
    write through such a view reaches its base; a tensor subclass takes the general ``bind``;
    bad dims raise on every call."""
    from tidu.core import deferred, dispatch

    monkeypatch.setattr(deferred, "ENABLED", True)
    calls: list[str] = []
    short = dispatch.bind_one
    for module in ("tidu.ops.shape", "tidu.ops.indexing"):
        monkeypatch.setattr(f"{module}.bind_one", lambda p, x, params: calls.append(p.name) or short(p, x, params))
    xs = np.random.default_rng(11).standard_normal((3, 4, 5))

    def chain(lib: Any, x: Any, w: Any) -> Any:
        base = x * 1.0
        stale = base[1]
        base.mul_(2.0)  # ``stale``'s place in the graph is stale
        queued = (x * 2.0).tanh()  # a queued operand
        a = queued.transpose(0, 2).reshape(5, 12)
        b = x.permute(2, 0, 1)[1:, :, 2].reshape(-1)  # a reshape of a non-contiguous view: a copy
        return a.sum() + (b * b).sum() + (stale.t() * w).sum()

    tx, tw = torch.tensor(xs, requires_grad=True), torch.nn.Parameter(torch.ones(5, 4, dtype=torch.float64))
    expected = chain(torch, tx, tw)
    expected.backward()
    for _ in range(2):
        calls.clear()
        x = tidu.tensor(xs, requires_grad=True, device=device)
        w = tidu.nn.Parameter(tidu.ones(5, 4, dtype=tidu.float64, device=device))
        out = chain(tidu, x, w)
        out.backward()
        assert calls == ["slice", "reshape", "transpose", "reshape", "transpose", "slice", "reshape", "reshape",
                         "transpose"]
        np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
        for got, want in ((x.grad, tx.grad), (w.grad, tw.grad)):
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-12, atol=1e-12)

    base = tidu.zeros(3, 4, device=device)
    view = base.t()
    view[0, 1] = 5.0
    assert base.cpu().numpy()[1, 0] == 5.0 and base._version is view._version

    class Other(tidu.Tensor):
        pass

    bound: list[str] = []
    monkeypatch.setattr(dispatch, "bind", lambda p, *a, **k: bound.append(p.name) or tidu.core.primitive.bind(p, *a, **k))
    other = Other(np.ones((2, 3)))
    assert other.t().shape == (3, 2) and bound == ["transpose"]
    for _ in range(2):
        with pytest.raises(RuntimeError, match="number of dims don't match"):
            x.permute(0, 1)
        with pytest.raises(RuntimeError, match="invalid for input of size 60"):
            x.reshape(7, -1)


@pytest.mark.parametrize("call", [
    "x.view(L.int32)", "x.view(L.float32)", "(x * 2).view(L.int32)", "x.detach().view(L.int16)", "x.detach().view(L.float64)",
    "L.ones(2, 3).t().view(L.int32)", "L.arange(6.).view(L.float64)[1:].view(L.int32)",
    "L.tensor([1.5, -2.0]).bfloat16().view(L.int16)", "L.tensor([16320, -16384], dtype=L.int16).view(L.bfloat16)",
    "L.arange(6.).reshape(2, 3)[:, 1:].view(L.int32)", "L.tensor([True, False]).view(L.uint8)",
])
def test_view_as_another_dtype_reads_the_bits_like_torch(call: str) -> None:
    """``view(dtype)``: the storage as another dtype, not differentiable (PyTorch's)."""
    results = []
    for L in (tidu, torch):
        x = L.ones(2, requires_grad=True)  # noqa: F841 - read by the calls
        r = eval(call)  # noqa: S307
        results.append((str(r.dtype).split(".")[-1], tuple(r.shape), r.requires_grad, r.float().tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize("call", ["L.ones(2, 3).t().view(L.int16)", "L.ones(()).view(L.int16)", "L.ones(3).view(L.float64)",
                                  "L.ones(4)[1:].view(L.float64)"])
def test_view_as_a_dtype_of_another_size_raises_like_torch(call: str) -> None:
    assert_same_error(call)


def test_a_write_through_a_dtype_view_reaches_the_tensor() -> None:
    y = tidu.zeros(2)
    version = y._version.value
    y.view(tidu.int32)[0] = 1065353216  # the bits of 1.0
    assert y.tolist() == [1.0, 0.0] and y._version.value > version
