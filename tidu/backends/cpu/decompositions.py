"""Decompositions and solvers on the host: LAPACK through Numba's ``np.linalg``, one matrix at a
time over the leading (batch) dims.

The Numba loops report a failed matrix in a status array instead of raising, so that the wrappers
raise ``LinAlgError`` with PyTorch's message (which batch element, which pivot or minor). Empty
inputs go to numpy's ``np.linalg`` (LAPACK has no empty matrices).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import njit


class LinAlgError(RuntimeError):
    """A decomposition or solve that cannot be done: a singular or not positive-definite matrix
    (PyTorch's ``torch.linalg.LinAlgError``, also a ``RuntimeError``)."""


def _flat(a: np.ndarray) -> np.ndarray:
    """``a``'s matrices as one C-contiguous (batch, rows, cols) stack."""
    return np.ascontiguousarray(a.reshape((-1, *a.shape[-2:])))


@njit(cache=True)
def _inv(a):  # noqa: ANN001, ANN202
    out = np.empty_like(a)
    status = np.zeros(a.shape[0], np.int64)
    for b in range(a.shape[0]):
        try:
            out[b] = np.linalg.inv(a[b])
        except Exception:  # noqa: BLE001 - a zero pivot
            status[b] = 1
    return out, status


@njit(cache=True)
def _solve(a, rhs):  # noqa: ANN001, ANN202
    out = np.empty_like(rhs)
    status = np.zeros(a.shape[0], np.int64)
    for b in range(a.shape[0]):
        try:
            out[b] = np.linalg.solve(a[b], rhs[b])
        except Exception:  # noqa: BLE001 - a zero pivot
            status[b] = 1
    return out, status


@njit(cache=True)
def _cholesky(a):  # noqa: ANN001, ANN202
    out = np.zeros_like(a)
    status = np.zeros(a.shape[0], np.int64)
    for b in range(a.shape[0]):
        try:
            out[b] = np.linalg.cholesky(a[b])
        except Exception:  # noqa: BLE001 - not positive-definite
            status[b] = 1
    return out, status


@njit(cache=True)
def _slogdet(a):  # noqa: ANN001, ANN202
    sign = np.empty(a.shape[0], a.dtype)
    logabsdet = np.empty(a.shape[0], a.dtype)
    for b in range(a.shape[0]):
        sign[b], logabsdet[b] = np.linalg.slogdet(a[b])
    return sign, logabsdet


@njit(cache=True)
def _eigh(a):  # noqa: ANN001, ANN202
    values = np.empty(a.shape[:2], a.dtype)
    vectors = np.empty_like(a)
    for b in range(a.shape[0]):
        values[b], vectors[b] = np.linalg.eigh(a[b])
    return values, vectors


@njit(cache=True)
def _svd(a, full_matrices):  # noqa: ANN001, ANN202
    batch, m, n = a.shape
    k = min(m, n)
    u = np.empty((batch, m, m if full_matrices else k), a.dtype)
    s = np.empty((batch, k), a.dtype)
    vh = np.empty((batch, n if full_matrices else k, n), a.dtype)
    for b in range(batch):
        u[b], s[b], vh[b] = np.linalg.svd(a[b], full_matrices=full_matrices)
    return u, s, vh


@njit(cache=True)
def _qr(a):  # noqa: ANN001, ANN202
    batch, m, n = a.shape
    k = min(m, n)
    q = np.empty((batch, m, k), a.dtype)
    r = np.empty((batch, k, n), a.dtype)
    for b in range(batch):
        q[b], r[b] = np.linalg.qr(a[b])
    return q, r


def _raise_first(status: np.ndarray, shape: tuple[int, ...], message: Callable[[int], str]) -> None:
    """PyTorch's error for the first failed matrix, ``(Batch element i): `` first when batched."""
    failed = np.flatnonzero(status)
    if failed.size:
        b = int(failed[0])
        prefix = f"(Batch element {b}): " if len(shape) > 2 else ""
        raise LinAlgError(message(b).replace("{batch}", prefix))


def _zero_pivot(a: np.ndarray) -> int:
    """The first (1-based) exactly zero diagonal element of ``a``'s LU factor (partial pivoting)."""
    u = a.astype(np.float64)
    n = u.shape[0]
    for j in range(n):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        if u[p, j] == 0:
            return j + 1
        u[[j, p]] = u[[p, j]]
        u[j + 1:, j:] -= np.outer(u[j + 1:, j] / u[j, j], u[j, j:])
    return n


def _first_bad_minor(a: np.ndarray) -> int:
    """The order of the first leading minor of ``a`` (lower triangle read) that is not positive-definite."""
    for k in range(1, a.shape[0] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return a.shape[0]


def inv(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return np.linalg.inv(a)
    flat = _flat(a)
    out, status = _inv(flat)
    _raise_first(status, a.shape, lambda b: f"linalg.inv: {{batch}}The diagonal element {_zero_pivot(flat[b])} is "
                 "zero, the inversion could not be completed because the input matrix is singular.")
    return out.reshape(a.shape)


def solve(a: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if a.size == 0 or rhs.size == 0:
        return np.linalg.solve(a, rhs) if a.size else np.zeros(rhs.shape, rhs.dtype)
    out, status = _solve(_flat(a), _flat(rhs))
    _raise_first(status, a.shape,
                 lambda b: "torch.linalg.solve: {batch}The solver failed because the input matrix is singular.")
    return out.reshape(rhs.shape)


def cholesky(a: np.ndarray) -> np.ndarray:
    if a.size == 0:
        return np.zeros_like(a)
    flat = _flat(a)
    out, status = _cholesky(flat)
    _raise_first(status, a.shape, lambda b: "linalg.cholesky: {batch}The factorization could not be completed "
                 "because the input is not positive-definite (the leading minor of order "
                 f"{_first_bad_minor(flat[b])} is not positive-definite).")
    return out.reshape(a.shape)


def slogdet(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if a.size == 0:
        sign, logabsdet = np.linalg.slogdet(a)
        return np.asarray(sign, a.dtype), np.asarray(logabsdet, a.dtype)
    sign, logabsdet = _slogdet(_flat(a))
    return sign.reshape(a.shape[:-2]), logabsdet.reshape(a.shape[:-2])


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrices whose lower triangle ``a`` holds."""
    if a.size == 0:
        return np.zeros(a.shape[:-1], a.dtype), np.zeros_like(a)
    values, vectors = _eigh(_flat(a))
    return values.reshape(a.shape[:-1]), vectors.reshape(a.shape)


def svd(a: np.ndarray, *, full_matrices: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if a.size == 0:
        return tuple(np.asarray(x, a.dtype) for x in np.linalg.svd(a, full_matrices=full_matrices))
    u, s, vh = _svd(_flat(a), full_matrices)
    lead = a.shape[:-2]
    return u.reshape(lead + u.shape[1:]), s.reshape(lead + s.shape[1:]), vh.reshape(lead + vh.shape[1:])


def qr(a: np.ndarray, *, complete: bool) -> tuple[np.ndarray, np.ndarray]:
    """Householder QR (LAPACK's signs). ``complete`` with more rows than columns: the QR of ``a``
    padded with zero columns to a square, whose reflectors past ``a``'s columns are identities,
    so its Q is the complete Q of ``a`` and its R is ``a``'s R padded with zero rows."""
    m, n = a.shape[-2:]
    if complete and m > n:
        padded = np.concatenate([a, np.zeros((*a.shape[:-1], m - n), a.dtype)], axis=-1)
        q, r = qr(padded, complete=False)
        return q, np.ascontiguousarray(r[..., :n])
    if a.size == 0:
        return tuple(np.asarray(x, a.dtype) for x in np.linalg.qr(a))
    q, r = _qr(_flat(a))
    lead = a.shape[:-2]
    return q.reshape(lead + q.shape[1:]), r.reshape(lead + r.shape[1:])


def geqrf(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ``geqrf``: ``R`` on and above the diagonal, the Householder vectors below it, and
    their scales ``tau`` (numpy's ``qr(mode='raw')``, transposed back to row-major)."""
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape, a.dtype), np.zeros((*a.shape[:-2], min(m, n)), a.dtype)
    flat = _flat(a)
    h = np.empty(flat.shape, a.dtype)
    tau = np.empty((flat.shape[0], min(m, n)), a.dtype)
    for b in range(flat.shape[0]):
        raw, scales = np.linalg.qr(flat[b], mode="raw")
        h[b] = raw.T
        tau[b] = scales
    return h.reshape(a.shape), tau.reshape((*a.shape[:-2], min(m, n)))

