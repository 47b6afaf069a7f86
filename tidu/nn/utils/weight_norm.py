"""Weight normalisation through a forward pre-hook (the older API): ``weight`` becomes
``weight_g * weight_v / ||weight_v||``, the norm taken over every dimension but ``dim``."""

from __future__ import annotations

import warnings

from ... import ops
from ...core.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["remove_weight_norm", "weight_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions; ``dim=-1``
    (what ``dim=None`` becomes) takes the norm of the whole tensor, a 0-d result."""
    if dim == -1:
        return ops.sqrt((v * v).sum())
    others = [d for d in range(v.ndim) if d != dim]
    return ops.sqrt((v * v).sum(dim=others, keepdim=True)) if others else ops.abs(v)


def weight_norm_value(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """``v`` rescaled to norm ``g`` along ``dim`` (as ``norm_except_dim`` measures it)."""
    return v * (g / norm_except_dim(v, dim))


class _WeightNormHook:
    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute(self, module: Module) -> Tensor:
        return weight_norm_value(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def __call__(self, module: Module, args: tuple) -> None:
        setattr(module, self.name, self.compute(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split the parameter ``name`` into a magnitude ``name_g`` and a direction ``name_v``,
    recombined before every forward (deprecated in PyTorch for
    ``parametrizations.weight_norm``; it warns the same way).

    >>> import warnings, tidu
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     layer = tidu.nn.utils.weight_norm(tidu.nn.Linear(3, 2))
    >>> [(name, tuple(p.shape)) for name, p in layer.named_parameters()]
    [('bias', (2,)), ('weight_g', (2, 1)), ('weight_v', (2, 3))]
    """
    warnings.warn("`tidu.nn.utils.weight_norm` is deprecated in favor of `tidu.nn.utils.parametrizations.weight_norm`.",
                  FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    hook = _WeightNormHook(name, -1 if dim is None else dim)
    weight = module._parameters[name]
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    hook(module, ())
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo ``weight_norm``: ``name`` becomes one parameter again, holding the recombined weight.

    >>> import warnings, tidu
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     layer = tidu.nn.utils.weight_norm(tidu.nn.Linear(3, 2))
    >>> [name for name, _ in tidu.nn.utils.remove_weight_norm(layer).named_parameters()]
    ['bias', 'weight']
    """
    hooks = module._forward_pre_hooks
    for key, hook in hooks.items():
        if isinstance(hook, _WeightNormHook) and hook.name == name:
            with no_grad():
                weight = hook.compute(module).detach()
            delattr(module, name)
            del module._parameters[name + "_g"], module._parameters[name + "_v"]
            module.register_parameter(name, Parameter(weight))
            del hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
