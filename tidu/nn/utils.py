"""``tidu.nn.utils``: gradient clipping, and parameters to and from one vector."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import ops
from ..core.grad_mode import no_grad
from ..core.inplace import assign_
from ..tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return [p.grad for p in params if p.grad is not None]


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
            norms = [ops.abs(g).amax() if g.numel() else ops.tensor(0.0, dtype=g.dtype) for g in grads]
            total = norms[0]
            for n in norms[1:]:
                total = ops.maximum(total, n.to(dtype))
        else:
            total = ops.tensor(0.0, dtype=dtype)
            for g in grads:
                total = total + (ops.abs(g) ** norm_type).sum().to(dtype)
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
            clipped = ops.clamp(g, -clip_value, clip_value)
            assign_(g, clipped, op="clip_grad_value_")


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and concatenated, in order, into one vector (recorded: its
    gradient reaches the parameters).

    >>> import tidu
    >>> tidu.nn.utils.parameters_to_vector(tidu.nn.Linear(2, 1).parameters()).shape
    tidu.Size([3])
    """
    params = list(parameters)
    _one_device(params)
    return ops.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of ``vec`` into the parameters' data, in order (not recorded).

    >>> import tidu
    >>> layer = tidu.nn.Linear(2, 1)
    >>> tidu.nn.utils.vector_to_parameters(tidu.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight.tolist(), layer.bias.tolist()
    ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _one_device([vec, *params])
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.data = vec[start:start + n].reshape(tuple(p.shape)).to(p.dtype).clone()
            start += n


def _one_device(tensors: list[Tensor]) -> None:
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        first, other = tensors[0].device, next(t.device for t in tensors if t.device != tensors[0].device)
        raise TypeError(f"Found two parameters on different devices, this is currently not supported: {first} and {other}")
