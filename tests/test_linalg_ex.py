"""linalg's checked forms, cond, tensorinv and tensorsolve against PyTorch's."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import gradcheck, gradgradcheck


def _np(t: object) -> np.ndarray:
    return t.detach().numpy()


def _spd(n: int, batch: tuple[int, ...] = (), seed: int = 0) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_on_positive_definite_matches_torch(upper: bool) -> None:
    a = _spd(3, (2,))
    A, tA = tidu.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)  # noqa: N806
    ours, theirs = tidu.linalg.cholesky_ex(A, upper=upper), torch.linalg.cholesky_ex(tA, upper=upper)
    np.testing.assert_allclose(_np(ours.L), theirs.L.detach().numpy(), atol=1e-12)
    np.testing.assert_array_equal(_np(ours.info), theirs.info.numpy())
    assert ours.info.dtype is tidu.int32
    ours.L.sum().backward()
    theirs.L.sum().backward()
    np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("a", [[[1.0, 2.0], [2.0, 1.0]], [[4.0, 2.0, 1.0], [2.0, 1.0, 0.0], [1.0, 0.0, 5.0]],
                               [[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]], [[-1.0, 0.0], [0.0, 1.0]]])
def test_cholesky_ex_on_failures_gives_torchs_info_and_partial_factor(a: list) -> None:
    ours, theirs = tidu.linalg.cholesky_ex(tidu.tensor(a)), torch.linalg.cholesky_ex(torch.tensor(a))
    np.testing.assert_array_equal(_np(ours.info), theirs.info.numpy())
    np.testing.assert_allclose(_np(ours.L), theirs.L.numpy(), atol=1e-6)
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="not positive-definite \\(the leading minor of order"):
            lib.linalg.cholesky_ex(lib.tensor(a), check_errors=True)


def test_cholesky_ex_keeps_the_good_matrices_differentiable() -> None:
    a = np.stack([_spd(2), np.array([[1.0, 2.0], [2.0, 1.0]])])
    A = tidu.tensor(a, requires_grad=True)  # noqa: N806
    L, info = tidu.linalg.cholesky_ex(A)  # noqa: N806
    L.sum().backward()
    good = torch.tensor(a[0], requires_grad=True)
    torch.linalg.cholesky(good).sum().backward()
    np.testing.assert_allclose(_np(A.grad)[0], good.grad.numpy(), atol=1e-12)
    np.testing.assert_array_equal(_np(A.grad)[1], 0.0)


def test_inv_ex_and_solve_ex_match_torch() -> None:
    a = np.random.default_rng(1).standard_normal((2, 3, 3))
    b = np.random.default_rng(2).standard_normal((2, 3, 2))
    A, tA = tidu.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)  # noqa: N806
    inv, tinv = tidu.linalg.inv_ex(A), torch.linalg.inv_ex(tA)
    np.testing.assert_allclose(_np(inv.inverse), tinv.inverse.detach().numpy(), atol=1e-10)
    np.testing.assert_array_equal(_np(inv.info), tinv.info.numpy())
    sol, tsol = tidu.linalg.solve_ex(A, tidu.tensor(b)), torch.linalg.solve_ex(tA, torch.tensor(b))
    np.testing.assert_allclose(_np(sol.result), tsol.result.detach().numpy(), atol=1e-10)
    (inv.inverse.sum() + sol.result.sum()).backward()
    (tinv.inverse.sum() + tsol.result.sum()).backward()
    np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), atol=1e-9)
    left = tidu.linalg.solve_ex(A, tidu.tensor(b).mT, left=False).result
    np.testing.assert_allclose(_np(left), torch.linalg.solve_ex(tA, torch.tensor(b).mT, left=False).result.detach().numpy(),
                               atol=1e-10)


def test_singular_inputs_give_torchs_info_and_errors() -> None:
    s = [[1.0, 2.0], [2.0, 4.0]]
    for lib in (tidu, torch):
        assert int(lib.linalg.inv_ex(lib.tensor(s)).info) == 2
        assert int(lib.linalg.solve_ex(lib.tensor(s), lib.ones(2)).info) == 2
        assert lib.linalg.solve_ex(lib.tensor(s), lib.ones(2)).result.shape == (2,)
        with pytest.raises(RuntimeError, match="The diagonal element 2 is zero"):
            lib.linalg.inv_ex(lib.tensor(s), check_errors=True)
        with pytest.raises(RuntimeError, match="singular"):
            lib.linalg.solve_ex(lib.tensor(s), lib.ones(2), check_errors=True)
    assert np.isnan(_np(tidu.linalg.inv_ex(tidu.tensor(s)).inverse)).all()  # torch's: undefined values
    mixed = tidu.tensor(np.stack([np.eye(2) * 2, np.array(s)]), requires_grad=True)
    inverse = tidu.linalg.inv_ex(mixed).inverse
    np.testing.assert_allclose(_np(inverse)[0], np.eye(2) / 2)
    inverse[0].sum().backward()
    np.testing.assert_allclose(_np(mixed.grad)[0], -np.ones((2, 2)) / 4)
    np.testing.assert_array_equal(_np(mixed.grad)[1], 0.0)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc"])
def test_cond_matches_torch(p: object) -> None:
    a = np.random.default_rng(3).standard_normal((2, 3, 3))
    A, tA = tidu.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)  # noqa: N806
    ours, theirs = tidu.linalg.cond(A, p), torch.linalg.cond(tA, p)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-10)
    ours.sum().backward()
    if p in (None, 2, -2, "nuc"):  # PyTorch's other norms raise in backward (an in-place write in inv_ex)
        theirs.sum().backward()
        np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), rtol=1e-7, atol=1e-10)
    else:
        assert gradcheck(lambda x: tidu.linalg.cond(x, p), (A,))


def test_cond_gradients_against_finite_differences() -> None:
    a = tidu.tensor(np.random.default_rng(4).standard_normal((3, 3)), requires_grad=True)
    for p in (None, "fro", 1):
        assert gradcheck(lambda x, p=p: tidu.linalg.cond(x, p), (a,))
        assert gradgradcheck(lambda x, p=p: tidu.linalg.cond(x, p), (a,))


def test_cond_of_singular_and_errors_match_torch() -> None:
    for lib in (tidu, torch):
        assert math.isinf(float(lib.linalg.cond(lib.ones(2, 2), 1)))
        np.testing.assert_allclose(float(lib.linalg.cond(lib.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]))), 2.0)
        with pytest.raises(RuntimeError, match="invalid norm type"):
            lib.linalg.cond(lib.ones(2, 2), 3)
        with pytest.raises(RuntimeError, match="must be batches of square matrices"):
            lib.linalg.cond(lib.ones(2, 3), "fro")


def test_tensorinv_and_tensorsolve_match_torch() -> None:
    rng = np.random.default_rng(5)
    a = rng.standard_normal((4, 2, 2)) + 2 * np.eye(4).reshape(4, 2, 2)
    A, tA = tidu.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)  # noqa: N806
    ours, theirs = tidu.linalg.tensorinv(A, ind=1), torch.linalg.tensorinv(tA, ind=1)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), atol=1e-10)
    s = rng.standard_normal((2, 3, 6)) + np.eye(6).reshape(2, 3, 6)
    b = rng.standard_normal((2, 3))
    S, tS = tidu.tensor(s, requires_grad=True), torch.tensor(s, requires_grad=True)  # noqa: N806
    x, tx = tidu.linalg.tensorsolve(S, tidu.tensor(b)), torch.linalg.tensorsolve(tS, torch.tensor(b))
    np.testing.assert_allclose(_np(x), tx.detach().numpy(), atol=1e-10)
    moved = rng.standard_normal((6, 2, 3)) + np.eye(6).reshape(6, 2, 3)
    np.testing.assert_allclose(_np(tidu.linalg.tensorsolve(tidu.tensor(moved), tidu.tensor(b), dims=(0,))),
                               torch.linalg.tensorsolve(torch.tensor(moved), torch.tensor(b), dims=(0,)).numpy(), atol=1e-10)
    (ours.sum() + x.sum()).backward()
    (theirs.sum() + tx.sum()).backward()
    np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), atol=1e-9)
    np.testing.assert_allclose(_np(S.grad), tS.grad.numpy(), atol=1e-9)
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="strictly positive integer"):
            lib.linalg.tensorinv(lib.ones(2, 2), ind=0)
        with pytest.raises(RuntimeError, match="prod\\(self.shape\\[ind:\\]\\)"):
            lib.linalg.tensorinv(lib.ones(2, 3), ind=1)
        with pytest.raises(RuntimeError, match="prod\\(self.shape\\[other.ndim:\\]\\)"):
            lib.linalg.tensorsolve(lib.ones(2, 3, 5), lib.ones(2, 3))
