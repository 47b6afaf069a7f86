"""Spectral normalisation through a forward pre-hook (the older API; ``parametrizations.spectral_norm``
is the newer): ``weight`` becomes ``weight_orig / sigma``, ``sigma`` the largest singular value of
``weight_orig`` as a matrix, estimated by power iteration on the buffers ``weight_u`` and
``weight_v``, one or more steps before every forward in training mode."""

from __future__ import annotations

from ... import ops
from ...core.grad_mode import no_grad
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["remove_spectral_norm", "spectral_norm"]


class _SpectralNormHook:
    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight: Tensor) -> Tensor:
        """``weight`` with ``dim`` first and the other dims flattened."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute(self, module: Module, power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.matrix(weight)
        if power_iteration:
            with no_grad():  # the buffers are updated in place, as PyTorch's ``normalize(..., out=)``
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ops.mv(matrix.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ops.mv(matrix, v), dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()  # the backward reads these values, not later updates
        sigma = ops.dot(u, ops.mv(matrix, v))
        return weight / sigma

    def __call__(self, module: Module, args: tuple) -> None:
        setattr(module, self.name, self.compute(module, power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Replace the parameter ``name`` by ``name_orig`` divided by its spectral norm before every
    forward (``dim``, the dim of output features: 1 for transposed convolutions, else 0); the
    power iteration's vectors are the buffers ``name_u`` and ``name_v``.

    >>> import tidu
    >>> layer = tidu.nn.utils.spectral_norm(tidu.nn.Linear(4, 3))
    >>> list(layer.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    >>> _ = layer(tidu.ones(2, 4))
    >>> bool(tidu.linalg.matrix_norm(layer.weight.detach(), 2) < 1.5)
    True
    """
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = 1 if isinstance(module, ConvTranspose1d | ConvTranspose2d | ConvTranspose3d) else 0
    hook = _SpectralNormHook(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        rows, cols = hook.matrix(weight).shape
        u = F.normalize(ops.randn(rows, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
        v = F.normalize(ops.randn(cols, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())  # a plain attribute until the first forward
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``spectral_norm``: ``name`` becomes one parameter again, holding the normalised weight
    (without a power-iteration step).

    >>> import tidu
    >>> layer = tidu.nn.utils.remove_spectral_norm(tidu.nn.utils.spectral_norm(tidu.nn.Linear(4, 3)))
    >>> list(layer.state_dict())
    ['bias', 'weight']
    """
    hooks = module._forward_pre_hooks
    for key, hook in list(hooks.items()):
        if isinstance(hook, _SpectralNormHook) and hook.name == name:
            weight = hook.compute(module, power_iteration=False)
            del hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for suffix in ("", "_u", "_v", "_orig"):
        if hasattr(module, name + suffix):
            delattr(module, name + suffix)
    module.register_parameter(name, Parameter(weight.detach()))
    return module
