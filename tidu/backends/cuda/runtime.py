"""tidu's CUDA runtime: the context (numba's primary context), tidu's stream and memory pool.

Real GPU: kernels launch on one non-blocking stream owned by tidu, and memory comes from
the device's stream-ordered pool (``cuMemAllocAsync``), kept cached (release threshold
at its maximum) so steady-state allocation never reaches the OS. Under Numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, no GPU) the same code runs through numba's own
launch path on host memory.
"""

from __future__ import annotations

import ctypes
import functools
import os

from . import driver


def simulated() -> bool:
    """Whether numba.cuda runs its simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def is_available() -> bool:
    """Whether tidu can run on a CUDA device: a GPU with its driver, or the simulator."""
    return simulated() or driver.device_count() > 0


class Runtime:
    """The process's CUDA state; ``runtime()`` makes it on first use."""

    def __init__(self) -> None:
        self.simulated = simulated()
        self.stream = 0
        if self.simulated:
            return
        if driver.device_count() == 0:
            raise RuntimeError(
                "Found no NVIDIA driver on your system (or no CUDA device): tidu's 'cuda' device needs one; "
                "set NUMBA_ENABLE_CUDASIM=1 to run the CUDA code paths on Numba's simulator"
            )
        from numba import cuda

        cuda.current_context()  # numba's primary context, current on this thread from now on
        stream = ctypes.c_void_p()
        driver.call("cuStreamCreate", ctypes.byref(stream), driver.CU_STREAM_NON_BLOCKING)
        self.stream = stream.value or 0
        pool = ctypes.c_void_p()
        driver.call("cuDeviceGetDefaultMemPool", ctypes.byref(pool), 0)
        threshold = ctypes.c_uint64(2**64 - 1)
        driver.call(
            "cuMemPoolSetAttribute", pool, driver.CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, ctypes.byref(threshold)
        )

    def synchronize(self) -> None:
        if not self.simulated:
            driver.call("cuStreamSynchronize", self.stream)


@functools.lru_cache(maxsize=1)
def runtime() -> Runtime:
    return Runtime()


def synchronize() -> None:
    """Wait for all work tidu queued on the device (``tidu.cuda.synchronize``)."""
    runtime().synchronize()
