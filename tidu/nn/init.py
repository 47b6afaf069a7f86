"""``tidu.nn.init``: fill a tensor in place from tidu's RNG (PyTorch's formulas for the bounds).

Each function writes under ``no_grad`` with ``tidu.core.inplace.assign_`` and returns the
tensor. The draws come from ``tidu.rand``/``tidu.randn`` (seeded by ``tidu.manual_seed``),
so the values differ from PyTorch's but follow the same distributions.
"""

from __future__ import annotations

import math
from typing import Any

from .. import ops
from ..core.grad_mode import no_grad
from ..core.inplace import assign_
from ..tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_", "uniform_",
    "xavier_normal_", "xavier_uniform_", "zeros_",
]


def _fill(tensor: Tensor, value: Tensor, op: str) -> Tensor:
    with no_grad():
        return assign_(tensor, value.to(tensor.dtype), op=op)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table).

    >>> import tidu
    >>> tidu.nn.init.calculate_gain("relu"), tidu.nn.init.calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int | float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``U(a, b)``.

    >>> import tidu
    >>> w = tidu.nn.init.uniform_(tidu.empty(1000), -2.0, 2.0)
    >>> bool(w.amax() <= 2.0), bool(-w.amax() <= 2.0)
    (True, True)
    """
    return _fill(tensor, ops.rand(tensor.shape, dtype=tensor.dtype) * (b - a) + a, "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``N(mean, std**2)``.

    >>> import tidu
    >>> w = tidu.nn.init.normal_(tidu.empty(10000), 3.0, 0.5)
    >>> round(w.mean().item())
    3
    """
    return _fill(tensor, ops.randn(tensor.shape, dtype=tensor.dtype) * std + mean, "normal_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import tidu
    >>> tidu.nn.init.constant_(tidu.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    return _fill(tensor, ops.full(tuple(tensor.shape), val, dtype=tensor.dtype), "constant_")


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import tidu
    >>> tidu.nn.init.zeros_(tidu.ones(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import tidu
    >>> tidu.nn.init.ones_(tidu.zeros(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import tidu
    >>> w = tidu.nn.init.xavier_uniform_(tidu.empty(30, 20))
    >>> bool(w.amax() <= (6 / 50) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import tidu
    >>> tidu.nn.init.xavier_normal_(tidu.empty(3, 2)).shape
    tidu.Size([3, 2])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He uniform: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)`` (``fan`` by ``mode``).

    >>> import tidu
    >>> w = tidu.nn.init.kaiming_uniform_(tidu.empty(4, 16), a=5 ** 0.5)
    >>> bool(w.amax() <= 16 ** -0.5)
    True
    """
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``.

    >>> import tidu
    >>> tidu.nn.init.kaiming_normal_(tidu.empty(3, 2), mode="fan_out", nonlinearity="relu").shape
    tidu.Size([3, 2])
    """
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
