"""``tidu.linalg`` against ``torch.linalg``: norms, ``vecdot``, ``multi_dot``, ``cross``,
``diagonal`` and the decompositions and solvers: values, dtypes, gradients (to second order for
some) and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both

# name -> (lib -> fn, operand shapes)
CASES: dict[str, tuple[Callable, list]] = {
    "vector_norm": (lambda L: lambda x: L.linalg.vector_norm(x), [(3, 4)]),
    "vector_norm-1-dims": (lambda L: lambda x: L.linalg.vector_norm(x, 1, dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    "vector_norm-inf": (lambda L: lambda x: L.linalg.vector_norm(x, math.inf, dim=-1), [(3, 4)]),
    "vector_norm-3.5": (lambda L: lambda x: L.linalg.vector_norm(x, 3.5, dim=1), [T(4, 3)]),
    "matrix_norm": (lambda L: lambda x: L.linalg.matrix_norm(x), [(2, 3, 4)]),
    "matrix_norm-inf": (lambda L: lambda x: L.linalg.matrix_norm(x, math.inf), [(2, 3, 4)]),
    "matrix_norm--1": (lambda L: lambda x: L.linalg.matrix_norm(x, -1, dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    "matrix_norm-1-reversed": (lambda L: lambda x: L.linalg.matrix_norm(x, 1, dim=(2, 0)), [(2, 3, 4)]),
    "matrix_norm--inf": (lambda L: lambda x: L.linalg.matrix_norm(x, -math.inf, dim=(-1, -3)), [(2, 3, 4)]),
    "norm": (lambda L: lambda x: L.linalg.norm(x), [(2, 3, 4)]),
    "norm-matrix-ord": (lambda L: lambda x: L.linalg.norm(x, 1), [(3, 4)]),
    "norm-dim": (lambda L: lambda x: L.linalg.norm(x, dim=1), [(2, 3, 4)]),
    "norm-two-dims": (lambda L: lambda x: L.linalg.norm(x, math.inf, dim=(0, 1)), [(2, 3, 4)]),
    "vecdot": (lambda L: lambda x, y: L.linalg.vecdot(x, y), [(2, 3), (3,)]),
    "vecdot-dim": (lambda L: lambda x, y: L.linalg.vecdot(x, y, dim=0), [(2, 3), (2, 1)]),
    "multi_dot": (lambda L: lambda a, b, c: L.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
    "cross": (lambda L: lambda a, b: L.linalg.cross(a, b), [(4, 3), (1, 3)]),
    "cross-dim": (lambda L: lambda a, b: L.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    "cross-method": (lambda L: lambda a, b: a.cross(b, dim=1), [(2, 3), (2, 3)]),
    "diagonal": (lambda L: lambda x: L.linalg.diagonal(x, offset=-1), [(2, 3, 3)]),
    "matmul": (lambda L: lambda a, b: L.linalg.matmul(a, b), [(2, 3), (3,)]),
    "nuclear_norm": (lambda L: lambda x: L.nuclear_norm(x), [(3, 4)]),
    "nuclear_norm-batched-keepdim": (lambda L: lambda x: L.nuclear_norm(x, True), [(2, 4, 3)]),
    "nuclear_norm-dim": (lambda L: lambda x: L.nuclear_norm(x, (2, 0), keepdim=True), [(3, 2, 4)]),
    "frobenius_norm": (lambda L: lambda x: L.frobenius_norm(x, dim=(1, 2)), [(2, 3, 4)]),
    "frobenius_norm-one-dim": (lambda L: lambda x: L.frobenius_norm(x, 1, True), [T(4, 3)]),
    "frobenius_norm-all": (lambda L: lambda x: L.frobenius_norm(x, ()), [(2, 3)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_linalg_matches_torch(name: str, dtype: str) -> None:
    make, shapes = CASES[name]
    run_both(make(tidu), make(torch), [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


def test_cross_without_dim_takes_the_first_dim_of_size_three_and_warns() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        a, b = L.arange(18.0).reshape(3, 2, 3), L.ones(3, 2, 3)
        with pytest.warns(UserWarning, match="without specifying the dim"):
            out.append(L.cross(a, b).numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("fn", [
    lambda L, x: L.linalg.vector_norm(x, 3),
    lambda L, x: L.linalg.matrix_norm(x.reshape(2, 2)),
    lambda L, x: L.linalg.norm(x, 1),
    lambda L, x: L.linalg.cross(x[:3], x[1:]).sum(),
])
def test_second_derivatives_match_torch(fn: Callable) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([0.5, -1.0, 2.0, 0.25], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(fn(L, x), x, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), x, allow_unused=True)
        out.append((g.detach().numpy(), np.zeros(4) if h is None else (L.zeros(4, dtype=L.float64) + h).numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("call", [
    "L.linalg.cross(L.ones(2), L.ones(2))", "L.linalg.cross(L.ones(3, 3), L.ones(3))",
    "L.linalg.matrix_norm(L.ones(3))", "L.linalg.matrix_norm(L.ones(2, 2), dim=(0, 0))",
    "L.linalg.matrix_norm(L.ones(2, 2), dim=(0,))",
    "L.linalg.norm(L.ones(2, 2, 2), 2)", "L.linalg.vector_norm(L.ones(2, dtype=L.long))",
    "L.linalg.multi_dot([L.ones(2)])", "L.linalg.multi_dot([L.ones(2), L.ones(2, 2, 2), L.ones(2)])",
    "L.frobenius_norm(L.ones(2, 2, 2), dim=(0, 1, 2))", "L.frobenius_norm(L.ones(2, 2, dtype=L.int32), dim=(1,))",
    "L.nuclear_norm(L.ones(2, dtype=L.float64))", "L.nuclear_norm(L.ones(2, 2, dtype=L.int32))",
    "L.nuclear_norm(L.ones(2, 2, 2), (1,))",
])
def test_errors_match_torch(call: str) -> None:
    errors = []
    for L in (torch, tidu):  # noqa: B007, N806 - the library, read by the call
        with warnings.catch_warnings(), pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
            warnings.simplefilter("ignore")
            eval(call)  # noqa: S307 - the calls above
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]



# --- decompositions and solvers ------------------------------------------------------------------
# Inputs are made well-conditioned in the case (a diagonal shift, X Xᵀ + n I, X + Xᵀ) and
# eigen/singular vectors compared through sign-invariant functions (V * V).


def _shift(L, x):  # noqa: ANN001, ANN202, N803
    return x + 2 * x.shape[-1] * L.eye(x.shape[-1], dtype=x.dtype)


def _spd(L, x):  # noqa: ANN001, ANN202, N803
    return x @ x.mT + x.shape[-1] * L.eye(x.shape[-1], dtype=x.dtype)


def _sq(x):  # noqa: ANN001, ANN202
    return x * x


DEC_CASES: dict[str, tuple[Callable, list]] = {
    "inv": (lambda L: lambda x: L.linalg.inv(_shift(L, x)), [(3, 3)]),
    "inv-batched": (lambda L: lambda x: L.linalg.inv(_shift(L, x)), [(2, 2, 4, 4)]),
    "inverse": (lambda L: lambda x: L.inverse(_shift(L, x)) + _shift(L, x).inverse(), [(3, 3)]),
    "det": (lambda L: lambda x: L.linalg.det(_shift(L, x)), [(2, 3, 3)]),
    "det-negative": (lambda L: lambda x: L.det(-_shift(L, x)) + (-_shift(L, x)).det(), [(3, 3)]),
    "slogdet": (lambda L: lambda x: L.linalg.slogdet(-_shift(L, x)).logabsdet, [(2, 3, 3)]),
    "slogdet-sign": (lambda L: lambda x: L.linalg.slogdet(-_shift(L, x)).sign * x.sum(), [(3, 3)]),
    "slogdet-method": (lambda L: lambda x: L.slogdet(_shift(L, x))[1] + _shift(L, x).slogdet().logabsdet, [(3, 3)]),
    "logdet": (lambda L: lambda x: L.logdet(_shift(L, x)) + _shift(L, x).logdet(), [(2, 3, 3)]),
    "solve": (lambda L: lambda a, b: L.linalg.solve(_shift(L, a), b), [(3, 3), (3, 2)]),
    "solve-vector": (lambda L: lambda a, b: L.linalg.solve(_shift(L, a), b), [(2, 3, 3), (2, 3)]),
    "solve-broadcast": (lambda L: lambda a, b: L.linalg.solve(_shift(L, a), b), [(3, 3), (2, 3, 2)]),
    "solve-right": (lambda L: lambda a, b: L.linalg.solve(_shift(L, a), b, left=False), [(1, 3, 3), (2, 4, 3)]),
    "cholesky": (lambda L: lambda x: L.linalg.cholesky(_spd(L, x)), [(2, 3, 3)]),
    "cholesky-upper": (lambda L: lambda x: L.linalg.cholesky(_spd(L, x), upper=True), [(3, 3)]),
    "cholesky-top": (lambda L: lambda x: L.cholesky(_spd(L, x)) + _spd(L, x).cholesky(upper=True), [(3, 3)]),
    "eigh-values": (lambda L: lambda x: L.linalg.eigh(x + x.mT).eigenvalues, [(2, 4, 4)]),
    "eigh-vectors": (lambda L: lambda x: _sq(L.linalg.eigh(x + x.mT).eigenvectors), [(3, 3)]),
    "eigh-upper": (lambda L: lambda x: _sq(L.linalg.eigh(x, UPLO="U")[1]) + L.linalg.eigh(x, "U")[0], [(3, 3)]),
    "eigvalsh": (lambda L: lambda x: L.linalg.eigvalsh(x), [(2, 3, 3)]),
    "svd-values": (lambda L: lambda x: L.linalg.svd(x).S, [(2, 4, 3)]),
    "svd-U": (lambda L: lambda x: _sq(L.linalg.svd(x, full_matrices=False).U), [(4, 3)]),
    "svd-Vh": (lambda L: lambda x: _sq(L.linalg.svd(x, full_matrices=False).Vh), [(2, 3, 5)]),
    "svd-full-tall": (lambda L: lambda x: _sq(L.linalg.svd(x).U[..., :3]), [(5, 3)]),
    "svd-full-wide": (lambda L: lambda x: _sq(L.linalg.svd(x).Vh[..., :2, :]), [(2, 4)]),
    "svd-top": (lambda L: lambda x: _sq(L.svd(x).V) + _sq(x.svd().U), [(3, 3)]),
    "svd-top-uv": (lambda L: lambda x: L.svd(x, compute_uv=False).S, [(3, 4)]),
    "svdvals": (lambda L: lambda x: L.linalg.svdvals(x), [(3, 4)]),
    "matrix_norm-nuc": (lambda L: lambda x: L.linalg.matrix_norm(x, "nuc"), [(2, 3, 4)]),
    "matrix_norm-2": (lambda L: lambda x: L.linalg.matrix_norm(x, 2, dim=(0, 2), keepdim=True), [(3, 2, 4)]),
    "matrix_norm--2": (lambda L: lambda x: L.linalg.norm(x, -2), [(3, 3)]),
    "qr-Q": (lambda L: lambda x: L.linalg.qr(x).Q, [(2, 4, 3)]),
    "qr-R": (lambda L: lambda x: L.linalg.qr(x).R, [(4, 3)]),
    "qr-wide": (lambda L: lambda x: L.linalg.qr(x).Q + L.linalg.qr(x).R[..., :2], [(2, 4)]),
    "qr-complete-square": (lambda L: lambda x: L.linalg.qr(x, "complete").Q, [(3, 3)]),
    "qr-top": (lambda L: lambda x: L.qr(x).R + x.qr()[0], [(3, 3)]),
    "pinv": (lambda L: lambda x: L.linalg.pinv(x), [(2, 4, 3)]),
    "pinv-wide": (lambda L: lambda x: L.linalg.pinv(x, rtol=1e-3), [(2, 3)]),
    "pinv-hermitian": (lambda L: lambda x: L.linalg.pinv(x + x.mT, hermitian=True), [(3, 3)]),
    "lstsq": (lambda L: lambda a, b: L.linalg.lstsq(a, b).solution, [(4, 3), (4, 2)]),
}

DEC_TOL = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-9, "atol": 1e-10}}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(DEC_CASES))
def test_decompositions_match_torch(name: str, dtype: str) -> None:
    make, shapes = DEC_CASES[name]
    run_both(make(tidu), make(torch), [Arg(s) for s in shapes], dtype, tol=DEC_TOL[dtype])


def test_named_tuples_and_integer_results_match_torch() -> None:
    a = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    for name, fields in [("slogdet", ("sign", "logabsdet")), ("eigh", ("eigenvalues", "eigenvectors")),
                         ("svd", ("U", "S", "Vh")), ("qr", ("Q", "R"))]:
        out, ref = getattr(tidu.linalg, name)(tidu.tensor(a)), getattr(torch.linalg, name)(torch.tensor(a))
        assert out._fields == fields and type(out).__name__ == type(ref).__name__
        assert all(tuple(getattr(out, f).shape) == tuple(getattr(ref, f).shape) for f in fields)
    for name, fields in [("svd", ("U", "S", "V")), ("qr", ("Q", "R")), ("slogdet", ("sign", "logabsdet"))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, ref = getattr(tidu, name)(tidu.tensor(a)), getattr(torch, name)(torch.tensor(a))
        assert out._fields == fields and type(out).__name__ == type(ref).__name__
    for L in (tidu, torch):  # noqa: N806 - the library
        rank = L.linalg.matrix_rank(L.tensor([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]]]))
        assert rank.dtype is L.int64 and rank.tolist() == [1, 2]
        assert L.linalg.matrix_rank(L.tensor(a), hermitian=True).item() == 3
        assert L.linalg.matrix_rank(L.tensor(a), atol=2.0).item() == 2
        result = L.linalg.lstsq(L.tensor(a[:, :2]), L.tensor(a[:, 2]))
        assert tuple(result.solution.shape) == (2,) and result.rank.item() == 2 and result.residuals.numel() == 0
    q = tidu.linalg.qr(tidu.tensor(a[:, :2]), mode="complete")
    assert tuple(q.Q.shape) == (3, 3) and tuple(q.R.shape) == (3, 2)
    np.testing.assert_allclose((q.Q @ q.R).numpy(), a[:, :2], atol=1e-12)
    np.testing.assert_allclose((q.Q.mT @ q.Q).numpy(), np.eye(3), atol=1e-12)


@pytest.mark.parametrize("call", [
    "L.linalg.inv(L.ones(2, 3))", "L.linalg.inv(L.ones(3))", "L.linalg.inv(L.ones(2, 2, dtype=L.long))",
    "L.linalg.det(L.ones(2, 3))", "L.linalg.slogdet(L.ones(2, 3))", "L.linalg.eigh(L.ones(2, 3))",
    "L.linalg.eigh(L.ones(3))", "L.linalg.svd(L.ones(3))", "L.linalg.qr(L.ones(3))",
    "L.linalg.cholesky(L.ones(2, 3))", "L.linalg.qr(L.eye(3), mode='foo')", "L.linalg.eigh(L.eye(2), UPLO='X')",
    "L.linalg.solve(L.eye(2), L.ones(3))", "L.linalg.solve(L.eye(2), L.ones(3, 1))",
    "L.linalg.solve(L.eye(2), L.ones(2, 1, dtype=L.float64))", "L.linalg.matrix_norm(L.ones(2, 2), 3)",
    "L.linalg.solve(L.eye(3), L.ones(3), left=False)", "L.linalg.svd(L.ones(2, 2, dtype=L.long))",
])
def test_decomposition_errors_match_torch(call: str) -> None:
    assert_same_error(call)


@pytest.mark.parametrize("call", [
    "L.linalg.inv(L.tensor([[1.0, 2.0], [2.0, 4.0]]))",
    "L.linalg.inv(L.stack([L.eye(3), L.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])]))",
    "L.linalg.solve(L.zeros(2, 2), L.ones(2))",
    "L.linalg.cholesky(L.tensor([[1.0, 2.0], [2.0, 1.0]]))",
    "L.linalg.cholesky(L.stack([L.eye(3), L.diag(L.tensor([1.0, 2.0, -1.0]))]))",
])
def test_singular_and_indefinite_matrices_raise_linalg_errors(call: str) -> None:
    errors = []
    for L in (torch, tidu):  # noqa: B007, N806 - the library, read by the call
        with pytest.raises(RuntimeError) as info:
            eval(call)  # noqa: S307 - the calls above
        errors.append(info.value)
    assert isinstance(errors[1], tidu.linalg.LinAlgError) and isinstance(errors[0], torch.linalg.LinAlgError)
    assert str(errors[1]) == str(errors[0])


@pytest.mark.parametrize("mode", ["complete", "r"])
def test_qr_gradients_that_torch_refuses_are_refused(mode: str) -> None:
    a = np.random.default_rng(0).standard_normal((4, 3))
    errors = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(a, requires_grad=True)
        Q, R = L.linalg.qr(x, mode=mode)  # noqa: N806
        np.testing.assert_allclose(R.detach().numpy()[:3], np.linalg.qr(a)[1], atol=1e-12)
        with pytest.raises(RuntimeError) as info:
            R.sum().backward()
        errors.append(str(info.value))
    assert errors[1] == errors[0]


@pytest.mark.parametrize("fn", [
    lambda L, x: L.linalg.inv(_shift(L, x)).sum(),
    lambda L, x: L.linalg.det(_shift(L, x)),
    lambda L, x: L.linalg.solve(_shift(L, x), x[:, :1]).sum(),
    lambda L, x: L.linalg.cholesky(_spd(L, x)).sum(),
    lambda L, x: L.linalg.eigvalsh(x + x.mT)[0],
    lambda L, x: _sq(L.linalg.eigh(x + x.mT).eigenvectors)[1].sum(),
    lambda L, x: L.linalg.svdvals(x).sum(),
    lambda L, x: L.linalg.qr(x).R.sum(),
])
def test_decomposition_second_derivatives_match_torch(fn: Callable) -> None:
    a = np.random.default_rng(3).uniform(-1, 1, (3, 3))
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(a, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(fn(L, x), x, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), x)
        out.append((g.detach().numpy(), h.numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-8, atol=1e-10)


# --- matrix_exp, matrix_power, solve_triangular, vander ------------------------------------------------
_EXP_CASES = {
    "matrix_exp": (lambda L: lambda a: L.linalg.matrix_exp(a), [(3, 3)], 1.0),
    "matrix_exp-large": (lambda L: lambda a: L.matrix_exp(a), [(2, 4, 4)], 6.0),  # scaled and squared
    "matrix_exp-method": (lambda L: lambda a: a.matrix_exp(), [(1, 1)], 3.0),
    "matrix_power": (lambda L: lambda a: L.linalg.matrix_power(a, 3), [(3, 3)], 1.0),
    "solve_triangular-upper": (lambda L: lambda a, b: L.linalg.solve_triangular(a + 4 * L.eye(3, dtype=a.dtype), b,
                                                                                upper=True), [(3, 3), (3, 2)], 1.0),
    "solve_triangular-lower-right-unit": (
        lambda L: lambda a, b: L.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
        [(2, 3, 3), (2, 3)], 1.0),
    "vander": (lambda L: lambda x: L.linalg.vander(x), [(2, 3)], 1.0),
    "vander-N": (lambda L: lambda x: L.linalg.vander(x, N=5), [(4,)], 1.0),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_EXP_CASES))
def test_more_linalg_matches_torch(name: str, dtype: str) -> None:
    make, shapes, scale = _EXP_CASES[name]
    rng = np.random.default_rng(6)
    data = [rng.normal(size=s).astype(dtype) * scale for s in shapes]
    got = []
    for L in (torch, tidu):  # noqa: N806 - the library
        leaves = [L.tensor(d, requires_grad=True) for d in data]
        out = make(L)(*leaves)
        weight = L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(dtype))
        (out * weight).sum().backward()
        got.append([out.detach().numpy()] + [x.grad.numpy() for x in leaves])
    tol = {"rtol": 2e-4, "atol": 2e-4} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-9}
    for a, b in zip(got[1], got[0]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, **tol)


@pytest.mark.parametrize("name", list(_EXP_CASES))
def test_more_linalg_matches_finite_differences(name: str) -> None:
    make, shapes, scale = _EXP_CASES[name]
    rng = np.random.default_rng(7)
    leaves = [tidu.tensor(rng.normal(size=s) * min(scale, 2.0), requires_grad=True) for s in shapes]
    assert tidu.autograd.gradcheck(make(tidu), leaves)


def test_matrix_exp_second_derivative_and_special_cases() -> None:
    a = tidu.tensor(np.random.default_rng(8).normal(size=(2, 2)), requires_grad=True)
    assert tidu.autograd.gradgradcheck(tidu.linalg.matrix_exp, [a])
    nilpotent = tidu.tensor([[0.0, 1.0], [0.0, 0.0]], dtype=tidu.float64)
    np.testing.assert_allclose(tidu.linalg.matrix_exp(nilpotent).numpy(), [[1.0, 1.0], [0.0, 1.0]], atol=1e-15)
    assert tidu.linalg.matrix_exp(tidu.zeros(0, 0)).shape == (0, 0)
    np.testing.assert_array_equal(tidu.linalg.vander(tidu.tensor([2, 3]), N=3).numpy(), [[1, 2, 4], [1, 3, 9]])


@pytest.mark.parametrize("call", [
    "L.linalg.matrix_exp(L.ones(2, 3))", "L.linalg.matrix_exp(L.ones(2, 2, dtype=L.int64))",
    "L.linalg.solve_triangular(L.eye(2), L.ones(3, 1), upper=True)",
    "L.linalg.vander(L.tensor([1.0, 2.0]), N=1)", "L.linalg.vander(L.tensor([True, False]))",
    "L.linalg.matrix_power(L.ones(2, 3), 2)",
])
def test_more_linalg_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_solve_triangular_takes_the_dtype_of_a_as_torch() -> None:
    for a, b in (("float32", "float64"), ("float64", "float32")):
        ours = tidu.linalg.solve_triangular(tidu.eye(2, dtype=getattr(tidu, a)), tidu.ones(2, 1, dtype=getattr(tidu, b)),
                                            upper=True)
        ref = torch.linalg.solve_triangular(torch.eye(2, dtype=getattr(torch, a)),
                                            torch.ones(2, 1, dtype=getattr(torch, b)), upper=True)
        assert str(ours.dtype)[5:] == str(ref.dtype)[6:]



def test_pinv_hermitian_is_differentiated_like_the_general_pinv_as_in_torch() -> None:
    """PyTorch's gradient of ``pinv(A, hermitian=True)`` is pinv's general formula (not symmetric),
    not the one through ``eigh``; in reverse mode and under ``jacrev``."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 3))
    spd, weight = a @ a.transpose(0, 2, 1) + 3 * np.eye(3), rng.standard_normal((2, 3, 3))
    results = []
    for L in (tidu, torch):
        s = L.tensor(spd, requires_grad=True)
        out = L.linalg.pinv(s, hermitian=True)
        (grad,) = L.autograd.grad((out * L.tensor(weight)).sum(), s)
        jac = L.func.jacrev(lambda m, L=L: L.linalg.pinv(m, hermitian=True))(L.tensor(spd[0]))
        results.append((out.detach().numpy(), grad.numpy(), jac.numpy()))
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
