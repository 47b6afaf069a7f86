"""``tidu.nn.utils``: ``clip_grad_norm_`` and ``clip_grad_value_``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import ops
from ..core.grad_mode import no_grad
from ..core.inplace import assign_
from ..tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


def _abs(x: Tensor) -> Tensor:
    return ops.where(x < 0, -x, x)


def clip_grad_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their joint ``norm_type``-norm
    (``inf`` for the largest magnitude) is at most ``max_norm``; returns the norm before clipping.

    >>> import tidu
    >>> w = tidu.zeros(2, requires_grad=True)
    >>> (w * tidu.tensor([3.0, 4.0])).sum().backward()
    >>> tidu.nn.utils.clip_grad_norm_([w], max_norm=1.0)
    tensor(5.)
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return ops.tensor(0.0)
    with no_grad():
        dtype = grads[0].dtype
        if math.isinf(norm_type):
            norms = [_abs(g).amax() if g.numel() else ops.tensor(0.0, dtype=g.dtype) for g in grads]
            total = norms[0]
            for n in norms[1:]:
                total = ops.maximum(total, n.to(dtype))
        else:
            total = ops.tensor(0.0, dtype=dtype)
            for g in grads:
                total = total + (_abs(g) ** norm_type).sum().to(dtype)
            total = total ** (1.0 / norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot "
                "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`"
            )
        coef = min(max_norm / (total.item() + 1e-6), 1.0)
        for g in grads:
            g.mul_(coef)
    return total


def clip_grad_value_(parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient of ``parameters`` to ``[-clip_value, clip_value]``, in place.

    >>> import tidu
    >>> w = tidu.zeros(2, requires_grad=True)
    >>> (w * tidu.tensor([3.0, -0.5])).sum().backward()
    >>> tidu.nn.utils.clip_grad_value_([w], 1.0)
    >>> w.grad
    tensor([ 1.0000, -0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            clipped = ops.where(g > clip_value, clip_value, ops.where(g < -clip_value, -clip_value, g))
            assign_(g, clipped, op="clip_grad_value_")
