"""Launching numba-compiled kernels through ``cuLaunchKernel`` with prepacked arguments.

numba's dispatcher costs tens of microseconds a launch (typing, argument conversion);
``Kernel`` compiles once per signature and keeps a parameter buffer whose layout follows
numba's ABI (an array is meminfo, parent, size, itemsize, data pointer, shape, strides;
a scalar is its C value), so a launch is one generated function: one ``struct.pack_into``
and one driver call. The driver call itself is a small Numba-compiled function calling
``cuLaunchKernel`` (a microsecond less than a ctypes call with eleven arguments).
``Kernel.fixed`` prepares a launch whose sizes, strides and scalars never change: only the
arrays' pointers are packed per call (the eager elementwise ops, a fused group's repeated
launch). Under the simulator, kernels run through numba's own launch path.
"""

from __future__ import annotations

import ctypes
import functools
import math
import struct
import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import driver
from .memory import CudaArray, contiguous_strides
from .runtime import runtime

_SCALAR_CODES = {
    "int64": "q", "uint64": "Q", "int32": "i4x", "uint32": "I4x", "int16": "h6x", "uint16": "H6x", "int8": "b7x",
    "uint8": "B7x",
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


class _DeviceStores(np.ndarray):
    """A simulated kernel's integer array: a store converts as the device's does (C's cast: an
    int64 sum stored into int16 wraps, as does 254 into int8), where numpy's item assignment
    refuses a number out of the dtype's range."""

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
            value = np.array(value).astype(self.dtype)
        super().__setitem__(index, value)


def _sim_arg(a: Any) -> Any:
    if not isinstance(a, CudaArray):
        return a
    host = a.host if a.ndim == 1 or not a.is_c_contiguous else a.host.reshape(-1)
    return host.view(_DeviceStores) if host.dtype.kind in "iu" else host


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
        if self.simulated:
            self._grid, self._shaped = self._simulated()
        else:
            from .numba_bridge import check_version, compile_kernel

            check_version()
            self.handle, self.argtypes = compile_kernel(self.dispatcher, self.signature)
            self._grid, self._shaped, self.params = _launchers(self.argtypes, self.handle, runtime().stream)
        self._ready = True

    def __call__(self, n: int, *args: Any) -> None:
        if not self._ready:
            self._prepare()
        self._grid(n, *args)

    def grid(self) -> Callable[..., None]:
        """What ``kernel(n, *args)`` calls, compiled now: a launch without ``__call__``'s frame, for
        the per-op paths that keep it."""
        if not self._ready:
            self._prepare()
        return self._grid

    def fixed(self, n: int, *template: Any) -> Callable[..., None]:
        """``kernel(n, *args)`` for arguments of ``template``'s layouts and values, prepared once:
        the function returned takes only the arrays (in ``template``'s order, each of its
        template's shape and strides) and packs only their pointers; the scalars, shapes and
        strides stay packed in a buffer of its own. A template array needs ``shape``,
        ``strides`` and ``size`` (``dense_like``)."""
        return self.fixed_shaped(_blocks(n), THREADS, *template)

    def fixed_shaped(self, blocks: int, threads: int, *template: Any) -> Callable[..., None]:
        """``kernel.launch(blocks, threads, *args)`` prepared once, as ``fixed`` prepares
        ``kernel(n, *args)``: the function returned takes only the arrays."""
        if not self._ready:
            self._prepare()
        arrays = [k for k, a in enumerate(template) if hasattr(a, "strides")]
        if self.simulated:
            shaped = self._shaped

            def simulated(*given: Any) -> None:
                args = list(template)
                for k, a in zip(arrays, given):
                    args[k] = a
                shaped(blocks, threads, 0, *args)

            return simulated
        return _fixed_launcher(self.argtypes, self.handle, runtime().stream, blocks, template, arrays, threads)

    def launch(self, blocks: int, threads: int, *args: Any, shared_bytes: int = 0) -> None:
        if not self._ready:
            self._prepare()
        self._shaped(blocks, threads, shared_bytes, *args)

    def _simulated(self) -> tuple[Callable[..., None], Callable[..., None]]:
        """The simulator's ``grid`` and ``shaped``: numba's own launch path."""

        def shaped(blocks: int, threads: int, shared_bytes: int, *args: Any) -> None:
            self.dispatcher[SIM_BLOCKS, min(threads, self.sim_threads)](*[_sim_arg(a) for a in args])

        def grid(n: int, *args: Any) -> None:
            shaped(SIM_BLOCKS, THREADS, 0, *args)

        return grid, shaped


@functools.lru_cache(maxsize=1)
def _driver_launch() -> Callable[..., int]:
    """``launch(function, blocks, threads, shared_bytes, stream, params)``: ``cuLaunchKernel`` on a
    1-D grid, called from a Numba-compiled function: its compiled entry for six integers, which
    a call reaches without the dispatcher's typing of its arguments (0.3 µs of a 4.5 µs launch on
    an H200's host). Not cached on disk: it calls this process's driver at its address."""
    from numba import njit, types

    u64, u32 = ctypes.c_uint64, ctypes.c_uint
    proto = ctypes.CFUNCTYPE(ctypes.c_int, u64, u32, u32, u32, u32, u32, u32, u32, u64, u64, u64)
    cu_launch_kernel = proto(ctypes.cast(driver.library().cuLaunchKernel, ctypes.c_void_p).value)

    @njit
    def launch(function, blocks, threads, shared_bytes, stream, params):  # noqa: ANN001, ANN202
        return cu_launch_kernel(function, blocks, 1, 1, threads, 1, 1, shared_bytes, stream, params, 0)

    return launch.compile((types.int64,) * 6)


def _launchers(argtypes: list[Any], handle: int, stream: int) -> tuple[Callable[..., None], Callable[..., None], int]:
    """``grid(n, *args)`` (enough ``THREADS``-thread blocks to cover ``n``, at most ``MAX_BLOCKS``)
    and ``shaped(blocks, threads, shared_bytes, *args)``: each packs the kernel's parameters
    into one buffer and launches, as one generated function (no loop over the arguments).
    Third: the address of the parameter pointers (``cuLaunchKernel``'s ``kernelParams``)."""
    codes = [_slot_codes(t) for t in argtypes]
    nslots = sum(n for _, n in codes)
    buffer = ctypes.create_string_buffer(max(8 * nslots, 8))
    base = ctypes.addressof(buffer)
    params = (ctypes.c_void_p * max(nslots, 1))(*[base + 8 * i for i in range(nslots)])
    names, fields = _fields(argtypes)
    args, pack = ", ".join(names), ", ".join(fields)
    source = (
        f"def grid(n, {args}):\n"
        f"    pack_into(buffer, 0, {pack})\n"
        f"    blocks = (n + {THREADS - 1}) // {THREADS}\n"
        f"    cap = limits.MAX_BLOCKS\n"
        f"    status = launch(handle, cap if blocks > cap else blocks or 1, {THREADS}, 0, stream, params)\n"
        f"    if status:\n"
        f"        check('cuLaunchKernel', status)\n"
        f"def shaped(blocks, threads, shared_bytes, {args}):\n"
        f"    pack_into(buffer, 0, {pack})\n"
        f"    status = launch(handle, blocks, threads, shared_bytes, stream, params)\n"
        f"    if status:\n"
        f"        check('cuLaunchKernel', status)\n"
    )
    namespace: dict[str, Any] = {
        "pack_into": struct.Struct("=" + "".join(c for c, _ in codes)).pack_into, "buffer": buffer,
        "launch": _driver_launch(), "handle": handle, "stream": stream, "params": ctypes.addressof(params),
        "check": driver.check, "limits": sys.modules[__name__], "_keep": params,
    }
    exec(compile(source, "<tidu kernel launch>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["grid"], namespace["shaped"], namespace["params"]


def _blocks(n: int) -> int:
    """The grid of ``grid(n, ...)``: enough ``THREADS``-thread blocks to cover ``n``, at most ``MAX_BLOCKS``."""
    return min(max((n + THREADS - 1) // THREADS, 1), MAX_BLOCKS)


def _fixed_launcher(argtypes: list[Any], handle: int, stream: int, blocks: int, template: tuple,
                    arrays: list[int], threads: int = THREADS) -> Callable[..., None]:
    """``Kernel.fixed``'s launch: ``template`` packed once into a buffer of its own, but the data
    pointers of the arrays at positions ``arrays``, which the parameter pointers address in a
    second buffer, packed at each call by one generated function."""
    codes = [_slot_codes(t) for t in argtypes]
    names, fields = _fields(argtypes)
    values = eval(f"({', '.join(fields)},)", {}, dict(zip(names, template)))  # noqa: S307 - our own source
    layout = struct.Struct("=" + "".join(c for c, _ in codes))
    nslots = max(sum(n for _, n in codes), 1)
    constant = ctypes.create_string_buffer(max(layout.size, 8))
    layout.pack_into(constant, 0, *values)
    pointers = ctypes.create_string_buffer(8 * max(len(arrays), 1))
    slots = [ctypes.addressof(constant) + 8 * i for i in range(nslots)]
    starts = [sum(n for _, n in codes[:k]) for k in range(len(codes))]
    for j, k in enumerate(arrays):
        slots[starts[k] + 4] = ctypes.addressof(pointers) + 8 * j  # meminfo, parent, size, itemsize, data
    params = (ctypes.c_void_p * nslots)(*slots)
    args = ", ".join(names[k] for k in arrays)
    source = (
        f"def fixed({args}):\n"
        f"    pack_pointers(pointers, 0, {', '.join(names[k] + '.ptr' for k in arrays)})\n"
        f"    status = launch(handle, {blocks}, {threads}, 0, stream, params)\n"
        f"    if status:\n"
        f"        check('cuLaunchKernel', status)\n"
    )
    namespace: dict[str, Any] = {
        "pack_pointers": struct.Struct("=" + "q" * len(arrays)).pack_into, "pointers": pointers,
        "launch": _driver_launch(), "handle": handle, "stream": stream, "params": ctypes.addressof(params),
        "check": driver.check, "_keep": (constant, params),
    }
    exec(compile(source, "<tidu fixed kernel launch>", "exec"), namespace)  # noqa: S102 - our own source
    return namespace["fixed"]


def dense_like(shape: tuple[int, ...], dtype: Any) -> Any:
    """What ``Kernel.fixed`` reads of a template array: a C-contiguous one of ``shape`` and ``dtype``."""
    return SimpleNamespace(shape=shape, strides=contiguous_strides(shape, np.dtype(dtype).itemsize),
                           size=math.prod(shape), ptr=0)


def _fields(argtypes: list[Any]) -> tuple[list[str], list[str]]:
    """Argument names and the expressions packed for them: a scalar is its value; an array is
    meminfo, parent, size, itemsize, data pointer, shape and strides (numba's ABI), a 1-D
    parameter taking any C-contiguous array flat."""
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
    return names, fields
