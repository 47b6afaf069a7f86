"""``svd_lowrank`` and ``pca_lowrank`` (tidu/_lowrank.py). They are random, and tidu's generator
is not PyTorch's, so the comparisons are on what the draw does not change: exact results for
inputs of rank at most ``q`` (against the exact SVD and PyTorch's), shapes and dtypes, the
accuracy over seeds on a full-rank input (against PyTorch's over its seeds), gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _low_rank(shape: tuple, rank: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    return rng.standard_normal((*batch, m, rank)) @ rng.standard_normal((*batch, rank, n))


def _check_factorization(U, S, V, A: np.ndarray, rank: int) -> None:  # noqa: ANN001, N803
    u, s, v = U.numpy(), S.numpy(), V.numpy()
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2),
                               atol=1e-10)
    np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(v.shape[-1]), v.shape[:-2] + (v.shape[-1],) * 2),
                               atol=1e-10)
    np.testing.assert_allclose(s[..., :rank], np.linalg.svd(A, compute_uv=False)[..., :rank], rtol=1e-10)
    np.testing.assert_allclose((u * s[..., None, :]) @ np.swapaxes(v, -1, -2), A, atol=1e-10)


@pytest.mark.parametrize("shape,rank,q", [((8, 5), 2, 3), ((4, 9), 3, 3), ((2, 6, 7), 2, 4), ((5, 5), 5, 6)])
def test_svd_lowrank_is_exact_below_rank_q_and_matches_torch(shape: tuple, rank: int, q: int) -> None:
    A = _low_rank(shape, rank)  # noqa: N806
    tidu.manual_seed(0)
    torch.manual_seed(0)
    U, S, V = tidu.svd_lowrank(tidu.tensor(A), q=q)  # noqa: N806
    Ut, St, Vt = torch.svd_lowrank(torch.tensor(A), q=q)  # noqa: N806
    assert [tuple(t.shape) for t in (U, S, V)] == [tuple(t.shape) for t in (Ut, St, Vt)]
    assert U.dtype is tidu.float64
    _check_factorization(U, S, V, A, rank)
    np.testing.assert_allclose(S.numpy()[..., :rank], St.numpy()[..., :rank], rtol=1e-10)


def test_svd_lowrank_with_M_factors_the_difference() -> None:
    A, M = _low_rank((6, 5), 2), np.random.default_rng(3).standard_normal((1, 5))  # noqa: N806
    U, S, V = tidu.svd_lowrank(tidu.tensor(A + M), q=2, M=tidu.tensor(M))  # noqa: N806
    _check_factorization(U, S, V, A, 2)


@pytest.mark.parametrize("center", [True, False])
def test_pca_lowrank_matches_torch(center: bool) -> None:
    X = _low_rank((10, 4), 2, seed=5) + (3.0 if center else 0.0)  # noqa: N806 - centering removes the offset
    U, S, V = tidu.pca_lowrank(tidu.tensor(X), q=3, center=center)  # noqa: N806
    Ut, St, Vt = torch.pca_lowrank(torch.tensor(X), q=3, center=center)  # noqa: N806
    assert [tuple(t.shape) for t in (U, S, V)] == [tuple(t.shape) for t in (Ut, St, Vt)]
    rank = 2
    np.testing.assert_allclose(S.numpy()[:rank], St.numpy()[:rank], rtol=1e-9)
    # the leading directions agree up to sign
    np.testing.assert_allclose(np.abs((V.numpy() * Vt.numpy()).sum(0))[:rank], 1.0, atol=1e-9)
    assert tuple(tidu.pca_lowrank(tidu.ones(3, 8))[1].shape) == (3,)  # q defaults to min(6, m, n)


def test_full_rank_accuracy_over_seeds_matches_torch() -> None:
    """On a full-rank input with a decaying spectrum, the median relative error of each estimated
    singular value over 200 seeds is PyTorch's, within the spread of the draws (the errors are
    heavy-tailed: medians of 200 draws differ by up to 40% between seed sets)."""
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    v, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    s = 0.6 ** np.arange(30)
    A = (u[:, :30] * s) @ v.T  # noqa: N806
    errors = {}
    for L in (tidu, torch):  # noqa: N806
        runs = []
        for seed in range(200):
            L.manual_seed(seed)
            runs.append(np.abs(L.svd_lowrank(L.tensor(A), q=6, niter=1)[1].numpy() - s[:6]) / s[:6])
        errors[L.__name__] = np.median(runs, 0)
    assert errors["tidu"][0] < 1e-7 and errors["tidu"][-1] < 0.05  # the leading values are nearly exact
    np.testing.assert_allclose(errors["tidu"], errors["torch"], rtol=0.6)


def test_gradients_match_the_exact_svd_when_q_spans_everything() -> None:
    a = np.random.default_rng(1).standard_normal((5, 3))
    grads = []
    for fn in (lambda t: tidu.svd_lowrank(t, q=3)[1], lambda t: tidu.linalg.svdvals(t)):
        x = tidu.tensor(a, requires_grad=True)
        (fn(x) * tidu.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-10)


def test_second_order_matches_finite_differences_for_a_fixed_draw() -> None:
    def fn(x):  # noqa: ANN001, ANN202
        tidu.manual_seed(3)  # the same sketch at every evaluation
        U, S, V = tidu.svd_lowrank(x, q=2, niter=1)  # noqa: N806
        return (U * S) @ V.mT

    x = tidu.tensor(np.random.default_rng(2).standard_normal((4, 3)), requires_grad=True)
    assert tidu.autograd.gradcheck(fn, (x,))
    assert tidu.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("call", [
    "L.pca_lowrank(L.ones(3, 4), q=5)",
    "L.pca_lowrank(L.ones(3, 4), niter=-1)",
    "L.pca_lowrank(L.ones(3, 4), q=-1)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_vectors_are_refused() -> None:
    for fn in (tidu.svd_lowrank, tidu.pca_lowrank):
        with pytest.raises(ValueError, match="at least 2 dimensions"):
            fn(tidu.ones(4))
