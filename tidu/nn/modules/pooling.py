"""``MaxPool1d/2d/3d`` and ``AvgPool1d/2d/3d`` on ``F.max_pool*``/``F.avg_pool*``; the adaptive pools;
``MaxUnpool1d/2d/3d``, ``LPPool1d/2d/3d``; ``Upsample``. Each family is one class, its 1-D/2-D/3-D
layers differing only in the function they call."""

from __future__ import annotations

from typing import Any

from ... import ops
from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    """Max over windows of (N, C, H, W); the gradient goes to each window's first maximum.

    >>> import tidu
    >>> pool = tidu.nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(tidu.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    _fn = staticmethod(ops.max_pool2d)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over windows of (N, C, H, W).

    >>> import tidu
    >>> pool = tidu.nn.AvgPool2d(2)
    >>> pool
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    >>> pool(tidu.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 2.5000,  4.5000],
              [10.5000, 12.5000]]]])
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    _fn = staticmethod(ops.avg_pool2d)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, ceil_mode=self.ceil_mode,
                              count_include_pad=self.count_include_pad, divisor_override=self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean over adaptive windows to ``output_size`` (``F.adaptive_avg_pool2d``).

    >>> import tidu
    >>> tidu.nn.AdaptiveAvgPool2d((1, None))(tidu.ones(1, 2, 3, 4)).shape
    tidu.Size([1, 2, 1, 4])
    """

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    _fn = staticmethod(F.adaptive_avg_pool2d)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Mean over adaptive windows of the last dim to ``output_size`` (``F.adaptive_avg_pool1d``).

    >>> import tidu
    >>> tidu.nn.AdaptiveAvgPool1d(2)(tidu.arange(6.0).reshape(1, 6))
    tensor([[1., 4.]])
    """

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Mean over adaptive windows of the last three dims to ``output_size`` (``F.adaptive_avg_pool3d``).

    >>> import tidu
    >>> tidu.nn.AdaptiveAvgPool3d((1, None, 2))(tidu.ones(1, 2, 3, 4, 5)).shape
    tidu.Size([1, 2, 1, 4, 2])
    """

    _fn = staticmethod(F.adaptive_avg_pool3d)


class Upsample(Module):
    """``F.interpolate`` with fixed ``size`` or ``scale_factor``, ``mode`` and ``align_corners``.

    >>> import tidu
    >>> tidu.nn.Upsample(scale_factor=2)
    Upsample(scale_factor=2.0, mode='nearest')
    """

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: Any = None,
                 recompute_scale_factor: Any = None) -> None:
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        if isinstance(scale_factor, tuple):
            self.scale_factor: Any = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        shown = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{shown}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour ``Upsample`` of (N, C, H, W).

    >>> import tidu
    >>> tidu.nn.UpsamplingNearest2d(scale_factor=2)(tidu.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear ``Upsample`` of (N, C, H, W) with ``align_corners=True``.

    >>> import tidu
    >>> tidu.nn.UpsamplingBilinear2d(size=(1, 3))(tidu.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1.0000, 1.5000, 2.0000]]]])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class MaxPool1d(MaxPool2d):
    """Max over windows of ``(N, C, L)`` or ``(C, L)`` (``F.max_pool1d``).

    >>> import tidu
    >>> tidu.nn.MaxPool1d(2)(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]))
    tensor([[3., 2.]])
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool3d(MaxPool2d):
    """Max over windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (``F.max_pool3d``).

    >>> import tidu
    >>> pool = tidu.nn.MaxPool3d(2, return_indices=True)
    >>> pool
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(tidu.arange(8.0).reshape(1, 2, 2, 2))
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """

    _fn = staticmethod(ops.max_pool3d)


class AvgPool3d(AvgPool2d):
    """Mean over windows of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (``F.avg_pool3d``).

    >>> import tidu
    >>> pool = tidu.nn.AvgPool3d(2)
    >>> pool
    AvgPool3d(kernel_size=2, stride=2, padding=0)
    >>> pool(tidu.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[3.5000]]]])
    """

    _fn = staticmethod(ops.avg_pool3d)


class AvgPool1d(AvgPool2d):
    """Mean over windows of ``(N, C, L)`` or ``(C, L)`` (``F.avg_pool1d``).

    >>> import tidu
    >>> tidu.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        def single(value: Any) -> tuple:
            return (value,) if isinstance(value, int) else tuple(value)

        super().__init__(single(kernel_size), single(stride if stride is not None else kernel_size), single(padding),
                         ceil_mode, count_include_pad)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, ceil_mode=self.ceil_mode,
                            count_include_pad=self.count_include_pad)


class AdaptiveMaxPool2d(Module):
    """Max over adaptive windows to ``output_size`` (``F.adaptive_max_pool2d``); with
    ``return_indices``, also the flat positions of the maxima.

    >>> import tidu
    >>> tidu.nn.AdaptiveMaxPool2d((2, None))
    AdaptiveMaxPool2d(output_size=(2, None))
    >>> tidu.nn.AdaptiveMaxPool2d(1)(tidu.arange(6.0).reshape(1, 2, 3))
    tensor([[[5.]]])
    """

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    _fn = staticmethod(F.adaptive_max_pool2d)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max over adaptive windows of the last dim to ``output_size`` (``F.adaptive_max_pool1d``).

    >>> import tidu
    >>> tidu.nn.AdaptiveMaxPool1d(2)(tidu.tensor([[1.0, 5.0, 2.0, 0.0, 3.0]]))
    tensor([[5., 3.]])
    """

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Max over adaptive windows of the last three dims to ``output_size`` (``F.adaptive_max_pool3d``).

    >>> import tidu
    >>> tidu.nn.AdaptiveMaxPool3d(1)(tidu.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[7.]]]])
    """

    _fn = staticmethod(F.adaptive_max_pool3d)


class MaxUnpool2d(Module):
    """The inverse of ``MaxPool2d`` given its indices (``F.max_unpool2d``); ``output_size`` in the
    call picks among the sizes the pooling could have come from.

    >>> import tidu
    >>> tidu.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _dims = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = F._unpool_args(kernel_size, stride, padding, self._dims)

    def forward(self, input: Any, indices: Any, output_size: Any = None) -> Any:  # noqa: A002
        return F._max_unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    """The inverse of ``MaxPool1d`` given its indices (``F.max_unpool1d``).

    >>> import tidu
    >>> tidu.nn.MaxUnpool1d(2)(tidu.tensor([[3.0]]), tidu.tensor([[1]]))
    tensor([[0., 3.]])
    """

    _dims = 1


class MaxUnpool3d(MaxUnpool2d):
    """The inverse of ``MaxPool3d`` given its indices (``F.max_unpool3d``).

    >>> import tidu
    >>> tidu.nn.MaxUnpool3d(2)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0))
    """

    _dims = 3


class LPPool2d(Module):
    """Power-average pooling ``(sum of x ** norm_type over the window) ** (1 / norm_type)``
    (``F.lp_pool2d``).

    >>> import tidu
    >>> tidu.nn.LPPool2d(2, 2)
    LPPool2d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    """

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    _fn = staticmethod(F.lp_pool2d)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(LPPool2d):
    """Power-average pooling over the last dim (``F.lp_pool1d``).

    >>> import tidu
    >>> tidu.nn.LPPool1d(1, 2)(tidu.tensor([[1.0, 2.0, 3.0, 4.0]]))
    tensor([[3., 7.]])
    """

    _fn = staticmethod(F.lp_pool1d)


class LPPool3d(LPPool2d):
    """Power-average pooling over the last three dims (``F.lp_pool3d``).

    >>> import tidu
    >>> tidu.nn.LPPool3d(2, (1, 2, 2))(tidu.full((1, 1, 2, 2), 3.0))
    tensor([[[[6.]]]])
    """

    _fn = staticmethod(F.lp_pool3d)


class _FractionalMaxPool(Module):
    _fn: Any

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratios = output_ratio if isinstance(output_ratio, tuple | list) else (output_ratio,)
            if not all(0 < r < 1 for r in ratios):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size, self.output_size, self.output_ratio = kernel_size, output_size, output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """``F.fractional_max_pool2d`` as a module (fresh random spreads each call unless
    ``_random_samples`` is given).

    >>> import tidu
    >>> tidu.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(tidu.ones(1, 2, 10, 10)).shape
    tidu.Size([1, 2, 5, 5])
    """

    _fn = staticmethod(F.fractional_max_pool2d)


class FractionalMaxPool3d(_FractionalMaxPool):
    """``F.fractional_max_pool3d`` as a module."""

    _fn = staticmethod(F.fractional_max_pool3d)
