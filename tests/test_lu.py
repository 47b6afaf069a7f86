"""LU and the Cholesky solvers (tidu/_lu.py) against PyTorch: values, pivots, dtypes, gradients
(to second order against finite differences too) and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, assert_same_error, run_both


def _lower(L, x):  # noqa: ANN001, ANN202, N803
    """A well-conditioned Cholesky factor: the lower triangle with a positive diagonal."""
    return L.tril(x, -1) + L.diag_embed(x.diagonal(dim1=-2, dim2=-1).abs() + 1.0)


def _factors(L, a):  # noqa: ANN001, ANN202, N803
    out = L.linalg.lu_factor(a)
    return out.LU, out.pivots


# name -> (lib -> fn, operands); every result's gradient is compared with PyTorch's
CASES: dict[str, tuple[Callable, list]] = {
    "lu_factor": (lambda L: lambda a: L.linalg.lu_factor(a).LU, [Arg((4, 4))]),
    "lu_factor-batched-tall": (lambda L: lambda a: L.linalg.lu_factor(a)[0], [Arg((2, 5, 3))]),
    "lu_factor-wide": (lambda L: lambda a: L.linalg.lu_factor(a)[0], [Arg((3, 6))]),
    "lu_factor_ex": (lambda L: lambda a: L.linalg.lu_factor_ex(a).LU, [Arg((3, 3))]),
    "lu-P-L": (lambda L: lambda a: L.linalg.lu(a).L, [Arg((2, 4, 3))]),
    "lu-U": (lambda L: lambda a: L.linalg.lu(a).U, [Arg((3, 5))]),
    "torch.lu": (lambda L: lambda a: L.lu(a)[0], [Arg((3, 3))]),
    "Tensor.lu": (lambda L: lambda a: a.lu()[0], [Arg((2, 3, 3))]),
    "lu_unpack": (lambda L: lambda a: L.lu_unpack(*_factors(L, a)).L, [Arg((4, 3))]),
    "lu_unpack-U": (lambda L: lambda a: L.lu_unpack(*_factors(L, a))[2], [Arg((3, 4))]),
    "lu_solve": (lambda L: lambda a, b: L.linalg.lu_solve(*_factors(L, a), b), [Arg((2, 3, 3)), Arg((2, 3, 2))]),
    "lu_solve-broadcast": (lambda L: lambda a, b: L.linalg.lu_solve(*_factors(L, a), b), [Arg((3, 3)), Arg((2, 3, 1))]),
    "lu_solve-adjoint": (lambda L: lambda a, b: L.linalg.lu_solve(*_factors(L, a), b, adjoint=True),
                         [Arg((4, 4)), Arg((4, 2))]),
    "lu_solve-right": (lambda L: lambda a, b: L.linalg.lu_solve(*_factors(L, a), b, left=False),
                       [Arg((3, 3)), Arg((2, 3))]),
    "lu_solve-right-adjoint": (lambda L: lambda a, b: L.linalg.lu_solve(*_factors(L, a), b, left=False, adjoint=True),
                               [Arg((3, 3)), Arg((2, 3))]),
    "torch.lu_solve": (lambda L: lambda a, b: L.lu_solve(b, *_factors(L, a)), [Arg((3, 3)), Arg((3, 2))]),
    "Tensor.lu_solve": (lambda L: lambda a, b: b.lu_solve(*_factors(L, a)), [Arg((3, 3)), Arg((3, 2))]),
    "cholesky_solve": (lambda L: lambda a, b: L.cholesky_solve(b, _lower(L, a)), [Arg((3, 3)), Arg((3, 2))]),
    "cholesky_solve-upper": (lambda L: lambda a, b: L.cholesky_solve(b, _lower(L, a).mT, upper=True),
                             [Arg((2, 3, 3)), Arg((3, 1))]),
    "Tensor.cholesky_solve": (lambda L: lambda a, b: b.cholesky_solve(_lower(L, a)), [Arg((2, 2)), Arg((2, 3))]),
    "cholesky_inverse": (lambda L: lambda a: L.cholesky_inverse(_lower(L, a)), [Arg((3, 3))]),
    "cholesky_inverse-upper": (lambda L: lambda a: L.cholesky_inverse(_lower(L, a).mT, upper=True),
                               [Arg((2, 3, 3))]),
    "Tensor.cholesky_inverse": (lambda L: lambda a: _lower(L, a).cholesky_inverse(), [Arg((3, 3))]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_lu_and_cholesky_solvers_match_torch(name: str, dtype: str) -> None:
    make, args = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.lu is deprecated in PyTorch
        run_both(make(tidu), make(torch), args, dtype,
                 tol={"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-10})


def test_pivots_permutations_and_reconstruction_match_torch() -> None:
    a = np.random.default_rng(0).standard_normal((3, 5, 4))
    a[1, :, 0] = [0.5, -2.0, 2.0, 1.0, 0.0]  # a tie for the pivot: the first is taken, as LAPACK's
    LU, piv = tidu.linalg.lu_factor(tidu.tensor(a))  # noqa: N806
    LUt, pivt = torch.linalg.lu_factor(torch.tensor(a))  # noqa: N806
    assert piv.dtype is tidu.int32 and piv.tolist() == pivt.tolist()
    P, L, U = tidu.lu_unpack(LU, piv)  # noqa: N806
    Pt, Lt, Ut = torch.lu_unpack(LUt, pivt)  # noqa: N806
    assert P.tolist() == Pt.tolist() and P.dtype is tidu.float64
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-14)
    np.testing.assert_allclose(L.numpy(), Lt.numpy(), atol=1e-14)
    for flags in ((False, True), (True, False)):
        ours, ref = tidu.lu_unpack(LU, piv, *flags), torch.lu_unpack(LUt, pivt, *flags)
        assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in ref]


def test_zero_pivots_give_infos_and_lu_factor_raises() -> None:
    singular = [[[0.0, 1.0], [0.0, 2.0]], [[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]]
    for L in (torch, tidu):  # noqa: N806
        out = L.linalg.lu_factor_ex(L.tensor(singular))
        assert out.info.tolist() == [1, 0, 1] and str(out.info.dtype).endswith("int32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.lu(torch.tensor(singular[0]), get_infos=True)
    ours = tidu.lu(tidu.tensor(singular[0]), get_infos=True)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    P, L, U = tidu.linalg.lu(tidu.tensor(singular[2]))  # noqa: N806 - zero pivots are kept
    assert U.abs().sum().item() == 0 and L.tolist() == [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("call", [
    "L.linalg.lu_factor(L.zeros(2, 2, 2))",
    "L.linalg.lu_factor(L.tensor([[0.0, 1.0], [0.0, 1.0]]))",
    "L.linalg.lu_factor_ex(L.zeros(2, 2), check_errors=True)",
    "L.linalg.lu_factor(L.eye(2), pivot=False)",
    "L.linalg.lu_factor(L.ones(3))",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(2, 1))",
    "L.linalg.lu_solve(L.eye(3), L.ones(3, dtype=L.int32), L.ones(3, 1, dtype=L.float64))",
    "L.cholesky_solve(L.ones(2, 1), L.eye(3))",
    "L.cholesky_inverse(L.ones(2, 3))",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_bad_pivots_and_integer_inputs_raise_as_torch() -> None:
    for call, exc in (("L.linalg.lu_factor(L.ones(2, 2, dtype=L.int64))", NotImplementedError),
                      ("L.lu_unpack(L.eye(2), L.ones(2, dtype=L.int64))", RuntimeError),
                      ("L.lu_unpack(L.eye(2), L.tensor([3, 1], dtype=L.int32))", RuntimeError)):
        assert_same_error(call, same_message=False)
        with pytest.raises(exc):
            eval(call, {"L": tidu})  # noqa: S307 - the calls above


@pytest.mark.parametrize("fn", [
    lambda a: tidu.linalg.lu_factor(a).LU,
    lambda a: tidu.linalg.lu_solve(*tidu.linalg.lu_factor(a), a[..., :2] * a[..., :2]),
    lambda a: tidu.cholesky_inverse(_lower(tidu, a)),
    lambda a: tidu.cholesky_solve(a[..., :1].exp(), _lower(tidu, a), upper=False),
], ids=["lu_factor", "lu_solve", "cholesky_inverse", "cholesky_solve"])
def test_second_order_matches_finite_differences(fn: Callable) -> None:
    a = tidu.tensor(np.random.default_rng(2).standard_normal((2, 3, 3)), requires_grad=True)
    assert tidu.autograd.gradcheck(fn, (a,), check_forward_ad=True)
    assert tidu.autograd.gradgradcheck(fn, (a,))


def test_cholesky_solve_reads_one_triangle() -> None:
    """The gradient lies in the triangle read; in it, PyTorch's (whose L is a full matrix) agrees."""
    a = np.random.default_rng(4).standard_normal((3, 3))
    out = []
    for L in (torch, tidu):  # noqa: N806
        factor = L.tensor(np.tril(a) + 3 * np.eye(3), requires_grad=True)
        L.cholesky_solve(L.ones(3, 2, dtype=L.float64), factor).sum().backward()
        out.append(factor.grad.numpy())
    np.testing.assert_allclose(out[1], np.tril(out[0]), atol=1e-14)
    assert not np.triu(out[1], 1).any()


@pytest.mark.skipif(not tidu.cuda.is_available(), reason="needs a GPU or the CUDA simulator")
def test_results_and_gradients_on_cuda_equal_the_cpu() -> None:
    a = np.random.default_rng(6).standard_normal((2, 3, 3))
    results = {}
    for device in ("cpu", "cuda"):
        A = tidu.tensor(a, device=device, requires_grad=True)  # noqa: N806
        LU, pivots = tidu.linalg.lu_factor(A)  # noqa: N806
        X = tidu.linalg.lu_solve(LU, pivots, tidu.ones(2, 3, 1, dtype=tidu.float64, device=device))  # noqa: N806
        Y = tidu.cholesky_inverse(_lower(tidu, A))  # noqa: N806
        (X.sum() + Y.sum()).backward()
        assert X.device.type == Y.device.type == A.grad.device.type == device
        results[device] = [t.detach().cpu().numpy() for t in (LU, pivots, X, Y, A.grad)]
    for ours, ref in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)
