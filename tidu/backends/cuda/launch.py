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
            nslots = sum(n for _, n in codes)
            self.buffer = ctypes.create_string_buffer(max(8 * nslots, 8))
            base = ctypes.addressof(self.buffer)
            self.params = (ctypes.c_void_p * max(nslots, 1))(*[base + 8 * i for i in range(nslots)])
            self.pack = _packer(argtypes, "=" + "".join(c for c, _ in codes), self.buffer)
            # a function object of its own, without argtypes: arguments go as prepared ctypes values
            self.launch_fn = driver.library()["cuLaunchKernel"]
            self.launch_fn.restype = ctypes.c_int
            self.handle_arg = ctypes.c_void_p(self.handle)
            self.stream_arg = ctypes.c_void_p(runtime().stream)
        self._ready = True

    def __call__(self, n: int, *args: Any) -> None:
        self.launch(min(max((n + THREADS - 1) // THREADS, 1), MAX_BLOCKS), THREADS, *args)

    def launch(self, blocks: int, threads: int, *args: Any, shared_bytes: int = 0) -> None:
        if not self._ready:
            self._prepare()
        if self.simulated:
            self.dispatcher[SIM_BLOCKS, min(threads, self.sim_threads)](*[_sim_arg(a) for a in args])
            return
        self.pack(*args)
        status = self.launch_fn(self.handle_arg, blocks, 1, 1, threads, 1, 1, shared_bytes, self.stream_arg,
                                self.params, None)
        if status:
            driver.check("cuLaunchKernel", status)


def _packer(argtypes: list[Any], layout: str, buffer: Any) -> Callable[..., None]:
    """``pack(*args)`` writing the kernel's parameters into ``buffer``: one generated function
    per kernel, so a launch packs without a loop over its arguments. A scalar is its value; an
    array is meminfo, parent, size, itemsize, data pointer, shape and strides (numba's ABI),
    a 1-D parameter taking any C-contiguous array flat."""
    from numba.np.numpy_support import as_dtype

    names, fields = [], []
    for k, t in enumerate(argtypes):
        a = f"a{k}"
        names.append(a)
        ndim = getattr(t, "ndim", None)
        if ndim is None:
            fields.append(a)
            continue
        item = as_dtype(t.dtype).itemsize
        if ndim == 1:  # any C-contiguous array, flat; a 1-D one with its own stride
            fields += ["0", "0", f"{a}.size", str(item), f"{a}.ptr", f"{a}.size",
                       f"({a}.strides[0] if len({a}.shape) == 1 else {item})"]
        else:
            fields += ["0", "0", f"{a}.size", str(item), f"{a}.ptr", *(f"{a}.shape[{d}]" for d in range(ndim)),
                       *(f"{a}.strides[{d}]" for d in range(ndim))]
    source = f"def pack({', '.join(names)}):\n    pack_into(buffer, 0, {', '.join(fields)})\n"
    namespace: dict[str, Any] = {"pack_into": struct.Struct(layout).pack_into, "buffer": buffer}
    exec(compile(source, "<tidu kernel parameters>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["pack"]
