"""geqrf, linalg.householder_product and parametrizations.orthogonal against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import gradcheck, gradgradcheck


def _np(t: object) -> np.ndarray:
    return t.detach().numpy()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 2)])
def test_geqrf_matches_torch(shape: tuple[int, ...]) -> None:
    a = np.random.default_rng(0).standard_normal(shape)
    ours, theirs = tidu.geqrf(tidu.tensor(a)), torch.geqrf(torch.tensor(a))
    np.testing.assert_allclose(_np(ours.a), theirs.a.numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(ours.tau), theirs.tau.numpy(), atol=1e-12)
    f32 = tidu.geqrf(tidu.tensor(a.astype(np.float32)))
    assert f32.a.dtype is tidu.float32 and f32.tau.dtype is tidu.float32


def test_geqrf_is_not_differentiable_as_in_torch() -> None:
    x = tidu.tensor(np.eye(3), requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        tidu.geqrf(x).a.sum().backward()
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        tidu.geqrf(tidu.ones(3))


@pytest.mark.parametrize(("shape", "k"), [((4, 4), 4), ((5, 3), 3), ((5, 3), 2), ((2, 4, 3), 3)])
def test_householder_product_values_and_gradients(shape: tuple[int, ...], k: int) -> None:
    rng = np.random.default_rng(1)
    a, tau = rng.standard_normal(shape), rng.uniform(0.5, 1.5, (*shape[:-2], k))
    A, T = tidu.tensor(a, requires_grad=True), tidu.tensor(tau, requires_grad=True)  # noqa: N806
    tA, tT = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)  # noqa: N806
    q, tq = tidu.linalg.householder_product(A, T), torch.linalg.householder_product(tA, tT)
    np.testing.assert_allclose(_np(q), tq.detach().numpy(), atol=1e-12)
    weights = rng.standard_normal(q.shape)
    (q * tidu.tensor(weights)).sum().backward()
    (tq * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(_np(T.grad), tT.grad.numpy(), atol=1e-10)
    assert tidu.orgqr(A, T).shape == tq.shape
    assert gradcheck(tidu.linalg.householder_product, (A, T))
    assert gradgradcheck(tidu.linalg.householder_product, (A, T))


def test_householder_product_errors_match_torch() -> None:
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="greater than or equal to input.shape"):
            lib.linalg.householder_product(lib.ones(2, 3), lib.ones(2))
        with pytest.raises(RuntimeError, match="greater than or equal to tau"):
            lib.linalg.householder_product(lib.ones(3, 2), lib.ones(3))


def twin_linear(cls_args: tuple[int, int], seed: int) -> tuple[tidu.nn.Linear, torch.nn.Linear]:
    """A float64 ``Linear(*cls_args)`` in tidu and in PyTorch with the same weight and bias."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((cls_args[1], cls_args[0]))
    ours, theirs = tidu.nn.Linear(*cls_args, dtype=tidu.float64), torch.nn.Linear(*cls_args, dtype=torch.float64)
    b = rng.standard_normal(cls_args[1])
    with tidu.no_grad():
        ours.weight.copy_(tidu.tensor(w))
        ours.bias.copy_(tidu.tensor(b))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
        theirs.bias.copy_(torch.tensor(b))
    return ours, theirs


@pytest.mark.parametrize(("sizes", "orthogonal_map", "trivial"),
                         [((4, 4), None, True), ((4, 4), "cayley", True), ((4, 4), "householder", True),
                          ((3, 5), "householder", False), ((5, 3), "householder", False),
                          ((4, 4), "householder", False)])
def test_orthogonal_training_matches_torch(sizes: tuple[int, int], orthogonal_map: str | None, trivial: bool) -> None:
    ours, theirs = twin_linear(sizes, seed=sum(sizes))
    tidu.nn.utils.parametrizations.orthogonal(ours, orthogonal_map=orthogonal_map, use_trivialization=trivial)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map, use_trivialization=trivial)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = np.random.default_rng(9).standard_normal((6, sizes[0]))
    opt = tidu.optim.SGD(ours.parameters(), lr=0.1)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(3):
        np.testing.assert_allclose(_np(ours.weight), theirs.weight.detach().numpy(), atol=1e-10)
        np.testing.assert_allclose(_np(ours.parametrizations.weight.original),
                                   theirs.parametrizations.weight.original.detach().numpy(), atol=1e-10)
        opt.zero_grad()
        topt.zero_grad()
        ours(tidu.tensor(x)).tanh().sum().backward()
        theirs(torch.tensor(x)).tanh().sum().backward()
        np.testing.assert_allclose(_np(ours.parametrizations.weight.original.grad),
                                   theirs.parametrizations.weight.original.grad.numpy(), atol=1e-10)
        opt.step()
        topt.step()
    w = _np(ours.weight)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)


def test_orthogonal_with_random_completion_stays_orthogonal() -> None:
    layer = tidu.nn.utils.parametrizations.orthogonal(tidu.nn.Linear(3, 5))  # tall, householder, trivialized
    w = _np(layer.weight)
    np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-5)
    layer(tidu.ones(2, 3)).sum().backward()
    assert layer.parametrizations.weight.original.grad is not None


def test_assigning_an_orthogonal_matrix() -> None:
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    ours, theirs = twin_linear((4, 4), seed=4)
    tidu.nn.utils.parametrizations.orthogonal(ours)
    torch.nn.utils.parametrizations.orthogonal(theirs)
    ours.weight = tidu.tensor(q)
    theirs.weight = torch.tensor(q)
    np.testing.assert_allclose(_np(ours.weight), theirs.weight.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(ours.weight), q, atol=1e-12)


def test_orthogonal_errors_match_torch() -> None:
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias")
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr")
        with pytest.raises(ValueError, match="has no parameter or buffer"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "nothing")
        layer = lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), use_trivialization=False,
                                                         orthogonal_map="householder")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
            layer.weight = lib.ones(3, 3)
