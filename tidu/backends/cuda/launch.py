"""Launching numba-compiled kernels through ``cuLaunchKernel`` with prepacked arguments.

numba's dispatcher costs tens of microseconds a launch (typing, argument conversion);
``Kernel`` compiles once per signature and keeps a parameter buffer whose layout follows
numba's ABI (an array is meminfo, parent, size, itemsize, data pointer, shape, strides;
a scalar is its C value), so a launch is one ``struct.pack_into`` and one driver call.
Under the simulator, kernels run through numba's own launch path.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable
from typing import Any

from . import driver
from .memory import CudaArray
from .runtime import runtime

_SCALAR_CODES = {
    "int64": "q", "uint64": "Q", "int32": "i4x", "uint32": "I4x", "int8": "b7x", "uint8": "B7x",
    "float64": "d", "float32": "f4x", "bool": "?7x", "boolean": "?7x",
}
THREADS = 256
MAX_BLOCKS = 16384  # kernels loop grid-stride, so a capped grid still covers any size
# The simulator runs every thread as a Python thread: one block of one thread keeps it fast,
# and kernels written grid-stride (and block-size agnostic) compute the same result.
SIM_BLOCKS, SIM_THREADS = 1, 1


def _slot_codes(argtype: Any) -> tuple[str, int]:
    """struct codes (8-byte slots) and the slot count of one numba argument type."""
    ndim = getattr(argtype, "ndim", None)
    if ndim is not None:  # an Array: meminfo, parent, size, itemsize, data, shape..., strides...
        n = 5 + 2 * ndim
        return "q" * n, n
    code = _SCALAR_CODES.get(str(argtype))
    if code is None:
        raise TypeError(f"tidu's CUDA launcher has no parameter layout for numba type {argtype}")
    return code, 1


def _sim_arg(a: Any) -> Any:
    if not isinstance(a, CudaArray):
        return a
    return a.host if a.ndim == 1 or not a.is_c_contiguous else a.host.reshape(-1)


class Kernel:
    """A ``numba.cuda.jit`` kernel for one signature, launched by tidu.

    ``kernel(n, *args)`` launches enough blocks of ``THREADS`` threads to cover ``n``
    elements (at most ``MAX_BLOCKS``: kernels loop grid-stride); ``kernel.launch(blocks,
    threads, *args)`` picks the shape itself. ``CudaArray`` arguments are passed by pointer,
    numbers by value. Under the simulator every launch is one block of one thread unless
    a kernel asks for more (``sim_threads``), so kernels must not assume a block size.
    """

    def __init__(self, fn: Callable[..., Any], signature: str, sim_threads: int = SIM_THREADS) -> None:
        self.fn = fn
        self.signature = signature
        self.sim_threads = sim_threads
        self._ready = False

    def _prepare(self) -> None:
        from numba import cuda

        self.dispatcher = cuda.jit(self.signature)(self.fn) if not hasattr(self.fn, "compile") else self.fn
        self.simulated = runtime().simulated
        if not self.simulated:
            from .numba_bridge import check_version, compile_kernel

            check_version()
            self.handle, argtypes = compile_kernel(self.dispatcher, self.signature)
            codes = [_slot_codes(t) for t in argtypes]
            # 0: a scalar; 1: a 1-D array (any C-contiguous array is passed flat); 2: n-D
            self.kinds = [0 if getattr(t, "ndim", None) is None else (1 if t.ndim == 1 else 2) for t in argtypes]
            nslots = sum(n for _, n in codes)
            self.packer = struct.Struct("=" + "".join(c for c, _ in codes))
            self.buffer = ctypes.create_string_buffer(max(8 * nslots, 8))
            base = ctypes.addressof(self.buffer)
            self.params = (ctypes.c_void_p * max(nslots, 1))(*[base + 8 * i for i in range(nslots)])
            self.launch_fn = driver.library().cuLaunchKernel
            self.stream = runtime().stream
        self._ready = True

    def __call__(self, n: int, *args: Any) -> None:
        self.launch(min(max((n + THREADS - 1) // THREADS, 1), MAX_BLOCKS), THREADS, *args)

    def launch(self, blocks: int, threads: int, *args: Any, shared_bytes: int = 0) -> None:
        if not self._ready:
            self._prepare()
        if self.simulated:
            self.dispatcher[SIM_BLOCKS, min(threads, self.sim_threads)](*[_sim_arg(a) for a in args])
            return
        values: list[Any] = []
        for a, kind in zip(args, self.kinds):
            if kind == 0:
                values.append(a)
            elif kind == 1:
                item = a.dtype.itemsize
                values += (0, 0, a.size, item, a.ptr, a.size, item if a.ndim != 1 else a.strides[0])
            else:
                values += (0, 0, a.size, a.dtype.itemsize, a.ptr, *a.shape, *a.strides)
        self.packer.pack_into(self.buffer, 0, *values)
        status = self.launch_fn(self.handle, blocks, 1, 1, threads, 1, 1, shared_bytes, self.stream, self.params, None)
        if status:
            driver.check("cuLaunchKernel", status)
