"""Weight and spectral normalisation as parametrizations (``parametrize.register_parametrization``)."""

from __future__ import annotations

from ... import ops
from ...core.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from .parametrize import register_parametrization
from .weight_norm import norm_except_dim, weight_norm_value

__all__ = ["spectral_norm", "weight_norm"]


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
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


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
