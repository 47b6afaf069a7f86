"""tidu.autograd.Function against torch.autograd.Function: reverse, create_graph, forward mode, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func

import tidu

from ._table import arrays, close


def make(lib: Any, with_jvp: bool, ctx_in_forward: bool = False) -> type:
    """The same custom function for both libraries: (x * sin(y) * k, x + y) with a hand-written backward,
    in PyTorch's setup_context style (which torch.func needs) or with ``ctx`` in ``forward``."""

    class MulSin(lib.autograd.Function):
        generate_vmap_rule = True  # torch.func.hessian vmaps torch's; tidu ignores it

        if ctx_in_forward:
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any, k: float) -> Any:
                ctx.save_for_backward(x, y)
                ctx.k = k
                return x * y.sin() * k, x + y
        else:
            @staticmethod
            def forward(x: Any, y: Any, k: float) -> Any:
                return x * y.sin() * k, x + y

            @staticmethod
            def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
                x, y, ctx.k = inputs
                ctx.save_for_backward(x, y)
                ctx.save_for_forward(x, y)

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            x, y = ctx.saved_tensors
            return g1 * y.sin() * ctx.k + g2, g1 * x * y.cos() * ctx.k + g2, None

        if with_jvp:
            @staticmethod
            def jvp(ctx: Any, dx: Any, dy: Any, dk: Any) -> Any:
                x, y = ctx.saved_tensors
                return (dx * y.sin() + x * y.cos() * dy) * ctx.k, dx + dy

    return MulSin


def _inputs(lib: Any) -> tuple[Any, Any]:
    x, y = arrays([(3,), (3,)], 0)
    return lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)


def _loss(fn: type, x: Any, y: Any) -> Any:
    a, b = fn.apply(x, y, 1.5)
    return (a * a).sum() + (b * a).sum()


@pytest.mark.parametrize("ctx_in_forward", [True, False])
def test_backward_matches_torch(ctx_in_forward: bool) -> None:
    x, y = _inputs(tidu)
    tx, ty = _inputs(torch)
    _loss(make(tidu, False, ctx_in_forward), x, y).backward()
    _loss(make(torch, False, ctx_in_forward), tx, ty).backward()
    close((x.grad, y.grad), (tx.grad, ty.grad), 1e-13)


def test_needs_input_grad_and_non_tensor_arguments() -> None:
    seen = {}

    class Scale(tidu.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any, k: float) -> Any:
            seen["needs"] = ctx.needs_input_grad
            return x * y * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g, None, None

    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    Scale.apply(x, tidu.tensor([3.0, 4.0]), 2.0).sum().backward()
    assert seen["needs"] == (True, False, False)
    assert x.grad.tolist() == [1.0, 1.0]


def test_second_order_through_backward_written_with_tidu_ops_matches_torch() -> None:
    x, y = _inputs(tidu)
    tx, ty = _inputs(torch)
    gx, gy = tidu.autograd.grad(_loss(make(tidu, False), x, y), (x, y), create_graph=True)
    tgx, tgy = torch.autograd.grad(_loss(make(torch, False), tx, ty), (tx, ty), create_graph=True)
    close(tidu.autograd.grad((gx * gy).sum(), (x, y)), torch.autograd.grad((tgx * tgy).sum(), (tx, ty)), 1e-12)


def test_func_transforms_of_a_function_match_torch() -> None:
    x0, y0 = (t.detach() for t in _inputs(tidu))
    tx0, ty0 = (t.detach() for t in _inputs(torch))
    ours, theirs = make(tidu, True), make(torch, True)

    def loss(lib_fn: type) -> Any:
        return lambda x, y: _loss(lib_fn, x, y)

    close(tidu.func.grad(loss(ours), argnums=(0, 1))(x0, y0), torch.func.grad(loss(theirs), argnums=(0, 1))(tx0, ty0))
    close(tidu.func.hessian(loss(ours), argnums=1)(x0, y0), torch.func.hessian(loss(theirs), argnums=1)(tx0, ty0),
          1e-10)
    f_ours, f_theirs = (lambda x: ours.apply(x, y0, 1.5)), (lambda x: theirs.apply(x, ty0, 1.5))
    close(tidu.func.jvp(f_ours, (x0,), (y0,)), torch.func.jvp(f_theirs, (tx0,), (ty0,)))
    close(tidu.func.jacfwd(f_ours)(x0), torch.func.jacfwd(f_theirs)(tx0))
    close(tidu.func.jacrev(f_ours)(x0), torch.func.jacrev(f_theirs)(tx0))


def test_third_order_of_a_function() -> None:
    class Cube(tidu.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    d3 = tidu.func.grad(tidu.func.grad(tidu.func.grad(lambda x: Cube.apply(x.sin()))))
    x = 0.4
    want = 6 * np.cos(x) ** 3 - 21 * np.sin(x) ** 2 * np.cos(x)  # d3/dx3 sin(x)**3
    assert d3(tidu.tensor(x, dtype=tidu.float64)).item() == pytest.approx(want, rel=1e-12)


def test_forward_mode_without_jvp_raises_a_clear_error() -> None:
    fn = make(tidu, False)
    x, y = (t.detach() for t in _inputs(tidu))
    with pytest.raises(RuntimeError, match="MulSin.*defines no jvp.*forward-mode"):
        tidu.func.jvp(lambda a: fn.apply(a, y, 1.0)[0], (x,), (x,))
    tfn = make(torch, False)
    with pytest.raises(RuntimeError):
        torch.func.jvp(lambda a: tfn.apply(a, torch.ones(3), 1.0)[0], (torch.ones(3),), (torch.ones(3),))


def test_backward_with_the_wrong_number_of_gradients_raises_like_torch() -> None:
    def bad(lib: Any) -> type:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any) -> Any:
                return x * y

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g

        return Bad

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        bad(torch).apply(torch.ones(2, requires_grad=True), torch.ones(2)).sum().backward()
    with pytest.raises(RuntimeError, match="incorrect number of gradients \\(expected 2, got 1\\)"):
        bad(tidu).apply(tidu.ones(2, requires_grad=True), tidu.ones(2)).sum().backward()


def test_mark_non_differentiable_and_returned_input() -> None:
    class SortLike(tidu.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            flag = (x > 0).to(x.dtype)
            ctx.mark_non_differentiable(flag)
            return x, flag

        @staticmethod
        def backward(ctx: Any, g: Any, g_flag: Any) -> Any:
            return g * 2

    x = tidu.tensor([1.0, -1.0], requires_grad=True)
    same, flag = SortLike.apply(x)
    assert same is not x and same.requires_grad and not flag.requires_grad
    same.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_no_recording_without_grad() -> None:
    fn = make(tidu, False)
    a, b = fn.apply(tidu.ones(2), tidu.ones(2), 1.0)
    assert not a.requires_grad and not b.requires_grad
    with tidu.no_grad():
        a, _ = fn.apply(tidu.ones(2, requires_grad=True), tidu.ones(2), 1.0)
    assert not a.requires_grad


def test_vmap_of_a_function_raises() -> None:
    fn = make(tidu, False)
    with pytest.raises(RuntimeError, match="does not support vmap"):
        tidu.func.vmap(lambda a: fn.apply(a, a, 1.0)[0])(tidu.ones(2, 3))


def _dirty(lib: Any) -> type:
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    return Double


def test_mark_dirty_keeps_the_tensor_and_takes_its_place_in_the_graph() -> None:
    """An input written in place by ``forward`` and returned: the same tensor, its history now the
    function's (PyTorch's ``ctx.mark_dirty``), also through a view into its base."""
    results = []
    for lib in (tidu, torch):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 1
        out = _dirty(lib).apply(b)
        view_base = a * 1
        _dirty(lib).apply(view_base[1:])
        ((out * out).sum() + (view_base * view_base).sum()).backward()
        results.append((out is b, out.tolist(), view_base.tolist(), a.grad.tolist()))
    assert results[0] == results[1]
    assert results[0][0]


def test_mark_dirty_on_a_leaf_that_requires_grad_raises_like_torch() -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(lambda lib: _dirty(lib).apply(lib.ones(2, requires_grad=True)))


def test_once_differentiable_backward_refuses_a_second_differentiation_like_torch() -> None:
    results = []
    for lib in (tidu, torch):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return 2 * x * g

        x = lib.tensor([3.0], requires_grad=True)
        (plain,) = lib.autograd.grad((Square.apply(x) * x).sum(), x)
        # under create_graph the cotangent reaching Square's backward (x) requires grad
        (g,) = lib.autograd.grad((Square.apply(x) * x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="differentiate twice a function that was marked with @once_differentiable"):
            g.sum().backward()
        (seeded,) = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)  # a constant cotangent
        results.append((plain.tolist(), g.tolist(), g.requires_grad, seeded.requires_grad))
    assert results[0] == results[1]


def test_a_gradient_of_the_wrong_shape_is_named_like_torch() -> None:
    from tests.test_torch_oracle import assert_same_error

    def call(lib: Any) -> Any:
        class Sum(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x.sum()

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return lib.ones(3)

        return Sum.apply(lib.ones(2, requires_grad=True)).backward()

    assert_same_error(call)
