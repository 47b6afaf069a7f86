"""``tidu.cpu``: ``tidu.cuda``'s device queries for the CPU, so device-agnostic scripts
(``tidu.get_device_module(device).synchronize()``) run on either device.

>>> import tidu
>>> tidu.cpu.is_available(), tidu.cpu.device_count(), tidu.cpu.current_device()
(True, 1, 'cpu')
>>> tidu.cpu.synchronize()
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from . import streams as _streams

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream", "device_count", "is_available",
           "is_initialized", "set_device", "stream", "synchronize"]


def is_available() -> bool:
    """Always True."""
    return True


def is_initialized() -> bool:
    """Always True."""
    return True


def device_count() -> int:
    """The number of CPU devices (not cores): always 1."""
    return 1


def current_device() -> str:
    """Always ``'cpu'``."""
    return "cpu"


def set_device(device: Any) -> None:
    """Select the CPU device: there is one, so this does nothing (as PyTorch's)."""


def synchronize(device: Any = None) -> None:
    """Run the elementwise work tidu holds back to fuse (``tidu/core/deferred.py``): afterwards
    every op called so far has run."""
    from .core import deferred

    deferred.flush()


class Stream(_streams.Stream):
    """The CPU's one queue of work (``tidu.Stream("cpu")``)."""

    def __init__(self, priority: int = -1) -> None:
        super().__init__("cpu", priority)


class Event(_streams.Event):
    """A CPU event: the host's clock once the work queued before it has run (``tidu.Event("cpu")``)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False) -> None:
        super().__init__("cpu", enable_timing=enable_timing, blocking=blocking)


_current = [Stream()]


def current_stream(device: Any = None) -> Stream:
    """The stream selected by ``with tidu.cpu.stream(s)``, else the default one."""
    return _current[-1]


class StreamContext(AbstractContextManager):
    """Select ``stream`` inside the block (``None``: leave the selection as it is)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> None:
        if self.stream is not None:
            _current.append(self.stream)

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            _current.pop()


def stream(stream: Stream | None) -> StreamContext:
    """``StreamContext(stream)``.

    >>> import tidu
    >>> s = tidu.cpu.Stream()
    >>> with tidu.cpu.stream(s):
    ...     tidu.cpu.current_stream() is s
    True
    """
    return StreamContext(stream)


class _Amp:
    """``tidu.cpu.amp``: PyTorch's older names for ``tidu.amp``'s ``autocast`` (on ``cpu``) and
    ``GradScaler``, with PyTorch's deprecation warning."""

    @staticmethod
    def autocast(enabled: bool = True, dtype: Any = None, cache_enabled: bool | None = None) -> Any:
        import warnings

        from .amp import autocast

        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        return autocast("cpu", dtype, enabled, cache_enabled)

    @staticmethod
    def GradScaler(*args: Any, **kwargs: Any) -> Any:  # noqa: N802 - PyTorch's name
        from .amp import GradScaler

        return GradScaler("cpu", *args, **kwargs)


amp = _Amp()
