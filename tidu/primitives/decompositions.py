"""Decompositions and solvers of square or rectangular matrices, batched over the leading dims
(``tidu.linalg``'s ``inv``, ``solve``, ``cholesky``, ``slogdet``, ``eigh``, ``svd``, ``qr``).

Kernels: LAPACK through Numba on the host; the CUDA kernels copy the operands to the host and
compute there. The JVP rules are the textbook ones; ``cholesky`` and ``eigh`` read one triangle
of a symmetric matrix, and their rules use the symmetric part of the tangent (so their gradients
are symmetric, as PyTorch's are).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.cpu import decompositions as cpu
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import TORCH_NAMES, float32, float64, not_implemented
from ..core.primitive import Primitive
from ._util import check_dtype, ops

FLOATS = (float32, float64)


# PyTorch's errors for its decompositions on float16 and bfloat16: it has no half LAPACK kernels
# (tidu's would compute in float32, Note [half precision], but follows PyTorch in refusing)
_HALF_KERNELS = {"cholesky": "cholesky_cpu", "solve": "lu_cpu", "eigh": "linalg_eigh_cpu", "svd": "linalg_svd_cpu",
                 "qr": "geqrf_cpu"}


def _matrices(name: str, a: ShapeDtype) -> tuple[int, int]:
    if a.dtype.is_half:
        if name in _HALF_KERNELS:
            raise not_implemented(_HALF_KERNELS[name], a.dtype)
        raise RuntimeError(f"linalg.{name}: Low precision dtypes not supported. Got {TORCH_NAMES[a.dtype.name]}")
    check_dtype(name, a, FLOATS)
    if a.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    return a.shape[-2], a.shape[-1]


def check_square(name: str, a: ShapeDtype) -> int:
    """The size of ``a``'s square matrices; PyTorch's error (naming ``linalg.<name>``) otherwise."""
    m, n = _matrices(name, a)
    if m != n:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {m} by {n} matrices")
    return n


# --- helpers of the rules: x is a Var or a Tensor of matrices -------------------------------------

def _mT(x: Any) -> Any:  # noqa: N802
    return x.transpose(-2, -1)


def _sym(x: Any) -> Any:
    return (x + _mT(x)) * 0.5


def _const(array: np.ndarray, like: Any) -> Any:
    from ..ops.creation import tensor

    return tensor(array, dtype=like.dtype, device=like.device)


def _diag(x: Any) -> Any:
    """The diagonal of square matrices, as a vector."""
    return (x * _const(np.eye(x.shape[-1]), x)).sum(-1)


def _trace(x: Any) -> Any:
    return _diag(x).sum(-1)


def _gaps(values: Any) -> Any:
    """``F[i, j] = 1 / (values[j] - values[i])`` off the diagonal, 0 on it."""
    n = values.shape[-1]
    eye = _const(np.eye(n), values)
    return (1.0 - eye) / (values.unsqueeze(-2) - values.unsqueeze(-1) + eye)


def _widen(x: Any, cols: int) -> Any:
    """``x`` with zero columns appended, to ``cols`` columns (linear: ``pad``)."""
    from .slicing import pad

    config = ((0, 0, 0),) * (x.ndim - 1) + ((0, cols - x.shape[-1], 0),)
    return x if cols == x.shape[-1] else pad.bind(x, padding_config=config)


# --- inv ------------------------------------------------------------------------------------------
inv = Primitive("inv")


@inv.def_abstract_eval
def _inv_shape(a: ShapeDtype) -> ShapeDtype:
    check_square("inv", a)
    return a


inv.def_impl(cpu.inv)
inv.def_impl(kernel("decompositions", "inv"), device="cuda")
inv.def_jvp(lambda da, a, x: -(x @ da @ x))  # d A⁻¹ = -A⁻¹ dA A⁻¹

# --- solve: X = A⁻¹ B, B of shape (..., n, k) with A's batch dims; linear in B -------------------
solve = Primitive("solve")


@solve.def_abstract_eval
def _solve_shape(a: ShapeDtype, b: ShapeDtype) -> ShapeDtype:
    n = check_square("solve", a)
    check_dtype("solve", b, FLOATS)
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != n or a.dtype is not b.dtype:
        raise RuntimeError(f"solve: expected B of shape (..., {n}, k) and dtype {a.dtype.name} with A's batch dims "
                           f"{tuple(a.shape[:-2])}, got A {tuple(a.shape)} {a.dtype.name} and B {tuple(b.shape)} "
                           f"{b.dtype.name} (the public op broadcasts; the primitive does not)")
    return b


solve.def_impl(cpu.solve)
solve.def_impl(kernel("decompositions", "solve"), device="cuda")
solve.def_jvp(
    lambda da, a, b, x: -solve.bind(a, da @ x),  # dX = -A⁻¹ dA X
    lambda db, a, b, x: solve.bind(a, db),  # dX = A⁻¹ dB
)
solve.def_transpose(lambda ct, a, b: [None, solve.bind(_mT(a), ct)], linear_in=(1,))

# --- cholesky: the lower factor L of A = L Lᵀ, from A's lower triangle ---------------------------
cholesky = Primitive("cholesky")


@cholesky.def_abstract_eval
def _cholesky_shape(a: ShapeDtype) -> ShapeDtype:
    check_square("cholesky", a)
    return a


def _cholesky_jvp(da: Any, a: Any, lower: Any) -> Any:
    """dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ: the lower triangle with the diagonal halved."""
    n = a.shape[-1]
    li = inv.bind(lower)
    phi = _const(np.tril(np.ones((n, n))) - 0.5 * np.eye(n), a)
    return lower @ ((li @ _sym(da) @ _mT(li)) * phi)


cholesky.def_impl(cpu.cholesky)
cholesky.def_impl(kernel("decompositions", "cholesky"), device="cuda")
cholesky.def_jvp(_cholesky_jvp)

# --- slogdet: (sign, log |det A|) ------------------------------------------------------------------
slogdet = Primitive("slogdet")


@slogdet.def_abstract_eval
def _slogdet_shape(a: ShapeDtype) -> list[ShapeDtype]:
    check_square("slogdet", a)
    out = ShapeDtype(a.shape[:-2], a.dtype)
    return [out, out]


slogdet.def_impl(cpu.slogdet)
slogdet.def_impl(kernel("decompositions", "slogdet"), device="cuda")
slogdet.def_jvp(lambda da, a, sign, logabsdet: (None, _trace(solve.bind(a, da))))  # d log|det A| = tr(A⁻¹ dA)

# --- eigh: ascending eigenvalues w and orthonormal eigenvectors V of a symmetric A (lower triangle)
eigh = Primitive("eigh")


@eigh.def_abstract_eval
def _eigh_shape(a: ShapeDtype) -> list[ShapeDtype]:
    check_square("eigh", a)
    return [ShapeDtype(a.shape[:-1], a.dtype), a]


def _eigh_jvp(da: Any, a: Any, w: Any, v: Any) -> tuple[Any, Any]:
    """With P = Vᵀ dA V: dw = diag(P), dV = V (F ∘ P), F[i, j] = 1 / (w[j] - w[i]) off the diagonal."""
    p = _mT(v) @ _sym(da) @ v
    return _diag(p), v @ (_gaps(w) * p)


eigh.def_impl(cpu.eigh)
eigh.def_impl(kernel("decompositions", "eigh"), device="cuda")
eigh.def_jvp(_eigh_jvp)

# --- svd: A = U diag(S) Vh, S descending; U, Vh with min(m, n) columns / rows unless full_matrices
svd = Primitive("svd")


@svd.def_abstract_eval
def _svd_shape(a: ShapeDtype, *, full_matrices: bool) -> list[ShapeDtype]:
    m, n = _matrices("svd", a)
    k = min(m, n)
    lead = a.shape[:-2]
    u_cols, vh_rows = (m, n) if full_matrices else (k, k)
    return [ShapeDtype((*lead, m, u_cols), a.dtype), ShapeDtype((*lead, k), a.dtype),
            ShapeDtype((*lead, vh_rows, n), a.dtype)]


def _svd_jvp(da: Any, a: Any, u: Any, s: Any, vh: Any, *, full_matrices: bool) -> tuple[Any, Any, Any]:
    """With P = Uᵀ dA V and F[i, j] = 1 / (s[j]² - s[i]²) off the diagonal:
    dS = diag(P), dU = U (F ∘ (P S + S Pᵀ)) + (I - U Uᵀ) dA V S⁻¹,
    dV = V (F ∘ (S P + Pᵀ S)) + (I - V Vᵀ) dAᵀ U S⁻¹.
    With ``full_matrices``, the columns past min(m, n) (any orthonormal completion) get no tangent."""
    m, n = a.shape[-2:]
    k = min(m, n)
    u, vh = u[..., :k], vh[..., :k, :]
    v = _mT(vh)
    p = _mT(u) @ da @ v
    f = _gaps(s * s)
    rows, cols = s.unsqueeze(-1), s.unsqueeze(-2)
    du = u @ (f * (p * cols + _mT(p) * rows))
    dv = v @ (f * (p * rows + _mT(p) * cols))
    if m > k:
        du = du + (da @ v - u @ (_mT(u) @ da @ v)) / cols
    if n > k:
        dv = dv + (_mT(da) @ u - v @ (_mT(v) @ _mT(da) @ u)) / cols
    if full_matrices:
        du, dv = _widen(du, m), _widen(dv, n)
    return du, _diag(p), _mT(dv)


svd.def_impl(cpu.svd)
svd.def_impl(kernel("decompositions", "svd"), device="cuda")
svd.def_jvp(_svd_jvp)

# --- qr: A = Q R (Householder, LAPACK's signs); Q with min(m, n) columns unless complete -----------
qr = Primitive("qr")


@qr.def_abstract_eval
def _qr_shape(a: ShapeDtype, *, mode: str) -> list[ShapeDtype]:
    m, n = _matrices("qr", a)
    k = m if mode == "complete" else min(m, n)
    lead = a.shape[:-2]
    return [ShapeDtype((*lead, m, k), a.dtype), ShapeDtype((*lead, k, n), a.dtype)]


def _qr_square_jvp(da: Any, q: Any, r: Any) -> tuple[Any, Any]:
    """Q tall or square, R square: with C = Qᵀ dA R⁻¹ and Ω = tril(C, -1) - tril(C, -1)ᵀ (Qᵀ dQ,
    skew), dR = (C - Ω) R and dQ = dA R⁻¹ - Q (C - Ω)."""
    n = r.shape[-1]
    ri = inv.bind(r)
    c = _mT(q) @ da @ ri
    low = c * _const(np.tril(np.ones((n, n)), -1), r)
    upper = c - (low - _mT(low))
    return da @ ri - q @ upper, upper @ r


def _qr_jvp(da: Any, a: Any, q: Any, r: Any, *, mode: str) -> tuple[Any, Any]:
    """Wide A = [X | Y] (m < n): Q R_X = X, and R = [R_X | Qᵀ Y], so dR_Y = dQᵀ Y + Qᵀ dY.
    ``mode='r'`` (Q computed, then dropped by ``linalg.qr``) is not differentiable, as in PyTorch."""
    m, n = a.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if m >= n:
        return _qr_square_jvp(da, q, r)
    dq, drx = _qr_square_jvp(da[..., :m], q, r[..., :m])
    dry = _mT(dq) @ a[..., m:] + _mT(q) @ da[..., m:]
    return dq, ops.cat([drx, dry], -1)


qr.def_impl(lambda a, *, mode: cpu.qr(a, complete=mode == "complete"))
qr.def_impl(kernel("decompositions", "qr"), device="cuda")
qr.def_jvp(_qr_jvp)

# --- geqrf: LAPACK's compact QR (R above the diagonal, the reflectors below, their scales tau) -----
geqrf = Primitive("geqrf")


@geqrf.def_abstract_eval
def _geqrf_shape(a: ShapeDtype) -> list[ShapeDtype]:
    m, n = a.shape[-2:] if a.ndim >= 2 else (0, 0)
    check_dtype("geqrf", a, FLOATS)
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    return [ShapeDtype(a.shape, a.dtype), ShapeDtype((*a.shape[:-2], min(m, n)), a.dtype)]


def _geqrf_jvp(*args: Any) -> Any:
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


geqrf.def_impl(cpu.geqrf)
geqrf.def_impl(kernel("decompositions", "geqrf"), device="cuda")
geqrf.def_jvp(_geqrf_jvp)

