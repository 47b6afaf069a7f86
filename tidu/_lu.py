"""LU with partial pivoting and the solvers built on factors: ``linalg.lu_factor``, ``lu_factor_ex``,
``lu``, ``lu_solve``, ``torch.lu``, ``lu_unpack``, ``lu_solve``, ``cholesky_solve`` and
``cholesky_inverse``.

All are composed from tidu ops, so their gradients (of every order) are those of the
computation. The factorization is Gaussian elimination, one column at a time: the pivot (the
largest ``|a|`` in the column, the first of ties, as LAPACK's ``getrf``) is chosen on the values
and not differentiated, so for fixed pivots ``LU`` is a smooth function of ``A`` and its
derivative is PyTorch's. Pivots are LAPACK's: 1-based, ``int32``, row ``i`` swapped with row
``pivots[i] - 1`` in turn. The solvers read only the triangles they use, so the gradient of
``LU`` (or of ``cholesky_solve``'s factor) lies in them.

>>> import tidu
>>> LU, pivots = tidu.linalg.lu_factor(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]))
>>> LU, pivots
(tensor([[3.0000, 4.0000],
        [0.3333, 0.6667]]), tensor([2, 2], dtype=tidu.int32))
>>> tidu.linalg.lu_solve(LU, pivots, tidu.tensor([[1.0], [2.0]]))
tensor([[0.0000],
        [0.5000]])
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from .core import dtypes
from .core.autocast import policy as autocast_policy
from .core.grad_mode import no_grad
from .ops import creation, indexing, reduce, shape
from .ops import math as ops_math
from .ops._operands import broadcast_shapes

LUFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])


def _matrices(A: Any, name: str) -> None:  # noqa: N803
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if not A.dtype.is_floating_point:
        raise dtypes.not_implemented("lu_cpu", A.dtype)


def _factor(A: Any, pivot: bool, name: str) -> tuple[Any, Any, Any]:  # noqa: N803
    """``(LU, pivots, info)`` by elimination with partial pivoting on ``A`` of shape (..., m, n)."""
    _matrices(A, name if name == "linalg.lu" else "torch.lu_factor")  # PyTorch's names in its message
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    *batch, m, n = A.shape
    W = A  # noqa: N806 - the working matrix: rows swapped, L below the diagonal, U on and above it
    rows = creation.arange(m, device=A.device)
    chosen = []
    info = np.zeros(tuple(batch), np.int32)
    for j in range(min(m, n)):
        with no_grad():
            p = reduce.argmax(ops_math.abs(W[..., j:, j]), -1) + j  # (*batch,)
        chosen.append(p)
        p_host = p._host()
        if (p_host != j).any():  # swap rows j and p: a gather of every row
            p_col = shape.unsqueeze(p, -1)
            order = ops_math.where(rows == j, p_col, ops_math.where(rows == p_col, j, rows))
            W = indexing.gather(W, -2, shape.expand(shape.unsqueeze(order, -1), (*batch, m, n)))  # noqa: N806
        head = W[..., j, j]
        zero = ops_math.eq(head, 0)
        if zero._host().any():
            info = np.where((info == 0) & zero._host(), j + 1, info)
        if j + 1 == m:
            break
        # a zero pivot has a zero column below it (the pivot is its largest entry): LAPACK divides nothing
        multipliers = W[..., j + 1:, j] / shape.unsqueeze(ops_math.where(zero, 1.0, head), -1)
        schur = W[..., j + 1:, j + 1:] - shape.unsqueeze(multipliers, -1) * shape.unsqueeze(W[..., j, j + 1:], -2)
        below = shape.cat([W[..., j + 1:, :j], shape.unsqueeze(multipliers, -1), schur], -1)
        W = shape.cat([W[..., : j + 1, :], below], -2)  # noqa: N806
    pivots = shape.stack(chosen, -1) + 1 if chosen else creation.zeros((*batch, 0), dtype=dtypes.int32)
    pivots = pivots.to(dtypes.int32)
    return W, pivots, creation.tensor(info, dtype=dtypes.int32, device=A.device)


def lu_factor_ex(A: Any, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:  # noqa: N803
    """``(LU, pivots, info)``: ``lu_factor``'s factors and, per matrix, 0 or the 1-based index of the
    first zero pivot (``U[i - 1, i - 1] == 0``); raises on it only with ``check_errors``.

    >>> import tidu
    >>> tidu.linalg.lu_factor_ex(tidu.tensor([[0.0, 1.0], [0.0, 2.0]])).info
    tensor(1, dtype=tidu.int32)
    """
    LU, pivots, info = _factor(A, pivot, "linalg.lu_factor_ex")  # noqa: N806
    if check_errors:
        _raise_on_zero_pivot(info, "linalg.lu_factor_ex")
    return LUFactorExResult(LU, pivots, info)


def _raise_on_zero_pivot(info: Any, name: str) -> None:
    codes = info._host().reshape(-1)
    bad = np.flatnonzero(codes)
    if bad.size:
        where = f"(Batch element {bad[0]}): " if info.ndim else ""
        i = codes[bad[0]]
        raise RuntimeError(f"torch.{name}: {where}U[{i},{i}] is zero and using it on lu_solve would result in a "
                           f"division by zero. If you still want to perform the factorization, consider calling "
                           f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Any, *, pivot: bool = True) -> LUFactorResult:  # noqa: N803
    """``(LU, pivots)``: ``P A = L U`` packed in one matrix per input matrix (``L`` below the
    diagonal, its unit diagonal left out; ``U`` on and above it) and LAPACK's pivots. ``A`` has
    shape (..., m, n). Raises ``RuntimeError`` for a zero pivot (use ``lu_factor_ex``).

    >>> import tidu
    >>> tidu.linalg.lu_factor(tidu.tensor([[2.0, 1.0], [4.0, 1.0]])).pivots
    tensor([2, 2], dtype=tidu.int32)
    """
    LU, pivots, info = _factor(A, pivot, "linalg.lu_factor")  # noqa: N806
    _raise_on_zero_pivot(info, "linalg.lu_factor")
    return LUFactorResult(LU, pivots)


def lu(A: Any, *, pivot: bool = True) -> LUResult:  # noqa: N803
    """``(P, L, U)`` with ``A = P L U``: ``P`` a permutation matrix (m, m), ``L`` unit lower
    trapezoidal (m, k), ``U`` upper trapezoidal (k, n), ``k = min(m, n)``. Zero pivots are kept.

    >>> import tidu
    >>> P, L, U = tidu.linalg.lu(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> P @ L @ U
    tensor([[1., 2.],
            [3., 4.]])
    """
    LU, pivots, _ = _factor(A, pivot, "linalg.lu")  # noqa: N806
    return LUResult(*lu_unpack(LU, pivots))


def _permutation(pivots: Any, m: int) -> np.ndarray:
    """The row order ``perm`` (..., m) of LAPACK's pivots: ``(P^T A)[i] = A[perm[i]]``."""
    piv = pivots._host().astype(np.int64) - 1
    perm = np.broadcast_to(np.arange(m), (*piv.shape[:-1], m)).copy()
    flat, piv2 = perm.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for b in range(flat.shape[0]):
        for i, p in enumerate(piv2[b]):
            flat[b, i], flat[b, p] = flat[b, p], flat[b, i]
    return flat.reshape(perm.shape)


def _check_pivots(LU_data: Any, LU_pivots: Any, name: str) -> None:  # noqa: N803
    if LU_pivots.dtype is not dtypes.int32:
        raise RuntimeError(f"{name}: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype. "
                           f"Note: this function is intended to be used with the output produced by torch.linalg.lu_factor")
    k = min(LU_data.shape[-2:])
    if tuple(LU_pivots.shape) != (*LU_data.shape[:-2], k):
        raise RuntimeError(f"{name}: Expected LU_pivots of shape {[*LU_data.shape[:-2], k]}, got "
                           f"{list(LU_pivots.shape)}")
    piv = LU_pivots._host()
    if piv.size and (piv.min() < 1 or piv.max() > LU_data.shape[-2]):
        raise RuntimeError(f"{name}: pivots must be between 1 and LU.size(-2) = {LU_data.shape[-2]}, inclusive")


def lu_unpack(LU_data: Any, LU_pivots: Any, unpack_data: bool = True, unpack_pivots: bool = True) -> LUUnpackResult:  # noqa: N803
    """``(P, L, U)`` from ``lu_factor``'s ``(LU, pivots)``; ``L``/``U`` (or ``P``) are empty tensors
    when ``unpack_data`` (``unpack_pivots``) is false. Differentiable in ``LU_data``.

    >>> import tidu
    >>> P, L, U = tidu.lu_unpack(*tidu.linalg.lu_factor(tidu.tensor([[1.0, 2.0], [3.0, 4.0]])))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    """
    _matrices(LU_data, "torch.lu_unpack")
    _check_pivots(LU_data, LU_pivots, "lu_unpack")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = creation.zeros(0, dtype=LU_data.dtype, device=LU_data.device)
    if unpack_data:
        L = indexing.tril(LU_data[..., :, :k], -1) + creation.eye(m, k, dtype=LU_data.dtype, device=LU_data.device)  # noqa: N806
        U = indexing.triu(LU_data[..., :k, :])  # noqa: N806
    else:
        L = U = empty  # noqa: N806
    if not unpack_pivots:
        return LUUnpackResult(empty, L, U)
    perm = _permutation(LU_pivots, m)
    P = np.zeros((*perm.shape, m), LU_data.dtype.np)  # noqa: N806
    np.put_along_axis(P, perm[..., :, None], 1, -1)  # P^T has a one at (i, perm[i])
    P = creation.tensor(np.swapaxes(P, -1, -2).copy(), device=LU_data.device)  # noqa: N806
    return LUUnpackResult(P, L, U)


def _triangular(T: Any, B: Any, *, upper: bool, unit: bool = False) -> Any:  # noqa: N803
    from .linalg import solve_triangular

    return solve_triangular(T, B, upper=upper, unitriangular=unit)


def lu_solve(LU: Any, pivots: Any, B: Any, *, left: bool = True, adjoint: bool = False) -> Any:  # noqa: N803
    """The solution ``X`` of ``A X = B`` from ``A``'s ``lu_factor`` (``X A = B`` when not ``left``,
    ``Aᵀ`` for ``A`` when ``adjoint``): a row permutation and two triangular solves, so the
    gradient reaches ``B`` and the triangles of ``LU`` it reads. Batch dims broadcast.

    >>> import tidu
    >>> A = tidu.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> tidu.linalg.lu_solve(*tidu.linalg.lu_factor(A), tidu.tensor([[3.0], [4.0]]))
    tensor([[1.],
            [1.]])
    """
    name = "linalg.lu_solve"
    if LU.ndim < 2:
        raise RuntimeError(f"torch.{name}: The input tensor A must have at least 2 dimensions.")
    _check_pivots(LU, pivots, name)
    if B.ndim < 2:
        raise RuntimeError(f"{name}: Expected B to have at least 2 dimensions, but it has {B.ndim} dimensions instead")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {LU.shape[-2]} by {n} matrices")
    inner = B.shape[-2] if left else B.shape[-1]
    if inner != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    if B.dtype is not LU.dtype:
        raise RuntimeError(f"{name}: Expected LU and B to have the same dtype, but found LU of type "
                           f"{dtypes.TORCH_NAMES[LU.dtype.name]} and B of type {dtypes.TORCH_NAMES[B.dtype.name]} instead")
    if not left:  # X A = B  <=>  Aᵀ Xᵀ = Bᵀ
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    lead = tuple(broadcast_shapes(tuple(LU.shape[:-2]), tuple(B.shape[:-2]), op=name))
    LU = shape.expand(LU, (*lead, n, n))  # noqa: N806
    B = shape.expand(B, (*lead, *B.shape[-2:]))  # noqa: N806
    perm = creation.tensor(np.broadcast_to(_permutation(pivots, n), (*lead, n)).copy(), device=LU.device)
    index = shape.expand(shape.unsqueeze(perm, -1), tuple(B.shape))
    if not adjoint:  # A = P L U: X = U⁻¹ L⁻¹ Pᵀ B, (Pᵀ B)[i] = B[perm[i]]
        Y = _triangular(LU, indexing.gather(B, -2, index), upper=False, unit=True)  # noqa: N806
        return _triangular(LU, Y, upper=True)
    # Aᵀ = Uᵀ Lᵀ Pᵀ: X = P L⁻ᵀ U⁻ᵀ B, scattered back: X[perm[i]] = Z[i]
    Z = _triangular(LU.mT, _triangular(LU.mT, B, upper=False), upper=True, unit=True)  # noqa: N806
    inverse = creation.tensor(np.argsort(np.broadcast_to(_permutation(pivots, n), (*lead, n)), -1), device=LU.device)
    return indexing.gather(Z, -2, shape.expand(shape.unsqueeze(inverse, -1), tuple(Z.shape)))


def lu_solve_legacy(b: Any, LU_data: Any, LU_pivots: Any) -> Any:  # noqa: N803
    """``torch.lu_solve(b, LU_data, LU_pivots)``: ``linalg.lu_solve(LU_data, LU_pivots, b)``.

    >>> import tidu
    >>> LU, piv = tidu.lu(tidu.tensor([[4.0, 0.0], [0.0, 2.0]]))
    >>> tidu.lu_solve(tidu.tensor([[4.0], [4.0]]), LU, piv)
    tensor([[1.],
            [2.]])
    """
    return lu_solve(LU_data, LU_pivots, b)


def lu_legacy(A: Any, pivot: bool = True, get_infos: bool = False) -> Any:  # noqa: N803
    """``torch.lu``: ``(LU, pivots)`` as ``linalg.lu_factor``, and ``infos`` with ``get_infos``;
    never raises for a zero pivot.

    >>> import tidu
    >>> LU, pivots, infos = tidu.lu(tidu.tensor([[0.0, 0.0], [0.0, 0.0]]), get_infos=True)
    >>> pivots, infos
    (tensor([1, 2], dtype=tidu.int32), tensor(1, dtype=tidu.int32))
    """
    LU, pivots, info = _factor(A, pivot, "linalg.lu_factor")  # noqa: N806
    return (LU, pivots, info) if get_infos else (LU, pivots)


def _cholesky_factor(B: Any, L: Any, name: str) -> None:  # noqa: N803
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{L.shape[-2] if L.ndim > 1 else 1} by {L.shape[-1]} matrices")
    if not L.dtype.is_floating_point:
        raise dtypes.not_implemented(name, L.dtype)


@autocast_policy("fp32")
def cholesky_solve(B: Any, L: Any, upper: bool = False) -> Any:  # noqa: N803
    """The solution ``X`` of ``A X = B`` for ``A = L Lᵀ`` (``Uᵀ U`` when ``upper``) given its Cholesky
    factor: two triangular solves, reading ``L``'s lower (``U``'s upper) triangle only, so its
    gradient lies there; PyTorch's treats ``L`` as a full matrix (the same in that triangle).

    >>> import tidu
    >>> L = tidu.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> tidu.cholesky_solve(tidu.tensor([[4.0], [2.0]]), L)
    tensor([[1.],
            [0.]])
    """
    _cholesky_factor(B, L, "cholesky_solve")
    if B.ndim < 2 or B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {L.shape[-2]} by "
                           f"{L.shape[-1]} but each b matrix is {B.shape[-2] if B.ndim > 1 else 1} by {B.shape[-1]}")
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{dtypes.TORCH_NAMES[B.dtype.name]} and A of type {dtypes.TORCH_NAMES[L.dtype.name]} instead.")
    lower = L.mT if upper else L
    lead = tuple(broadcast_shapes(tuple(L.shape[:-2]), tuple(B.shape[:-2]), op="cholesky_solve"))
    lower = shape.expand(lower, (*lead, *L.shape[-2:]))
    Y = _triangular(lower, shape.expand(B, (*lead, *B.shape[-2:])), upper=False)  # noqa: N806
    return _triangular(lower.mT, Y, upper=True)


@autocast_policy("fp32")
def cholesky_inverse(L: Any, upper: bool = False) -> Any:  # noqa: N803
    """``A⁻¹`` for ``A = L Lᵀ`` (``Uᵀ U`` when ``upper``): ``cholesky_solve(I, L)``.

    >>> import tidu
    >>> tidu.cholesky_inverse(tidu.tensor([[2.0, 0.0], [0.0, 0.5]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 4.0000]])
    """
    _cholesky_factor(L, L, "cholesky_inverse")
    eye = creation.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return cholesky_solve(shape.expand(eye, tuple(L.shape)), L, upper)
