"""Device memory: buffers from the stream-ordered pool and ``CudaArray``, tidu's device array.

A ``CudaArray`` is a shape, a dtype, byte strides and a device pointer: memory it owns (a
block of tidu's pool), or memory kept alive by its owner (the array it views, or a foreign
object). It exposes ``__cuda_array_interface__``,
and ``CudaArray.from_interface`` wraps any object that does (numba, CuPy, PyTorch), so
data moves between libraries without copies in both directions. Under the simulator the
"device" memory is a host numpy array.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.imports import module
from ..layout import overlapping
from . import driver
from .runtime import runtime


class Counters:
    """What ``tidu.cuda.memory_stats`` reports (PyTorch's names there): the bytes of the blocks held
    by live arrays (``allocated``) and their peak since ``reset_peaks``; the bytes held from the
    driver's pool (``reserved``: live blocks and cached free ones), its peak and total, and the
    calls that took or gave them. Only ``allocated`` and its peak move with every array; the
    number of live blocks is counted when asked (``live_blocks``). Under the simulator every
    array's memory is its own host allocation, so reserved follows allocated."""

    __slots__ = ("allocated", "peak", "reserved", "peak_reserved", "reserved_total", "device_allocs", "device_frees",
                 "retries", "ooms")

    def __init__(self) -> None:
        for name in self.__slots__:
            setattr(self, name, 0)

    def reset_peaks(self) -> None:
        self.peak, self.peak_reserved = self.allocated, self.reserved

    def live_blocks(self) -> int:
        """Blocks held by live arrays: every block taken from the driver is live or in the cache."""
        return self.device_allocs - self.device_frees - sum(len(blocks) for blocks in _CACHE.values())


COUNT = Counters()


def _counted(nbytes: int) -> None:
    """A block of ``nbytes`` now held by a new array."""
    c = COUNT
    c.allocated = allocated = c.allocated + nbytes
    if allocated > c.peak:
        c.peak = allocated


def _reserved(nbytes: int) -> None:
    """``nbytes`` more taken from the driver's pool."""
    c = COUNT
    c.reserved += nbytes
    c.reserved_total += nbytes
    c.device_allocs += 1
    if c.reserved > c.peak_reserved:
        c.peak_reserved = c.reserved


# Freed blocks by size, handed out again: work on tidu's one stream is ordered, so a block is
# reusable as soon as it is freed. The cache is emptied into the stream-ordered pool when an
# allocation fails, then the allocation is retried once.
_CACHE: dict[int, list[int]] = {}
GRANULE = 512


def _round(nbytes: int) -> int:
    return max((nbytes + GRANULE - 1) // GRANULE, 1) * GRANULE


_capture: list[tuple[int, int]] | None = None  # while a CUDA graph is captured (graphs.py): its allocations


def begin_capture(allocated: list[tuple[int, int]]) -> None:
    """From now on allocations are the captured graph's (listed in ``allocated`` as (pointer,
    bytes)), not the cache's."""
    global _capture
    _capture = allocated


def end_capture() -> None:
    global _capture
    _capture = None


def allocate(nbytes: int) -> tuple[int, int]:
    """``(pointer, size)``: at least ``nbytes`` of device memory, from the cache where it has a
    block of that rounded size (a ``CudaArray`` owning it puts it back when it dies). While a
    graph is captured, an allocation node of the graph, never put back (size 0)."""
    size = _round(nbytes)
    if _capture is not None:
        ptr = ctypes.c_void_p()
        driver.call("cuMemAllocAsync", ctypes.byref(ptr), size, runtime().stream)
        _capture.append((ptr.value or 0, size))
        return ptr.value or 0, 0
    free = _CACHE.get(size)
    return (free.pop() if free else _allocate(size)), size


# What gives memory back when an allocation fails, before the cache is emptied: each returns how
# much it gave (graphs.py: the CUDA graphs' own memory)
ON_OUT_OF_MEMORY: list[Callable[[], int]] = []


def _allocate(size: int) -> int:
    rt = runtime()
    ptr = ctypes.c_void_p()
    for attempt in (0, 1):
        try:
            driver.call("cuMemAllocAsync", ctypes.byref(ptr), size, rt.stream)
            _reserved(size)
            return ptr.value or 0
        except driver.OutOfMemoryError as exc:
            if attempt == 0 and sum(release() for release in ON_OUT_OF_MEMORY) + empty_cache():
                COUNT.retries += 1
                continue
            COUNT.ooms += 1
            raise driver.OutOfMemoryError(
                "cuMemAllocAsync", exc.code, f"CUDA out of memory. Tried to allocate {_fmt_bytes(size)}"
            ) from None
    raise AssertionError("unreachable")


def empty_cache() -> int:
    """Return every cached free block to the pool (``tidu.cuda.empty_cache``); the count freed."""
    stream = runtime().stream
    count = 0
    for size, blocks in _CACHE.items():
        for ptr in blocks:
            driver.call("cuMemFreeAsync", ptr, stream)
            count += 1
            COUNT.reserved -= size
            COUNT.device_frees += 1
        blocks.clear()
    return count


def _fmt_bytes(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.2f} {unit}" if unit != "bytes" else f"{n} bytes"
        n /= 1024
    return str(n)


def _trivially_dense(shape: tuple[int, ...], strides: tuple[int, ...], dense: tuple[int, ...]) -> bool:
    """Dense except for the strides of size-1 (or empty) dimensions, which address nothing."""
    if 0 in shape:
        return True
    return all(n == 1 or s == d for n, s, d in zip(shape, strides, dense))


def contiguous_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    key = (shape, itemsize)
    found = _STRIDES.get(key)
    if found is None:
        strides, step = [], itemsize
        for size in reversed(shape):
            strides.append(step)
            step *= max(size, 1)
        found = tuple(reversed(strides))
        if len(_STRIDES) >= 4096:
            _STRIDES.clear()
        _STRIDES[key] = found
    return found


_STRIDES: dict[tuple, tuple[int, ...]] = {}
# (shape, dtype as given) -> (shape, np.dtype, size, pool block bytes, strides): ``CudaArray.empty``'s lookup
_LAYOUTS: dict[tuple, tuple] = {}


def _layout(shape: Any, dtype: Any) -> tuple:
    """A fresh dense array's layout (``_LAYOUTS``' entries), remembered when ``shape`` is a tuple."""
    key = (shape, dtype)
    shape, dtype = tuple(shape), np.dtype(dtype)
    size = math.prod(shape)
    layout = (shape, dtype, size, _round(size * dtype.itemsize), contiguous_strides(shape, dtype.itemsize))
    if type(key[0]) is tuple:
        if len(_LAYOUTS) >= 4096:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    return layout
_DENSE: dict[tuple, bool] = {}


def _dense(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """C-contiguous (size-1 dimensions aside), looked up once per layout."""
    key = (shape, strides, itemsize)
    found = _DENSE.get(key)
    if found is None:
        expected = contiguous_strides(shape, itemsize)
        found = strides == expected or _trivially_dense(shape, strides, expected)
        if len(_DENSE) >= 4096:
            _DENSE.clear()
        _DENSE[key] = found
    return found


class _Flags:
    __slots__ = ("c_contiguous", "writeable", "owndata")

    def __init__(self, array: CudaArray) -> None:
        self.c_contiguous = array.is_c_contiguous
        self.owndata = array.base is None
        self.writeable = not overlapping(array.shape, array.strides)  # no two elements at one address


class CudaArray:
    """An array in device memory (numpy-like metadata, a device pointer, an owner).

    A view (``view``) is owned by the array it was made from, as numpy's ``base``. An array
    made by ``empty`` owns its memory (``pooled``: the block's size) and returns it to tidu's
    cache when it dies.
    """

    __slots__ = ("shape", "dtype", "strides", "ptr", "owner", "base", "host", "is_c_contiguous", "size", "pooled",
                 "counted", "__weakref__")

    def __init__(self, shape: tuple[int, ...], dtype: Any, strides: tuple[int, ...] | None, ptr: int,
                 owner: Any, host: np.ndarray | None = None) -> None:
        self.shape = shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        if strides is None:
            self.strides = contiguous_strides(shape, self.dtype.itemsize)
            self.is_c_contiguous = True
        else:
            self.strides = strides = tuple(strides)
            self.is_c_contiguous = _dense(shape, strides, self.dtype.itemsize)
        self.size = math.prod(shape)
        self.ptr = ptr
        self.owner = owner
        self.base = owner if isinstance(owner, CudaArray) else None  # numpy's ``base``: the array viewed
        self.host = host  # the simulator's "device" memory
        self.pooled = self.counted = 0  # a pool block's size; a simulated array's bytes in ``COUNT``

    def __del__(self) -> None:
        size = self.pooled
        if size:
            COUNT.allocated -= size
            free = _CACHE.get(size)
            if free is None:
                free = _CACHE[size] = []
            free.append(self.ptr)
        elif self.counted:  # the simulator's own host memory goes back
            c = COUNT
            c.allocated -= self.counted
            c.reserved -= self.counted
            c.device_frees += 1

    @property
    def flags(self) -> _Flags:
        return _Flags(self)

    def view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> CudaArray:
        """A view of this array's memory: ``shape``, byte ``strides``, starting ``offset`` bytes in."""
        ptr = self.ptr + offset
        if self.host is not None:
            root = self
            while isinstance(root.owner, CudaArray):
                root = root.owner
            host = np.ndarray(shape, self.dtype, buffer=root.host, offset=ptr - root.ptr, strides=strides)
            return CudaArray(shape, self.dtype, strides, ptr, self, host)
        out = object.__new__(CudaArray)  # what __init__ makes of it, its density looked up once per layout
        shape, strides, dtype = tuple(shape), tuple(strides), self.dtype
        out.shape, out.strides, out.dtype, out.ptr, out.owner, out.host, out.pooled = shape, strides, dtype, ptr, self, None, 0
        out.counted = 0
        out.base = self
        out.is_c_contiguous = _dense(shape, strides, dtype.itemsize)
        out.size = math.prod(shape)
        return out

    def copy(self) -> CudaArray:
        return module("tidu.backends.cuda.copy").contiguous_copy(self)  # (copy imports this module)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def __repr__(self) -> str:
        return f"CudaArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: Any) -> CudaArray:
        try:
            layout = _LAYOUTS.get((shape, dtype))
        except TypeError:  # a list for a shape
            layout = None
        if layout is None:
            if runtime().simulated:
                return cls._simulated_empty(shape, np.dtype(dtype))
            layout = _layout(shape, dtype)
        shape, dtype, size, nbytes, strides = layout
        if _capture is None:  # allocate's cached path, written out
            free = _CACHE.get(nbytes)
            ptr, pooled = (free.pop() if free else _allocate(nbytes)), nbytes
            c = COUNT  # ``_counted`` written out: every device tensor comes through here
            c.allocated = allocated = c.allocated + nbytes
            if allocated > c.peak:
                c.peak = allocated
        else:
            ptr, pooled = allocate(nbytes)
        self = object.__new__(cls)  # what __init__ makes of a fresh dense array, without its checks
        self.shape, self.dtype, self.size, self.ptr, self.owner, self.base, self.host = shape, dtype, size, ptr, None, None, None
        self.strides, self.is_c_contiguous, self.pooled, self.counted = strides, True, pooled, 0
        return self

    @classmethod
    def _simulated_empty(cls, shape: tuple[int, ...], dtype: np.dtype) -> CudaArray:
        try:
            host = np.empty(shape, dtype)
        except MemoryError:
            nbytes = math.prod(shape) * dtype.itemsize
            raise driver.OutOfMemoryError(
                "cuMemAllocAsync", 2, f"CUDA out of memory. Tried to allocate {_fmt_bytes(nbytes)}"
            ) from None
        out = cls(shape, dtype, None, host.ctypes.data, host, host)
        out.counted = nbytes = _round(host.nbytes)  # counted as a pool block of that size would be
        _counted(nbytes)
        _reserved(nbytes)
        return out

    @classmethod
    def from_host(cls, array: np.ndarray) -> CudaArray:
        array = np.ascontiguousarray(array).reshape(np.shape(array))
        out = cls.empty(array.shape, array.dtype)
        if out.host is not None:
            out.host[...] = array
        elif array.nbytes:
            if _capture is not None:  # the graph would read the host array again at each launch
                raise RuntimeError("a copy from the host cannot be captured in a CUDA graph")
            rt = runtime()
            driver.call("cuMemcpyHtoDAsync_v2", out.ptr, array.ctypes.data, array.nbytes, rt.stream)
            rt.synchronize()  # the host array may be freed as soon as we return
        return out

    @classmethod
    def from_interface(cls, obj: Any) -> CudaArray:
        """Wrap an object exposing ``__cuda_array_interface__`` (no copy; ``obj`` is kept alive).

        Under the simulator (whose arrays have no such interface) the data is copied.
        """
        if runtime().simulated:
            host = np.array(obj.copy_to_host() if hasattr(obj, "copy_to_host") else obj)
            return cls(host.shape, host.dtype, host.strides, host.ctypes.data, obj, host)
        cai = obj.__cuda_array_interface__
        return cls(tuple(cai["shape"]), np.dtype(cai["typestr"]), cai.get("strides"), cai["data"][0] or 0, obj)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (self.ptr, False),
            "strides": None if self.is_c_contiguous else self.strides,
            "version": 3,
            "stream": runtime().stream or None,
        }

    def copy_to_host(self) -> np.ndarray:
        if self.host is not None:
            return self.host.copy()
        if not self.is_c_contiguous:
            return self.copy().copy_to_host()
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            rt = runtime()
            driver.call("cuMemcpyDtoHAsync_v2", out.ctypes.data, self.ptr, self.nbytes, rt.stream)
            rt.synchronize()
        return out
