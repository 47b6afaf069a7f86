"""``PixelShuffle``, ``PixelUnshuffle`` and ``ChannelShuffle``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)`` (``F.pixel_shuffle``).

    >>> import tidu
    >>> tidu.nn.PixelShuffle(2)(tidu.ones(1, 8, 3, 3)).shape
    tidu.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)`` (``F.pixel_unshuffle``).

    >>> import tidu
    >>> tidu.nn.PixelUnshuffle(2)(tidu.ones(1, 2, 6, 6)).shape
    tidu.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleave ``groups`` groups of channels (``F.channel_shuffle``).

    >>> import tidu
    >>> tidu.nn.ChannelShuffle(2)(tidu.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
