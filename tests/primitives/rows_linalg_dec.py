"""``op_db`` rows for the decompositions and solvers (appended to ``OP_DB``; see op_db.py for the
row format).

Inputs are made well-conditioned inside the rows (a diagonal shift, ``X Xᵀ + n I`` for positive
definite, ``X + Xᵀ`` for symmetric), so that a finite difference of the raw sample is a
derivative of the decomposition. Eigenvectors and singular vectors enter through sign-invariant
functions (``V * V``, ``V diag(f(w)) Vᵀ``).
"""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu


def _eye(x: tidu.Tensor) -> tidu.Tensor:
    return tidu.eye(x.shape[-1], dtype=x.dtype, device=x.device)


def _shifted(x: tidu.Tensor) -> tidu.Tensor:
    """Diagonally dominant (entries in [-2, 2]): invertible, far from singular."""
    return x + 2 * x.shape[-1] * _eye(x)


def _np_shifted(x: np.ndarray) -> np.ndarray:
    return x + 2 * x.shape[-1] * np.eye(x.shape[-1])


def _spd(x: tidu.Tensor) -> tidu.Tensor:
    return x @ x.mT + x.shape[-1] * _eye(x)


def _np_spd(x: np.ndarray) -> np.ndarray:
    return x @ np.swapaxes(x, -1, -2) + x.shape[-1] * np.eye(x.shape[-1])


def _np_sym(x: np.ndarray) -> np.ndarray:
    return x + np.swapaxes(x, -1, -2)


def _np_expm_sym(x: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh(_np_sym(x))
    return (v * np.exp(w)[..., None, :]) @ np.swapaxes(v, -1, -2)


def _expm_sym(x: tidu.Tensor) -> tidu.Tensor:
    """exp(X + Xᵀ) through its eigenvectors: a smooth function of them, whatever their signs."""
    w, v = tidu.linalg.eigh(x + x.mT)
    return (v * w.exp().unsqueeze(-2)) @ v.mT


def _svd(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.linalg.svd(x, full_matrices=False)


ROWS: list[OpCase] = [
    OpCase("inv", lambda x: tidu.linalg.inv(_shifted(x)), ((3, 3), (2, 4, 4), (1, 1)),
           ref=lambda x: np.linalg.inv(_np_shifted(x))),
    OpCase("solve", lambda a, b: tidu.linalg.solve(_shifted(a), b), (((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1))),
           ref=lambda a, b: np.linalg.solve(_np_shifted(a), b)),
    OpCase("solve", lambda a, b: tidu.linalg.solve(_shifted(a), b), (((3, 3), (3,)), ((2, 2, 2), (2, 2))),
           ref=lambda a, b: np.linalg.solve(_np_shifted(a), b[..., None])[..., 0], name="vector"),
    OpCase("cholesky", lambda x: tidu.linalg.cholesky(_spd(x)), ((3, 3), (2, 2, 2)),
           ref=lambda x: np.linalg.cholesky(_np_spd(x))),
    OpCase("slogdet", lambda x: tidu.linalg.slogdet(_shifted(x)).logabsdet, ((3, 3), (2, 2, 2)),
           ref=lambda x: np.linalg.slogdet(_np_shifted(x))[1]),
    OpCase("slogdet", lambda x: tidu.linalg.det(-_shifted(x)), ((3, 3), (2, 2)),
           ref=lambda x: np.linalg.det(-_np_shifted(x)), name="det"),
    OpCase("eigh", lambda x: tidu.linalg.eigvalsh(x + x.mT), ((3, 3), (2, 4, 4)),
           ref=lambda x: np.linalg.eigvalsh(_np_sym(x))),
    OpCase("eigh", _expm_sym, ((3, 3), (2, 2, 2)), ref=_np_expm_sym, name="vectors", rtol=1e-6),
    OpCase("svd", lambda x: tidu.linalg.svdvals(x), ((3, 2), (2, 2, 4)), ref=lambda x: _svd(x)[1]),
    OpCase("svd", lambda x: (lambda usv: usv.U * usv.U)(tidu.linalg.svd(x, full_matrices=False)), ((4, 3), (3, 3)),
           ref=lambda x: _svd(x)[0] ** 2, name="U"),
    OpCase("svd", lambda x: (lambda usv: usv.Vh * usv.Vh)(tidu.linalg.svd(x, full_matrices=False)),
           ((3, 4), (2, 3, 3)), ref=lambda x: _svd(x)[2] ** 2, name="Vh"),
    OpCase("svd", lambda x: (lambda usv: usv.U * usv.U + usv.Vh.mT * usv.Vh.mT)(tidu.linalg.svd(x)), ((3, 3),),
           ref=lambda x: _svd(x)[0] ** 2 + _svd(x)[2].T ** 2, name="full-square"),
    OpCase("qr", lambda x: tidu.linalg.qr(x).Q, ((4, 3), (3, 3), (2, 4)), ref=lambda x: np.linalg.qr(x)[0], name="Q"),
    OpCase("qr", lambda x: tidu.linalg.qr(x).R, ((4, 3), (2, 3, 3), (2, 4)), ref=lambda x: np.linalg.qr(x)[1],
           name="R"),
    OpCase("geqrf", lambda x: tidu.geqrf(x).a, ((4, 3), (2, 3, 3), (2, 4)), ref=lambda x: _geqrf(x)[0], name="a"),
    OpCase("geqrf", lambda x: tidu.geqrf(x).tau, ((4, 3), (2, 3, 3), (2, 4)), ref=lambda x: _geqrf(x)[1],
           name="tau"),
]


def _geqrf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's geqrf of each matrix, through numpy's ``qr(mode="raw")`` (its reflectors transposed)."""
    flat = x.reshape(-1, *x.shape[-2:])
    pairs = [np.linalg.qr(m, mode="raw") for m in flat]
    a = np.stack([h.T for h, _ in pairs]).reshape(x.shape)
    tau = np.stack([t for _, t in pairs]).reshape(*x.shape[:-2], -1)
    return a, tau
