"""``linalg``'s checked forms (``cholesky_ex``, ``inv_ex``, ``solve_ex``: results and a per-matrix
LAPACK ``info`` instead of an error), condition numbers (``cond``) and the tensor equations
(``tensorinv``, ``tensorsolve``), composed from the differentiable decompositions."""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from typing import Any

import numpy as np

from .backends.cpu.decompositions import LinAlgError
from .core import dtypes
from .core.autocast import policy as autocast_policy
from .ops import creation, shape
from .ops import math as ops_math
from .tensor import placed

CholeskyExResult = namedtuple("linalg_cholesky_ex", ["L", "info"])
InvExResult = namedtuple("linalg_inv_ex", ["inverse", "info"])
SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def _linalg() -> Any:
    from . import linalg

    return linalg


def _batch_prefix(info: np.ndarray, index: int) -> str:
    return f"(Batch element {index}): " if info.ndim else ""


def _partial_cholesky(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's unblocked Cholesky of each matrix of ``a`` (..., n, n), stopped at the first
    leading minor that is not positive definite: the lower factor so far (the failed pivot on the
    diagonal, the rest of the lower triangle as given) and ``info`` (0, or that minor's order)."""
    n = a.shape[-1]
    lower = np.tril(a).reshape(-1, n, n).astype(np.float64)
    info = np.zeros(lower.shape[0], np.int32)
    for b, L in enumerate(lower):  # noqa: N806
        for j in range(n):
            pivot = L[j, j] - L[j, :j] @ L[j, :j]
            if not pivot > 0:
                L[j, j] = pivot
                info[b] = j + 1
                break
            L[j, j] = math.sqrt(pivot)
            L[j + 1:, j] = (L[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    return lower.reshape(a.shape).astype(a.dtype), info.reshape(a.shape[:-2])


@autocast_policy("fp32")
def cholesky_ex(A: Any, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:  # noqa: N803
    """``(L, info)``: ``linalg.cholesky``'s factor and, per matrix, 0 or the order of the first
    leading minor that is not positive definite (there ``L`` holds LAPACK's partial factor, with
    no gradient; the other matrices' factors are differentiable). ``check_errors`` raises instead.

    >>> import tidu
    >>> tidu.linalg.cholesky_ex(tidu.tensor([[1.0, 2.0], [2.0, 1.0]]))
    linalg_cholesky_ex(L=tensor([[ 1.,  0.],
            [ 2., -3.]]), info=tensor(2, dtype=tidu.int32))
    """
    linalg = _linalg()
    A = linalg._matrix_input(A, "cholesky")  # noqa: N806
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        return CholeskyExResult(linalg.cholesky(A, upper=upper), None)  # cholesky's own error
    partial, info = _partial_cholesky(A._host())
    failed = np.flatnonzero(info.reshape(-1))
    if check_errors and failed.size:
        i = int(failed[0])
        raise LinAlgError(f"linalg.cholesky_ex: {_batch_prefix(info, i)}The factorization could not be completed "
                          "because the input is not positive-definite (the leading minor of order "
                          f"{info.reshape(-1)[i]} is not positive-definite).")
    info_t = placed(info, dtypes.int32, A.device)
    if not failed.size:
        return CholeskyExResult(linalg.cholesky(A, upper=upper), info_t)
    bad, repaired = _repaired(A, info)
    L = linalg.cholesky(repaired)  # noqa: N806 - the good matrices, differentiably
    L = ops_math.where(bad, placed(partial, A.dtype, A.device), L)  # noqa: N806
    return CholeskyExResult(L.mT if upper else L, info_t)


@autocast_policy("fp32")
def inv_ex(A: Any, *, check_errors: bool = False) -> InvExResult:  # noqa: N803
    """``(inverse, info)``: ``linalg.inv`` and, per matrix, 0 or the 1-based index of the first zero
    pivot of its LU factorization (there the inverse is NaN: LAPACK leaves it undefined).

    >>> import tidu
    >>> tidu.linalg.inv_ex(tidu.tensor([[2.0, 0.0], [0.0, 4.0]]))
    linalg_inv_ex(inverse=tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]]), info=tensor(0, dtype=tidu.int32))
    """
    linalg = _linalg()
    A = linalg._matrix_input(A, "inv")  # noqa: N806
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        return InvExResult(linalg.inv(A), None)  # inv's own error
    return InvExResult(*_lu_checked(A, linalg.inv, check_errors, lambda prefix, code: (
        f"linalg.inv_ex: {prefix}The diagonal element {code} is zero, the inversion could not be completed "
        "because the input matrix is singular.")))


def solve_ex(A: Any, B: Any, *, left: bool = True, check_errors: bool = False) -> SolveExResult:  # noqa: N803
    """``(result, info)``: ``linalg.solve`` and, per matrix of ``A``, 0 or the 1-based index of the
    first zero pivot of its LU factorization (there the result is NaN: LAPACK leaves it undefined).

    >>> import tidu
    >>> tidu.linalg.solve_ex(tidu.tensor([[2.0, 0.0], [0.0, 4.0]]), tidu.tensor([2.0, 2.0]))
    linalg_solve_ex(result=tensor([1.0000, 0.5000]), info=tensor(0, dtype=tidu.int32))
    """
    linalg = _linalg()
    A = linalg._matrix_input(A, "solve")  # noqa: N806
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        return SolveExResult(linalg.solve(A, B, left=left), None)  # solve's own error
    return SolveExResult(*_lu_checked(A, lambda M: linalg.solve(M, B, left=left), check_errors, lambda prefix, _: (
        f"torch.linalg.solve_ex: {prefix}The solver failed because the input matrix is singular.")))


def _lu_checked(A: Any, compute: Any, check_errors: bool, message: Any) -> tuple[Any, Any]:  # noqa: N803
    """``(compute(A), info)`` with ``info`` the first zero pivot of each matrix's LU (0: none); with
    ``check_errors`` a zero pivot raises ``message(batch prefix, pivot)``, else the results of
    those matrices are NaN."""
    info = _linalg().lu_factor_ex(A).info
    codes = info._host()
    failed = np.flatnonzero(codes.reshape(-1))
    if check_errors and failed.size:
        i = int(failed[0])
        raise LinAlgError(message(_batch_prefix(codes, i), codes.reshape(-1)[i]))
    if not failed.size:
        return compute(A), info
    bad, repaired = _repaired(A, codes)
    out = compute(repaired)
    if out.ndim == A.ndim - 1:  # a vector per matrix
        bad = bad.squeeze(-1)
    return ops_math.where(bad, math.nan, out), info


def _repaired(A: Any, codes: np.ndarray) -> tuple[Any, Any]:  # noqa: N803
    """Where ``codes`` (per matrix) is nonzero: a mask (..., 1, 1) of those matrices, and ``A``
    with each of them replaced by the identity (the others stay differentiable); their results
    are NaN, what LAPACK leaves there being undefined."""
    bad = placed(codes != 0, dtypes.bool_, A.device).reshape(*A.shape[:-2], 1, 1)
    eye = creation.eye(A.shape[-1], dtype=A.dtype, device=A.device)
    return bad, ops_math.where(bad, eye, A)


_COND_NORMS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


@autocast_policy("fp32")
def cond(A: Any, p: Any = None) -> Any:  # noqa: N803
    """The condition number of each matrix of ``A`` in the norm ``p``: the ratio of its largest to
    its smallest singular value for ``p`` in ``None``, ``2`` (``-2``: the inverse ratio), else
    ``matrix_norm(A, p) * matrix_norm(inv(A), p)`` (square ``A``; ``inf`` where it is singular).

    >>> import tidu
    >>> tidu.linalg.cond(tidu.tensor([[1.0, 0.0], [0.0, 4.0]]))
    tensor(4.)
    >>> tidu.linalg.cond(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]), "fro")
    tensor(15.0000)
    """
    linalg = _linalg()
    if not any(p is q or (p == q and type(p) is not bool) for q in _COND_NORMS if q is not None) and p is not None:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    A = linalg._matrix_input(A, "cond")  # noqa: N806
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor A must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = linalg.svdvals(A)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    m, n = A.shape[-2:]
    if m != n:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    inverse, info = inv_ex(A)
    value = linalg.matrix_norm(A, p) * linalg.matrix_norm(inverse, p)
    singular = placed(info._host() != 0, dtypes.bool_, A.device)
    return ops_math.where(singular, math.inf, value) if bool(singular._host().any()) else value


@autocast_policy("fp32")
def tensorinv(A: Any, ind: int = 2) -> Any:  # noqa: N803
    """The inverse of ``A`` as a linear map from its first ``ind`` dims to the rest: the tensor
    ``X`` of shape ``A.shape[ind:] + A.shape[:ind]`` with ``tensordot(X, A, ind)`` the identity.

    >>> import tidu
    >>> tidu.linalg.tensorinv(tidu.eye(4).reshape(4, 2, 2) * 2, ind=1).shape
    tidu.Size([2, 2, 4])
    """
    linalg = _linalg()
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return linalg.inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


@autocast_policy("fp32")
def tensorsolve(A: Any, B: Any, dims: Any = None) -> Any:  # noqa: N803
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: ``A``'s leading dims are ``B``'s, its trailing
    ones ``X``'s; ``dims`` moves those of ``A``'s dims to the end first.

    >>> import tidu
    >>> A = tidu.eye(6).reshape(2, 3, 6) * 3
    >>> tidu.linalg.tensorsolve(A, tidu.ones(2, 3)).shape
    tidu.Size([6])
    """
    linalg = _linalg()
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        A = shape.movedim(A, dims, list(range(A.ndim - len(dims), A.ndim)))  # noqa: N806
    result_shape = tuple(A.shape[B.ndim:])
    rows, cols = math.prod(A.shape[:B.ndim]), math.prod(result_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return linalg.solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)


@autocast_policy("fp32")
def triangular_solve(b: Any, A: Any, upper: bool = True, transpose: bool = False,  # noqa: N803
                     unitriangular: bool = False) -> TriangularSolveResult:
    """The older ``linalg.solve_triangular`` (it warns, as PyTorch's does): ``X`` with ``op(A) X = b``
    for the triangle of ``A`` that ``upper`` names (``op`` transposes with ``transpose``), and a copy
    of ``A``.

    >>> import warnings, tidu
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.triangular_solve(tidu.ones(2, 1), tidu.tensor([[2.0, 1.0], [0.0, 4.0]])).solution
    tensor([[0.3750],
            [0.2500]])
    """
    warnings.warn("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    linalg = _linalg()
    coefficient = A.mT if transpose else A
    solution = linalg.solve_triangular(coefficient, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(solution, A.clone())


__all__ = ["cholesky_ex", "cond", "inv_ex", "solve_ex", "tensorinv", "tensorsolve", "triangular_solve"]
