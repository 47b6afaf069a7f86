"""``tidu.linalg``: the norms, products, decompositions and solvers of ``torch.linalg``.

The norms and products are composed from tidu ops; the decompositions and solvers (``inv``,
``solve``, ``cholesky``, ``slogdet``, ``eigh``, ``svd``, ``qr``) are primitives of their own
(tidu/primitives/decompositions.py), and ``det``, ``pinv``, ``svdvals``, ``matrix_rank`` and the
spectral norms are composed from them. Real floating-point inputs only.

>>> import tidu
>>> tidu.linalg.vector_norm(tidu.tensor([3.0, 4.0]))
tensor(5.)
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from ._lu import lu, lu_factor, lu_factor_ex, lu_solve
from .backends.cpu.decompositions import LinAlgError
from .core import dtypes, grad_mode
from .core.autocast import policy as autocast_policy
from .core.aval import wrap_dim
from .core.half import computed_in_float32
from .ops import creation, diagonals, indexing, linalg, reduce, shape
from .ops import math as ops_math
from .ops._operands import broadcast_shapes, convert
from .primitives import decompositions as dec
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul",
           "matrix_norm", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "vecdot", "vector_norm", "matrix_exp", "matrix_power", "solve_triangular", "vander", "householder_product",
           "cholesky_ex", "cond", "inv_ex", "solve_ex", "tensorinv", "tensorsolve"]

matmul = linalg.matmul
matrix_power = linalg.matrix_power


def _float_input(x: Any, dtype: Any, name: str) -> Any:
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.TORCH_NAMES[x.dtype.name]}")
    return x


@computed_in_float32
def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """The ``ord``-norm of the elements over ``dim`` (all of them by default): any real ``ord``,
    ``inf`` (largest ``|x|``), ``-inf`` or 0 (the count of non-zeros).

    >>> import tidu
    >>> tidu.linalg.vector_norm(tidu.tensor([[1.0, -2.0], [2.0, 0.0]]), ord=1, dim=1)
    tensor([3., 2.])
    """
    x = _float_input(x, dtype, "vector_norm")
    return reduce.norm(x, ord, dim, keepdim)


@computed_in_float32
def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: N803
                dtype: Any = None) -> Any:
    """The matrix norm of the matrices in the two ``dim``: ``'fro'``, ``inf``/``-inf`` (largest
    or smallest absolute row sum), 1/-1 (column sum), ``'nuc'`` (the sum of the singular values)
    or 2/-2 (the largest or smallest singular value, through ``svdvals``).

    >>> import tidu
    >>> tidu.linalg.matrix_norm(tidu.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    >>> tidu.linalg.matrix_norm(tidu.tensor([[3.0, 0.0], [0.0, -4.0]]), ord="nuc")
    tensor(7.)
    """
    A = _float_input(A, dtype, "matrix_norm")  # noqa: N806
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = wrap_dim(dims[0], A.ndim), wrap_dim(dims[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord == "fro":
        return reduce.norm(A, 2, (d0, d1), keepdim)
    if ord in (math.inf, -math.inf, 1, -1):
        summed, then = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = reduce.sum(ops_math.abs(A), summed, keepdim=True)
        out = (reduce.amax if ord > 0 else reduce.amin)(sums, then, keepdim=True)
        return out if keepdim else shape.squeeze(out, tuple(sorted((d0, d1))))
    if ord in ("nuc", 2, -2):
        s = svdvals(shape.movedim(A, (d0, d1), (-2, -1)))
        out = reduce.sum(s, -1) if ord == "nuc" else (reduce.amax if ord == 2 else reduce.amin)(s, -1)
        return shape.unsqueeze(shape.unsqueeze(out, min(d0, d1)), max(d0, d1)) if keepdim else out
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


@computed_in_float32
def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: N803
    """``vector_norm`` for one ``dim`` (or a 1-D input, or all elements when ``ord`` and ``dim``
    are not given), ``matrix_norm`` for two dims (or a 2-D input with an ``ord``).

    >>> import tidu
    >>> tidu.linalg.norm(tidu.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.ndim == 2:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@autocast_policy("lower")
def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """Products summed along ``dim``, broadcasting.

    >>> import tidu
    >>> tidu.linalg.vecdot(tidu.tensor([[1.0, 2.0]]), tidu.tensor([3.0, 4.0]))
    tensor([11.])
    """
    return reduce.sum(ops_math.mul(x, y), dim)


def multi_dot(tensors: Any) -> Any:
    """The product of a chain of matrices (the first and last may be 1-D), left to right.

    >>> import tidu
    >>> tidu.linalg.multi_dot([tidu.ones(2), tidu.ones(2, 3), tidu.ones(3)])
    tensor(6.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D{' or 1D' if len(allowed) == 2 else ''} but got "
                               f"{t.ndim}D")
    out = tensors[0]
    for t in tensors[1:]:
        out = linalg.matmul(out, t)
    return out


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:  # noqa: N803
    """``tidu.diagonal`` with the last two dims as the default.

    >>> import tidu
    >>> tidu.linalg.diagonal(tidu.eye(2))
    tensor([1., 1.])
    """
    return diagonals.diagonal(A, offset, dim1, dim2)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:  # noqa: A002
    """The cross product of 3-vectors along ``dim``, broadcasting.

    >>> import tidu
    >>> tidu.linalg.cross(tidu.tensor([1.0, 0.0, 0.0]), tidu.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    sizes = [input.shape[d], other.shape[d]]
    if sizes != [3, 3]:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sizes[0]} and {sizes[1]}")
    size = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape), op="linalg.cross"))
    a, b = shape.expand(input, size), shape.expand(other, size)
    ai = [shape.narrow(a, d, i, 1) for i in range(3)]
    bi = [shape.narrow(b, d, i, 1) for i in range(3)]
    parts = [ops_math.sub(ops_math.mul(ai[j], bi[k]), ops_math.mul(ai[k], bi[j])) for j, k in ((1, 2), (2, 0), (0, 1))]
    return shape.cat(parts, d)


def _cross(input: Any, other: Any, dim: int | None = None) -> Any:  # noqa: A002
    """``tidu.cross``: ``linalg.cross`` along ``dim``; without one, along the first dim of size 3
    (PyTorch's deprecated default, with its warning).

    >>> import tidu
    >>> tidu.cross(tidu.tensor([[0.0, 1.0, 0.0]]), tidu.tensor([[0.0, 0.0, 1.0]]), dim=1)
    tensor([[1., 0., 0.]])
    """
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        size = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape), op="cross"))
        dim = next((d for d, n in enumerate(size) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)


# --- decompositions and solvers ---------------------------------------------------------------------

# ``torch.return_types``: named tuples
SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
QRResult = namedtuple("linalg_qr", ["Q", "R"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])


def _matrix_input(A: Any, name: str) -> Any:  # noqa: N803
    """``A`` checked as PyTorch checks it before the primitive's shape rule: floating point."""
    return _float_input(A, None, name)


@autocast_policy("fp32")
def inv(A: Any) -> Any:  # noqa: N803
    """The inverse of each square matrix in ``A`` (batched over the leading dims).

    Raises ``LinAlgError`` (a ``RuntimeError``) for a singular matrix. Gradient:
    ``d A⁻¹ = -A⁻¹ dA A⁻¹`` (primitive ``inv``).

    >>> import tidu
    >>> A = tidu.tensor([[2.0, 0.0], [0.0, 4.0]], requires_grad=True)
    >>> tidu.linalg.inv(A)
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]], grad_fn=<inv>)
    >>> tidu.linalg.inv(A).sum().backward()
    >>> A.grad
    tensor([[-0.2500, -0.1250],
            [-0.1250, -0.0625]])
    """
    return dec.inv.bind(_matrix_input(A, "inv"))


def slogdet(A: Any) -> SlogdetResult:  # noqa: N803
    """``(sign, logabsdet)``: the sign of each determinant (0 for a singular matrix) and the log of
    its absolute value. Gradient: ``d logabsdet = tr(A⁻¹ dA)``; ``sign`` has none (primitive ``slogdet``).

    >>> import tidu
    >>> tidu.linalg.slogdet(tidu.tensor([[0.0, 2.0], [1.0, 0.0]]))
    linalg_slogdet(sign=tensor(-1.), logabsdet=tensor(0.6931))
    """
    return SlogdetResult(*dec.slogdet.bind(_matrix_input(A, "slogdet")))


def det(A: Any) -> Any:  # noqa: N803
    """The determinant of each square matrix, ``sign * exp(logabsdet)`` from ``slogdet``; its gradient
    ``det(A) A⁻ᵀ`` needs ``A`` invertible (at a singular matrix it is NaN, not PyTorch's adjugate).

    >>> import tidu
    >>> tidu.linalg.det(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2.0000)
    """
    A = _matrix_input(A, "det")  # noqa: N806
    dec.check_square("det", A)
    sign, logabsdet = dec.slogdet.bind(A)
    return sign * ops_math.exp(logabsdet)


@autocast_policy("fp32")
def solve(A: Any, B: Any, *, left: bool = True) -> Any:  # noqa: N803
    """The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``). ``B`` is a batch of
    vectors when it is 1-D or has ``A``'s shape without its last dim; the batch dims broadcast.

    Raises ``LinAlgError`` for a singular ``A``. Gradient: ``dX = A⁻¹ (dB - dA X)`` (primitive
    ``solve``, linear in ``B``: its transpose solves with ``Aᵀ``).

    >>> import tidu
    >>> tidu.linalg.solve(tidu.tensor([[2.0, 0.0], [1.0, 1.0]]), tidu.tensor([2.0, 3.0]))
    tensor([1., 2.])
    """
    if not left:
        if B.ndim < 2:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                               f"({'x'.join(map(str, A.shape[-2:]))} and {B.shape[-1]}x1)")
        return solve(A.mT, B.mT).mT
    A, B = _matrix_input(A, "solve"), _matrix_input(B, "solve")  # noqa: N806
    if A.dtype is not B.dtype:
        names = dtypes.TORCH_NAMES
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{names[A.dtype.name]} and B of type {names[B.dtype.name]} instead")
    if A.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor A must have at least 2 dimensions.")
    vector = B.ndim == 1 or B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])
    rhs = shape.unsqueeze(B, -1) if vector else B
    if rhs.ndim < 2 or rhs.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({'x'.join(map(str, A.shape[-2:]))} and {'x'.join(map(str, rhs.shape[-2:]))})")
    lead = tuple(broadcast_shapes(tuple(A.shape[:-2]), tuple(rhs.shape[:-2]), op="linalg.solve"))
    A = shape.expand(A, (*lead, *A.shape[-2:]))  # noqa: N806
    X = dec.solve.bind(A, shape.expand(rhs, (*lead, *rhs.shape[-2:])))  # noqa: N806
    return shape.squeeze(X, -1) if vector else X


@autocast_policy("fp32")
def cholesky(A: Any, *, upper: bool = False) -> Any:  # noqa: N803
    """The lower Cholesky factor ``L`` of each symmetric positive-definite matrix (``A = L Lᵀ``),
    from ``A``'s lower triangle; ``Lᵀ`` when ``upper``. Raises ``LinAlgError`` naming the first
    leading minor that is not positive-definite. Gradient: ``dL = L Φ(L⁻¹ sym(dA) L⁻ᵀ)``, ``Φ`` the
    lower triangle with the diagonal halved (primitive ``cholesky``).

    >>> import tidu
    >>> tidu.linalg.cholesky(tidu.tensor([[4.0, 2.0], [2.0, 5.0]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    L = dec.cholesky.bind(_matrix_input(A, "cholesky"))  # noqa: N806
    return L.mT if upper else L


def _uplo(A: Any, UPLO: str, name: str) -> Any:  # noqa: N803
    """``A``, or ``Aᵀ`` for ``UPLO='U'``: the primitive reads the lower triangle."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    A = _matrix_input(A, name)  # noqa: N806
    return A if UPLO == "L" else A.mT


@autocast_policy("fp32")
def eigh(A: Any, UPLO: str = "L") -> EighResult:  # noqa: N803
    """The eigenvalues (ascending) and orthonormal eigenvectors (columns) of each symmetric matrix,
    from its lower (``UPLO='L'``) or upper triangle. Eigenvectors are unique up to sign, and their
    gradient is infinite where eigenvalues repeat. Gradient: with ``P = Vᵀ sym(dA) V``,
    ``dλ = diag(P)`` and ``dV = V (F ∘ P)``, ``F[i, j] = 1 / (λⱼ - λᵢ)`` (primitive ``eigh``).

    >>> import tidu
    >>> tidu.linalg.eigh(tidu.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
    tensor([1., 3.])
    """
    return EighResult(*dec.eigh.bind(_uplo(A, UPLO, "eigh")))


@autocast_policy("fp32")
def eigvalsh(A: Any, UPLO: str = "L") -> Any:  # noqa: N803
    """The eigenvalues (ascending) of ``eigh``.

    >>> import tidu
    >>> tidu.linalg.eigvalsh(tidu.tensor([[1.0, 0.0], [0.0, -1.0]]))
    tensor([-1.,  1.])
    """
    return dec.eigh.bind(_uplo(A, UPLO, "eigvalsh"))[0]


@autocast_policy("fp32")
def svd(A: Any, full_matrices: bool = True, *, driver: Any = None) -> SVDResult:  # noqa: N803
    """``A = U diag(S) Vh`` with ``S`` descending; ``U`` has ``min(m, n)`` columns and ``Vh`` as many
    rows unless ``full_matrices`` (then ``m`` and ``n``). Singular vectors are unique up to sign;
    their gradient is infinite where singular values repeat, and with ``full_matrices`` the columns
    past ``min(m, n)`` get none (as in PyTorch). Gradient: primitive ``svd``. ``driver`` is CUDA-only
    in PyTorch and ignored.

    >>> import tidu
    >>> U, S, Vh = tidu.linalg.svd(tidu.tensor([[0.0, 2.0], [1.0, 0.0]]))
    >>> S
    tensor([2., 1.])
    >>> U @ tidu.diag(S) @ Vh
    tensor([[0., 2.],
            [1., 0.]])
    """
    return SVDResult(*dec.svd.bind(_matrix_input(A, "svd"), full_matrices=bool(full_matrices)))


@autocast_policy("fp32")
def svdvals(A: Any, *, driver: Any = None) -> Any:  # noqa: N803
    """The singular values of ``svd``, descending.

    >>> import tidu
    >>> tidu.linalg.svdvals(tidu.tensor([[3.0, 0.0, 0.0], [0.0, -4.0, 0.0]]))
    tensor([4., 3.])
    """
    return dec.svd.bind(_matrix_input(A, "svdvals"), full_matrices=False)[1]


@autocast_policy("fp32")
def qr(A: Any, mode: str = "reduced") -> QRResult:  # noqa: N803
    """Householder QR (LAPACK's signs: ``R``'s diagonal may be negative): ``Q`` with orthonormal
    columns, ``min(m, n)`` of them (``'reduced'``) or ``m`` (``'complete'``), and upper-triangular
    ``R``; ``'r'`` returns an empty ``Q``. Gradient: primitive ``qr`` (``A`` of full rank; not with
    ``'r'``, nor with ``'complete'`` and more rows than columns, as in PyTorch).

    >>> import tidu
    >>> Q, R = tidu.linalg.qr(tidu.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> R
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    Q, R = dec.qr.bind(_matrix_input(A, "qr"), mode=mode)  # noqa: N806
    if mode == "r":
        Q = creation.empty(0, dtype=A.dtype, device=A.device)  # noqa: N806
    return QRResult(Q, R)


def _tolerance(S: Any, A: Any, atol: Any, rtol: Any) -> Any:  # noqa: N803
    """The cutoff at or below which singular values count as zero, ``max(atol, rtol * S.max())``:
    ``rtol = eps * max(m, n)`` unless given, or 0 when only a positive ``atol`` is."""
    if rtol is None:
        positive_atol = atol is not None and (not isinstance(atol, int | float) or atol > 0)
        rtol = 0.0 if positive_atol else float(np.finfo(A.dtype.np).eps) * max(A.shape[-2:])
    largest = reduce.amax(S, -1, keepdim=True) if S.shape[-1] else reduce.sum(S, -1, keepdim=True)
    cut = ops_math.mul(largest, rtol)
    if atol is None:
        return cut
    return ops_math.maximum(cut, atol if hasattr(atol, "shape") else creation.full_like(cut, atol))


def pinv(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:  # noqa: N803
    """The Moore-Penrose pseudo-inverse, ``V diag(1/S) Uᵀ`` over the singular values above the
    tolerance (``max(atol, rtol * S.max())``); with ``hermitian``, from ``eigh`` (the eigenvalues'
    absolute values). Gradient: through ``svd``, at a fixed rank (with ``hermitian`` too, as
    PyTorch's: not ``eigh``'s symmetric one).

    >>> import tidu
    >>> tidu.linalg.pinv(tidu.tensor([[1.0, 1.0]]))
    tensor([[0.5000],
            [0.5000]])
    """
    A = _matrix_input(A, "pinv")  # noqa: N806
    if hermitian:
        differentiated = not isinstance(A, Tensor) or A.requires_grad and grad_mode.is_grad_enabled()
        w, V = eigh(A.detach() if differentiated else A)  # noqa: N806
        kept = ops_math.abs(w) > _tolerance(ops_math.abs(w), A, atol, rtol)
        inverse = ops_math.where(kept, 1.0 / ops_math.where(kept, w, 1.0), 0.0)
        out = (V * shape.unsqueeze(inverse, -2)) @ V.mT
        if not differentiated:
            return out
        # PyTorch differentiates pinv by its general formula, not through eigh (whose gradient is
        # symmetric): the values from eigh, the gradient from the SVD form
        general = pinv(A, atol=atol, rtol=rtol)
        return out + (general - general.detach())
    U, S, Vh = svd(A, full_matrices=False)  # noqa: N806
    kept = S > _tolerance(S, A, atol, rtol)
    inverse = ops_math.where(kept, 1.0 / ops_math.where(kept, S, 1.0), 0.0)
    return (Vh.mT * shape.unsqueeze(inverse, -2)) @ U.mT


@autocast_policy("fp32")
def matrix_rank(A: Any, *, atol: Any = None, rtol: Any = None, hermitian: bool = False) -> Any:  # noqa: N803
    """The number of singular values (eigenvalues' absolute values with ``hermitian``) above the
    tolerance of ``pinv``, as int64; not differentiable.

    >>> import tidu
    >>> tidu.linalg.matrix_rank(tidu.ones(3, 3))
    tensor(1)
    """
    A = _matrix_input(A, "matrix_rank")  # noqa: N806
    S = ops_math.abs(eigvalsh(A)) if hermitian else svdvals(A)  # noqa: N806
    return reduce.sum(S.detach() > _tolerance(S.detach(), A, atol, rtol), -1)


@autocast_policy("fp32")
def lstsq(A: Any, B: Any, rcond: Any = None, *, driver: Any = None) -> LstsqResult:  # noqa: N803
    """The least-squares solution ``X`` of ``A X = B`` (``pinv(A) @ B``, singular values at or below
    ``rcond * S.max()`` dropped), the numerical rank, and empty ``residuals`` and
    ``singular_values`` (what PyTorch's default CPU driver, ``'gelsy'``, returns). For a
    rank-deficient ``A`` this is the minimum-norm solution, where ``'gelsy'`` gives another one.

    >>> import tidu
    >>> tidu.linalg.lstsq(tidu.tensor([[1.0], [1.0]]), tidu.tensor([[1.0], [3.0]])).solution
    tensor([[2.]])
    """
    A, B = _matrix_input(A, "lstsq"), _matrix_input(B, "lstsq")  # noqa: N806
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {dtypes.TORCH_NAMES[A.dtype.name]} and other's dtype "
                           f"{dtypes.TORCH_NAMES[B.dtype.name]}")
    vector = B.ndim == A.ndim - 1
    X = linalg.matmul(pinv(A, rtol=rcond), shape.unsqueeze(B, -1) if vector else B)  # noqa: N806
    empty = creation.empty(0, dtype=A.dtype, device=A.device)
    return LstsqResult(shape.squeeze(X, -1) if vector else X, empty, matrix_rank(A, rtol=rcond), empty)


# --- the older top-level forms (``tidu.svd``, ``tidu.qr``...), and Tensor methods -----------------

_SVD = namedtuple("svd", ["U", "S", "V"])
_QR = namedtuple("qr", ["Q", "R"])
_Slogdet = namedtuple("slogdet", ["sign", "logabsdet"])


def _logdet(input: Any) -> Any:  # noqa: A002
    """``tidu.logdet``: the log of each determinant; NaN for a negative one, ``-inf`` for zero.

    >>> import tidu
    >>> tidu.logdet(tidu.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918)
    """
    input = _matrix_input(input, "logdet")  # noqa: A001
    dec.check_square("logdet", input)
    sign, logabsdet = dec.slogdet.bind(input)
    return logabsdet + ops_math.log(sign)


def _slogdet(input: Any) -> Any:  # noqa: A002
    """``tidu.slogdet``: ``linalg.slogdet`` as a ``slogdet`` named tuple.

    >>> import tidu
    >>> tidu.slogdet(tidu.eye(2)).logabsdet
    tensor(0.)
    """
    return _Slogdet(*slogdet(input))


def _nuclear_norm(input: Any, dim: Any = (-2, -1), keepdim: bool = False) -> Any:  # noqa: A002
    """``tidu.nuclear_norm``: ``matrix_norm(input, 'nuc', dim, keepdim)``, the sum of the singular values;
    ``nuclear_norm(input, keepdim)`` takes the last two dims.

    >>> import tidu
    >>> tidu.nuclear_norm(tidu.tensor([[3.0, 0.0], [0.0, -4.0]]))
    tensor(7.)
    """
    if isinstance(dim, bool):  # PyTorch's overload nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim)


def _frobenius_norm(input: Any, dim: Any, keepdim: bool = False) -> Any:  # noqa: A002
    """``tidu.frobenius_norm``: the 2-norm of the elements over one or two ``dim`` (all of them for
    ``()``).

    >>> import tidu
    >>> tidu.frobenius_norm(tidu.tensor([[3.0, 0.0], [0.0, -4.0]]), dim=(0, 1))
    tensor(5.)
    """
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]} instead.")
    return reduce.norm(input, 2, dims or None, keepdim)


def _cholesky(input: Any, upper: bool = False) -> Any:  # noqa: A002
    """``tidu.cholesky``: ``linalg.cholesky`` with ``upper`` positional.

    >>> import tidu
    >>> tidu.cholesky(tidu.tensor([[4.0]]), True)
    tensor([[2.]])
    """
    return cholesky(input, upper=upper)


def _svd(input: Any, some: bool = True, compute_uv: bool = True) -> Any:  # noqa: A002
    """``tidu.svd``: ``(U, S, V)`` with ``V``, not ``Vh`` (reduced unless ``some=False``); without
    ``compute_uv``, ``U`` and ``V`` are zero-filled square matrices.

    >>> import tidu
    >>> tidu.svd(tidu.tensor([[0.0, 1.0], [2.0, 0.0]])).V
    tensor([[-1., -0.],
            [-0., -1.]])
    """
    U, S, Vh = svd(input, full_matrices=not some)  # noqa: N806
    if not compute_uv:
        m, n = input.shape[-2:]
        zeros = creation.zeros
        U = zeros(*input.shape[:-2], m, m, dtype=S.dtype, device=S.device)  # noqa: N806
        Vh = zeros(*input.shape[:-2], n, n, dtype=S.dtype, device=S.device)  # noqa: N806
    return _SVD(U, S, Vh.mT)


def _qr(input: Any, some: bool = True) -> Any:  # noqa: A002
    """``tidu.qr``: ``linalg.qr`` with ``some`` for ``mode='reduced'`` (``False``: ``'complete'``).

    >>> import tidu
    >>> tidu.qr(tidu.tensor([[2.0]])).R
    tensor([[2.]])
    """
    return _QR(*qr(input, "reduced" if some else "complete"))


# Higham's degree-13 Padé approximant of exp (SIAM J. Matrix Anal. Appl. 26(4), 2005): its
# coefficients, and the 1-norm up to which it is accurate to double precision
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
           10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(A: Any) -> Any:  # noqa: N803
    """The exponential of each square matrix in ``A``, by scaling and squaring: ``A / 2^s`` has a
    1-norm below 5.37 (``s`` from the largest norm in the batch), its degree-13 Padé approximant
    is found with one ``solve``, and squared ``s`` times. Composed of products and ``solve``, so it
    is differentiable to any order (the derivative of the approximant, as accurate as its value).

    >>> import tidu
    >>> tidu.linalg.matrix_exp(tidu.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]])
    """
    A = _matrix_input(A, "matrix_exp")  # noqa: N806
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_exp: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    norm1 = float(np.abs(A.detach()._values()).sum(axis=-2).max())
    s = max(0, math.ceil(math.log2(norm1 / _THETA13))) if norm1 > 0 else 0
    X = A * (0.5 ** s) if s else A  # noqa: N806
    eye = shape.expand(creation.eye(n, dtype=A.dtype, device=A.device), tuple(A.shape))
    b = _PADE13
    X2 = matmul(X, X)  # noqa: N806
    X4 = matmul(X2, X2)  # noqa: N806
    X6 = matmul(X4, X2)  # noqa: N806
    U = matmul(X, matmul(X6, b[13] * X6 + b[11] * X4 + b[9] * X2) + b[7] * X6 + b[5] * X4 + b[3] * X2 + b[1] * eye)  # noqa: N806
    V = matmul(X6, b[12] * X6 + b[10] * X4 + b[8] * X2) + b[6] * X6 + b[4] * X4 + b[2] * X2 + b[0] * eye  # noqa: N806
    R = solve(V - U, V + U)  # noqa: N806
    for _ in range(s):
        R = matmul(R, R)  # noqa: N806
    return R


def solve_triangular(A: Any, B: Any, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Any:  # noqa: N803
    """The solution ``X`` of ``A X = B`` (``X A = B`` when not ``left``) for triangular ``A``: only
    its upper (``upper``) or lower triangle is read, and with ``unitriangular`` not its diagonal
    either (taken as ones), so the gradient of ``A`` lies in that triangle, as PyTorch's. ``B`` is a
    batch of matrices. Solved by ``solve`` (LU): a singular ``A`` raises ``LinAlgError`` where
    PyTorch's back substitution returns infinities.

    >>> import tidu
    >>> tidu.linalg.solve_triangular(tidu.tensor([[2.0, 1.0], [9.0, 4.0]]), tidu.tensor([[4.0], [8.0]]), upper=True)
    tensor([[1.],
            [2.]])
    """
    A, B = _matrix_input(A, "solve_triangular"), _matrix_input(B, "solve_triangular")  # noqa: N806
    if A.ndim < 2 or B.ndim < 2:
        raise RuntimeError(f"linalg.solve_triangular: The input tensor {'A' if A.ndim < 2 else 'B'} must have at "
                           f"least 2 dimensions.")
    if A.dtype is not B.dtype:  # PyTorch solves in A's dtype here (``solve`` refuses)
        B = convert(B, A.dtype)  # noqa: N806
    n = A.shape[-1]
    inner = B.shape[-2] if left else B.shape[-1]
    if A.shape[-2] != n or inner != n:
        equation, rhs = ("AX = B", B.shape[-2:]) if left else ("XA = B", B.shape[-2:])
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {equation} "
                           f"({A.shape[-2]}x{n} and {rhs[0]}x{rhs[1]})")
    triangle = indexing.triu(A) if upper else indexing.tril(A)
    if unitriangular:
        eye = creation.eye(n, dtype=A.dtype, device=A.device)
        triangle = ops_math.where(ops_math.eq(eye, 1), eye, triangle)
    return solve(triangle, B, left=left)


def vander(x: Any, *, N: int | None = None) -> Any:  # noqa: N803
    """The Vandermonde matrix of the last dim of ``x``: columns ``x ** 0, x ** 1, ..., x ** (N - 1)``
    (``N`` defaults to ``x.shape[-1]``), built by products, so it is differentiable and integers
    stay integers.

    >>> import tidu
    >>> tidu.linalg.vander(tidu.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    size = (x.shape[-1] if x.ndim else 1) if N is None else N
    if size <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dtype is dtypes.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    columns = [creation.ones(tuple(x.shape), dtype=x.dtype, device=x.device), x]
    while len(columns) < size:
        columns.append(columns[-1] * x)
    return shape.stack(columns, -1)


from ._householder import householder_product  # noqa: E402
from ._linalg_ex import cholesky_ex, cond, inv_ex, solve_ex, tensorinv, tensorsolve  # noqa: E402
