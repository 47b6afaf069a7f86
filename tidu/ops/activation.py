"""Activations over a dimension: ``softmax`` and ``log_softmax`` on the fused primitives of tidu/primitives/nn.py."""

from __future__ import annotations

import warnings
from typing import Any

from ..core import dtypes
from ..core.aval import wrap_dim
from ..core.primitive import bind
from ..primitives import nn as prims
from ._operands import is_value

__all__ = ["log_softmax", "softmax"]


def _softmax_dim(ndim: int, name: str) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_like(prim: Any, name: str, input: Any, dim: Any, dtype: Any) -> Any:  # noqa: A002
    if dtype is not None:
        input = input.to(dtype)
    if not is_value(input):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(input).__name__}")
    if dim is None:
        dim = _softmax_dim(input.ndim, name)
    axis = wrap_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:  # PyTorch's kernel names
        raise dtypes.not_implemented(f"{name}_{'lastdim_' if axis == max(input.ndim - 1, 0) else ''}kernel_impl",
                                     input.dtype)
    return bind(prim, input, axis=axis)


def softmax(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:  # noqa: A002
    """``exp(x) / sum(exp(x))`` along ``dim`` (fused primitive ``softmax``, max-shifted).

    Gradient: ``d softmax = s * (dx - sum(s * dx))`` (tidu/primitives/nn.py).

    >>> import tidu
    >>> tidu.softmax(tidu.tensor([[1.0, 2.0, 3.0]]), dim=1)
    tensor([[0.0900, 0.2447, 0.6652]])
    """
    return _softmax_like(prims.softmax, "softmax", input, dim, dtype)


def log_softmax(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:  # noqa: A002
    """``x - log(sum(exp(x)))`` along ``dim`` (fused primitive ``log_softmax``, stable).

    Gradient: ``d log_softmax = dx - sum(softmax * dx)`` (tidu/primitives/nn.py).

    >>> import tidu
    >>> tidu.log_softmax(tidu.tensor([1000.0, 0.0]), dim=0)
    tensor([    0., -1000.])
    """
    return _softmax_like(prims.log_softmax, "log_softmax", input, dim, dtype)


METHODS = {"softmax": softmax, "log_softmax": log_softmax}
