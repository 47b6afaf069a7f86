"""PyTorch's memory formats and layouts: the objects scripts pass (``tidu.channels_last``,
``tidu.strided``) and the checks PyTorch makes of them.

tidu stores every tensor row-major (``strided``, ``contiguous_format``). A memory format is
accepted wherever PyTorch takes one and checked as PyTorch checks it (its type, and the rank
``channels_last`` and ``channels_last_3d`` need), but the result stays row-major: the values are
the same, only the strides differ from PyTorch's (docs/guides/pytorch-differences.md).
``is_contiguous(memory_format=...)`` answers for the strides the tensor really has.

>>> import tidu
>>> tidu.channels_last, type(tidu.channels_last) is tidu.memory_format, tidu.zeros(1).layout
(tidu.channels_last, True, tidu.strided)
"""

from __future__ import annotations

from typing import Any


class memory_format:  # noqa: N801 - PyTorch's name
    """How a tensor's elements are ordered in memory (``tidu.contiguous_format``,
    ``channels_last``, ``channels_last_3d``, ``preserve_format``); compared by identity."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"tidu.{self.name}"

    def __reduce__(self) -> str:  # pickles as the module-level singleton
        return self.name


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor is stored: tidu has only ``tidu.strided`` (dense, with strides)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"tidu.{self.name}"

    def __reduce__(self) -> str:
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
strided = layout("strided")

# the rank each channels-last format needs, and the order of its dims from the fastest
_CHANNELS_LAST = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}


def as_memory_format(fmt: Any, op: str) -> memory_format:
    """``fmt`` if it is a memory format, else PyTorch's ``TypeError`` naming ``op``."""
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}(): argument 'memory_format' must be torch.memory_format, not {type(fmt).__name__}")
    return fmt


def check_memory_format(fmt: Any, ndim: int, op: str) -> memory_format:
    """``fmt`` if it is a memory format a tensor of ``ndim`` dims can take, else PyTorch's error;
    ``None`` (an optional argument left out) is ``preserve_format``.

    >>> from tidu.core.formats import channels_last, check_memory_format
    >>> check_memory_format(channels_last, 3, "contiguous")
    Traceback (most recent call last):
    RuntimeError: required rank 4 tensor to use channels_last format
    """
    if fmt is None:
        return preserve_format
    if as_memory_format(fmt, op) in _CHANNELS_LAST and ndim != _CHANNELS_LAST[fmt][0]:
        raise RuntimeError(f"required rank {_CHANNELS_LAST[fmt][0]} tensor to use {fmt.name} format")
    return fmt


def check_layout(value: Any, op: str) -> None:
    """PyTorch's ``TypeError`` for a ``layout`` argument that is not a layout (``None`` passes)."""
    if value is not None and not isinstance(value, layout):
        raise TypeError(f"{op}(): argument 'layout' must be torch.layout, not {type(value).__name__}")


def is_contiguous_as(shape: tuple[int, ...], strides: tuple[int, ...], fmt: memory_format) -> bool:
    """Whether ``strides`` (in elements) lay out ``shape`` densely in the order ``fmt`` names
    (PyTorch's rule: dims of size 1 may have any stride). ``contiguous_format`` and
    ``preserve_format`` ask for row-major order.

    >>> from tidu.core.formats import channels_last, is_contiguous_as
    >>> is_contiguous_as((2, 3, 4, 5), (60, 1, 15, 3), channels_last), is_contiguous_as((2, 3, 4, 5), (60, 20, 5, 1), channels_last)
    (True, False)
    """
    if fmt in _CHANNELS_LAST:
        rank, order = _CHANNELS_LAST[fmt]
        if len(shape) != rank:
            return False
    else:
        order = tuple(range(len(shape) - 1, -1, -1))
    if 0 in shape:
        return True
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True
