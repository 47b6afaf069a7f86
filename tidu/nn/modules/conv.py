"""``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``: PyTorch's layers on ``tidu.conv1d/2d/3d`` and
``tidu.conv_transpose1d/2d/3d``. A ``padding_mode`` other than
``'zeros'`` pads with ``F.pad`` first, as PyTorch does."""

from __future__ import annotations

from typing import Any

from ... import ops
from .. import functional as F  # noqa: N812 - PyTorch's name
from .._tuples import _ntuple
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, materialize_all
from .linear import reset_weight_and_bias
from .module import Module


def _tuple(value: Any, n: int) -> tuple:
    return _ntuple(n)(value)


def _check_groups(in_channels: int, out_channels: int, groups: int) -> None:
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups:
        raise ValueError("out_channels must be divisible by groups")


def _add_parameters(layer: Module, weight_shape: tuple, out_channels: int, bias: bool, dtype: Any) -> None:
    """``weight`` (and ``bias``, or its ``None`` placeholder) with PyTorch's initialisation."""
    layer.weight = Parameter(ops.empty(*weight_shape, dtype=dtype))
    if bias:
        layer.bias = Parameter(ops.empty(out_channels, dtype=dtype))
    else:
        layer.register_parameter("bias", None)
    layer.reset_parameters()


class _ConvNd(Module):
    """What Conv1d and Conv2d share: parameters, PyTorch's initialisation and repr."""

    _dims = 0
    _fn: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_groups(in_channels, out_channels, groups)
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
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
        self.transposed, self.output_padding = False, (0,) * n
        pads = self._pads_last_dim_first()
        self._reversed_padding_repeated_twice = list(pads) if isinstance(self.padding, str) else pads
        _add_parameters(self, (out_channels, in_channels // groups, *self.kernel_size), out_channels, bias, dtype)

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        if self.padding_mode == "zeros":
            return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        return type(self)._fn(F.pad(input, self._pads_last_dim_first(), mode=self.padding_mode), self.weight,
                              self.bias, self.stride, 0, self.dilation, self.groups)

    def _pads_last_dim_first(self) -> tuple[int, ...]:
        """``F.pad``'s list for this layer's padding (``'same'``: the odd one at the end, as the zero
        padding puts it)."""
        if self.padding == "valid":
            return (0, 0) * self._dims
        pairs = []
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pairs += [total // 2, total - total // 2]
            else:
                pairs += [self.padding[i]] * 2
        return tuple(pairs)

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
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
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


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W): ``weight (C_out, C_in / groups, kD, kH, kW)``, PyTorch's init.

    >>> import tidu
    >>> conv = tidu.nn.Conv3d(2, 4, 3, padding=1, padding_mode="circular")
    >>> conv
    Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1), padding_mode=circular)
    >>> conv(tidu.ones(1, 2, 4, 5, 6)).shape
    tidu.Size([1, 4, 4, 5, 6])
    """

    _dims = 3
    _fn = staticmethod(ops.conv3d)


class _ConvTransposeNd(Module):
    """What ConvTranspose1d and ConvTranspose2d share: ``weight (C_in, C_out / groups, *k)``,
    PyTorch's initialisation (its fan-in read from that layout, as PyTorch reads it) and repr."""

    _dims = 0
    _fn: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_groups(in_channels, out_channels, groups)
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        n = self._dims
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.padding = _tuple(kernel_size, n), _tuple(stride, n), _tuple(padding, n)
        self.output_padding, self.dilation = _tuple(output_padding, n), _tuple(dilation, n)
        self.padding_mode, self.transposed = padding_mode, True
        self._reversed_padding_repeated_twice = tuple(p for p in reversed(self.padding) for _ in range(2))
        _add_parameters(self, (in_channels, out_channels // groups, *self.kernel_size), out_channels, bias, dtype)

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Any, output_size: Any = None) -> Any:  # noqa: A002
        output_padding = self.output_padding if output_size is None else self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                              self.dilation)

    def _output_padding(self, input: Any, output_size: Any) -> tuple[int, ...]:  # noqa: A002
        """The output padding that makes the output ``output_size`` (its last dims), or PyTorch's error."""
        wanted = list(output_size)[-self._dims:]
        spatial = input.shape[-self._dims:]
        pads = []
        for i, (n, want) in enumerate(zip(spatial, wanted)):
            least = (n - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
            if not least <= want < least + self.stride[i]:
                raise ValueError(f"requested an output size of {wanted}, but valid sizes range from "
                                 f"{[least]} to {[least + self.stride[i] - 1]} (for an input of {list(spatial)})")
            pads.append(want - least)
        return tuple(pads)

    def extra_repr(self) -> str:
        n = self._dims
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C_in, L): ``weight (C_in, C_out / groups, K)``.

    >>> import tidu
    >>> up = tidu.nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1)
    >>> up
    ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,), output_padding=(1,))
    >>> up(tidu.ones(1, 4, 5)).shape
    tidu.Size([1, 2, 12])
    """

    _dims = 1
    _fn = staticmethod(ops.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C_in, H, W): ``weight (C_in, C_out / groups, kH, kW)``.

    >>> import tidu
    >>> up = tidu.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)
    >>> up(tidu.ones(1, 4, 5, 5)).shape
    tidu.Size([1, 6, 9, 9])
    >>> up(tidu.ones(1, 4, 5, 5), output_size=(10, 10)).shape
    tidu.Size([1, 6, 10, 10])
    """

    _dims = 2
    _fn = staticmethod(ops.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C_in, D, H, W): ``weight (C_in, C_out / groups, kD, kH, kW)``.

    >>> import tidu
    >>> up = tidu.nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2)
    >>> up
    ConvTranspose3d(2, 4, kernel_size=(1, 2, 3), stride=(2, 2, 2))
    >>> up(tidu.ones(1, 2, 2, 2, 2)).shape
    tidu.Size([1, 4, 3, 4, 5])
    """

    _dims = 3
    _fn = staticmethod(ops.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: ``in_channels`` from the first input's channel dim."""

    transposed = False

    def _lazy_parameters(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any, *args: Any, **kwargs: Any) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                weight = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
            else:
                weight = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
            materialize_all(self, {"weight": weight, "bias": (self.out_channels,)})
            self.reset_parameters()

    def _get_in_channels(self, input: Any) -> int:  # noqa: A002
        batched = self._dims + 2
        if input.dim() not in (batched - 1, batched):
            raise RuntimeError(f"Expected {batched - 1}D (unbatched) or {batched}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == batched else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    """A lazy convolution's constructor: ``Conv{1,2,3}d``'s without ``in_channels``."""

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    """A lazy transposed convolution's constructor: ``ConvTranspose{1,2,3}d``'s without ``in_channels``."""

    transposed = True

    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A ``Conv1d`` whose ``in_channels`` comes from its first input; it then becomes a ``Conv1d``.

    >>> import tidu
    >>> conv = tidu.nn.LazyConv1d(4, kernel_size=3)
    >>> conv(tidu.ones(2, 5, 8)).shape, conv.weight.shape, type(conv).__name__
    (tidu.Size([2, 4, 6]), tidu.Size([4, 5, 3]), 'Conv1d')
    """

    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A ``Conv2d`` whose ``in_channels`` comes from its first input; it then becomes a ``Conv2d``.

    >>> import tidu
    >>> conv = tidu.nn.LazyConv2d(4, kernel_size=3, groups=2)
    >>> conv(tidu.ones(6, 5, 5)).shape, conv.weight.shape
    (tidu.Size([4, 3, 3]), tidu.Size([4, 3, 3, 3]))
    """

    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A ``Conv3d`` whose ``in_channels`` comes from its first input; it then becomes a ``Conv3d``.

    >>> import tidu
    >>> conv = tidu.nn.LazyConv3d(2, kernel_size=(1, 2, 2))
    >>> conv(tidu.ones(1, 3, 2, 3, 3)).shape, conv.weight.shape
    (tidu.Size([1, 2, 2, 2, 2]), tidu.Size([2, 3, 1, 2, 2]))
    """

    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ``ConvTranspose1d`` whose ``in_channels`` comes from its first input.

    >>> import tidu
    >>> conv = tidu.nn.LazyConvTranspose1d(2, kernel_size=3, stride=2)
    >>> conv(tidu.ones(1, 4, 5)).shape, conv.weight.shape, type(conv).__name__
    (tidu.Size([1, 2, 11]), tidu.Size([4, 2, 3]), 'ConvTranspose1d')
    """

    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ``ConvTranspose2d`` whose ``in_channels`` comes from its first input.

    >>> import tidu
    >>> conv = tidu.nn.LazyConvTranspose2d(2, kernel_size=2)
    >>> conv(tidu.ones(1, 3, 4, 4)).shape, conv.weight.shape
    (tidu.Size([1, 2, 5, 5]), tidu.Size([3, 2, 2, 2]))
    """

    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ``ConvTranspose3d`` whose ``in_channels`` comes from its first input.

    >>> import tidu
    >>> conv = tidu.nn.LazyConvTranspose3d(2, kernel_size=2)
    >>> conv(tidu.ones(1, 3, 2, 2, 2)).shape, conv.weight.shape
    (tidu.Size([1, 2, 3, 3, 3]), tidu.Size([3, 2, 2, 2, 2]))
    """

    cls_to_become = ConvTranspose3d
