"""matmul, mm, bmm, dot, outer and einsum against PyTorch: values, dtypes, gradients, errors."""

from __future__ import annotations

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
BLAS_TOL = {"float32": {"rtol": 1e-5, "atol": 1e-5}, "float64": TOL["float64"]}


def _lib(x: Any) -> Any:
    return tidu if isinstance(x, tidu.Tensor) else torch


def _args(shapes: list) -> list[Arg]:
    return [s if isinstance(s, Arg) else Arg(s) for s in shapes]


def _ids(shapes: list) -> str:
    return ",".join(repr(a) for a in _args(shapes))


# --- matmul family ------------------------------------------------------------------------------
MATMUL = [
    [(4,), (4,)], [(3,), (3, 2)], [(2, 3), (3,)], [(2, 3), (3, 4)], [(5, 2, 3), (3, 4)], [(2, 3), (5, 3, 4)],
    [(5, 1, 2, 3), (4, 3, 2)], [(3,), (2, 3, 2)], [(2, 2, 3), (3,)], [T(3, 2), T(4, 3)], [(0, 3), (3, 4)],
    [(2, 0), (0, 3)], [(3, 0, 2), (2, 4)], [(1, 2, 3), (4, 1, 3, 2)],
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", MATMUL, ids=_ids)
def test_matmul(shapes: list, dtype: str) -> None:
    run_both(lambda a, b: _lib(a).matmul(a, b), None, _args(shapes), dtype, tol=BLAS_TOL[dtype])
    run_both(lambda a, b: b.__rmatmul__(a), lambda a, b: a @ b, _args(shapes), dtype, tol=BLAS_TOL[dtype])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4)], [(3,), (3,)], [(2, 2, 3), (3,)], [(5, 1, 2, 3), (4, 3, 2)]],
                         ids=_ids)
def test_integer_matmul(shapes: list, dtype: str) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.integers(-50, 50, size=s).astype(dtype) for s in shapes)
    assert_same(tidu.tensor(a) @ tidu.tensor(b), torch.tensor(a) @ torch.tensor(b), {"rtol": 0, "atol": 0})
    if len(shapes[0]) == 1:
        assert_same(tidu.dot(tidu.tensor(a), tidu.tensor(b)), torch.dot(torch.tensor(a), torch.tensor(b)),
                    {"rtol": 0, "atol": 0})


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [[(2, 3), (3, 4)], [T(3, 2), (3, 1)], [(0, 3), (3, 2)], [(2, 0), (0, 2)]], ids=_ids)
def test_mm(shapes: list, dtype: str) -> None:
    run_both(lambda a, b: _lib(a).mm(a, b), None, _args(shapes), dtype, tol=BLAS_TOL[dtype])
    run_both(lambda a, b: a.mm(b), None, _args(shapes), dtype, tol=BLAS_TOL[dtype], grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [[(2, 3, 4), (2, 4, 5)], [(1, 1, 1), (1, 1, 3)], [(0, 2, 3), (0, 3, 2)],
                                    [(3, 2, 0), (3, 0, 2)]], ids=_ids)
def test_bmm(shapes: list, dtype: str) -> None:
    run_both(lambda a, b: _lib(a).bmm(a, b), None, _args(shapes), dtype, tol=BLAS_TOL[dtype])
    run_both(lambda a, b: a.bmm(b.transpose(1, 2).transpose(1, 2)), None, _args(shapes), dtype,
             tol=BLAS_TOL[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [0, 1, 7])
def test_dot_and_outer(n: int, dtype: str) -> None:
    run_both(lambda a, b: _lib(a).dot(a, b), None, _args([(n,), (n,)]), dtype, tol=BLAS_TOL[dtype])
    run_both(lambda a, b: a.dot(b), None, _args([(n,), (n,)]), dtype, tol=BLAS_TOL[dtype])
    run_both(lambda a, b: _lib(a).outer(a, b), None, _args([(n,), (3,)]), dtype)
    run_both(lambda a, b: a.outer(b), None, _args([(2,), (n,)]), dtype)


def test_outer_promotes_dtypes() -> None:
    for lib_fn in (
        lambda L: L.outer(L.tensor([1, 2]), L.tensor([0.5, 1.5])),
        lambda L: L.outer(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0], dtype=L.float64)),
        lambda L: L.outer(L.tensor([1, 2], dtype=L.int32), L.tensor([3, 4])),
    ):
        assert_same(lib_fn(tidu), lib_fn(torch), TOL["float32"])


# --- einsum -------------------------------------------------------------------------------------
EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("bij,bkj->bik", [(2, 2, 3), (2, 4, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->j", [(2, 3)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,j", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]),
    ("i,i->i", [(4,), (4,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,kj->ik", [T(3, 2), (4, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(2, 2, 3)]),
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),
    ("...ij,jk", [(5, 2, 3), (3, 2)]),
    ("i...->...", [(2, 3)]),
    ("...ij->ij", [(2, 3, 4)]),
    ("...ij->j...", [(2, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
    ("abc,cd,b->ad", [(2, 3, 4), (4, 2), (3,)]),
    ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("Ba,bA", [(2, 3), (4, 5)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("->", [()]),
    ("i,->i", [(3,), ()]),
    ("ij,jk->ik", [(0, 3), (3, 2)]),
    ("ij,jk->ik", [(2, 0), (0, 2)]),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[f"{e.strip()}-{_ids(s)}" for e, s in EINSUM])
def test_einsum(eq: str, shapes: list, dtype: str) -> None:
    run_both(lambda *xs: _lib(xs[0]).einsum(eq, *xs), None, _args(shapes), dtype, tol=BLAS_TOL[dtype])


def test_einsum_list_operands_and_integers() -> None:
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    for L in (tidu, torch):
        out = L.einsum("ij,jk->ik", [L.tensor(a), L.tensor(b)])
        if L is tidu:
            ours = out
    assert_same(ours, out, {"rtol": 0, "atol": 0})


# --- errors: torch's classes --------------------------------------------------------------------
def _raises_like_torch(call: Callable, exc: type, match: str) -> None:
    with pytest.raises(exc):
        call(torch)
    with pytest.raises(exc, match=match):
        call(tidu)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda L: L.ones(2, 3) @ L.ones(2, 3), RuntimeError, "cannot be multiplied \\(2x3 and 2x3\\)"),
        (lambda L: L.ones(2, 3, 4) @ L.ones(5, 4), RuntimeError, "cannot be multiplied \\(6x4 and 5x4\\)"),
        (lambda L: L.ones(3, 4) @ L.ones(2, 5, 4), RuntimeError, "to be: \\[2, 4\\] but got: \\[2, 5\\]"),
        (lambda L: L.ones(2) @ L.ones(3), RuntimeError, "inconsistent tensor size"),
        (lambda L: L.ones(2, 3) @ L.ones(2), RuntimeError, "size mismatch"),
        (lambda L: L.ones(2, 2, 3) @ L.ones(3, 3, 2), RuntimeError, "must match"),
        (lambda L: L.matmul(L.tensor(1.0), L.ones(2)), RuntimeError, "at least 1D"),
        (lambda L: L.ones(2, 3) @ L.ones(3, 2, dtype=L.float64), RuntimeError, "float != double"),
        (lambda L: L.ones(2, 3, dtype=L.int64) @ L.ones(3, 2, dtype=L.int32), RuntimeError, "long int != int"),
        (lambda L: L.ones(2, 3).bool() @ L.ones(3, 2).bool(), NotImplementedError, "Bool"),
        (lambda L: L.mm(L.ones(2, 3), L.ones(3)), RuntimeError, "mat2 must be a matrix"),
        (lambda L: L.mm(L.ones(3), L.ones(3, 2)), RuntimeError, "self must be a matrix"),
        (lambda L: L.mm(L.ones(2, 3), L.ones(4, 4)), RuntimeError, "cannot be multiplied"),
        (lambda L: L.mm(L.ones(2, 3), L.ones(3, 4, dtype=L.float64)), RuntimeError, "same dtype"),
        (lambda L: L.bmm(L.ones(2, 3), L.ones(3, 4)), RuntimeError, "batch1 must be a 3D tensor"),
        (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 4)), RuntimeError, "batch2 must be a 3D tensor"),
        (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 4)), RuntimeError, "to be: \\[2, 3\\] but got: \\[3, 3\\]"),
        (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 4, 4)), RuntimeError, "first two dimensions"),
        (lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 3, 4, dtype=L.float64)), RuntimeError, "Float but found Double"),
        (lambda L: L.dot(L.ones(2), L.ones(3)), RuntimeError, "inconsistent tensor size"),
        (lambda L: L.dot(L.ones(2, 1), L.ones(2)), RuntimeError, "1D tensors expected, but got 2D and 1D"),
        (lambda L: L.dot(L.ones(2), L.ones(2, dtype=L.float64)), RuntimeError, "Float and Double"),
        (lambda L: L.outer(L.ones(2, 1), L.ones(3)), RuntimeError, "1-D argument self, but got 2-D"),
        (lambda L: L.outer(L.ones(2), L.tensor(1.0)), RuntimeError, "1-D argument vec2, but got 0-D"),
        (lambda L: L.einsum("ij,kj", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "subscript j has size 4"),
        (lambda L: L.einsum("ij,jk->ik", L.ones(2, 3)), RuntimeError, "fewer operands"),
        (lambda L: L.einsum("ij->", L.ones(2, 3), L.ones(2, 3)), RuntimeError, "more operands"),
        (lambda L: L.einsum("ij,jk->iz", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "subscript z does not appear"),
        (lambda L: L.einsum("ij,jk->ii", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "appears more than once"),
        (lambda L: L.einsum("i1,jk->ik", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "invalid subscript"),
        (lambda L: L.einsum("ijk,jk->ik", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "number of subscripts"),
        (lambda L: L.einsum("..i->i", L.ones(2, 3)), RuntimeError, "not part of any ellipsis"),
        (lambda L: L.einsum("ij,jk->ki->", L.ones(2, 3), L.ones(3, 4)), RuntimeError, "invalid subscript"),
        (lambda L: L.einsum("ij,jk", L.ones(2, 3), L.ones(3, 4, dtype=L.float64)), RuntimeError, "Float but found"),
        (lambda L: L.einsum("ij"), ValueError, "at least one operand"),
        (lambda L: L.einsum(3, L.ones(2)), TypeError, "must be str"),
    ],
)
def test_bad_input_raises_like_torch(call: Callable, exc: type, match: str) -> None:
    _raises_like_torch(call, exc, match)


# --- fuzz ---------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    batch_a=st.lists(st.sampled_from([1, 2]), max_size=2),
    batch_b=st.lists(st.sampled_from([1, 2]), max_size=2),
    n=st.integers(0, 3), k=st.integers(0, 3), m=st.integers(1, 3),
    vec_a=st.booleans(), vec_b=st.booleans(),
)
def test_fuzz_matmul_broadcasting(batch_a: list, batch_b: list, n: int, k: int, m: int, vec_a: bool,
                                  vec_b: bool) -> None:
    a = (k,) if vec_a else (*batch_a, n, k)
    b = (k,) if vec_b else (*batch_b, k, m)
    run_both(lambda x, y: x @ y, None, [Arg(a), Arg(b)], "float64")


@settings(max_examples=30, deadline=None)
@given(data=st.data(), n_ops=st.integers(1, 3))
def test_fuzz_einsum(data: Any, n_ops: int) -> None:
    letters = "abcd"
    sizes = {c: data.draw(st.integers(1, 3)) for c in letters}
    terms = [data.draw(st.lists(st.sampled_from(letters), unique=True, max_size=3)) for _ in range(n_ops)]
    used = sorted({c for t in terms for c in t})
    out = data.draw(st.permutations(used)).__getitem__(slice(0, data.draw(st.integers(0, len(used)))))
    eq = ",".join("".join(t) for t in terms) + "->" + "".join(out)
    shapes = [tuple(sizes[c] for c in t) for t in terms]
    run_both(lambda *xs: _lib(xs[0]).einsum(eq, *xs), None, [Arg(s) for s in shapes], "float64")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_the_matrix_product_short_path_matches_the_general_bind(device: str, monkeypatch: Any) -> None:
    """``a @ b`` of two 2-D tensors takes the matrix product short path (``dispatch.bind_product``): PyTorch's values, dtypes and
    gradients (a queued operand, a stale view, integers, no grad), as the general bind gives them,
    and the general path's error for two devices."""
    from tidu.core import deferred, dispatch

    monkeypatch.setattr(deferred, "ENABLED", True)
    rng = np.random.default_rng(7)
    xs, ws = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))

    def product(lib: Any, x: Any, w: Any) -> Any:
        base = w * 1.0
        view = base[1:, :]
        base.mul_(2.0)  # the view's place in the graph is stale
        a = ((x * 2.0) @ w).tanh()  # a queued left operand
        return view @ a.t() @ a

    tx, tw = (torch.tensor(a, requires_grad=True) for a in (xs, ws))
    expected = product(torch, tx, tw)
    expected.sum().backward()
    calls = []
    short = dispatch.bind_product
    monkeypatch.setattr("tidu.ops.linalg.bind_product", lambda a, b, params, tag=None: calls.append(
        params["dimension_numbers"] == (((1,), (0,)), ((), ())) and tag is False) or short(a, b, params, tag))
    x, w = (tidu.tensor(a, requires_grad=True, device=device) for a in (xs, ws))
    out = product(tidu, x, w)
    out.sum().backward()
    assert calls == [True] * 3
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-12)
    for got, want in ((x.grad, tx.grad), (w.grad, tw.grad)):
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    ints = tidu.tensor([[1, 2]], dtype=tidu.int32, device=device) @ tidu.tensor([[3], [4]], dtype=tidu.int32,
                                                                                  device=device)
    assert ints.dtype is tidu.int32 and ints.tolist() == [[11]]
    with tidu.no_grad():
        assert not (x @ w).requires_grad
    if device == "cuda":
        with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
            x @ tidu.tensor(ws)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_linear_takes_the_product_short_path_with_parameters(device: str, monkeypatch: Any) -> None:
    """``F.linear`` of a 2-D input with a ``Parameter`` weight and bias (``nn.Linear``) runs its
    product through ``bind_matmul`` (the weight transposed) and its bias add through the short
    paths: PyTorch's values and gradients; a 3-D input takes the general product."""
    from tidu.core import dispatch

    calls = []
    short = dispatch.bind_matmul
    monkeypatch.setattr("tidu.nn.functional.bind_matmul", lambda *a, **k: calls.append(k) or short(*a, **k))
    torch.manual_seed(0)
    ref = torch.nn.Linear(4, 3).double()
    layer = tidu.nn.Linear(4, 3, dtype=tidu.float64).to(device)
    layer.load_state_dict({k: tidu.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    xs = np.random.default_rng(3).standard_normal((5, 4))
    for shape in ((5, 4), (1, 5, 4)):
        tx = torch.tensor(xs.reshape(shape), requires_grad=True)
        x = tidu.tensor(xs.reshape(shape), requires_grad=True, device=device)
        expected, out = ref(tx).tanh(), layer(x).tanh()
        expected.sum().backward()
        out.sum().backward()
        np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-12)
        for got, want in ((x.grad, tx.grad), (layer.weight.grad, ref.weight.grad), (layer.bias.grad, ref.bias.grad)):
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
        for p in (*layer.parameters(), *ref.parameters()):
            p.grad = None
    assert calls == [{"transposed": True}]  # the 2-D input only


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_batched_products_take_the_product_short_path(device: str, monkeypatch: Any) -> None:
    """``(..., m, k) @ (k, n)``, products of the same batch dims and products with a vector bind
    through ``dispatch.bind_product`` (PyTorch's values and gradients, a transposed view among
    the operands); broadcast batch dims and a size mismatch take the general path (its result,
    its error)."""
    from tidu.core import dispatch

    calls = []
    short = dispatch.bind_product
    monkeypatch.setattr("tidu.ops.linalg.bind_product", lambda a, b, p: calls.append(p) or short(a, b, p))
    rng = np.random.default_rng(9)
    xs, ws, ks = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((2, 3, 4))

    def products(lib: Any, x: Any, w: Any, k: Any) -> Any:
        a = x @ w.t()  # (2, 3, 4) @ (4, 5)
        b = x @ k.transpose(-2, -1)  # (2, 3, 4) @ (2, 4, 3)
        c = x @ k[:1].transpose(-2, -1)  # (2, 3, 4) @ (1, 4, 3), broadcast batch dims: the general path
        v = x[0, 0] @ w[0]  # vector @ vector
        mv, vm, bv = x[1] @ w[1], w[2] @ x[0].t(), x @ w[3]  # matrix @ vector, vector @ matrix, (2, 3, 4) @ (4,)
        return (a.tanh().sum() + (b * b).sum() + c.sum()) * v + (mv * mv).sum() + vm.exp().sum() + bv.sum()

    ref = [torch.tensor(v, requires_grad=True) for v in (xs, ws, ks)]
    expected = products(torch, *ref)
    expected.backward()
    for _ in range(2):  # a first and a cached call
        calls.clear()
        got = [tidu.tensor(v, requires_grad=True, device=device) for v in (xs, ws, ks)]
        out = products(tidu, *got)
        out.backward()
        vector = (((0,), (0,)), ((), ()))
        assert [p["dimension_numbers"] for p in calls] == [
            (((2,), (0,)), ((), ())), (((2,), (1,)), ((0,), (0,))), vector, (((1,), (0,)), ((), ())), vector,
            (((2,), (0,)), ((), ()))]
        np.testing.assert_allclose(out.item(), expected.item(), rtol=1e-12)
        for t, r in zip(got, ref):
            np.testing.assert_allclose(t.grad.cpu().numpy(), r.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(6x4 and 5x4\)"):
        tidu.tensor(xs, device=device) @ tidu.tensor(ws, device=device)


# --- products with an added term, and the other contractions ---------------------------------------
PRODUCT_CASES: dict[str, tuple[Callable, list]] = {
    "addmm": (lambda L: lambda i, a, b: L.addmm(i, a, b, beta=0.5, alpha=2), [(3,), (2, 4), (4, 3)]),
    "addmm-matrix": (lambda L: lambda i, a, b: i.addmm(a, b), [(2, 3), T(4, 2), (4, 3)]),
    "addmv": (lambda L: lambda i, a, v: L.addmv(i, a, v, alpha=3), [(2,), (2, 4), (4,)]),
    "baddbmm": (lambda L: lambda i, a, b: L.baddbmm(i, a, b, beta=2), [(1, 3), (5, 2, 4), (5, 4, 3)]),
    "addbmm": (lambda L: lambda i, a, b: i.addbmm(a, b, alpha=0.5), [(2, 3), (5, 2, 4), (5, 4, 3)]),
    "mv": (lambda L: lambda a, v: a.mv(v), [(2, 4), (4,)]),
    "tensordot": (lambda L: lambda a, b: L.tensordot(a, b), [(2, 3, 4), (3, 4, 5)]),
    "tensordot-lists": (lambda L: lambda a, b: L.tensordot(a, b, dims=([0, 2], [2, 0])), [(2, 3, 4), (4, 5, 2)]),
    "tensordot-outer": (lambda L: lambda a, b: L.tensordot(a, b, dims=0), [(2, 3), (4,)]),
    "inner": (lambda L: lambda a, b: L.inner(a, b), [(2, 3), (4, 5, 3)]),
    "inner-0d": (lambda L: lambda a, b: a.inner(b), [(2, 3), ()]),
    "kron": (lambda L: lambda a, b: L.kron(a, b), [(2, 3), (4,)]),
    "kron-3d": (lambda L: lambda a, b: a.kron(b), [(2, 1, 3), (2, 2)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(PRODUCT_CASES))
def test_products_with_added_terms_match_torch(name: str, dtype: str) -> None:
    make, shapes = PRODUCT_CASES[name]
    run_both(make(tidu), make(torch), [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


def test_addmm_ignores_input_when_beta_is_zero_and_scales_integers_as_integers() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        out = L.addmm(L.full((2, 2), float("nan")), L.ones(2, 3), L.ones(3, 2), beta=0)
        np.testing.assert_array_equal(out.numpy(), np.full((2, 2), 3.0))
        ints = L.addmm(L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64), L.ones(2, 2, dtype=L.int64),
                       alpha=2.7, beta=3)
        assert ints.dtype is L.int64
        np.testing.assert_array_equal(ints.numpy(), np.full((2, 2), 7))
        np.testing.assert_array_equal(L.kron(L.tensor([1, 2]), L.tensor([1, 10])).numpy(), [1, 10, 2, 20])


@pytest.mark.parametrize("call", [
    "L.addmm(L.zeros(2, 3), L.ones(2, 2), L.ones(3, 3))",
    "L.addmm(L.zeros(2, 5), L.ones(2, 2), L.ones(2, 3))", "L.mv(L.ones(2, 3), L.ones(2))",
    "L.tensordot(L.ones(2, 3), L.ones(4, 3), dims=([1], [0]))", "L.tensordot(L.ones(2), L.ones(2), dims=-1)",
    "L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=([0, 1], [1]))",
    "L.inner(L.ones(2, 3), L.ones(2))", "L.baddbmm(L.zeros(1), L.ones(2, 2, 3), L.ones(3, 3, 2))",
])
def test_product_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=call not in _PRODUCT_MESSAGE_DIFFERS)


# PyTorch's message names a different internal check (tidu's names the shapes)
_PRODUCT_MESSAGE_DIFFERS = {"L.inner(L.ones(2, 3), L.ones(2))"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes,p,mode", [
    ([(4, 3), (5, 3)], 2.0, None), ([(2, 4, 3), (5, 3)], 2.0, None), ([(30, 3), (5, 3)], 2.0, None),
    ([(4, 3), (5, 3)], 2.0, "use_mm_for_euclid_dist"), ([(30, 3), (26, 3)], 2.0, "donot_use_mm_for_euclid_dist"),
    ([(4, 3), (5, 3)], 1.0, None), ([(4, 3), (5, 3)], 3.0, None), ([(4, 3), (5, 3)], float("inf"), None),
])
def test_cdist_matches_torch(shapes: list, p: float, mode: str | None, dtype: str) -> None:
    kwargs = {} if mode is None else {"compute_mode": mode}
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else None
    run_both(lambda a, b: tidu.cdist(a, b, p, **kwargs), lambda a, b: torch.cdist(a, b, p, **kwargs),
             [Arg(s) for s in shapes], dtype, tol=tol)


@pytest.mark.parametrize("p", [2.0, 1.0, 1.5])
def test_pdist_matches_torch(p: float) -> None:
    run_both(lambda x: tidu.pdist(x, p), lambda x: torch.pdist(x, p), [Arg((5, 3))], "float64")


def test_cdist_of_count_norm_and_at_zero_distance() -> None:
    np.testing.assert_array_equal(tidu.cdist(tidu.ones(2, 3), tidu.ones(4, 3), p=0).numpy(), np.zeros((2, 4)))
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([[1.0, 2.0], [0.0, 0.0]], dtype=L.float64, requires_grad=True)
        L.cdist(x, x.detach()).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


@pytest.mark.parametrize("call", [
    "L.cdist(L.zeros(2, 3), L.zeros(2, 4))", "L.cdist(L.zeros(3), L.zeros(3))", "L.pdist(L.zeros(3))",
    "L.cdist(L.zeros(2, 3), L.zeros(4, 3), p=-1)",
])
def test_distance_errors_match_torch(call: str) -> None:
    assert_same_error(call)


# --- addr, ger, vdot, chain_matmul, matrix_power, dist, renorm ------------------------------------------
MORE_PRODUCT_CASES: dict[str, tuple[Callable, list]] = {
    "addr": (lambda L: lambda a, u, v: L.addr(a, u, v, beta=0.5, alpha=2), [Arg((3, 2)), Arg((3,)), Arg((2,))]),
    "addr-broadcast": (lambda L: lambda a, u, v: a.addr(u, v), [Arg((2,)), Arg((3,)), Arg((2,))]),
    "ger": (lambda L: lambda u, v: L.ger(u, v), [Arg((3,)), Arg((2,))]),
    "vdot": (lambda L: lambda u, v: u.vdot(v), [Arg((4,)), Arg((4,))]),
    "matrix_power-3": (lambda L: lambda a: L.matrix_power(a, 3), [Arg((3, 3))]),
    "matrix_power-batch": (lambda L: lambda a: a.matrix_power(5), [Arg((2, 2, 2), low=-1, high=1)]),
    "matrix_power-inverse": (lambda L: lambda a: L.linalg.matrix_power(a + 3 * L.eye(2, dtype=a.dtype), -2),
                             [Arg((2, 2))]),
    "matrix_power-1": (lambda L: lambda a: L.matrix_power(a, 1), [Arg((2, 2))]),
    "dist": (lambda L: lambda a, b: L.dist(a, b), [Arg((2, 3)), Arg((3,))]),
    "dist-1": (lambda L: lambda a, b: a.dist(b, 1), [Arg((2, 3)), Arg((2, 3))]),
    "dist-3": (lambda L: lambda a, b: L.dist(a, b, 3.0), [Arg((4,)), Arg((4,))]),
    "renorm": (lambda L: lambda a: L.renorm(a, 2, 0, 1.5), [Arg((3, 4))]),
    "renorm-1": (lambda L: lambda a: a.renorm(1, 1, 2.0), [Arg((2, 3, 2))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(MORE_PRODUCT_CASES))
def test_more_products_match_torch(name: str, dtype: str) -> None:
    make, args = MORE_PRODUCT_CASES[name]
    run_both(make(tidu), make(torch), args, dtype)


@pytest.mark.parametrize("name", list(MORE_PRODUCT_CASES))
def test_more_products_match_finite_differences(name: str) -> None:
    make, args = MORE_PRODUCT_CASES[name]
    rng = np.random.default_rng(3)
    leaves = [tidu.tensor(rng.uniform(a.low, a.high, a.shape), requires_grad=True) for a in args]
    assert tidu.autograd.gradcheck(make(tidu), leaves)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.matrix_power(L.tensor([[1, 2], [3, 4]]), 0), lambda L: L.matrix_power(L.tensor([[1, 2], [3, 4]]), 5),
    lambda L: L.matrix_power(L.ones(2, 0, 0), 3), lambda L: L.addr(L.tensor([[1, 2]]), L.tensor([1]), L.tensor([2, 3]),
                                                                   beta=2, alpha=3),
    lambda L: L.chain_matmul(L.ones(2, 3), L.ones(3, 4), L.ones(4, 1)), lambda L: L.chain_matmul(L.ones(2, 3)),
    lambda L: L.dist(L.tensor([1.0, 2.0]), L.tensor([4.0, 6.0]), float("inf")),
    lambda L: L.dist(L.tensor([1.0, 2.0]), L.tensor([4.0, 6.0]), 0),
])
def test_more_product_values_match_torch(lib_fn: Callable) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, ref = lib_fn(tidu), lib_fn(torch)
    assert_same(out, ref, TOL["float64"])


def test_chain_matmul_warns_as_torch() -> None:
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        tidu.chain_matmul(tidu.ones(2, 2), tidu.ones(2, 2))


@pytest.mark.parametrize("call", [
    "L.matrix_power(L.ones(2, 3), 2)", "L.matrix_power(L.tensor([[1, 2], [3, 4]]), -1)",
    "L.vdot(L.ones(2, 2), L.ones(2, 2))", "L.addr(L.ones(2, 2), L.ones(2, 2), L.ones(2))",
    "L.addr(L.ones(2, 2, dtype=L.int64), L.ones(2, dtype=L.int64), L.ones(2, dtype=L.int64), beta=0.5)",
    "L.dist(L.tensor([1, 2]), L.tensor([4, 6]))", "L.renorm(L.tensor([[1, 2]]), 2, 0, 3)",
    "L.renorm(L.ones(2), 2, 0, 1)", "L.renorm(L.ones(2, 2), -1, 1, 3)",
])
def test_more_product_errors_match_torch(call: str) -> None:
    assert_same_error(call)


@pytest.mark.parametrize(("shape", "rcond"), [((3, 4), 1e-15), ((2, 5, 3), 1e-15), ((4, 4), 0.3)])
def test_pinverse_matches_torch(shape, rcond) -> None:  # noqa: ANN001
    a = np.random.RandomState(1).randn(*shape)
    out = []
    for L in (tidu, torch):
        x = L.tensor(a, requires_grad=True)
        p = L.pinverse(x, rcond=rcond)
        (p * p).sum().backward()
        out.append((p.detach().numpy(), x.grad.numpy(), x.pinverse(rcond).detach().numpy()))
    for ours, ref in zip(*out):
        np.testing.assert_allclose(ours, ref, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("equation", ["ij->j", "ij->ij", "ii->i", "ij->ji", "ij->", "ii->", "ij,k->k", "ij,jk->ik"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
def test_einsum_of_integers_sums_out_to_int64_as_pytorch(equation: str, dtype: str) -> None:
    """A label summed out of one operand goes through ``sum``: integers and bools give int64."""
    def run(L):  # noqa: ANN001, ANN202
        x = L.tensor([[1, 2], [3, 0]]).to(getattr(L, dtype))
        return L.einsum(equation, *((x,) if "," not in equation else (x, x[0]) if equation == "ij,k->k" else (x, x)))

    try:
        ref = run(torch)
    except (RuntimeError, NotImplementedError):
        assert_same_error(run)
        return
    ours = run(tidu)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_trace_of_bools_raises_like_pytorch() -> None:
    assert_same_error("L.trace(L.tensor([[True, False], [False, True]]))")
