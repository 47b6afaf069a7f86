"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian against torch.func and finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func

import tidu
from tidu.func import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp

from ._table import FUNCS, arrays, both, close, fd_jacobian


def _scalar(fn: Any) -> Any:
    return lambda *xs: (fn(*xs) ** 2).sum()


@pytest.mark.parametrize("name", list(FUNCS))
def test_jacrev_and_jacfwd_match_torch_for_every_argument(name: str) -> None:
    fn, shapes = FUNCS[name]
    ours, theirs = both(arrays(shapes, 0))
    argnums = tuple(range(len(shapes)))
    want = torch.func.jacrev(fn, argnums=argnums)(*theirs)
    close(jacrev(fn, argnums=argnums)(*ours), want)
    close(jacfwd(fn, argnums=argnums)(*ours), want)


@pytest.mark.parametrize("name", list(FUNCS))
def test_jacobian_matches_finite_differences(name: str) -> None:
    fn, shapes = FUNCS[name]
    values = arrays(shapes, 1)
    ours, _ = both(values)
    for k in range(len(shapes)):
        want = fd_jacobian(fn, values, k)
        np.testing.assert_allclose(jacrev(fn, argnums=k)(*ours).numpy(), want, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(jacfwd(fn, argnums=k)(*ours).numpy(), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", list(FUNCS))
def test_grad_vjp_jvp_match_torch(name: str) -> None:
    fn, shapes = FUNCS[name]
    ours, theirs = both(arrays(shapes, 2))
    argnums = tuple(range(len(shapes)))
    close(grad(_scalar(fn), argnums=argnums)(*ours), torch.func.grad(_scalar(fn), argnums=argnums)(*theirs))
    g, v = grad_and_value(_scalar(fn))(*ours)
    rg, rv = torch.func.grad_and_value(_scalar(fn))(*theirs)
    close((g, v), (rg, rv))
    out, vjp_fn = vjp(fn, *ours)
    rout, rvjp_fn = torch.func.vjp(fn, *theirs)
    ct_np = arrays([tuple(rout.shape)], 3)[0]
    close(out, rout)
    close(vjp_fn(tidu.tensor(ct_np)), rvjp_fn(torch.tensor(ct_np)))
    t_ours, t_theirs = both(arrays(shapes, 4))
    close(jvp(fn, ours, t_ours), torch.func.jvp(fn, theirs, t_theirs))
    assert not out.requires_grad and not g.requires_grad


@pytest.mark.parametrize("name", ["elementwise", "reductions", "slices", "softmax", "mlp", "gelu-scalar"])
def test_hessian_of_a_scalar_loss_matches_torch_and_finite_differences(name: str) -> None:
    fn, shapes = FUNCS[name]
    values = arrays(shapes, 5)
    ours, theirs = both(values)
    loss = _scalar(fn)
    h = hessian(loss)(*ours)
    close(h, torch.func.hessian(loss)(*theirs), 1e-9)
    fd = fd_jacobian(lambda *xs: grad(loss)(*xs), values, 0)
    np.testing.assert_allclose(h.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_compositions_match_torch() -> None:
    x_np = arrays([(3,)], 6)[0]
    x, tx = tidu.tensor(x_np), torch.tensor(x_np)

    def f(v: Any) -> Any:
        return (v.sin() * v.exp()).sum() * v.mean()

    close(grad(lambda v: grad(f)(v).sum())(x), torch.func.grad(lambda v: torch.func.grad(f)(v).sum())(tx))
    close(jacfwd(jacrev(f))(x), torch.func.jacfwd(torch.func.jacrev(f))(tx), 1e-9)
    close(jacrev(jacrev(f))(x), torch.func.jacrev(torch.func.jacrev(f))(tx), 1e-9)
    close(jacrev(jacfwd(f))(x), torch.func.jacrev(torch.func.jacfwd(f))(tx), 1e-9)
    v = tidu.tensor([1.0, -0.5, 2.0], dtype=tidu.float64)
    close(jvp(grad(f), (x,), (v,)), torch.func.jvp(torch.func.grad(f), (tx,), (torch.tensor(v.numpy()),)))
    third = jacfwd(jacfwd(jacrev(f)))(x)
    close(third, torch.func.jacfwd(torch.func.jacfwd(torch.func.jacrev(f)))(tx), 1e-8)


def test_grad_of_grad_of_scalar_function_to_third_order() -> None:
    d3 = grad(grad(grad(lambda x: x.sin() * x * x)))
    x = 0.7
    want = -x * x * np.cos(x) - 6 * x * np.sin(x) + 6 * np.cos(x)
    assert d3(tidu.tensor(x, dtype=tidu.float64)).item() == pytest.approx(want, rel=1e-12)


def test_closure_over_an_outer_variable_is_differentiated_correctly() -> None:
    """The inner grad is with respect to y only; the outer one sees x through it (no confusion)."""

    def outer(x: Any) -> Any:
        return grad(lambda y: (x * y * y).sum())(x * 0 + 1.5).sum()

    x_np = np.array([0.3, -2.0])
    close(grad(outer)(tidu.tensor(x_np)),
          torch.func.grad(lambda x: torch.func.grad(lambda y: (x * y * y).sum())(x * 0 + 1.5).sum())(
              torch.tensor(x_np)))


def test_pytrees_argnums_and_has_aux_match_torch() -> None:
    a_np, b_np, c_np = arrays([(2,), (3,), (2, 3)], 7)

    def f(params: Any, c: Any) -> Any:
        out = (params["a"][:, None] * params["b"] * c).sum() + (params["b"] ** 2).sum()
        return out, {"aux": c.sum()}

    ours = ({"a": tidu.tensor(a_np), "b": tidu.tensor(b_np)}, tidu.tensor(c_np))
    theirs = ({"a": torch.tensor(a_np), "b": torch.tensor(b_np)}, torch.tensor(c_np))
    close(grad(f, argnums=(0, 1), has_aux=True)(*ours), torch.func.grad(f, argnums=(0, 1), has_aux=True)(*theirs))
    close(grad_and_value(f, has_aux=True)(*ours), torch.func.grad_and_value(f, has_aux=True)(*theirs))
    close(jacrev(f, has_aux=True)(*ours), torch.func.jacrev(f, has_aux=True)(*theirs))
    close(jacfwd(f, argnums=1, has_aux=True)(*ours), torch.func.jacfwd(f, argnums=1, has_aux=True)(*theirs))
    out, fn, aux = vjp(f, *ours, has_aux=True)
    rout, rfn, raux = torch.func.vjp(f, *theirs, has_aux=True)
    close((out, aux), (rout, raux))
    close(fn(tidu.tensor(2.0, dtype=tidu.float64)), rfn(torch.tensor(2.0, dtype=torch.float64)))
    close(jvp(f, ours, ours, has_aux=True), torch.func.jvp(f, theirs, theirs, has_aux=True))


def test_multiple_outputs_and_negative_argnums() -> None:
    def f(x: Any, y: Any) -> Any:
        return (x * y, [x.sum(), y.exp()])

    (x, y), (tx, ty) = both(arrays([(2,), (2,)], 8))
    close(jacrev(f, argnums=-1)(x, y), torch.func.jacrev(f, argnums=-1)(tx, ty))
    close(jacfwd(f, argnums=(0, 1))(x, y), torch.func.jacfwd(f, argnums=(0, 1))(tx, ty))
    _, fn = vjp(f, x, y)
    _, rfn = torch.func.vjp(f, tx, ty)
    ct = (tidu.tensor([1.0, 2.0], dtype=tidu.float64), [tidu.tensor(3.0, dtype=tidu.float64),
                                                         tidu.tensor([0.5, 0.5], dtype=tidu.float64)])
    rct = (torch.tensor([1.0, 2.0], dtype=torch.float64), [torch.tensor(3.0, dtype=torch.float64),
                                                           torch.tensor([0.5, 0.5], dtype=torch.float64)])
    close(fn(ct), rfn(rct))


def test_unused_input_gets_a_zero_gradient_like_torch() -> None:
    (x, y), (tx, ty) = both(arrays([(2,), (3,)], 9))
    close(grad(lambda a, b: a.sum(), argnums=(0, 1))(x, y),
          torch.func.grad(lambda a, b: a.sum(), argnums=(0, 1))(tx, ty))


def test_float32_keeps_its_dtype() -> None:
    x = np.array([0.3, 0.9], np.float32)
    close(jacrev(lambda v: v.tanh())(tidu.tensor(x)), torch.func.jacrev(torch.tanh)(torch.tensor(x)), 1e-6)
    close(hessian(lambda v: v.exp().sum())(tidu.tensor(x)),
          torch.func.hessian(lambda v: v.exp().sum())(torch.tensor(x)), 1e-6)


def test_inputs_that_require_grad_stay_connected() -> None:
    """Like torch.func, a transform of tensors that require grad is differentiable again."""
    x = tidu.tensor([0.5, 1.5], dtype=tidu.float64, requires_grad=True)
    g = grad(lambda v: (v**3).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy(), rtol=1e-14)


def test_bert_ffn_hessian_wrt_w1_matches_finite_differences_of_its_gradient() -> None:
    from tests.test_parity_ffn import M, N, ffn_loss, seed_values

    values = seed_values(np.float64)
    x, b1, w2 = (tidu.tensor(values[k]) for k in ("x", "b1", "w2"))

    def loss(w1: Any) -> Any:
        return ffn_loss(x, w1, b1, w2, explicit=False)

    w1 = values["w1"]
    h = hessian(loss)(tidu.tensor(w1))
    assert tuple(h.shape) == w1.shape + w1.shape
    fd = fd_jacobian(lambda w: grad(loss)(w), [w1], 0)
    np.testing.assert_allclose(h.numpy(), fd, rtol=1e-6, atol=1e-8)
    ref = torch.func.hessian(lambda w: ffn_loss(*(torch.tensor(values[k]) if k != "w1" else w for k in (
        "x", "w1", "b1", "w2")), explicit=False, gelu=torch.nn.functional.gelu))(torch.tensor(w1))
    close(h, ref, 1e-10)
    assert (M, N) == (2, 4)


# errors: the class torch.func raises, and a message naming the problem
def _raises_like_torch(ours: Any, theirs: Any, match: str) -> None:
    with pytest.raises(Exception) as ref:
        theirs()
    with pytest.raises(type(ref.value), match=match):
        ours()


def test_grad_of_a_non_scalar_output_raises() -> None:
    _raises_like_torch(lambda: grad(lambda v: v * 2)(tidu.ones(3)),
                       lambda: torch.func.grad(lambda v: v * 2)(torch.ones(3)), "scalar Tensor.*shape \\(3,\\)")


def test_grad_of_a_one_element_non_scalar_output_raises_like_torch() -> None:
    _raises_like_torch(lambda: grad(lambda v: v.sum(dim=0, keepdim=True))(tidu.ones(3)),
                       lambda: torch.func.grad(lambda v: v.sum(dim=0, keepdim=True))(torch.ones(3)),
                       "scalar Tensor.*1 dims")


def test_grad_of_a_non_tensor_output_raises() -> None:
    _raises_like_torch(lambda: grad(lambda v: 3.0)(tidu.ones(3)),
                       lambda: torch.func.grad(lambda v: 3.0)(torch.ones(3)), "return a Tensor, got float")


def test_argnums_out_of_range_raises() -> None:
    _raises_like_torch(lambda: grad(lambda v: v.sum(), argnums=2)(tidu.ones(3)),
                       lambda: torch.func.grad(lambda v: v.sum(), argnums=2)(torch.ones(3)),
                       "argnums=2, but only 1 positional inputs")
    _raises_like_torch(lambda: jacrev(lambda v: v, argnums=(0, 1))(tidu.ones(3)),
                       lambda: torch.func.jacrev(lambda v: v, argnums=(0, 1))(torch.ones(3)),
                       "argnums=1, but only 1 positional inputs")


def test_has_aux_without_a_pair_raises() -> None:
    _raises_like_torch(lambda: grad(lambda v: v.sum(), has_aux=True)(tidu.ones(3)),
                       lambda: torch.func.grad(lambda v: v.sum(), has_aux=True)(torch.ones(3)), "tuple")


def test_jvp_structure_mismatch_raises() -> None:
    _raises_like_torch(lambda: jvp(tidu.sin, (tidu.ones(2),), (tidu.ones(3),)),
                       lambda: torch.func.jvp(torch.sin, (torch.ones(2),), (torch.ones(3),)), "shape")


def test_linear_transpose_matches_the_adjoint() -> None:
    a_np = arrays([(3, 4)], 10)[0]
    a = tidu.tensor(a_np)

    def f(x: Any, y: Any) -> Any:
        return (a @ x) * 2 - y[1:].sum() + x.sum()

    x0, y0 = tidu.zeros(4, dtype=tidu.float64), tidu.zeros(3, dtype=tidu.float64)
    f_t = tidu.linear_transpose(f, x0, y0)
    ct = arrays([(3,)], 11)[0]
    gx, gy = f_t(tidu.tensor(ct))
    np.testing.assert_allclose(gx.numpy(), 2 * a_np.T @ ct + ct.sum(), rtol=1e-13)
    np.testing.assert_allclose(gy.numpy(), [0.0, -ct.sum(), -ct.sum()], rtol=1e-13)
    # <f(x), ct> == <x, f_t(ct)> for random x, y
    xr, yr = arrays([(4,), (3,)], 12)
    lhs = (f(tidu.tensor(xr), tidu.tensor(yr)).numpy() * ct).sum()
    assert lhs == pytest.approx(xr @ gx.numpy() + yr @ gy.numpy(), rel=1e-12)


def test_linear_transpose_rejects_a_non_linear_function() -> None:
    with pytest.raises(TypeError, match="not linear.*'mul'"):
        tidu.linear_transpose(lambda x: x * x, tidu.zeros(2))
    with pytest.raises(TypeError, match="not linear.*'exp'"):
        tidu.linear_transpose(lambda x: x.exp(), tidu.zeros(2))
