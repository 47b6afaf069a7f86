"""Gradient clipping: the joint norm of gradients, scaling them to a norm, clamping them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

from ... import ops
from ...core.grad_mode import no_grad
from ...core.inplace import assign_
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _tensors(tensors: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def get_total_norm(tensors: Tensor | Iterable[Tensor], norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: Any = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` taken together, as if concatenated into one vector
    (``inf``: the largest magnitude); usually the gradients of a model.

    >>> import tidu
    >>> tidu.nn.utils.get_total_norm([tidu.tensor([3.0, 4.0]), tidu.tensor([12.0])])
    tensor(13.)
    """
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return ops.tensor(0.0)
    with no_grad():
        dtype = tensors[0].dtype
        if math.isinf(norm_type):
            norms = [ops.abs(t).amax() if t.numel() else ops.tensor(0.0, dtype=t.dtype) for t in tensors]
            total = norms[0]
            for n in norms[1:]:
                total = ops.maximum(total, n.to(dtype))
        else:  # PyTorch's: each tensor's norm, then the norm of those (a half gradient's in float32 inside)
            from ...linalg import vector_norm

            total = vector_norm(ops.stack([vector_norm(t, norm_type).to(dtype) for t in tensors]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot "
            "be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: Tensor | Iterable[Tensor], max_norm: float, total_norm: Tensor,
                          foreach: Any = None) -> None:
    """Scale the gradients of ``parameters`` in place by ``max_norm / (total_norm + 1e-6)`` when
    that is below one (``total_norm`` as ``get_total_norm`` gives it).

    >>> import tidu
    >>> w = tidu.zeros(2, requires_grad=True)
    >>> (w * tidu.tensor([3.0, 4.0])).sum().backward()
    >>> tidu.nn.utils.clip_grads_with_norm_([w], 1.0, tidu.tensor(5.0))
    >>> w.grad
    tensor([0.6000, 0.8000])
    """
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        coef = ops.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))


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
    params = _tensors(parameters)
    total = get_total_norm(_grads(params), norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters: Tensor | Iterable[Tensor], max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """Deprecated: ``clip_grad_norm_`` (this name warns with a ``FutureWarning``, as PyTorch's).

    >>> import warnings, tidu
    >>> w = tidu.zeros(2, requires_grad=True)
    >>> (w * tidu.tensor([3.0, 4.0])).sum().backward()
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     tidu.nn.utils.clip_grad_norm([w], max_norm=1.0)
    tensor(5.)
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    warnings.warn("`tidu.nn.utils.clip_grad_norm` is now deprecated in favor of `tidu.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


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
