"""Orthogonal matrices, weight and spectral normalisation as parametrizations
(``parametrize.register_parametrization``)."""

from __future__ import annotations

from ... import linalg, ops
from ..._householder import geqrf, householder_product
from ...core import dtypes
from ...core.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import norm_except_dim, weight_norm_value

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_norm_value(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``name`` as a magnitude ``original0`` (norm over every dimension but ``dim``;
    ``None``: the whole tensor) times the direction of ``original1``.

    >>> import tidu
    >>> layer = tidu.nn.utils.parametrizations.weight_norm(tidu.nn.Linear(3, 2))
    >>> list(layer.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def load_old_weight_norm(state_dict: dict, prefix: str, *args: object) -> None:
        """Read ``utils.weight_norm``'s ``<name>_g`` and ``<name>_v`` as ``original0`` and ``original1``."""
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(load_old_weight_norm)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, ``sigma`` the largest singular value of the weight as a matrix (``dim``
    first, the rest flattened), estimated by power iteration on the buffers ``_u`` and ``_v``:
    ``n_power_iterations`` steps on every evaluation in training mode."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            matrix = self._matrix(weight.detach())
            rows, cols = matrix.shape
            self.register_buffer("_u", F.normalize(ops.randn(rows, dtype=weight.dtype), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(ops.randn(cols, dtype=weight.dtype), dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        return weight.movedim(self.dim, 0).flatten(1)

    def _power_method(self, matrix: Tensor, steps: int) -> None:
        with no_grad():
            for _ in range(steps):
                self._u = F.normalize(ops.mv(matrix, self._v), dim=0, eps=self.eps)
                self._v = F.normalize(ops.mv(matrix.transpose(0, 1), self._u), dim=0, eps=self.eps)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = self._matrix(weight)
        if self.training:
            self._power_method(matrix.detach(), self.n_power_iterations)
        sigma = (self._u.clone() * ops.mv(matrix, self._v.clone())).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Parametrize ``name`` as itself divided by its spectral norm (``dim`` defaults to 1 for
    transposed convolutions, else 0); the power-iteration vectors are the buffers ``_u``, ``_v``.

    >>> import tidu
    >>> layer = tidu.nn.utils.parametrizations.spectral_norm(tidu.nn.Linear(3, 2))
    >>> list(layer.state_dict())
    ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose1d | ConvTranspose2d) else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))


# --- orthogonal -------------------------------------------------------------------------------
_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    """``X -> Q`` with orthonormal columns (rows, for a wide ``X``), by ``orthogonal_map``:
    ``matrix_exp`` or ``cayley`` of the skew-symmetric matrix ``X``'s lower triangle makes, or the
    product of the Householder reflectors below ``X``'s diagonal (its diagonal's signs kept).
    With ``use_trivialization`` the result is ``base @ Q``: ``right_inverse`` stores the matrix
    given as ``base`` (orthogonalized) and returns the ``X`` that maps to the identity."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # noqa: N803
        n, k = X.shape[-2:]
        wide = n < k
        if wide:
            X, n, k = X.mT, k, n  # noqa: N806
        if self.orthogonal_map == "householder":
            vectors = ops.tril(X, -1)
            tau = 2.0 / (1.0 + (vectors * vectors).sum(dim=-2))
            signs = ops.diagonal(X, dim1=-2, dim2=-1).detach().to(dtypes.int32).to(X.dtype)  # ±1, not trained
            Q = householder_product(vectors, tau) * signs.unsqueeze(-2)  # noqa: N806
        else:
            low = ops.tril(X)
            if n != k:  # the n x k lower triangle, embedded in an n x n matrix
                low = ops.cat([low, ops.zeros(*low.shape[:-1], n - k, dtype=X.dtype, device=X.device)], dim=-1)
            skew = low - low.mT
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(skew)  # noqa: N806
            else:  # Cayley: (I - A/2)^-1 (I + A/2)
                eye = ops.eye(n, dtype=X.dtype, device=X.device)
                Q = linalg.solve(eye - 0.5 * skew, eye + 0.5 * skew)  # noqa: N806
            Q = Q[..., :k]  # noqa: N806
        if self.use_trivialization:
            Q = self.base @ Q  # noqa: N806
        return Q.mT if wide else Q

    def right_inverse(self, Q: Tensor) -> Tensor:  # noqa: N803
        with no_grad():
            if tuple(Q.shape) != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {tuple(Q.shape)}.")
            given = Q
            n, k = Q.shape[-2:]
            wide = n < k
            if wide:
                Q, n, k = Q.mT, k, n  # noqa: N806
            if not self.use_trivialization:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # the reflectors of Q's QR, with the signs of R's diagonal on the diagonal: the
                # householder map gives back the Q factor whose R has a positive diagonal
                A, tau = geqrf(Q)  # noqa: N806
                signs = ops.sign(ops.diagonal(A, dim1=-2, dim2=-1))
                signs = ops.where(tau == 0.0, -signs, signs)  # no reflection there: the map makes one
                A = A.clone()  # noqa: N806
                ops.diagonal(A, dim1=-2, dim2=-1).copy_(signs)
                return A.mT if wide else A
            if n != k:  # completed to a square orthogonal matrix with random columns
                Q = ops.cat([Q, ops.randn(*Q.shape[:-1], n - k, dtype=Q.dtype, device=Q.device)], dim=-1)  # noqa: N806
            self.base = Q.clone() if n == k and _is_orthogonal(Q) else _make_orthogonal(Q)
            minus_identity = ops.zeros_like(given)
            ops.diagonal(minus_identity, dim1=-2, dim2=-1).fill_(-1.0)  # the householder map's identity
            return minus_identity


def _is_orthogonal(Q: Tensor) -> bool:  # noqa: N803
    n, k = Q.shape[-2:]
    tolerance = 10.0 * n * float(ops.finfo(Q.dtype).eps)
    return bool(ops.allclose(Q.mT @ Q, ops.eye(k, dtype=Q.dtype, device=Q.device), atol=tolerance))


def _make_orthogonal(A: Tensor) -> Tensor:  # noqa: N803
    """The Q of ``A``'s QR, its columns signed so that R's diagonal is positive."""
    X, tau = geqrf(A)  # noqa: N806
    return householder_product(X, tau) * ops.sign(ops.diagonal(X, dim1=-2, dim2=-1)).unsqueeze(-2)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize the matrix (or batch of matrices) ``name`` to have orthonormal columns, or rows
    if it is wide: ``orthogonal_map`` is ``"matrix_exp"`` (the default for square matrices),
    ``"cayley"`` or ``"householder"`` (the default otherwise). With ``use_trivialization`` (the
    default) the parameter moves around a ``base`` matrix, initially the weight made
    orthogonal, and starts at the map's identity.

    >>> import tidu
    >>> layer = tidu.nn.utils.parametrizations.orthogonal(tidu.nn.Linear(3, 3))
    >>> w = layer.weight
    >>> bool(tidu.allclose(w @ w.T, tidu.eye(3), atol=1e-5))
    True
    >>> layer.parametrizations.weight.original
    Parameter containing:
    tensor([[-1., 0., 0.],
            [ 0., -1., 0.],
            [ 0., 0., -1.]], requires_grad=True)
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    parametrization = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    return register_parametrization(module, name, parametrization, unsafe=True)

