"""vmap against torch.func.vmap: in_dims/out_dims, nesting, composition with grad, the loop fallback."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.func
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tidu.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

from ._table import FUNCS, arrays, both, close, lib


@pytest.mark.parametrize("name", list(FUNCS))
def test_vmap_over_the_table_matches_torch(name: str) -> None:
    fn, shapes = FUNCS[name]
    batched = [(3, *s) for s in shapes]
    ours, theirs = both(arrays(batched, 0))
    close(vmap(fn)(*ours), torch.func.vmap(fn)(*theirs))
    in_dims = (0, *[None] * (len(shapes) - 1))
    mixed = (ours[0], *[x[0] for x in ours[1:]])
    tmixed = (theirs[0], *[x[0] for x in theirs[1:]])
    close(vmap(fn, in_dims=in_dims)(*mixed), torch.func.vmap(fn, in_dims=in_dims)(*tmixed))


def test_tensor_methods_inside_vmap_match_torch() -> None:
    """``clone``, ``detach``, ``contiguous``, ``numel`` and the ``new_*`` factories work on batched
    values, as on torch.func's; ``detach`` cuts the gradient of ``vmap(grad(f))`` as there."""
    (a, b), (ta, tb) = both(arrays([(3, 4), (4,)], 0))

    def f(x: Any, y: Any) -> Any:
        z = x.clone() * y.contiguous()
        return (z * z.detach() + x.new_ones(4) * x.numel() + x.new_zeros(4)).sum()

    close(vmap(f, in_dims=(0, None))(a, b), torch.func.vmap(f, in_dims=(0, None))(ta, tb))
    close(vmap(grad(f), in_dims=(0, None))(a, b), torch.func.vmap(torch.func.grad(f), in_dims=(0, None))(ta, tb))


def test_in_dims_and_out_dims_match_torch() -> None:
    (a, b), (ta, tb) = both(arrays([(2, 4, 3), (3, 4)], 1))

    def f(x: Any, y: Any) -> Any:
        return x @ y, x.sum()

    close(vmap(f, in_dims=(1, None), out_dims=(1, 0))(a, b), torch.func.vmap(f, in_dims=(1, None), out_dims=(1, 0))(ta, tb))
    close(vmap(f, in_dims=(-2, None), out_dims=-1)(a, b), torch.func.vmap(f, in_dims=(-2, None), out_dims=-1)(ta, tb))


def test_pytree_inputs_and_unbatched_outputs() -> None:
    (w, x), (tw, tx) = both(arrays([(3,), (5, 3)], 2))

    def f(p: Any, v: Any) -> Any:
        return {"y": (p["w"] * v).sum(), "const": p["w"] * 2}

    close(vmap(f, in_dims=({"w": None}, 0))({"w": w}, x), torch.func.vmap(f, in_dims=({"w": None}, 0))({"w": tw}, tx))


def test_nested_vmap_matches_torch() -> None:
    (x, y), (tx, ty) = both(arrays([(2, 3, 4), (3, 4)], 3))

    def f(a: Any, b: Any) -> Any:
        return (a * b).exp().sum() * a

    nested = vmap(vmap(f, in_dims=(0, 0)), in_dims=(0, None))
    close(nested(x, y), torch.func.vmap(torch.func.vmap(f, in_dims=(0, 0)), in_dims=(0, None))(tx, ty))
    outer_inner = vmap(vmap(lambda a: a @ a, in_dims=1), in_dims=0)
    close(outer_inner(x), torch.func.vmap(torch.func.vmap(lambda a: a @ a, in_dims=1), in_dims=0)(tx))


def _loss(w: Any, b: Any, x: Any, y: Any) -> Any:
    pred = lib(x).tanh(x @ w + b)
    return ((pred - y) ** 2).mean()


def test_per_example_gradients_equal_the_loop_and_torch() -> None:
    (w, b, x, y), (tw, tb, tx, ty) = both(arrays([(4, 2), (2,), (6, 4), (6, 2)], 4))
    per_example = vmap(grad(_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(w, b, x, y)
    for i in range(6):
        gw, gb = grad(_loss, argnums=(0, 1))(w, b, x[i], y[i])
        np.testing.assert_allclose(per_example[0][i].numpy(), gw.numpy(), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(per_example[1][i].numpy(), gb.numpy(), rtol=1e-13, atol=1e-15)
    ref = torch.func.vmap(torch.func.grad(_loss, argnums=(0, 1)), in_dims=(None, None, 0, 0))(tw, tb, tx, ty)
    close(per_example, ref)


def test_grad_of_vmap_and_vmap_of_the_other_transforms_match_torch() -> None:
    (x,), (tx,) = both(arrays([(4, 3)], 5))

    def f(v: Any) -> Any:
        return (v.sin() * v).sum() * v.mean()

    close(grad(lambda a: vmap(f)(a).sum())(x), torch.func.grad(lambda a: torch.func.vmap(f)(a).sum())(tx))
    close(vmap(jacrev(f))(x), torch.func.vmap(torch.func.jacrev(f))(tx))
    close(vmap(jacfwd(f))(x), torch.func.vmap(torch.func.jacfwd(f))(tx))
    close(vmap(hessian(f))(x), torch.func.vmap(torch.func.hessian(f))(tx), 1e-9)
    close(vmap(lambda v: jvp(f, (v,), (v * 0 + 1,)))(x), torch.func.vmap(lambda v: torch.func.jvp(f, (v,), (v * 0 + 1,)))(tx))
    close(vmap(lambda v: vjp(f, v)[1](v.sum()))(x), torch.func.vmap(lambda v: torch.func.vjp(f, v)[1](v.sum()))(tx))
    close(vmap(vmap(grad(f)))(x.reshape(2, 2, 3)), torch.func.vmap(torch.func.vmap(torch.func.grad(f)))(tx.reshape(2, 2, 3)))


def test_a_primitive_without_a_batching_rule_falls_back_to_a_loop_with_one_warning() -> None:
    cube = tidu.Primitive("test_vmap_cube")
    cube.def_impl(lambda x: x**3)
    cube.def_abstract_eval(lambda x: x)
    cube.def_jvp(lambda dx, x, out: dx * 3 * x * x)
    x = tidu.tensor(arrays([(4, 2)], 6)[0])
    with pytest.warns(UserWarning, match="'test_vmap_cube' has no batching rule"):
        out = vmap(lambda v: cube.bind(v) + 1)(x)
    np.testing.assert_allclose(out.numpy(), x.numpy() ** 3 + 1, rtol=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = vmap(grad(lambda v: cube.bind(v).sum()))(x)  # warned once already; the loop is differentiable
    np.testing.assert_allclose(again.numpy(), 3 * x.numpy() ** 2, rtol=1e-14)


def _raises_like_torch(ours: Any, theirs: Any, match: str) -> None:
    with pytest.raises(Exception) as ref:
        theirs()
    with pytest.raises(type(ref.value), match=match):
        ours()


def test_in_dims_out_of_range_names_the_argument_and_its_shape() -> None:
    _raises_like_torch(lambda: vmap(tidu.sin, in_dims=2)(tidu.ones(2, 3)),
                       lambda: torch.func.vmap(torch.sin, in_dims=2)(torch.ones(2, 3)),
                       r"argument 0 of shape \(2, 3\)")


def test_in_dims_of_the_wrong_structure_raise() -> None:
    _raises_like_torch(lambda: vmap(tidu.mul, in_dims=(0,))(tidu.ones(2), tidu.ones(2)),
                       lambda: torch.func.vmap(torch.mul, in_dims=(0,))(torch.ones(2), torch.ones(2)),
                       "in_dims has 1 entries, but there are 2 positional inputs")


def test_batch_sizes_that_differ_raise() -> None:
    _raises_like_torch(lambda: vmap(tidu.mul)(tidu.ones(2), tidu.ones(3)),
                       lambda: torch.func.vmap(torch.mul)(torch.ones(2), torch.ones(3)),
                       "same size in the mapped dimension.*2 and 3")


def test_a_mapped_non_tensor_and_nothing_mapped_raise() -> None:
    _raises_like_torch(lambda: vmap(lambda a, k: a * k, in_dims=(0, 0))(tidu.ones(2), 3.0),
                       lambda: torch.func.vmap(lambda a, k: a * k, in_dims=(0, 0))(torch.ones(2), 3.0),
                       "argument 1 has in_dim=0 but is a float")
    _raises_like_torch(lambda: vmap(tidu.sin, in_dims=None)(tidu.ones(2)),
                       lambda: torch.func.vmap(torch.sin, in_dims=None)(torch.ones(2)), "at least one argument")


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(1, 3), min_size=2, max_size=4), data=st.data())
def test_fuzz_vmap_and_vmap_of_jacrev_over_any_dim_match_torch(shape: list[int], data: Any) -> None:
    in_dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    out_dim = data.draw(st.integers(0, len(shape) - 2))
    x_np = np.random.default_rng(len(shape) * 7 + in_dim).uniform(-1, 1, size=shape)

    def f(v: Any) -> Any:
        t = v.transpose(0, -1) if v.ndim > 1 else v
        return (t.sin() * 2 + v.exp().amax()).sum(dim=0) * v[..., :1].sum()

    x, tx = tidu.tensor(x_np), torch.tensor(x_np)
    close(vmap(f, in_dims=in_dim, out_dims=out_dim)(x), torch.func.vmap(f, in_dims=in_dim, out_dims=out_dim)(tx))
    close(vmap(jacrev(f), in_dims=in_dim)(x), torch.func.vmap(torch.func.jacrev(f), in_dims=in_dim)(tx))


@pytest.mark.parametrize(("body", "message"), [
    (lambda r: r.sum().item(), r"vmap: It looks like you're calling \.item\(\) on a Tensor"),
    (lambda r: float(r.sum()), r"vmap: It looks like you're calling \.item\(\) on a Tensor"),
    (lambda r: r * int(r.sum()), r"vmap: It looks like you're calling \.item\(\) on a Tensor"),
    (lambda r: r if r.sum() > 0 else -r, "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
                                          "control flow"),
])
def test_reading_a_value_inside_vmap_raises_pytorchs_error(body: Any, message: str) -> None:
    for L in (torch, tidu):
        with pytest.raises(RuntimeError, match=message):
            L.func.vmap(body)(L.ones(2, 3))


@pytest.mark.parametrize("call", [
    "L.func.vmap(lambda x: x + L.rand(3))(L.ones(4, 3))",  # randomness='error', the default
    "L.func.vmap(lambda x: L.nn.functional.dropout(x, 0.5))(L.ones(4, 3))",
    "L.func.vmap(L.func.vmap(lambda x: x * L.randn(())), randomness='same')(L.ones(4, 3))",  # the inner level's error
    "L.func.jacfwd(lambda x: x * L.rand(3))(L.ones(3))",  # PyTorch runs jacfwd's function batched
    "L.func.hessian(lambda x: (x * L.rand(3)).sum())(L.ones(3))",
])
def test_a_random_op_inside_vmap_raises_in_randomness_error_mode(call: str) -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(call)


def test_randomness_same_shares_one_draw_and_different_is_refused() -> None:
    out = tidu.func.vmap(lambda x: x + tidu.rand(3), randomness="same")(tidu.zeros(4, 3))
    assert (out == out[0]).all()  # one draw for every example, as PyTorch's 'same'
    masks = tidu.func.vmap(lambda x: tidu.nn.functional.dropout(x, 0.5), randomness="same")(tidu.ones(4, 8))
    assert (masks == masks[0]).all()
    jac = tidu.func.jacfwd(lambda x: x * tidu.ones(3), randomness="same")(tidu.ones(3))
    assert (jac == tidu.eye(3)).all()
    with pytest.raises(NotImplementedError, match="randomness='different'"):  # a draw per example: not silently shared
        tidu.func.vmap(lambda x: x + tidu.rand(3), randomness="different")(tidu.zeros(4, 3))


@pytest.mark.parametrize("body", [lambda x, i: x[i], lambda x, i: x[:, i], lambda x, i: x[..., i],
                                  lambda x, i: x[i[0]], lambda x, i: x[i, ...], lambda x, i: x[i.int()]])
def test_indexing_with_a_mapped_integer_tensor_matches_torch(body: Any) -> None:
    """``vmap(lambda x, i: x[i])``: per-example indices (negative ones too), values and gradients."""
    rng = np.random.default_rng(0)
    data, index = rng.standard_normal((4, 3, 5)), np.array([[0, 2], [-1, 1], [1, 1], [0, -3]])
    results = []
    for L in (tidu, torch):
        x = L.tensor(data, requires_grad=True)
        out = L.func.vmap(body)(x, L.tensor(index))
        (out * out).sum().backward()
        results.append((tuple(out.shape), out.detach().numpy(), x.grad.numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1])
    np.testing.assert_allclose(results[0][2], results[1][2])


def test_indexing_with_a_mapped_index_out_of_bounds_or_unsupported_raises() -> None:
    x, i = tidu.zeros(4, 3), tidu.tensor([0, 5, 1, 0])
    with pytest.raises(RuntimeError, match="out of bounds"):  # the gather checks the values
        tidu.func.vmap(lambda x, i: x[i])(x, i)
    with pytest.raises(TypeError, match="one int32 or int64 tensor index"):
        tidu.func.vmap(lambda x, i: x[i > 0])(x, i)


def test_per_example_gradients_of_a_classifier_match_torch() -> None:
    """torch.func's per-sample-gradient recipe: ``vmap(grad(loss))`` with ``functional_call`` and a
    mapped class-index target (cross entropy's, an embedding's indices)."""
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))
    state = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    rng = np.random.default_rng(0)
    xs, ys, ids = rng.standard_normal((5, 3)).astype(np.float32), np.array([0, 2, 1, 0, 2]), np.array([[1, 0], [2, 2], [0, 1], [1, 1], [2, 0]])
    results = []
    for L in (tidu, torch):
        model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 3))
        model.load_state_dict({k: L.tensor(v) for k, v in state.items()})
        table = L.tensor(rng.standard_normal((3, 3)).astype(np.float32) if L is tidu else results[0][2])
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y, i, model=model, table=table, L=L):  # noqa: ANN001, ANN202
            out = L.func.functional_call(model, p, (x.unsqueeze(0) + L.nn.functional.embedding(i, table).sum(0),))
            return L.nn.functional.cross_entropy(out, y.unsqueeze(0), label_smoothing=0.1)

        grads = L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0, 0))(params, L.tensor(xs), L.tensor(ys), L.tensor(ids))
        results.append(({k: g.numpy() for k, g in grads.items()}, None, table.numpy()))
    for k in results[1][0]:
        np.testing.assert_allclose(results[0][0][k], results[1][0][k], rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("body,error", [
    (lambda x: x.clone().add_(1), NotImplementedError),  # in place on a mapped value: a clear refusal
    (lambda x: x.clone().__setitem__(0, 5.0), NotImplementedError),
    (lambda x: tidu.zeros(3).add_(x), RuntimeError),  # a mapped value into a tensor: PyTorch's error
    (lambda x: tidu.zeros(3).__setitem__(1, x[0]), RuntimeError),
    (lambda x: x.nonzero(), RuntimeError),  # a size that depends on the values
    (lambda x: tidu.unique(x), RuntimeError),
])
def test_what_vmap_cannot_batch_raises_a_clear_error(body: Any, error: type) -> None:
    with pytest.raises(error, match="vmap"):
        tidu.func.vmap(body)(tidu.ones(4, 3))
