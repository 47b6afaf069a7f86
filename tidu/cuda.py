"""``tidu.cuda``: PyTorch's device queries and controls for tidu's CUDA device.

Tensors live on ``device='cuda'`` when a GPU and its driver are present (with the
``tidu[cuda]`` extra installed), or when ``NUMBA_ENABLE_CUDASIM=1`` runs the same CUDA
code on Numba's simulator (slow; for tests). Elsewhere ``is_available()`` is False and
scripts that test it run on the CPU, as with a CPU build of PyTorch.

>>> import tidu
>>> device = "cuda" if tidu.cuda.is_available() else "cpu"
>>> tidu.zeros(2, device=device).device.type == device
True
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from . import streams as _streams
from .backends.cuda import runtime as _runtime
from .backends.cuda.driver import CudaError, OutOfMemoryError

__all__ = ["CudaError", "Event", "OutOfMemoryError", "Stream", "current_device", "current_stream", "default_stream",
           "device_count", "empty_cache", "get_device_capability", "get_device_name", "get_device_properties",
           "get_rng_state", "init", "initial_seed", "is_available", "is_initialized", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_rng_state", "stream",
           "synchronize"]


def is_available() -> bool:
    """Whether tensors can be placed on ``device='cuda'``."""
    return _runtime.is_available()


def device_count() -> int:
    """The number of CUDA devices tensors can use (tidu uses one GPU, ``cuda:0``)."""
    return 1 if is_available() else 0


def current_device() -> int:
    return 0


def get_device_name(device: object = None) -> str:
    """The GPU's name (``"Numba CUDA simulator"`` under the simulator)."""
    if _runtime.simulated():
        return "Numba CUDA simulator"
    from numba import cuda

    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators. CUDA tensors draw their random numbers from tidu's one
    generator (``tidu.manual_seed``), so this is a no-op that scripts may call freely."""


manual_seed_all = manual_seed


def seed() -> None:
    """Seed the CUDA generators from fresh entropy: a no-op, as ``manual_seed`` (CUDA tensors draw
    from tidu's one generator)."""


seed_all = seed


def initial_seed() -> int:
    """The seed of the generator CUDA tensors draw from (tidu's one generator)."""
    init()
    from .ops.creation import initial_seed as _initial

    return _initial()


def get_rng_state(device: Any = "cuda") -> dict:
    """The state of the generator CUDA tensors draw from (tidu's one generator: ``tidu.get_rng_state``)."""
    from .compat import get_rng_state as _get

    return _get()


def set_rng_state(new_state: dict, device: Any = "cuda") -> None:
    from .compat import set_rng_state as _set

    _set(new_state)


def is_initialized() -> bool:
    """Whether tidu has set up its CUDA state (it does on the first CUDA tensor, or ``init()``)."""
    return _runtime.runtime.cache_info().currsize > 0


def init() -> None:
    """Set up tidu's CUDA state now; raises where there is no device, as PyTorch's ``init`` does."""
    _runtime.runtime()


def _index(device: Any) -> int:
    """The GPU index ``device`` names (``None``, an int, ``'cuda'``, ``'cuda:0'``, a ``tidu.device``);
    tidu uses one GPU, index 0."""
    if device is None:
        return 0
    if isinstance(device, str):
        from .core.device import as_device

        device = as_device(device)
    index = device if isinstance(device, int) else (getattr(device, "index", None) or 0)
    if index != 0 or (not isinstance(device, int) and getattr(device, "type", "cuda") != "cuda"):
        raise ValueError(f"Expected a cuda device with index 0 (tidu uses one GPU), but got: {device}")
    return index


def set_device(device: Any) -> None:
    """Select the GPU to use: tidu uses one, ``cuda:0`` (another index raises)."""
    _index(device)


# --- memory: tidu's pool (tidu/backends/cuda/memory.py) ------------------------------------------------


def _counters() -> Any:
    from .backends.cuda.memory import COUNT

    return COUNT


def memory_allocated(device: Any = None) -> int:
    """Bytes of device memory held by live tidu tensors (their pool blocks, 512-byte rounded).

    >>> import tidu
    >>> tidu.cuda.memory_allocated() >= 0
    True
    """
    return _counters().allocated


def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated`` since the start or ``reset_peak_memory_stats``."""
    return _counters().peak


def memory_reserved(device: Any = None) -> int:
    """Bytes tidu holds from the driver: the live blocks and the cached free ones."""
    return _counters().reserved


def max_memory_reserved(device: Any = None) -> int:
    """The peak of ``memory_reserved`` since the start or ``reset_peak_memory_stats``."""
    return _counters().peak_reserved


def reset_peak_memory_stats(device: Any = None) -> None:
    """Start the peaks (``max_memory_allocated``, ``max_memory_reserved``) again from now."""
    _counters().reset_peaks()


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch's memory counters that tidu's pool keeps (an empty dict before CUDA is set up, as
    PyTorch's): the current and peak bytes and the current number of the blocks live tensors hold,
    the current, peak, total and freed bytes reserved from the driver, and the allocation retries
    and out-of-memory errors.

    >>> import tidu
    >>> stats = tidu.cuda.memory_stats()
    >>> not stats or stats["allocated_bytes.all.current"] == tidu.cuda.memory_allocated()
    True
    """
    if not is_initialized():
        return {}
    c = _counters()
    out = {"allocated_bytes.all.current": c.allocated, "allocated_bytes.all.peak": c.peak,
           "allocation.all.current": c.live_blocks(), "reserved_bytes.all.current": c.reserved,
           "reserved_bytes.all.peak": c.peak_reserved, "reserved_bytes.all.allocated": c.reserved_total,
           "reserved_bytes.all.freed": c.reserved_total - c.reserved}
    out.update({"num_alloc_retries": c.retries, "num_ooms": c.ooms, "num_device_alloc": c.device_allocs,
                "num_device_free": c.device_frees})
    return dict(sorted(out.items()))


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes of the GPU's memory (of the host's, under the simulator)."""
    _index(device)
    init()
    if _runtime.simulated():
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * size, pages * size
    import ctypes

    from .backends.cuda import driver

    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    driver.call("cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
    return free.value, total.value


class _CudaDeviceProperties:
    """``get_device_properties``' answer: ``name``, ``major``, ``minor``, ``total_memory`` (bytes),
    ``multi_processor_count``."""

    def __init__(self, name: str, major: int, minor: int, total_memory: int, multi_processor_count: int) -> None:
        self.name, self.major, self.minor = name, major, minor
        self.total_memory, self.multi_processor_count = total_memory, multi_processor_count

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The GPU's name, compute capability, memory and multiprocessor count (the simulator reports
    its own name and capability, the host's memory and one multiprocessor)."""
    _index(device)
    init()
    from numba import cuda

    gpu = cuda.current_context().device
    major, minor = gpu.compute_capability
    if _runtime.simulated():
        return _CudaDeviceProperties(get_device_name(), major, minor, mem_get_info()[1], 1)
    return _CudaDeviceProperties(get_device_name(), major, minor, mem_get_info()[1],
                                 int(gpu.MULTIPROCESSOR_COUNT))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """The GPU's compute capability, ``(major, minor)``."""
    props = get_device_properties(device)
    return props.major, props.minor


# --- streams: tidu queues all work on one stream of its own --------------------------------------------


class Stream(_streams.Stream):
    """tidu's CUDA stream. tidu queues all its work, in order, on one stream, so every ``Stream``
    is that one: ``with tidu.cuda.stream(s)`` changes nothing, ``wait_stream`` has nothing to wait
    for, and ``synchronize`` waits for all queued work."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        _index(device)
        super().__init__("cuda", priority)
        self.cuda_stream = _runtime.runtime().stream

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<tidu.cuda.Stream device=cuda:0 cuda_stream=0x{self.cuda_stream:x}>"


class Event(_streams.Event):
    """A CUDA event on tidu's stream (``numba.cuda.event``): ``record``, ``query``,
    ``synchronize``, ``wait`` and ``elapsed_time`` in milliseconds, as PyTorch's. Under the
    simulator, which runs each kernel to its end at launch, an event keeps the host's clock.

    >>> import tidu
    >>> if tidu.cuda.is_available():
    ...     start, end = tidu.cuda.Event(enable_timing=True), tidu.cuda.Event(enable_timing=True)
    ...     start.record(); y = tidu.ones(64, device="cuda") * 2; end.record()
    ...     end.synchronize()
    ...     assert start.elapsed_time(end) >= 0.0
    """

    _error = RuntimeError

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        super().__init__("cuda", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


def current_stream(device: Any = None) -> Stream:
    return Stream(device)


def default_stream(device: Any = None) -> Stream:
    return Stream(device)


@contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    """Queue the work inside on ``stream``: tidu's one stream, so it changes nothing."""
    yield


def synchronize(device: object = None) -> None:
    """Wait for all work tidu queued on the GPU (returns at once when there is no GPU);
    deferred elementwise work (tidu/core/deferred.py) is launched first."""
    from .core import deferred

    deferred.flush()
    if is_available():
        _runtime.synchronize()


def empty_cache() -> None:
    """Return the device memory tidu keeps cached for reuse to the driver's pool."""
    if is_available() and not _runtime.simulated():
        from .backends.cuda.memory import empty_cache as _empty

        _empty()


class _Amp:
    """``tidu.cuda.amp``: PyTorch's older names for ``tidu.amp``'s ``autocast`` (on ``cuda``) and
    ``GradScaler``."""

    @staticmethod
    def autocast(enabled: bool = True, dtype: object = None, cache_enabled: bool | None = None) -> object:
        from .amp import autocast

        return autocast("cuda", dtype, enabled, cache_enabled)

    @staticmethod
    def GradScaler(*args: object, **kwargs: object) -> object:  # noqa: N802 - PyTorch's name
        from .amp import GradScaler

        return GradScaler("cuda", *args, **kwargs)


amp = _Amp()


from .legacy import CUDA_TYPES as _LEGACY_TYPES  # noqa: E402

globals().update(_LEGACY_TYPES)  # tidu.cuda.FloatTensor, ...: PyTorch's legacy CUDA tensor types
__all__ += list(_LEGACY_TYPES)
