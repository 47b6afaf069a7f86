"""``tidu.accelerator``: PyTorch's device-generic queries for the machine's accelerator, which
for tidu is its CUDA device (a GPU, or Numba's simulator). Without one, ``current_accelerator()``
is ``None``, ``device_count()`` 0, and the calls that need a device raise PyTorch's error.

>>> import tidu
>>> acc = tidu.accelerator.current_accelerator()
>>> device = acc if acc is not None else tidu.device("cpu")
>>> tidu.zeros(1, device=device).device.type == device.type
True
"""

from __future__ import annotations

from typing import Any

from . import cuda as _cuda
from .core.device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "current_stream", "device_count",
           "empty_cache", "is_available", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_peak_memory_stats", "set_device_idx", "set_device_index",
           "set_stream", "synchronize"]


def is_available() -> bool:
    """Whether tidu has an accelerator (its CUDA device) to run on."""
    return _cuda.is_available()


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device(type='cuda')`` where tidu has a CUDA device, else ``None``."""
    return _device("cuda") if _cuda.is_available() else None


def device_count() -> int:
    """The number of accelerator devices tidu can use (1 or 0)."""
    return _cuda.device_count()


def _check() -> None:
    if not _cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the accelerator in use: 0 (tidu uses one GPU)."""
    _check()
    return _cuda.current_device()


def set_device_index(device: Any) -> None:
    """Select the accelerator: index 0 only (tidu uses one GPU)."""
    _check()
    _cuda.set_device(device)


def current_stream(device: Any = None) -> _cuda.Stream:
    """The accelerator's stream (tidu's one CUDA stream)."""
    _check()
    return _cuda.current_stream(device)


def set_stream(stream: _cuda.Stream) -> None:
    """Select ``stream``: tidu's one CUDA stream is every stream, so nothing changes."""
    _check()


def synchronize(device: Any = None) -> None:
    """Wait for all the accelerator's queued work (``tidu.cuda.synchronize``)."""
    _check()
    _cuda.synchronize(device)


def empty_cache() -> None:
    """``tidu.cuda.empty_cache``."""
    _check()
    _cuda.empty_cache()


def memory_allocated(device_index: Any = None) -> int:
    """``tidu.cuda.memory_allocated``."""
    _check()
    return _cuda.memory_allocated(device_index)


def max_memory_allocated(device_index: Any = None) -> int:
    """``tidu.cuda.max_memory_allocated``."""
    _check()
    return _cuda.max_memory_allocated(device_index)


def memory_reserved(device_index: Any = None) -> int:
    """``tidu.cuda.memory_reserved``."""
    _check()
    return _cuda.memory_reserved(device_index)


def max_memory_reserved(device_index: Any = None) -> int:
    """``tidu.cuda.max_memory_reserved``."""
    _check()
    return _cuda.max_memory_reserved(device_index)


def reset_peak_memory_stats(device_index: Any = None) -> None:
    """``tidu.cuda.reset_peak_memory_stats``."""
    _check()
    _cuda.reset_peak_memory_stats(device_index)


def memory_stats(device_index: Any = None) -> dict[str, int]:
    """``tidu.cuda.memory_stats``."""
    _check()
    return _cuda.memory_stats(device_index)


current_device_idx = current_device_index
set_device_idx = set_device_index
