"""The reductions and ``cumsum`` against PyTorch: values, dtypes, gradients, edges and errors.

Each op runs as ``op(L, x)`` with ``L`` either ``tidu`` or ``torch`` on the same data.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tests.test_torch_oracle import TOL, Arg, T, assert_same, assert_same_error, run_both

FLOATS = ["float32", "float64"]
INF = math.inf


def _lib(x: Any) -> Any:
    return tidu if isinstance(x, tidu.Tensor) else torch


def compare(op: Callable, arrays: list[np.ndarray], *, grad: bool = True, tol: dict | None = None) -> None:
    """``op(L, *xs)`` on tidu and torch: every output (tuples too), then the gradient of the
    first output through ``sum(out * w)``."""
    if tol is None:
        tol = TOL[str(arrays[0].dtype)] if arrays[0].dtype.kind == "f" else {"rtol": 0, "atol": 0}
    xs = [tidu.tensor(a, requires_grad=grad) for a in arrays]
    ts = [torch.tensor(a, requires_grad=grad) for a in arrays]
    out, ref = op(tidu, *xs), op(torch, *ts)
    outs, refs = (tuple(out), tuple(ref)) if isinstance(ref, tuple) else ((out,), (ref,))
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert_same(o, r, tol)
    if not grad:
        return
    w = np.random.default_rng(1).uniform(0.5, 1.5, size=tuple(refs[0].shape)).astype(arrays[0].dtype)
    (outs[0] * tidu.tensor(w)).sum().backward()
    (refs[0] * torch.tensor(w)).sum().backward()
    for i, (a, b) in enumerate(zip(xs, ts)):
        if b.grad is None:
            assert a.grad is None or not a.grad.numpy().any(), f"input {i}: tidu has a gradient, torch none"
            continue
        assert a.grad is not None, f"input {i}: no gradient"
        assert_same(a.grad, b.grad, tol, what=f"grad of input {i}")


# --- every op over shapes x dims x keepdim ------------------------------------------------------
SHAPES = [Arg(()), Arg((5,)), Arg((2, 3)), T(3, 2), Arg((2, 3, 4))]
DIMS = {
    0: [None, 0, -1],
    1: [None, 0, -1],
    2: [None, 0, -1, (-1, 0)],
    3: [None, 1, -1, (0, 2), (2, 0, 1)],
}


def _kw(dim: Any, keepdim: bool) -> dict:
    kw = {} if dim is None else {"dim": dim}
    if keepdim:
        kw["keepdim"] = True
    return kw


# name -> (call, dims it takes: "any" (int/tuple/None), "int" (int/None), "int!" (int, required), grad)
OPS: dict[str, tuple[Callable, str, bool]] = {
    "sum": (lambda L, x, **kw: L.sum(x, **kw), "any", True),
    "mean": (lambda L, x, **kw: x.mean(**kw), "any", True),
    "amax": (lambda L, x, **kw: L.amax(x, **kw), "any", True),
    "amin": (lambda L, x, **kw: x.amin(**kw), "any", True),
    "var": (lambda L, x, **kw: L.var(x, **kw), "any", True),
    "std": (lambda L, x, **kw: x.std(**kw), "any", True),
    "logsumexp": (lambda L, x, **kw: L.logsumexp(x, **{"dim": tuple(range(x.ndim)), **kw}), "any", True),
    "norm": (lambda L, x, **kw: x.norm(2, **kw), "any", True),
    "norm-fro": (lambda L, x, **kw: x.norm(**kw), "int", True),
    "norm-1": (lambda L, x, **kw: L.norm(x, p=1, **kw), "any", True),
    "norm-3": (lambda L, x, **kw: L.norm(x, 3, **kw), "any", True),
    "norm-0.5": (lambda L, x, **kw: L.norm(x, 0.5, **kw), "any", True),
    "norm--1": (lambda L, x, **kw: L.norm(x, -1, **kw), "any", True),
    "norm-inf": (lambda L, x, **kw: L.norm(x, INF, **kw), "any", True),
    "norm--inf": (lambda L, x, **kw: x.norm(-INF, **kw), "any", True),
    "norm-0": (lambda L, x, **kw: x.norm(0, **kw), "any", False),  # torch: no grad_fn
    "all": (lambda L, x, **kw: (x > 0).all(**kw), "any", False),
    "any": (lambda L, x, **kw: L.any(x > 1, **kw), "any", False),
    "prod": (lambda L, x, **kw: L.prod(x, **kw), "int", True),
    "max": (lambda L, x, **kw: L.max(x, **kw), "int", True),
    "min": (lambda L, x, **kw: x.min(**kw), "int", True),
    "argmax": (lambda L, x, **kw: L.argmax(x, **kw), "int", False),
    "argmin": (lambda L, x, **kw: x.argmin(**kw), "int", False),
    "cumsum": (lambda L, x, dim, **kw: L.cumsum(x, dim), "int!", True),
}


def _cases() -> list:
    params = []
    for name, (_, dims, _) in OPS.items():
        # the p-norm variants share their code path: fewer shapes
        shapes = SHAPES[:1] + SHAPES[2:4] if name.startswith("norm-") and name != "norm-fro" else SHAPES
        for arg in shapes:
            for dim in DIMS[len(arg.shape)]:
                if dims != "any" and isinstance(dim, tuple):
                    continue
                if dims == "int!" and dim is None:
                    continue
                for keepdim in (False, True):
                    if keepdim and (dims == "int!" or (dim is None and name not in ("argmax", "argmin"))):
                        continue
                    params.append(pytest.param(name, arg, dim, keepdim, id=f"{name}-{arg!r}-{dim}-{keepdim}"))
    return params


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,arg,dim,keepdim", _cases())
def test_reduction_matches_torch(name: str, arg: Arg, dim: Any, keepdim: bool, dtype: str) -> None:
    call, _, grad = OPS[name]
    kw = _kw(dim, keepdim)
    if name == "cumsum":
        kw = {"dim": dim}

    def fn(x: Any) -> Any:
        out = call(_lib(x), x, **kw)
        if isinstance(out, tuple):  # max/min with dim: check the indices, differentiate the values
            return out[0] + 0 * out[1]
        return out

    run_both(fn, None, [arg], dtype, grad=grad)


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_indices_match_torch(name: str, keepdim: bool) -> None:
    x = np.random.default_rng(4).uniform(-1, 1, size=(3, 4, 2))
    for dim in (0, 1, -1):
        out = OPS[name][0](tidu, tidu.tensor(x), dim=dim, keepdim=keepdim)
        ref = OPS[name][0](torch, torch.tensor(x), dim=dim, keepdim=keepdim)
        out, ref = (out.indices, ref.indices) if name in ("max", "min") else (out, ref)
        assert_same(out, ref, {"rtol": 0, "atol": 0})


# --- named tuples and the binary form ----------------------------------------------------------
def test_max_min_with_dim_return_named_tuples() -> None:
    x = tidu.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    res = x.max(dim=1)
    values, indices = res
    assert isinstance(res, tuple) and res.values is values and res.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype is tidu.int64
    low = tidu.min(x, 0, True)
    assert low.values.tolist() == [[1.0, 0.0, 2.0]] and low.indices.tolist() == [[0, 1, 0]]
    assert type(res).__name__ == "max" and type(low).__name__ == "min"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [[(2, 3), (2, 3)], [(2, 3), (3,)], [(), (2, 1)]])
def test_binary_max_and_min(shapes: list, dtype: str) -> None:
    run_both(lambda a, b: _lib(a).max(a, b), None, [Arg(s) for s in shapes], dtype)
    run_both(lambda a, b: _lib(a).min(a, b), None, [Arg(s) for s in shapes], dtype)
    run_both(lambda a, b: a.max(b), None, [Arg(s) for s in shapes], dtype)


# --- ties, zeros, infinities: gradients as PyTorch gives them ------------------------------------
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "op",
    [
        lambda L, x: x.max(),
        lambda L, x: x.min(),
        lambda L, x: L.amax(x, dim=1),
        lambda L, x: L.amin(x, dim=0, keepdim=True),
        lambda L, x: x.max(dim=1),
        lambda L, x: x.min(dim=0),
        lambda L, x: L.max(x, 1, keepdim=True),
        lambda L, x: x.norm(p=INF, dim=1),
        lambda L, x: x.norm(p=-INF),
        lambda L, x: L.max(x, L.tensor(np.flip(TIES, 1).copy(), dtype=x.dtype)),
        lambda L, x: x.argmax(dim=1),
        lambda L, x: x.argmin(),
    ],
    ids=["max", "min", "amax-dim", "amin-dim-keep", "max-dim", "min-dim", "max-dim-keep", "norm-inf-dim",
         "norm--inf", "max-binary", "argmax", "argmin"],
)
def test_ties_like_torch(op: Callable, dtype: str) -> None:
    x = TIES.astype(dtype)
    out = op(tidu, tidu.tensor(x))
    compare(op, [x], grad=isinstance(out, tuple) or out.dtype.is_floating_point)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "data",
    [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 4.0], [0.0, 0.0, 0.0, 0.0], [[1.0, 0.0], [0.0, 0.0]], [[0.0, 2.0], [3.0, 4.0]]],
    ids=["one-zero", "two-zeros", "all-zeros", "2d-mixed", "2d-one-zero"],
)
def test_prod_gradient_with_zeros(data: list, dtype: str) -> None:
    x = np.array(data, dtype)
    compare(lambda L, x: x.prod(), [x])
    compare(lambda L, x: L.prod(x, 0), [x])
    compare(lambda L, x: x.prod(-1, keepdim=True), [x])


def test_prod_second_derivative_with_a_zero() -> None:
    for L in (tidu, torch):
        x = L.tensor([0.0, 2.0, 3.0], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(x.prod(), x, create_graph=True)
        (h,) = L.autograd.grad((g * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum(), x)
        if L is tidu:
            ours = (g.detach().numpy(), h.numpy())
        else:
            np.testing.assert_allclose(ours[0], g.detach().numpy())
            np.testing.assert_allclose(ours[1], h.numpy())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "data",
    [[[-INF, -INF, -INF], [0.0, 1.0, 2.0]], [[INF, 1.0, 0.0], [-INF, 3.0, 3.0]], [[50.0, 50.0, 0.0], [-50.0, -50.0, 0.0]]],
    ids=["neg-inf-row", "inf", "large"],
)
def test_logsumexp_edges(data: list, dtype: str) -> None:
    compare(lambda L, x: L.logsumexp(x, 1), [np.array(data, dtype)])
    compare(lambda L, x: x.logsumexp(0, keepdim=True), [np.array(data, dtype)])


@pytest.mark.parametrize("p", ["fro", 2, 1, 3, 0.5, INF, -INF, 0, -1])
def test_norm_gradient_at_zero_vector(p: Any) -> None:
    grad = p != 0  # torch's 0-norm has no grad_fn
    compare(lambda L, x: L.norm(x, p), [np.zeros(4)], grad=grad)
    compare(lambda L, x: L.norm(x, p, dim=1), [np.array([[0.0, 0.0], [3.0, -4.0]])], grad=grad)
    compare(lambda L, x: L.norm(x, p, dim=0), [np.array([[0.0, 1.0], [0.0, -2.0]])], grad=grad)


@pytest.mark.parametrize("correction", [0, 1, 2, 0.5])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
def test_var_std_correction(correction: Any, dim: Any) -> None:
    x = np.random.default_rng(2).uniform(-1, 1, size=(3, 4))
    kw = {} if dim is None else {"dim": dim}
    compare(lambda L, x: L.var(x, correction=correction, **kw), [x])
    compare(lambda L, x: x.std(correction=correction, keepdim=True, **kw), [x])


@pytest.mark.parametrize("unbiased", [True, False])
def test_var_std_unbiased_positional(unbiased: bool) -> None:
    x = np.random.default_rng(3).uniform(-1, 1, size=(3, 4)).astype("float32")
    compare(lambda L, x: x.var(1, unbiased, True), [x])
    compare(lambda L, x: L.std(x, 0, unbiased), [x])
    compare(lambda L, x: x.var(unbiased=unbiased), [x])


@pytest.mark.parametrize("data,correction", [([1.0], 1), ([1.0, 2.0], 2), ([1.0, 2.0], 3)])
def test_var_without_degrees_of_freedom_warns(data: list, correction: int) -> None:
    with pytest.warns(UserWarning, match="degrees of freedom"):
        out = tidu.var(tidu.tensor(data), correction=correction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.var(torch.tensor(data), correction=correction)
    assert_same(out, ref, TOL["float32"])


# --- empty inputs -------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@pytest.mark.parametrize(
    "op",
    [
        lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.mean(), lambda L, x: x.mean(0),
        lambda L, x: x.prod(), lambda L, x: x.prod(0), lambda L, x: L.logsumexp(x, 0), lambda L, x: x.norm(),
        lambda L, x: x.norm(dim=0), lambda L, x: x.amax(1), lambda L, x: x.amin(1), lambda L, x: x.max(1),
        lambda L, x: x.min(1), lambda L, x: x.argmax(1), lambda L, x: x.cumsum(0), lambda L, x: x.cumsum(1),
        lambda L, x: x.all(), lambda L, x: x.any(), lambda L, x: x.all(0), lambda L, x: x.norm(p=INF, dim=1),
        lambda L, x: x.var(1),
    ],
)
def test_empty_input(op: Callable) -> None:
    ref = op(torch, torch.zeros(0, 3))
    grad = not isinstance(ref, tuple) and ref.dtype.is_floating_point
    compare(op, [np.zeros((0, 3), np.float32)], grad=grad)


def test_var_of_empty_dim_warns_and_gives_nan() -> None:
    with pytest.warns(UserWarning):
        out = tidu.zeros(0, 3).var(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same(out, torch.zeros(0, 3).var(0), TOL["float32"])


# --- integer and bool inputs --------------------------------------------------------------------
INT_OPS = [
    lambda L, x: x.sum(), lambda L, x: x.sum(1), lambda L, x: x.prod(), lambda L, x: L.prod(x, 0, True),
    lambda L, x: x.cumsum(1), lambda L, x: x.cumsum(0, dtype=L.float32), lambda L, x: x.amax(),
    lambda L, x: x.amin(0), lambda L, x: x.max(), lambda L, x: x.min(), lambda L, x: x.max(1),
    lambda L, x: x.min(0, keepdim=True), lambda L, x: x.all(1), lambda L, x: x.any(), lambda L, x: x.any(0),
    lambda L, x: x.mean(dtype=L.float64), lambda L, x: L.logsumexp(x, 1), lambda L, x: x.sum(dtype=L.float32),
]


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
@pytest.mark.parametrize("k", range(len(INT_OPS)))
def test_integer_and_bool_inputs(k: int, dtype: str) -> None:
    x = (np.array([[3, 0, 2], [1, 5, 5]]) % (2 if dtype == "bool" else 7)).astype(dtype)
    compare(INT_OPS[k], [x], grad=False, tol=TOL["float32"])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_argmax_and_norm_errors(dtype: str) -> None:
    x = np.array([[3, 0, 3], [1, 5, 5]], dtype)
    compare(lambda L, x: x.argmax(1), [x], grad=False)
    compare(lambda L, x: x.argmin(), [x], grad=False)
    _raises_like_torch(lambda L: L.tensor(x).norm(), RuntimeError, "floating point")
    _raises_like_torch(lambda L: L.tensor(x).var(), RuntimeError, "floating point")
    _raises_like_torch(lambda L: L.tensor(x).mean(), RuntimeError, "mean")


# --- cumsum -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("arg,dim", [(Arg((6,)), 0), (T(4, 3), 0), (T(4, 3), 1), (Arg((2, 3, 4)), -2), (Arg(()), -1)])
def test_cumsum_grad_and_dtype_arg(arg: Arg, dim: int, dtype: str) -> None:
    run_both(lambda x: x.cumsum(dim), None, [arg], dtype)
    run_both(lambda x: _lib(x).cumsum(x, dim, dtype=_lib(x).float64), None, [arg], dtype)


def test_cumsum_second_order_and_forward_mode() -> None:
    x = tidu.tensor([1.0, 2.0, 3.0], dtype=tidu.float64, requires_grad=True)
    out, tangent = tidu.func.jvp(lambda v: (v * v).cumsum(0), (x,), (tidu.ones(3, dtype=tidu.float64),))
    assert tangent.tolist() == [2.0, 6.0, 12.0]
    (g,) = tidu.autograd.grad((x * x).cumsum(0).sum(), x, create_graph=True)
    assert g.tolist() == [6.0, 8.0, 6.0]
    (h,) = tidu.autograd.grad(g.sum(), x)
    assert h.tolist() == [6.0, 4.0, 2.0]


# --- second order against torch -----------------------------------------------------------------
@pytest.mark.parametrize(
    "op",
    [lambda L, x: L.logsumexp(x, 1), lambda L, x: x.norm(dim=0), lambda L, x: x.var(1), lambda L, x: x.std(),
     lambda L, x: x.prod(1), lambda L, x: x.norm(3), lambda L, x: x.max(1).values * x.mean(1)],
    ids=["logsumexp", "norm", "var", "std", "prod", "norm-3", "max-dim"],
)
def test_second_order_matches_torch(op: Callable) -> None:
    data = np.random.default_rng(6).uniform(-1, 1, size=(3, 4))
    hess = []
    for L in (tidu, torch):
        x = L.tensor(data, requires_grad=True)
        (g,) = L.autograd.grad(op(L, x).sum(), x, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), x)
        hess.append(h.detach().numpy())
    np.testing.assert_allclose(hess[0], hess[1], rtol=1e-10, atol=1e-12)


# --- bad input: torch's exception class ---------------------------------------------------------
def _raises_like_torch(call: Callable, exc: type, match: str) -> None:
    with pytest.raises(exc):
        call(torch)
    with pytest.raises(exc, match=match):
        call(tidu)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda L: L.ones(2, 3).sum(2), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).mean(-3), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).amax((0, 5)), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).max(2), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).argmax(3), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).cumsum(2), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).var(4), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).logsumexp(2), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).norm(dim=2), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).all(2), IndexError, "out of range"),
        (lambda L: L.tensor(1.0).sum(1), IndexError, "out of range"),
        (lambda L: L.ones(2, 3).sum((0, 0)), RuntimeError, "multiple times"),
        (lambda L: L.ones(2, 3).amax((1, -1)), RuntimeError, "multiple times"),
        (lambda L: L.zeros(0).max(), RuntimeError, "numel\\(\\) == 0"),
        (lambda L: L.zeros(0, 2).min(), RuntimeError, "numel\\(\\) == 0"),
        (lambda L: L.zeros(0, 2).amax(), RuntimeError, "numel\\(\\) == 0"),
        (lambda L: L.zeros(0, 2).argmax(), IndexError, "numel\\(\\) == 0"),
        (lambda L: L.zeros(0, 2).max(0), IndexError, "non-zero size"),
        (lambda L: L.zeros(0, 2).amin(0), IndexError, "non-zero size"),
        (lambda L: L.zeros(0, 2).argmin(0), IndexError, "non-zero size"),
        (lambda L: L.zeros(0, 2).norm(p=INF, dim=0), RuntimeError, "empty"),
        (lambda L: L.ones(2, 3).prod((0, 1)), TypeError, "dim"),
        (lambda L: L.ones(2, 3).argmax((0, 1)), TypeError, "dim"),
        (lambda L: L.ones(2, 3).max((0, 1)), TypeError, "dim"),
        (lambda L: L.tensor([True, False]).argmax(), RuntimeError, "bool"),
        (lambda L: L.ones(2, 3).norm(p="abc"), RuntimeError, "abc"),
        (lambda L: L.ones(2, 3, 4).norm(p="fro", dim=(0, 1, 2)), RuntimeError, "2-tuple"),
    ],
)
def test_bad_input_raises_like_torch(call: Callable, exc: type, match: str) -> None:
    _raises_like_torch(call, exc, match)


# --- fuzz ---------------------------------------------------------------------------------------
FUZZ_OPS = ["sum", "mean", "amax", "var", "logsumexp", "norm", "prod", "max", "cumsum", "argmin", "any"]


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@settings(max_examples=30, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    name=st.sampled_from(FUZZ_OPS),
    data=st.data(),
)
def test_fuzz_shapes_and_dims(shape: list, name: str, data: Any) -> None:
    call, dims, grad = OPS[name]
    ndim = len(shape)
    axes = list(range(-max(ndim, 1), max(ndim, 1)))
    if dims == "any":
        picked = data.draw(st.lists(st.sampled_from(range(ndim)), unique=True)) if ndim else []
        dim = tuple(d - ndim if data.draw(st.booleans()) else d for d in picked) or None
    else:
        dim = data.draw(st.sampled_from(axes))
    keepdim = dims != "int!" and data.draw(st.booleans())
    kw = {"dim": dim} if name == "cumsum" else _kw(dim, keepdim and dim is not None)

    def fn(x: Any) -> Any:
        out = call(_lib(x), x, **kw)
        return out[0] if isinstance(out, tuple) else out

    run_both(fn, None, [Arg(tuple(shape))], "float64", grad=grad)


# --- sort, argsort, topk ---------------------------------------------------------------------------
_PERM = np.random.default_rng(0).permutation(60).reshape(3, 4, 5).astype(np.float64) - 30
_TIES = np.random.default_rng(1).integers(0, 3, (4, 6)).astype(np.float64)
_NANS = np.array([[2.0, np.nan, 1.0, np.inf, -np.inf, np.nan, 0.0, -0.0]])
SORTS = [
    ("sort", lambda L, x: x.sort(), _PERM, "float64", True),
    ("sort-dim0-descending", lambda L, x: x.sort(dim=0, descending=True), _PERM, "float64", True),
    ("sort-fn-float32", lambda L, x: L.sort(x, 1), _PERM, "float32", True),
    ("argsort-descending", lambda L, x: x.argsort(dim=-2, descending=True), _PERM, "float64", False),
    ("sort-stable-ties", lambda L, x: x.sort(stable=True), _TIES, "float64", True),
    ("sort-stable-ties-descending", lambda L, x: x.sort(stable=True, descending=True), _TIES, "float64", True),
    ("sort-nan-inf-zeros", lambda L, x: x.sort(stable=True), _NANS, "float64", False),
    ("sort-nan-inf-zeros-descending", lambda L, x: x.sort(descending=True, stable=True), _NANS, "float64", False),
    ("sort-int64", lambda L, x: x.sort(stable=True), _TIES, "int64", False),
    ("sort-int32-descending", lambda L, x: x.sort(descending=True, stable=True), _TIES, "int32", False),
    ("argsort-bool", lambda L, x: x.argsort(stable=True), np.array([True, False, True, False]), "bool", False),
    ("topk", lambda L, x: x.topk(3), _PERM, "float64", True),
    ("topk-smallest-dim0", lambda L, x: x.topk(2, dim=0, largest=False), _PERM, "float64", True),
    ("topk-0", lambda L, x: L.topk(x, 0, 1), _PERM, "float64", False),
    ("sort-0d", lambda L, x: x.sort(), np.float64(3.0), "float64", True),
    ("topk-0d", lambda L, x: x.topk(1), np.float64(3.0), "float64", False),
    ("sort-empty", lambda L, x: x.sort(), np.zeros((2, 0)), "float64", False),
]


def _sorted_both(fn: Callable, array: np.ndarray, dtype: str, grad: bool, device: str) -> list:
    results = []
    for lib, where in ((torch, "cpu"), (tidu, device)):
        x = lib.tensor(array, dtype=getattr(lib, dtype), device=where, requires_grad=grad)
        out = fn(lib, x)
        assert type(out).__name__ == type(fn(torch, torch.tensor(array, dtype=getattr(torch, dtype)))).__name__
        values = out[0]
        gradient = None
        if grad:
            weight = lib.arange(values.numel(), dtype=values.dtype, device=where).reshape(values.shape)
            (values * weight).sum().backward()
            gradient = x.grad.cpu().numpy()
        results.append(([t.detach().cpu().numpy() for t in out], gradient))
    return results


@pytest.mark.parametrize("name,fn,array,dtype,grad", SORTS, ids=[case[0] for case in SORTS])
def test_sort_argsort_topk_match_torch(name: str, fn: Callable, array: np.ndarray, dtype: str, grad: bool) -> None:
    """Values, indices (NaN last ascending, first descending; ties in index order), dtypes and
    the values' gradient."""
    (ref, ref_grad), (ours, our_grad) = _sorted_both(fn, array, dtype, grad, "cpu")
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    if grad:
        np.testing.assert_array_equal(our_grad, ref_grad)


@pytest.mark.parametrize("name", ["sort-dim0-descending", "sort-nan-inf-zeros-descending", "topk", "argsort-bool"])
def test_sort_on_cuda_matches_torch(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _, fn, array, dtype, grad = next(case for case in SORTS if case[0] == name)
    (ref, _), (ours, _) = _sorted_both(fn, array, dtype, grad, "cuda")
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    from tidu.backends.cuda import sort as cuda_sort

    monkeypatch.setattr(cuda_sort, "RANK_LIMIT", 2)  # longer rows: sorted on the host
    (ref, _), (ours, _) = _sorted_both(fn, array, dtype, grad, "cuda")
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("call", ["x.topk(4)", "x.topk(-1)", "x.sort(dim=1)", "L.tensor(2.0).topk(2)", "x.argsort(1.0)"])
def test_sort_and_topk_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"x": L.tensor([3.0, 1.0, 2.0])}, same_message=False)


# --- cov, corrcoef, sum_to_size -----------------------------------------------------------------------
STAT_CASES: dict[str, tuple[Callable, list]] = {
    "cov": (lambda L: lambda x: L.cov(x), [Arg((3, 5))]),
    "cov-1d": (lambda L: lambda x: x.cov(correction=0), [Arg((6,))]),
    "cov-weights": (lambda L: lambda x, a: L.cov(x, fweights=L.tensor([1, 2, 1, 3]), aweights=a.abs() + 0.5),
                    [Arg((2, 4)), Arg((4,))]),
    "cov-fweights": (lambda L: lambda x: L.cov(x, correction=2, fweights=L.tensor([1, 2, 1, 3])), [Arg((2, 4))]),
    "corrcoef": (lambda L: lambda x: L.corrcoef(x), [Arg((3, 5))]),
    "corrcoef-1d": (lambda L: lambda x: x.corrcoef(), [Arg((5,))]),
    "sum_to_size": (lambda L: lambda x: x.sum_to_size(1, 3), [Arg((2, 3))]),
    "sum_to_size-lead": (lambda L: lambda x: x.sum_to_size((3, 1)), [Arg((2, 3, 4))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(STAT_CASES))
def test_statistics_match_torch(name: str, dtype: str) -> None:
    make, args = STAT_CASES[name]
    run_both(make(tidu), make(torch), args, dtype, tol={"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else None)


@pytest.mark.parametrize("name", list(STAT_CASES))
def test_statistics_match_finite_differences(name: str) -> None:
    make, args = STAT_CASES[name]
    rng = np.random.default_rng(4)
    leaves = [tidu.tensor(rng.uniform(-2, 2, a.shape), requires_grad=True) for a in args]
    assert tidu.autograd.gradcheck(make(tidu), leaves)


def test_cov_of_integers_and_too_few_observations_match_torch() -> None:
    assert_same(tidu.cov(tidu.tensor([[1, 2, 4], [3, 1, 0]])), torch.cov(torch.tensor([[1, 2, 4], [3, 1, 0]])),
                TOL["float32"])
    for L in (torch, tidu):  # noqa: N806 - the library
        with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
            assert math.isinf(L.cov(L.tensor([[1.0, 2.0]]), correction=2).item())


@pytest.mark.parametrize("call", [
    "L.cov(L.ones(2, 2, 2))", "L.cov(L.ones(2, 3), fweights=L.ones(3))", "L.cov(L.ones(2, 3), aweights=L.ones(2))",
    "L.cov(L.ones(2, 3), fweights=L.tensor([1, -1, 1]))", "L.ones(2, 3).sum_to_size(3, 3)",
    "L.ones(2, 3).sum_to_size(1, 2, 3)",
])
def test_statistics_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_topk_of_bools_raises_like_pytorch() -> None:
    assert_same_error("L.tensor([True, False]).topk(1)")


@pytest.mark.parametrize("call", ["L.ones(2, 3).sum(dim=(0, 0))", "L.ones(2, 3).sum(dim=(1, -1))",
                                  "L.ones(2, 3).mean((0, 1, -2))"])
def test_a_repeated_reduction_dim_is_named_like_torch(call: str) -> None:
    assert_same_error(call)


def test_std_of_a_constant_row_has_a_zero_gradient_as_in_torch():
    """PyTorch's derivative of ``std`` is 0 where it is 0 (``sqrt``'s at 0 times the variance's
    0 would be NaN)."""
    grads = []
    for L in (tidu, torch):
        x = L.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], dtype=L.float64, requires_grad=True)
        (L.std(x, dim=1).sum() + L.std(x[0], correction=0) + x[1, :1].std(correction=0)).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    assert np.isfinite(grads[0]).all()


def test_a_bool_in_dims_place_is_var_and_stds_unbiased_and_refused_elsewhere():
    """``var(x, False)`` is PyTorch's older ``var(input, unbiased)``; other reductions refuse a bool dim."""
    for L in (tidu, torch):
        x = L.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
        got = [L.var(x, False).item(), x.std(True).item(), L.var(x, 1, False).tolist()]
        if L is tidu:
            ours = got
        else:
            np.testing.assert_allclose(ours[:2], got[:2], rtol=1e-6)
            np.testing.assert_allclose(ours[2], got[2], rtol=1e-6)
        for call in ("L.sum(x, True)", "x.amax(True)", "L.std(x, True, True)", "L.mean(x, False)"):
            with pytest.raises(TypeError):
                eval(call)  # noqa: S307 - the calls above


def test_div_trunc_has_zero_gradients_even_where_the_divisor_is_zero():
    results = []
    for L in (tidu, torch):
        x = L.tensor([1.0, 2.0, -7.5], requires_grad=True)
        y = L.tensor([0.0, 2.0, 2.0], requires_grad=True)
        q = L.div(x, y, rounding_mode="trunc")
        q.sum().backward()
        results.append((q.tolist(), x.grad.tolist(), y.grad.tolist(), q.requires_grad))
    assert results[0] == results[1]


def test_var_mean_and_std_mean_take_the_older_unbiased_overload():
    for L in (tidu, torch):
        x = L.tensor([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
        got = [t.item() for t in (*L.var_mean(x, False), *L.std_mean(x, True))]
        if L is tidu:
            ours = got
        else:
            np.testing.assert_allclose(ours, got, rtol=1e-6)


def test_gather_takes_0d_operands_as_1d_and_sparse_grad():
    for L in (tidu, torch):
        x = L.tensor(2.0, requires_grad=True)
        got = [L.gather(x, 0, L.tensor([0, 0])).tolist(), L.gather(L.tensor([5.0, 6.0]), 0, L.tensor(1)).item(),
               L.tensor([[1, 2], [3, 4]]).gather(1, L.tensor([[0], [1]]), sparse_grad=False).tolist()]
        L.gather(x, 0, L.tensor([0, 0])).sum().backward()
        got.append(x.grad.item())
        if L is tidu:
            ours = got
        else:
            assert ours == got
