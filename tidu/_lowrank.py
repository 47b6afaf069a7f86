"""Randomized low-rank decompositions: ``svd_lowrank`` and ``pca_lowrank`` (PyTorch's
``torch._lowrank``), from Halko, Martinsson and Tropp, "Finding structure with randomness" (2011):
a Gaussian sketch of ``A``'s range, sharpened by subspace iterations (Algorithm 4.4), then the SVD
of ``A`` projected on it (Algorithm 5.1). Composed from ``randn``, ``linalg.qr``, ``linalg.svd`` and
products, so it is differentiable; the draws come from tidu's generator (``tidu.manual_seed``).

>>> import tidu
>>> _ = tidu.manual_seed(0)
>>> A = tidu.tensor([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
>>> U, S, V = tidu.svd_lowrank(A, q=2)
>>> S
tensor([3.0000, 1.0000])
"""

from __future__ import annotations

from typing import Any

from .core import dtypes
from .ops import creation, reduce


def _approximate_basis(A: Any, q: int, niter: int, M: Any) -> Any:  # noqa: N803
    """An orthonormal (m, q) basis ``Q`` with ``A - M ≈ Q Qᵀ (A - M)``: ``(A - M) R`` for a Gaussian
    ``R``, then ``niter`` round trips through ``(A - M)ᵀ``, re-orthonormalized by QR each way."""
    from .linalg import qr

    def times(B: Any) -> Any:
        return A @ B if M is None else A @ B - M @ B

    def times_t(B: Any) -> Any:
        return A.mT @ B if M is None else A.mT @ B - M.mT @ B

    dtype = A.dtype if A.dtype.is_floating_point else dtypes.float32
    R = creation.randn(A.shape[-1], q, dtype=dtype, device=A.device)  # noqa: N806
    Q = qr(times(R)).Q  # noqa: N806
    for _ in range(niter):
        Q = qr(times_t(Q)).Q  # noqa: N806
        Q = qr(times(Q)).Q  # noqa: N806
    return Q


def _matrices(A: Any, name: str) -> None:  # noqa: N803
    if A.ndim < 2:
        raise ValueError(f"{name}: A must have at least 2 dimensions, got {A.ndim}")


def _check(A: Any, q: Any, niter: Any) -> None:  # noqa: N803
    """``pca_lowrank``'s checks (``svd_lowrank`` makes none: a larger ``q`` gives ``min(m, n)``
    columns, a negative ``niter`` no iterations, as PyTorch's)."""
    if not isinstance(niter, int) or isinstance(niter, bool) or niter < 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    m, n = A.shape[-2:]
    if not isinstance(q, int) or isinstance(q, bool) or not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")


def _svd_lowrank(A: Any, q: int, niter: int, M: Any) -> tuple[Any, Any, Any]:  # noqa: N803
    from .linalg import svd

    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(tuple(A.shape))  # noqa: N806
    if m < n:  # sketch the smaller side: factor Aᵀ and swap U and V
        A = A.mT  # noqa: N806
        M = None if M is None else M.mT  # noqa: N806
    Q = _approximate_basis(A, q, niter, M)  # noqa: N806
    B = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M  # noqa: N806
    U, S, Vh = svd(B, full_matrices=False)  # noqa: N806
    U, V = Q @ U, Vh.mT  # noqa: N806
    return (V, S, U) if m < n else (U, S, V)


def svd_lowrank(A: Any, q: int | None = 6, niter: int | None = 2, M: Any = None) -> tuple[Any, Any, Any]:  # noqa: N803
    """``(U, S, V)``, an approximate rank-``q`` SVD of ``A - M`` (``M`` broadcasts to ``A``):
    ``A - M ≈ U diag(S) Vᵀ`` with ``U`` (..., m, q), ``S`` (..., q), ``V`` (..., n, q). It is exact
    (up to rounding) when ``A - M`` has rank at most ``q``; ``niter`` subspace iterations sharpen
    it otherwise. Random: draws an (n, q) Gaussian matrix.

    >>> import tidu
    >>> _ = tidu.manual_seed(0)
    >>> A = tidu.outer(tidu.tensor([1.0, 2.0, 2.0]), tidu.tensor([2.0, 0.0, 0.0, 0.0]))
    >>> U, S, V = tidu.svd_lowrank(A, q=1)
    >>> S, (U * S @ V.mT - A).abs().max() < 1e-6
    (tensor([6.]), tensor(True))
    """
    _matrices(A, "svd_lowrank")
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Any, q: int | None = None, center: bool = True, niter: int = 2) -> tuple[Any, Any, Any]:  # noqa: N803
    """``(U, S, V)``: ``svd_lowrank`` of ``A`` less its column means (when ``center``), so ``V``'s
    columns are the principal directions and ``S**2 / (m - 1)`` the variances along them.
    ``q`` defaults to ``min(6, m, n)``.

    >>> import tidu
    >>> _ = tidu.manual_seed(0)
    >>> X = tidu.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> U, S, V = tidu.pca_lowrank(X, q=1)
    >>> S, V.abs()
    (tensor([2.]), tensor([[0.7071],
            [0.7071]]))
    """
    _matrices(A, "pca_lowrank")
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else q
    _check(A, q, niter)
    if center:
        A = A - reduce.mean(A, -2, True)  # noqa: N806
    return _svd_lowrank(A, q, niter, None)
