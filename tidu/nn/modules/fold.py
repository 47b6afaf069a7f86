"""``Unfold`` and ``Fold``: PyTorch's im2col and col2im layers on ``F.unfold``/``F.fold``."""

from __future__ import annotations

from typing import Any

from .. import functional as F  # noqa: N812 - PyTorch's name
from .module import Module


class Unfold(Module):
    """Sliding windows as columns: (N, C, H, W) -> (N, C * kH * kW, L).

    >>> import tidu
    >>> tidu.nn.Unfold(2, stride=2)
    Unfold(kernel_size=2, dilation=1, padding=0, stride=2)
    >>> tidu.nn.Unfold(2)(tidu.ones(1, 3, 4, 4)).shape
    tidu.Size([1, 12, 9])
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    """Columns summed back into an image: (N, C * kH * kW, L) -> (N, C, *output_size).

    >>> import tidu
    >>> tidu.nn.Fold((4, 4), 2)
    Fold(output_size=(4, 4), kernel_size=2, dilation=1, padding=0, stride=1)
    >>> tidu.nn.Fold((4, 4), 2)(tidu.ones(1, 12, 9)).shape
    tidu.Size([1, 3, 4, 4])
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()
