"""In-place ops, version counters and views against PyTorch: values, gradients and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu

TOL = {"rtol": 1e-6, "atol": 1e-6}


def _grads(fn: Callable, shapes: list[tuple], L: Any, seed: int = 0) -> tuple[Any, list]:
    """Run ``fn(L, *leaves)`` -> out; backward of ``sum(out * w)``; return (out values, leaf grads)."""
    rng = np.random.default_rng(seed)
    leaves = [L.tensor(rng.uniform(0.5, 2.0, size=s).astype("float32"), requires_grad=True) for s in shapes]
    out = fn(L, *leaves)
    w = L.tensor(rng.uniform(-1, 1, size=tuple(out.shape)).astype("float32"))
    (out * w).sum().backward()
    return out.detach().numpy().copy(), [None if x.grad is None else x.grad.numpy() for x in leaves]


def check_like_torch(fn: Callable, *shapes: tuple) -> None:
    out, grads = _grads(fn, list(shapes), tidu)
    ref, ref_grads = _grads(fn, list(shapes), torch)
    np.testing.assert_allclose(out, ref, **TOL)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if r is None or (g is None and not r.any()):  # tidu leaves a zero gradient as None
            assert g is None or not g.any(), f"leaf {i}: tidu has a gradient, torch none"
        else:
            assert g is not None, f"leaf {i}: no gradient"
            np.testing.assert_allclose(g, r, err_msg=f"grad of leaf {i}", **TOL)


def _iadd(y: Any, x: Any) -> Any:
    y += x
    return y


def _ifloordiv(y: Any, x: Any) -> Any:
    y //= x
    return y


def _imod(y: Any, x: Any) -> Any:
    y %= x
    return y


def _isub(y: Any, x: Any) -> Any:
    y -= x * 2
    return y


def _imul(y: Any, x: Any) -> Any:
    y *= x
    return y


def _idiv(y: Any, x: Any) -> Any:
    y /= x
    return y


ON_NON_LEAF = {
    "add_-after-mul": lambda L, x: (lambda y: y.add_(1))(x * 2),
    "add_-tensor-alpha": lambda L, x, z: (x * 1).add_(z, alpha=3),
    "sub_-alpha": lambda L, x, z: (x * 1).sub_(z, alpha=0.5) * 1,
    "mul_-tensor": lambda L, x, z: (x * 3).mul_(z),
    "mul_-broadcast": lambda L, x, b: (x * 1).mul_(b),
    "div_-tensor": lambda L, x, z: (x + 1).div_(z),
    "div_-scalar": lambda L, x: (x.sin()).div_(4.0) * 1,
    "chain": lambda L, x, z: (x * 1).add_(z).mul_(z).sub_(1).div_(2),
    "iadd": lambda L, x, z: _iadd(x * 1, z),
    "isub": lambda L, x, z: _isub(x * 1, z),
    "imul": lambda L, x, z: _imul(x * 1, z),
    "itruediv": lambda L, x, z: _idiv(x * 1, z),
    "zero_": lambda L, x, z: (x * z).zero_() + x,
    "fill_-scalar": lambda L, x: (x * 2).fill_(3.0) * x,
    "fill_-0d-tensor": lambda L, x, s: (x * 2).fill_(s.sum()) * x,
    "copy_": lambda L, x, z: (x * 2).copy_(z) * x,
    "copy_-broadcast": lambda L, x, b: (x * 2).copy_(b),
    "copy_-float64-src": lambda L, x, z: (x * 2).copy_(z.double() * 3),
    "copy_-into-constant": lambda L, x: L.zeros(3, 4).copy_(x) * 2,
    "used-before-and-after": lambda L, x: (lambda y: y * y.add_(1))(x * 1),
    "clamp_": lambda L, x: (x * 2).clamp_(-1.0, 0.5) * x,
    "clip_-min-only": lambda L, x: (x * 2).clip_(min=0.0) * x,
    "masked_fill_": lambda L, x: (x * 2).masked_fill_(x > 0, 1.5) * x,
    "ifloordiv": lambda L, x: _ifloordiv((x * 3).detach(), 2.0) + x,  # torch has no derivative for floor_divide_
    "imod": lambda L, x: _imod(x * 3, 0.75) * x,
}
SHAPES = {"clamp_": [(3, 4)], "clip_-min-only": [(3, 4)], "masked_fill_": [(3, 4)], "ifloordiv": [(3, 4)],
          "imod": [(3, 4)], "add_-after-mul": [(3, 4)], "div_-scalar": [(3, 4)],
          "fill_-scalar": [(3, 4)], "fill_-0d-tensor": [(3, 4), ()], "mul_-broadcast": [(3, 4), (4,)],
          "copy_-broadcast": [(3, 4), (4,)], "copy_-into-constant": [(3, 4)], "used-before-and-after": [(3, 4)]}


@pytest.mark.parametrize("name", list(ON_NON_LEAF))
def test_inplace_on_non_leaf_matches_torch(name: str) -> None:
    check_like_torch(ON_NON_LEAF[name], *SHAPES.get(name, [(3, 4), (3, 4)]))


VIEWS = {
    "slice-mul_": lambda L, x: (lambda b: (b[1:3].mul_(2), b)[1])(x * 1),
    "slice-step-add_": lambda L, x, z: (lambda b: (b[::2].add_(z[::2]), b)[1])(x * 1),
    "int-index-copy_": lambda L, x, z: (lambda b: (b[1].copy_(z[0]), b)[1])(x * 2),
    "transpose-mul_": lambda L, x, z: (lambda b: (b.t().mul_(z.t()), b)[1])(x * 1),
    "view-add_": lambda L, x: (lambda b: (b.view(12).add_(1), b * b)[1])(x * 1),
    "reshape-div_": lambda L, x, z: (lambda b: (b.reshape(4, 3).div_(2), b * z)[1])(x * 1),
    "unsqueeze-mul_": lambda L, x, z: (lambda b: (b.unsqueeze(0).mul_(z), b)[1])(x * 1),
    "nested-slices": lambda L, x, z: (lambda b: (b[1:][:, 1:3].mul_(z[0, :2]), b)[1])(x * 1),
    "view-used-after": lambda L, x: (lambda b: (lambda v: (v.mul_(3), v * b[0:1])[1])(b[0:1]))(x * 1),
    "base-written-view-read": lambda L, x: (lambda b: (lambda v: (b.mul_(3), v * v)[1])(b[1:3]))(x * 1),
    "write-into-constant-buffer": lambda L, x: (lambda buf: (buf[1:3].copy_(x[:2] * 2), buf * buf)[1])(L.zeros(3, 4)),
    "view-then-base-in-place": lambda L, x: (lambda b: (lambda v: (v.add_(1), b.mul_(2), v * 1)[2])(b[0]))(x * 1),
}
VIEW_SHAPES = {"view-add_": [(3, 4)], "slice-mul_": [(3, 4)], "view-used-after": [(3, 4)],
               "base-written-view-read": [(3, 4)], "write-into-constant-buffer": [(3, 4)],
               "view-then-base-in-place": [(3, 4)], "unsqueeze-mul_": [(3, 4), (1, 3, 4)]}


@pytest.mark.parametrize("name", list(VIEWS))
def test_inplace_through_views_matches_torch(name: str) -> None:
    check_like_torch(VIEWS[name], *VIEW_SHAPES.get(name, [(3, 4), (3, 4)]))


def test_nodes_keep_only_what_their_backward_reads() -> None:
    """``b = a * 2`` reads the constant, not ``a``: nothing keeps ``a`` alive once dropped."""
    import gc
    import weakref

    x = tidu.ones(3, requires_grad=True)
    a = x.sin()
    ref = weakref.ref(a)
    b = a * 2
    del a
    gc.collect()
    assert ref() is None
    b.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(np.ones(3)), rtol=1e-6)


def test_mul_by_itself_in_place_keeps_the_original() -> None:
    """``y.mul_(y)``: the node keeps y's original value (PyTorch raises here; tidu is exact)."""
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(y)
    (y * 2).sum().backward()
    assert y.tolist() == [1.0, 4.0] and x.grad.tolist() == [4.0, 8.0]


@pytest.mark.smoke
def test_inplace_after_op_that_does_not_save_it() -> None:
    """mul by a constant saves nothing of y: modifying y afterwards is fine (as in torch)."""
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


MODIFIED_SAVED = {
    "exp-output": lambda L, x: (lambda y: (y.add_(1), y)[1])(x.exp()),
    "mul-operand": lambda L, x: (lambda y: (lambda z: (y.mul_(2), z)[1])(y * y))(x * 1),
    "through-view": lambda L, x: (lambda y: (lambda z: (y[0].mul_(2), z)[1])(y.sin()))(x * 1),
    "through-detach": lambda L, x: (lambda y: (lambda z: (y.detach().zero_(), z)[1])(y * y))(x * 1),
    "base-of-view-saved": lambda L, x: (lambda y: (lambda z: (y.view(-1).add_(1), z)[1])(y.sin()))(x * 1),
    "leaf-under-no-grad": lambda L, x: (lambda z: (L.no_grad().__enter__(), x.mul_(2), L.set_grad_enabled(True), z)[3])(
        x * x),
}


@pytest.mark.parametrize("name", list(MODIFIED_SAVED))
def test_modifying_a_saved_tensor_raises_at_backward(name: str) -> None:
    for L in (torch, tidu):
        x = L.ones(2, 3, requires_grad=True)
        out = MODIFIED_SAVED[name](L, x)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()


def _ops_on(t: Any) -> list[Callable]:
    return [lambda: t.add_(1), lambda: t.mul_(2), lambda: t.zero_(), lambda: t.fill_(1.0),
            lambda: t.copy_(t.detach() * 2), lambda: t.normal_(), lambda: t.uniform_(), lambda: t.sub_(1),
            lambda: t.div_(2)]


@pytest.mark.parametrize("i", range(9))
def test_inplace_on_leaf_requiring_grad_raises_at_once(i: int) -> None:
    for L in (torch, tidu):
        x = L.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            _ops_on(x)[i]()
        assert str(info.value) == "a leaf Variable that requires grad is being used in an in-place operation."
        assert x._version == 0 if L is torch else x._version.value == 0


def test_inplace_on_view_of_leaf_raises() -> None:
    for L in (torch, tidu):
        x = L.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError) as info:
            x[:2].add_(1)
        assert "a view of a leaf Variable that requires grad" in str(info.value)


def test_expanded_view_write_raises_like_torch() -> None:
    messages = []
    for L in (torch, tidu):
        with pytest.raises(RuntimeError) as info:
            L.zeros(2).expand(3, 2).add_(1)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_leaf_in_place_under_no_grad_updates_and_bumps_version() -> None:
    x = tidu.ones(3, requires_grad=True)
    with tidu.no_grad():
        x.mul_(3).sub_(1)
        x -= 1
    assert x.tolist() == [1.0, 1.0, 1.0] and x._version.value == 3 and x.is_leaf and x.requires_grad
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("write", ["zero_", "fill_", "copy_"])
def test_constant_write_keeps_a_non_leaf_in_the_graph(write: str) -> None:
    for L in (tidu, torch):
        x = L.ones(2, requires_grad=True)
        y = x * 2
        getattr(y, write)(*{"zero_": (), "fill_": (3.0,), "copy_": (L.ones(2),)}[write])
        assert y.requires_grad and not y.is_leaf
        (y * x).sum().backward()
        assert x.grad.tolist() == y.tolist()


def test_backward_from_a_stale_view_sees_the_base_write() -> None:
    def run(L: Any) -> Any:
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = x * 1
        v = b[1:]
        b.mul_(x)
        v.backward(L.tensor([1.0, 10.0]))
        return x.grad

    np.testing.assert_allclose(run(tidu).numpy(), run(torch).numpy())


def test_writes_through_data_are_not_versioned() -> None:
    for L in (tidu, torch):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        x.data.mul_(3)  # torch: not seen by autograd, no error at backward
        y.backward()
        assert x.grad.tolist() == [6.0, 12.0] and x.tolist() == [3.0, 6.0]


def test_views_share_the_version_counter() -> None:
    b = tidu.zeros(3, 4)
    for v in (b[1:], b.t(), b.view(12), b.reshape(2, 6), b.unsqueeze(0), b[0], b.detach(), b[None, ..., ::2]):
        assert v._version is b._version
    c = b.t().contiguous()  # a copy
    assert c._version is not b._version
    b[0:1].add_(1)
    assert b._version.value == 1 and b[0].tolist() == [1.0] * 4


ERRORS = {
    "int-add-float": (lambda L: L.zeros(2, dtype=L.int64).add_(1.5), RuntimeError),
    "bool-add-int": (lambda L: L.zeros(2, dtype=L.bool).add_(1), RuntimeError),
    "shape": (lambda L: L.zeros(2).add_(L.ones(2, 2)), RuntimeError),
    "fill-1d": (lambda L: L.zeros(2).fill_(L.ones(2)), RuntimeError),
    "normal-int": (lambda L: L.zeros(2, dtype=L.int64).normal_(), NotImplementedError),
    "copy-bad-shape": (lambda L: L.zeros(3).copy_(L.ones(2)), RuntimeError),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_inplace_errors_match_torch(name: str) -> None:
    fn, exc = ERRORS[name]
    with pytest.raises(exc) as ref:
        fn(torch)
    with pytest.raises(exc) as ours:
        fn(tidu)
    if name not in ("shape", "copy-bad-shape"):
        assert str(ours.value) == str(ref.value)


def test_dtype_casts_where_torch_allows() -> None:
    for fn in (lambda L: L.zeros(2).add_(L.tensor([1, 2])), lambda L: L.zeros(2, dtype=L.int64).copy_(L.tensor([1.7, -2.2])),
               lambda L: L.zeros(3, dtype=L.float64).fill_(True), lambda L: L.zeros(2, dtype=L.int32).mul_(L.tensor(3)),
               lambda L: L.tensor([True, False]).copy_(L.tensor([0.0, 2.0]))):
        ours, ref = fn(tidu), fn(torch)
        assert ours.tolist() == ref.tolist() and str(ours.dtype)[5:] == str(ref.dtype)[6:]


def test_random_in_place() -> None:
    tidu.manual_seed(3)
    x = tidu.zeros(2000, dtype=tidu.float64).uniform_(-2, 3)
    assert x.numpy().min() >= -2 and x.numpy().max() < 3 and x.dtype is tidu.float64
    y = tidu.zeros(4000).normal_(mean=1.0, std=2.0).numpy()
    assert abs(y.mean() - 1.0) < 0.15 and abs(y.std() - 2.0) < 0.15
    tidu.manual_seed(3)
    assert tidu.zeros(2000, dtype=tidu.float64).uniform_(-2, 3).tolist() == x.tolist()


def test_in_place_returns_self() -> None:
    x = tidu.zeros(2)
    assert x.add_(1) is x and x.zero_() is x and x.copy_(tidu.ones(2)) is x
    y = x
    y += 1
    assert y is x and x.tolist() == [2.0, 2.0]


VIEW_MAKERS = {
    "rows": lambda t: t[1:3],
    "cols-step": lambda t: t[:, ::2],
    "t": lambda t: t.t(),
    "row0": lambda t: t[0],
    "flat": lambda t: t.reshape(-1)[:6].view(2, 3),
    "unsq": lambda t: t.unsqueeze(0)[0, 1:],
}
def _src(v: Any, z: Any) -> Any:
    """A source of ``v``'s shape computed from the leaf ``z`` (4 x 4, so it has enough elements)."""
    return z.sin().reshape(-1)[: v.numel()].reshape(tuple(v.shape))


WRITES = {
    "add_": lambda v, z: v.add_(_src(v, z)),
    "mul_": lambda v, z: v.mul_(_src(v, z)),
    "mul_-scalar": lambda v, z: v.mul_(2.5),
    "copy_": lambda v, z: v.copy_(_src(v, z)),
    "copy_-broadcast": lambda v, z: v.copy_(z[0, 0] * 3),
    "zero_": lambda v, z: v.zero_(),
}


def _view_program(L: Any, x: Any, z: Any, steps: list) -> Any:
    b = x * 1
    views = []
    for make, write, reuse in steps:
        base = views[-1] if reuse and views and views[-1].ndim == 2 and views[-1].numel() >= 6 else b
        v = VIEW_MAKERS[make](base)
        WRITES[write](v, z)
        views.append(v)
    out = b * b
    for v in views:
        out = out.sum() + (v * v).sum()
    return out.reshape(1)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(list(VIEW_MAKERS)), st.sampled_from(list(WRITES)), st.booleans()),
                min_size=1, max_size=3))
def test_fuzz_writes_through_views_match_torch(steps: list) -> None:
    check_like_torch(lambda L, x, z: _view_program(L, x, z, steps), (3, 4), (4, 4))


NEW_OPS = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sin": lambda a, b: a.sin(),
           "exp": lambda a, b: (a * 0.3).exp()}
INPLACE_OPS = {  # in-place form, and its out-of-place meaning
    "add_": (lambda a, b: a.add_(b), lambda a, b: a + b),
    "mul_": (lambda a, b: a.mul_(b), lambda a, b: a * b),
    "mul_-scalar": (lambda a, b: a.mul_(0.5), lambda a, b: a * 0.5),
    "zero_": (lambda a, b: a.zero_(), lambda a, b: a * 0),
    "copy_": (lambda a, b: a.copy_(b), lambda a, b: b * 1),
}


def _run_program(L: Any, steps: list, functional: bool) -> tuple[Any, list]:
    x = L.tensor([0.3, -0.7, 1.1], requires_grad=True)
    z = L.tensor([0.9, 0.2, -0.4], requires_grad=True)
    vals = [x, z, x * 1]
    for kind, op, i, j in steps:
        a, b = vals[i % len(vals)], vals[j % len(vals)]
        if kind == "new":
            vals.append(NEW_OPS[op](a, b))
        elif i % len(vals) >= 2:  # only non-leaves are written in place
            inplace, outofplace = INPLACE_OPS[op]
            if functional:
                vals[i % len(vals)] = outofplace(a, b)
            else:
                inplace(a, b)
    loss = sum(v.sum() * (k + 1) for k, v in enumerate(vals))
    loss.backward()
    return loss, [x.grad, z.grad]


_steps = st.lists(st.one_of(
    st.tuples(st.just("new"), st.sampled_from(list(NEW_OPS)), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("inplace"), st.sampled_from(list(INPLACE_OPS)), st.integers(0, 9), st.integers(0, 9)),
), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(_steps)
def test_fuzz_in_place_programs_never_give_a_wrong_gradient(steps: list) -> None:
    """tidu raises where torch raises or gives the gradient of the same program written out of place;
    where torch runs, tidu runs and agrees."""
    truth = _run_program(torch, steps, functional=True)
    try:
        torch_ok = _run_program(torch, steps, functional=False)
    except RuntimeError as err:
        assert "modified by an inplace operation" in str(err)
        torch_ok = None
    try:
        ours = _run_program(tidu, steps, functional=False)
    except RuntimeError as err:
        assert torch_ok is None, f"tidu raised where torch runs: {err}"
        assert "modified by an inplace operation" in str(err)
        return
    np.testing.assert_allclose(ours[0].item(), truth[0].item(), rtol=1e-5)
    for g, r in zip(ours[1], truth[1]):
        if r is None or g is None:
            assert (g is None or not g.numpy().any()) and (r is None or not r.numpy().any())
        else:
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_writing_a_quotient_keeps_its_backward() -> None:
    """``div`` saves its operands, not its output (as PyTorch): the quotient written in place
    leaves the backward of ``x / y`` intact."""

    def fn(L: Any, x: Any, y: Any) -> Any:
        q = x / y
        out = q * 1.0
        q.mul_(3.0)
        return out + q

    check_like_torch(fn, (3,), (3,))


def test_view_of_a_written_base_requires_grad_like_torch() -> None:
    """A view taken before its base was written in place by a tensor that requires grad reports
    the base's new graph position (``requires_grad``, ``grad_fn``, ``is_leaf``), as PyTorch's."""
    for L in (tidu, torch):
        w = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        base = L.zeros(3)
        view = base[1:]
        assert not view.requires_grad
        base.add_(w)
        assert view.requires_grad and view.grad_fn is not None and not view.is_leaf, L.__name__
        view.retain_grad()
        (view * view).sum().backward()
        np.testing.assert_allclose(w.grad.tolist(), [0.0, 4.0, 6.0])
        np.testing.assert_allclose(view.grad.tolist(), [4.0, 6.0])


@pytest.mark.parametrize("write", ["copy_", "fill_", "fill_tensor", "zero_", "view_fill_"])
def test_an_overwritten_value_gets_a_zero_gradient_like_torch(write: str) -> None:
    """``copy_``/``fill_``/``zero_`` give the value they overwrite a gradient of zeros (PyTorch's
    rule), so the leaves behind it get ``.grad`` zeros, not ``None``; an inf in it stays out."""
    results = []
    for L in (tidu, torch):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = L.tensor([4.0, 5.0, 6.0], requires_grad=True)
        y = x * 2
        y = y / (y - 2.0)  # an inf at x == 1
        if write == "copy_":
            y.copy_(w * 3)
        elif write == "fill_":
            y.fill_(0.5)
        elif write == "fill_tensor":
            y.fill_(w.sum() / 10)
        elif write == "zero_":
            y.zero_()
        else:
            y[1:].fill_(0.5)
        (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append([None if t.grad is None else t.grad.numpy() for t in (x, w)] + [y.detach().numpy()])
    for got, want in zip(*results, strict=True):  # the inf's nan gradient included, as PyTorch's
        assert (got is None) == (want is None)
        np.testing.assert_array_equal(got, want)


def test_copying_into_a_tensor_every_step_like_torch() -> None:
    """A buffer that takes ``copy_(w)`` every step keeps its overwritten history in the graph with
    a zero gradient. Walking it again (each step's backward does) reads nothing the last step
    freed, as PyTorch's ``copy_`` saves nothing; with ``copy_(w * 2)`` it reaches the freed 2 of
    the last step's product, and both raise."""
    for source, raises in ((lambda w: w, False), (lambda w: w * 2, True)):
        outcomes = []
        for L in (tidu, torch):
            w = L.tensor([1.0, 2.0], requires_grad=True)
            buffer = L.zeros(2)
            try:
                for _ in range(3):
                    buffer.copy_(source(w))
                    (buffer * buffer).sum().backward()
            except RuntimeError as e:
                outcomes.append(str(e))
            else:
                outcomes.append(w.grad.tolist())
        assert outcomes[0] == outcomes[1]
        assert isinstance(outcomes[0], str) == raises


def test_a_key_written_after_attention_keeps_its_backward() -> None:
    """``scaled_dot_product_attention`` scales its operands before the product, as PyTorch's
    math path does, so writing the key in place afterwards does not fail the backward."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 1, 4, 4))
    results = []
    for L in (tidu, torch):
        q, v = (L.tensor(d, requires_grad=True) for d in (data[0], data[2]))
        k = L.tensor(data[1])
        out = L.nn.functional.scaled_dot_product_attention(q, k, v)
        k.mul_(2.0)
        out.sum().backward()
        results.append((out.detach().numpy(), q.grad.numpy(), v.grad.numpy()))
    for got, want in zip(*results, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_writing_a_normalized_output_keeps_its_backward() -> None:
    """``layer_norm`` saves its input, not its output (as PyTorch's), so the normalized tensor
    written in place leaves its backward intact."""

    def fn(L: Any, x: Any) -> Any:
        y = L.nn.functional.layer_norm(x, (3,))
        out = y * 2.0
        y.mul_(3.0)
        return out + y

    check_like_torch(fn, (2, 3))


@pytest.mark.parametrize("write", ["add", "setitem", "view_of_view"])
@pytest.mark.parametrize(("base_grad", "value_grad"), [(True, True), (True, False), (False, True), (False, False)])
def test_a_view_made_under_no_grad_refuses_a_write_with_grad_as_pytorch_does(write, base_grad, value_grad):
    """PyTorch forbids the write when it involves autograd (the base or the value requires grad);
    without either it goes through. (A view of such a view gets the same message here; PyTorch's
    names the outer view's op.)"""
    outcomes = []
    for lib in (torch, tidu):
        y = lib.ones(4, requires_grad=base_grad) * 2
        with lib.no_grad():
            v = y[0:2]
        value = lib.ones(1, requires_grad=value_grad)
        try:
            if write == "add":
                v.add_(value)
            elif write == "setitem":
                v[0] = value[0]
            else:
                v[0:1].mul_(value)
            outcomes.append(("ok", v.detach().tolist()))
        except RuntimeError as e:
            assert "created in no_grad mode and is being modified inplace with grad mode enabled" in str(e)
            outcomes.append(("raised", None))
    assert outcomes[0] == outcomes[1]
    assert (outcomes[0][0] == "raised") == (base_grad or value_grad)
