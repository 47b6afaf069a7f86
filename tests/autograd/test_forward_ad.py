"""``tidu.autograd.forward_ad`` against ``torch.autograd.forward_ad``: tangents, errors, levels,
reverse mode through a dual level, and the swap that keeps binds free outside a level."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.nn.functional as TF

import tidu
import tidu.autograd.forward_ad as fwAD
import tidu.nn.functional as F
from tidu.core import dispatch, inplace


def _lib(x: Any) -> Any:
    return tidu if isinstance(x, tidu.Tensor) else torch


def _F(x: Any) -> Any:
    return F if isinstance(x, tidu.Tensor) else TF


# name: (function written once for both libraries, argument shapes); every argument is dual
CASES: dict[str, tuple[Callable, list[tuple]]] = {
    "elementwise": (lambda x, y: (x.sin() * y.exp() + x / (y * y + 1)).tanh() - x.sigmoid(), [(2, 3), (2, 3)]),
    "broadcasting": (lambda x, b: x * b + b - 2.5 * x, [(2, 3), (3,)]),
    "sum-mean": (lambda x: x.sum(dim=1) * x.mean() + x.mean(dim=0, keepdim=True).sum(), [(3, 4)]),
    "amax-max": (lambda x: x.amax(dim=1) + x.max(), [(3, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "batched-matmul": (lambda a, b: a @ b, [(2, 2, 3), (3, 2)]),
    "linear": (lambda x, w, b: _F(x).linear(x, w, b).relu(), [(4, 3), (2, 3), (2,)]),
    "views": (lambda x: x.t().reshape(-1).unsqueeze(0).expand(2, 6) * x.permute(1, 0).flatten(), [(2, 3)]),
    "indexing": (lambda x: x[1:, ::2] * x[0, 1] + x[1:, -1:], [(3, 4)]),
    "advanced-indexing": (lambda x: x[[0, 2, 2]] * 2, [(3, 4)]),
    "cat-stack": (lambda x, y: _lib(x).cat([x, y], dim=0) + _lib(x).stack([x, y]).sum(0).repeat(2, 1), [(2, 3), (2, 3)]),
    "softmax": (lambda x: _lib(x).softmax(x, dim=-1), [(3, 5)]),
    "log-softmax": (lambda x: _F(x).log_softmax(x, dim=0), [(3, 5)]),
    "layer-norm": (lambda x, w, b: _F(x).layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "conv2d": (lambda x, w, b: _F(x).conv2d(x, w, b, padding=1), [(2, 3, 5, 5), (4, 3, 3, 3), (4,)]),
    "where-pow": (lambda x, y: _lib(x).where(x > 0, x ** 2, y.abs() ** 1.5), [(2, 4), (2, 4)]),
    "cumsum": (lambda x: x.cumsum(dim=1), [(2, 4)]),
}


def _pairs(shapes: list[tuple], seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(s), rng.standard_normal(s)) for s in shapes]


def _run(lib: Any, fw: Any, fn: Callable, pairs: list, dtype: str) -> tuple[list, list]:
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p, dtype=getattr(lib, dtype)), lib.tensor(t, dtype=getattr(lib, dtype)))
                 for p, t in pairs]
        out = fn(*duals)
        primal, tangent = fw.unpack_dual(out)
        return np.asarray(primal.detach().tolist()), np.asarray(tangent.tolist())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_pytorch(name: str, dtype: str) -> None:
    fn, shapes = CASES[name]
    pairs = _pairs(shapes, seed=len(name))
    primal, tangent = _run(tidu, fwAD, fn, pairs, dtype)
    expected_primal, expected_tangent = _run(torch, tfw, fn, pairs, dtype)
    tol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(primal, expected_primal, rtol=tol, atol=tol)
    np.testing.assert_allclose(tangent, expected_tangent, rtol=tol, atol=tol)


def test_only_some_inputs_dual() -> None:
    x, w = np.random.default_rng(1).standard_normal((2, 3, 3))
    t = np.ones((3, 3))
    results = []
    for lib, fw in ((tidu, fwAD), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            out = fw.unpack_dual(d @ lib.tensor(w) + lib.tensor(w).exp())
            results.append(out.tangent.tolist())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_tangent_against_finite_differences() -> None:
    """A primitive declared outside the library: its own JVP rule gives the tangent."""
    from tidu.primitives.elementwise import mul

    rng = np.random.default_rng(2)
    x0, v = rng.standard_normal(5), rng.standard_normal(5)

    def f(x: tidu.Tensor) -> tidu.Tensor:
        return mul.bind(x.cos(), x.exp()).cumsum(0) / (1 + x * x)

    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(f(fwAD.make_dual(tidu.tensor(x0), tidu.tensor(v)))).tangent
    eps = 1e-6
    fd = (f(tidu.tensor(x0 + eps * v)).numpy() - f(tidu.tensor(x0 - eps * v)).numpy()) / (2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd, rtol=1e-7, atol=1e-8)


def test_module_with_dual_parameters() -> None:
    tidu.manual_seed(0)
    model = tidu.nn.Sequential(tidu.nn.Linear(3, 4), tidu.nn.Tanh(), tidu.nn.Linear(4, 2))
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    reference.load_state_dict({k: torch.tensor(v.tolist()) for k, v in model.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((5, 3))
    tangents = {k: np.random.default_rng(4).standard_normal(tuple(v.shape)) for k, v in model.named_parameters()}
    with fwAD.dual_level():
        params = {k: fwAD.make_dual(v.detach(), tidu.tensor(tangents[k], dtype=tidu.float32))
                  for k, v in model.named_parameters()}
        ours = fwAD.unpack_dual(tidu.func.functional_call(model, params, (tidu.tensor(x, dtype=tidu.float32),)))
    with tfw.dual_level():
        params = {k: tfw.make_dual(v.detach(), torch.tensor(tangents[k], dtype=torch.float32))
                  for k, v in reference.named_parameters()}
        theirs = tfw.unpack_dual(torch.func.functional_call(reference, params, (torch.tensor(x, dtype=torch.float32),)))
    np.testing.assert_allclose(ours.tangent.tolist(), theirs.tangent.tolist(), rtol=1e-5, atol=1e-6)


def test_integer_and_comparison_outputs_have_no_tangent() -> None:
    with fwAD.dual_level():
        x = fwAD.make_dual(tidu.tensor([1.0, -2.0, 3.0]), tidu.ones(3))
        assert fwAD.unpack_dual(x > 0).tangent is None
        assert fwAD.unpack_dual(x.argmax()).tangent is None
        assert fwAD.unpack_dual(tidu.ones(3) * 2).tangent is None


def test_in_place_ops_carry_tangents() -> None:
    results = []
    for lib, fw in ((tidu, fwAD), (torch, tfw)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([1.0, 0.5, -1.0]))
            y = d.clone()
            y.mul_(3)
            z = lib.zeros(3)
            z.add_(d * d)
            results.append((fw.unpack_dual(y).tangent.tolist(), fw.unpack_dual(z).tangent.tolist()))
    np.testing.assert_allclose(results[0], results[1])


def _through_a_view(L: Any, d: Any) -> list:
    c = d.clone()
    c[1:].mul_(2.0)
    return [c]


def _a_view_made_before(L: Any, d: Any) -> list:
    c = d.clone()
    v = c[1:]
    c.mul_(3.0)
    return [v, c]


def _into_a_plain_tensor(L: Any, d: Any) -> list:
    z = L.zeros(3, dtype=L.float64)
    v = z[0:2]  # made before z had a tangent
    z[1:].copy_(d[1:])
    return [v, z]


def _a_number_written(L: Any, d: Any) -> list:
    c = d.clone()
    c[0] = 5.0
    return [c]


def _through_a_view_of_a_view(L: Any, d: Any) -> list:
    c = d.clone()
    c.view(3, 1)[2].add_(d[0:1])
    return [c, c[1:]]


@pytest.mark.parametrize("write", [_through_a_view, _a_view_made_before, _into_a_plain_tensor, _a_number_written,
                                   _through_a_view_of_a_view], ids=lambda f: f.__name__)
def test_writes_through_views_give_pytorchs_tangents(write: Callable) -> None:
    results = []
    for lib, fw in ((tidu, fwAD), (torch, tfw)):
        with fw.dual_level():
            tangent = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
            d = fw.make_dual(lib.tensor([0.3, -0.7, 1.1], dtype=lib.float64), tangent.clone())
            results.append([fw.unpack_dual(t).tangent.tolist() for t in write(lib, d)])
    assert results[0] == results[1]


def test_unpack_dual() -> None:
    x, t = tidu.tensor([1.0, 2.0]), tidu.tensor([3.0, 4.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(d)
        assert isinstance(unpacked, fwAD.UnpackedDualTensor)
        assert unpacked.tangent is t
        assert fwAD.unpack_dual(unpacked.primal).tangent is None  # the primal carries no tangent
        assert unpacked.primal.tolist() == [1.0, 2.0]
        assert fwAD.unpack_dual(x) == (x, None)
        assert fwAD.unpack_dual(d, level=0).tangent is t
        assert type(d) is tidu.Tensor
    assert repr(fwAD.unpack_dual(x)) == "UnpackedDualTensor(primal=tensor([1., 2.]), tangent=None)"


def test_exiting_the_level_drops_tangents() -> None:
    with fwAD.dual_level():
        d = fwAD.make_dual(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 1.0]))
        y = d * 2
    assert fwAD.unpack_dual(d).tangent is None and fwAD.unpack_dual(y).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(d).tangent is None
        assert fwAD.unpack_dual(d * 2).tangent is None


def test_an_error_inside_the_level_still_exits_it() -> None:
    with pytest.raises(ZeroDivisionError), fwAD.dual_level():
        fwAD.make_dual(tidu.tensor(1.0), tidu.tensor(1.0))
        1 / 0  # noqa: B018
    assert fwAD._level is None and not fwAD._TANGENTS
    assert tidu.ops.math.bind_same is dispatch.bind_same


_ERRORS = [
    ("size", lambda lib: (lib.ones(3), lib.ones(2))),
    ("size-2d", lambda lib: (lib.ones(3), lib.ones(1, 3))),
    ("int-tangent", lambda lib: (lib.ones(3), lib.ones(3, dtype=lib.int64))),
    ("int-primal", lambda lib: (lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))),
]


@pytest.mark.parametrize("name,make", _ERRORS, ids=[e[0] for e in _ERRORS])
def test_make_dual_errors_match_pytorch(name: str, make: Callable) -> None:
    caught = []
    for lib, fw in ((torch, tfw), (tidu, fwAD)):
        with fw.dual_level():
            with pytest.raises((RuntimeError, ValueError)) as info:
                fw.make_dual(*make(lib))
            caught.append((info.type, str(info.value).replace("torch.", "").replace("tidu.", "")))
    assert caught[0] == caught[1]


def test_level_errors_match_pytorch() -> None:
    for lib, fw in ((torch, tfw), (tidu, fwAD)):
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            fw.make_dual(lib.ones(2), lib.ones(2))
        with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
            fw.exit_dual_level()
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
                fw.enter_dual_level()
            with pytest.raises(RuntimeError, match="not the last one that was created"):
                fw.exit_dual_level(level=3)
            with pytest.raises(RuntimeError, match="Invalid level given to _make_dual"):
                fw.make_dual(lib.ones(2), lib.ones(2), level=2)
            d = fw.make_dual(lib.ones(2), lib.ones(2))
            with pytest.raises(RuntimeError, match="Setting a forward grad that itself has a forward gradient"):
                fw.make_dual(lib.ones(2), d)
            with pytest.raises(RuntimeError, match="Making a dual Tensor based on a Tensor that already has"):
                fw.make_dual(d, lib.ones(2))


def test_mismatched_tangent_dtype_is_converted() -> None:
    with fwAD.dual_level():
        d = fwAD.make_dual(tidu.ones(2), tidu.ones(2, dtype=tidu.float64))
        assert fwAD.unpack_dual(d).tangent.dtype is tidu.float32
        assert fwAD.unpack_dual(d.exp()).tangent.dtype is tidu.float32


def test_backward_through_a_dual_computation() -> None:
    """The primal graph is recorded as usual; the tangent is differentiable too (reverse over forward)."""
    w0, t0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    results = []
    for lib, fw in ((tidu, fwAD), (torch, tfw)):
        w = lib.tensor(w0, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(w, lib.tensor(t0))
            y = (d.sin() * d).sum()
            primal, tangent = fw.unpack_dual(y)
            assert primal.requires_grad and tangent.requires_grad
            y.backward(retain_graph=True)
            grad_primal = w.grad.tolist()
            w.grad = None
            tangent.backward()
            results.append((primal.item(), tangent.item(), grad_primal, w.grad.tolist()))
    np.testing.assert_allclose(results[0][:2], results[1][:2], rtol=1e-12)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12)
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-12)


def test_training_step_inside_a_level() -> None:
    """A dual level around ordinary reverse-mode training changes nothing."""
    tidu.manual_seed(0)
    model = tidu.nn.Linear(3, 1)
    x, y = tidu.randn(8, 3), tidu.randn(8, 1)
    F.mse_loss(model(x), y).backward()
    expected = model.weight.grad.clone()
    model.zero_grad()
    with fwAD.dual_level():
        F.mse_loss(model(x), y).backward()
    np.testing.assert_allclose(model.weight.grad.tolist(), expected.tolist(), rtol=1e-6)


def test_entry_points_are_swapped_only_inside_a_level() -> None:
    """Note [dual level swap]: outside a level every module holds the original entry points."""
    import tidu.nn.functional
    import tidu.ops.indexing
    import tidu.ops.linalg
    import tidu.ops.math

    with fwAD.dual_level():
        assert tidu.ops.math.bind_same is fwAD._bind_same
        assert tidu.ops.linalg.bind_product is fwAD._bind_product
        assert tidu.nn.functional.bind_matmul is fwAD._bind_matmul
        assert tidu.ops.indexing.plain_view is fwAD._plain_view
        assert dispatch.bind_eager is fwAD._bind_eager
    assert tidu.ops.math.bind_same is dispatch.bind_same is fwAD._ORIGINALS["bind_same"]
    assert tidu.nn.functional.bind_matmul is fwAD._ORIGINALS["bind_matmul"]
    assert tidu.ops.indexing.plain_view is fwAD._ORIGINALS["plain_view"]
    assert dispatch.bind_eager is fwAD._ORIGINALS["bind_eager"]
    assert inplace.assign_ is fwAD._ORIGINALS["assign_"]


def test_repr_shows_the_tangent() -> None:
    with fwAD.dual_level():
        d = fwAD.make_dual(tidu.tensor([1.0, 2.0]), tidu.tensor([0.5, 0.0]))
        assert repr(d * 2) == "tensor([2., 4.], tangent=tensor([1., 0.]))"
    assert repr(d * 2) == "tensor([2., 4.])"


def test_dual_levels_and_the_profiler_nest_either_way() -> None:
    """Both swap tidu's entry points (core/swaps.py): tangents flow whichever is entered first, and
    the plain functions are back once both have ended."""
    from tidu.core import dispatch
    from tidu.ops import math as ops_math

    original = dispatch.bind_same
    x, t = tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 1.0])
    expected = (2 * x * (x * x).cos()).numpy()
    with tidu.profiler.profile(), fwAD.dual_level():  # the dual level's wrappers replace the timers
        tangent = fwAD.unpack_dual((fwAD.make_dual(x, t) * fwAD.make_dual(x, t)).sin()).tangent
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6)
    with fwAD.dual_level(), tidu.profiler.profile():
        tangent = fwAD.unpack_dual((fwAD.make_dual(x, t) * fwAD.make_dual(x, t)).sin()).tangent
    np.testing.assert_allclose(tangent.numpy(), expected, rtol=1e-6)
    assert dispatch.bind_same is original and ops_math.bind_same is original
