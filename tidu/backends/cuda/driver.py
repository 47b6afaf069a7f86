"""The CUDA driver API through ctypes: the few calls tidu's launch path and memory need.

Each call's status is checked; a failure raises ``CudaError`` (a ``RuntimeError``) naming
the call and the driver's error, and an allocation failure raises ``OutOfMemoryError``
(PyTorch's ``torch.cuda.OutOfMemoryError`` is a ``RuntimeError`` too). The library is
loaded on first use, so importing tidu never needs a GPU.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

CU_STREAM_NON_BLOCKING = 1
CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4
CUDA_ERROR_OUT_OF_MEMORY = 2


class CudaError(RuntimeError):
    """A CUDA driver call failed: ``.call`` names it, ``.code`` is the driver's status."""

    def __init__(self, call: str, code: int, message: str) -> None:
        super().__init__(f"CUDA error in {call}: {message} (code {code})")
        self.call = call
        self.code = code


class OutOfMemoryError(CudaError):
    """The device had no memory left for an allocation (PyTorch's ``torch.cuda.OutOfMemoryError``)."""


_vp, _sz, _u, _i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int
_PROTOTYPES: dict[str, list[Any]] = {
    "cuInit": [_u],
    "cuGetErrorString": [_i, ctypes.POINTER(ctypes.c_char_p)],
    "cuGetErrorName": [_i, ctypes.POINTER(ctypes.c_char_p)],
    "cuDeviceGet": [ctypes.POINTER(_i), _i],
    "cuDeviceGetCount": [ctypes.POINTER(_i)],
    "cuDeviceGetDefaultMemPool": [ctypes.POINTER(_vp), _i],
    "cuMemPoolSetAttribute": [_vp, _i, _vp],
    "cuStreamCreate": [ctypes.POINTER(_vp), _u],
    "cuStreamSynchronize": [_vp],
    "cuMemAllocAsync": [ctypes.POINTER(_vp), _sz, _vp],
    "cuMemFreeAsync": [_vp, _vp],
    "cuMemcpyHtoDAsync_v2": [_vp, _vp, _sz, _vp],
    "cuMemcpyDtoHAsync_v2": [_vp, _vp, _sz, _vp],
    "cuMemcpyDtoDAsync_v2": [_vp, _vp, _sz, _vp],
    "cuMemsetD8Async": [_vp, ctypes.c_ubyte, _sz, _vp],
    "cuKernelGetFunction": [ctypes.POINTER(_vp), _vp],
    "cuLaunchKernel": [_vp, _u, _u, _u, _u, _u, _u, _u, _vp, _vp, _vp],
}


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """``libcuda``, with argument types set for every call tidu makes."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise CudaError("dlopen", -1, f"the CUDA driver library could not be loaded ({exc})") from None
    for name, argtypes in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = _i
    return lib


def error_text(code: int) -> str:
    try:
        lib = library()
    except CudaError:
        return "unknown error (no CUDA driver to name it)"
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    lib.cuGetErrorName(code, ctypes.byref(name))
    lib.cuGetErrorString(code, ctypes.byref(text))
    decode = lambda s: s.value.decode() if s.value else "unknown"  # noqa: E731
    return f"{decode(name)}: {decode(text)}"


def check(call: str, code: int) -> None:
    if code:
        cls = OutOfMemoryError if code == CUDA_ERROR_OUT_OF_MEMORY else CudaError
        raise cls(call, code, error_text(code))


def call(name: str, *args: Any) -> None:
    """``cuXxx(*args)``, raising ``CudaError`` on failure."""
    check(name, getattr(library(), name)(*args))


def device_count() -> int:
    try:
        lib = library()
    except CudaError:
        return 0
    if lib.cuInit(0):
        return 0
    count = ctypes.c_int()
    return count.value if lib.cuDeviceGetCount(ctypes.byref(count)) == 0 else 0
