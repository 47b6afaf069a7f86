"""Padding layers on ``F.pad``: ``ZeroPad1d/2d/3d``, ``ConstantPad1d/2d/3d``, ``ReflectionPad1d/2d/3d``,
``ReplicationPad1d/2d/3d``, ``CircularPad1d/2d/3d``; each 2-D/3-D layer is its 1-D one with ``dims``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module


class _PadNd(Module):
    """``F.pad`` of the last ``dims`` dims with ``mode``; ``padding`` is one size for every side or
    ``(left, right[, top, bottom[, front, back]])``."""

    mode = "constant"
    dims = 1

    def __init__(self, padding: int | tuple[int, ...]) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.dims) if isinstance(padding, int) else tuple(padding)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | tuple[int, ...], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``.

    >>> import tidu
    >>> tidu.nn.ConstantPad1d((1, 0), 9.0)(tidu.tensor([[1.0]]))
    tensor([[9., 1.]])
    """


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``.

    >>> import tidu
    >>> tidu.nn.ConstantPad2d((0, 0, 1, 0), 9.0)(tidu.tensor([[1.0]]))
    tensor([[9.],
            [1.]])
    """

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``.

    >>> import tidu
    >>> tidu.nn.ConstantPad3d((0, 0, 0, 0, 1, 0), 9.0)(tidu.tensor([[[1.0]]]))
    tensor([[[9.]],
    <BLANKLINE>
            [[1.]]])
    """

    dims = 3


class ZeroPad1d(_ConstantPadNd):
    """Pad the last dim with zeros.

    >>> import tidu
    >>> tidu.nn.ZeroPad1d(1)(tidu.tensor([[1.0]]))
    tensor([[0., 1., 0.]])
    """

    def __init__(self, padding: int | tuple[int, ...]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    """Pad the last two dims with zeros.

    >>> import tidu
    >>> tidu.nn.ZeroPad2d((1, 0, 0, 0))(tidu.tensor([[1.0]]))
    tensor([[0., 1.]])
    """

    dims = 2


class ZeroPad3d(ZeroPad1d):
    """Pad the last three dims with zeros.

    >>> import tidu
    >>> tidu.nn.ZeroPad3d(1)(tidu.ones(1, 1, 1, 1)).shape
    tidu.Size([1, 3, 3, 3])
    """

    dims = 3


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection about the edge values.

    >>> import tidu
    >>> tidu.nn.ReflectionPad1d(2)(tidu.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 2., 1., 2., 3., 2., 1.]])
    """

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last two dims with their reflection about the edge values.

    >>> import tidu
    >>> tidu.nn.ReflectionPad2d((0, 0, 1, 0))(tidu.tensor([[1.0], [2.0]])[None]).flatten()
    tensor([2., 1., 2.])
    """

    dims = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last three dims with their reflection about the edge values.

    >>> import tidu
    >>> tidu.nn.ReflectionPad3d((0, 0, 0, 0, 1, 1))(tidu.tensor([[[1.0]], [[2.0]]])[None]).flatten()
    tensor([2., 1., 2., 1.])
    """

    dims = 3


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values.

    >>> import tidu
    >>> tidu.nn.ReplicationPad1d((2, 1))(tidu.tensor([[1.0, 2.0]]))
    tensor([[1., 1., 1., 2., 2.]])
    """

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last two dims by repeating their edge values.

    >>> import tidu
    >>> tidu.nn.ReplicationPad2d((0, 0, 0, 1))(tidu.tensor([[1.0, 2.0]])[None])
    tensor([[[1., 2.],
             [1., 2.]]])
    """

    dims = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last three dims by repeating their edge values.

    >>> import tidu
    >>> tidu.nn.ReplicationPad3d((0, 0, 0, 0, 0, 2))(tidu.tensor([[[1.0]]])[None]).flatten()
    tensor([1., 1., 1.])
    """

    dims = 3


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping it around (``F.pad(..., mode='circular')``) of ``(N, C, L)`` or ``(C, L)``.

    >>> import tidu
    >>> tidu.nn.CircularPad1d((1, 2))(tidu.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 1., 2., 3., 1., 2.]])
    """

    mode = "circular"

    def forward(self, input: Any) -> Any:  # noqa: A002
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


class CircularPad2d(CircularPad1d):
    """Pad the last two dims by wrapping them around, of ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> import tidu
    >>> tidu.nn.CircularPad2d((0, 0, 1, 0))(tidu.tensor([[[1.0], [2.0]]])).flatten()
    tensor([2., 1., 2.])
    """

    dims = 2


class CircularPad3d(CircularPad1d):
    """Pad the last three dims by wrapping them around, of ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    >>> import tidu
    >>> tidu.nn.CircularPad3d(1)
    CircularPad3d((1, 1, 1, 1, 1, 1))
    """

    dims = 3
