"""``Conv1d`` and ``Conv2d``: PyTorch's layers on ``tidu.conv1d``/``tidu.conv2d`` (zero padding)."""

from __future__ import annotations

from typing import Any

from ... import ops
from ..parameter import Parameter
from .linear import reset_weight_and_bias
from .module import Module


def _tuple(value: Any, n: int) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,) * n


class _ConvNd(Module):
    """What Conv1d and Conv2d share: parameters, PyTorch's initialisation and repr."""

    _dims = 0
    _fn: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError(f"{type(self).__name__}: padding_mode {padding_mode!r} (tidu pads with zeros)")
        n = self._dims
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, n)
        self.padding_mode = padding_mode
        self.weight = Parameter(ops.empty(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype))
        if bias:
            self.bias = Parameter(ops.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L): ``weight (C_out, C_in / groups, K)``, PyTorch's init.

    >>> import tidu
    >>> conv = tidu.nn.Conv1d(3, 4, 3, stride=2, padding=1, bias=False)
    >>> conv
    Conv1d(3, 4, kernel_size=(3,), stride=(2,), padding=(1,), bias=False)
    >>> conv(tidu.ones(2, 3, 8)).shape
    tidu.Size([2, 4, 4])
    """

    _dims = 1
    _fn = staticmethod(ops.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W): ``weight (C_out, C_in / groups, kH, kW)``, PyTorch's init.

    >>> import tidu
    >>> conv = tidu.nn.Conv2d(4, 4, (3, 5), padding="same", dilation=2, groups=2)
    >>> conv
    Conv2d(4, 4, kernel_size=(3, 5), stride=(1, 1), padding=same, dilation=(2, 2), groups=2)
    >>> conv(tidu.ones(1, 4, 6, 6)).shape
    tidu.Size([1, 4, 6, 6])
    """

    _dims = 2
    _fn = staticmethod(ops.conv2d)
