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

from .backends.cuda import runtime as _runtime
from .backends.cuda.driver import CudaError, OutOfMemoryError

__all__ = ["CudaError", "OutOfMemoryError", "current_device", "device_count", "empty_cache", "get_device_name",
           "is_available", "manual_seed", "manual_seed_all", "synchronize"]


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
