"""float16 and bfloat16 arrays widened to float32 and rounded back, on the device
(Note [half precision] in tidu/core/half.py; ``dtypes.to_float32``/``dtypes.cast`` on the host).

float16 converts with the convert kernel. bfloat16 is bits: widening shifts them into a uint32
array read as float32; rounding reads a float32 array's bits as uint32 and rounds them to
nearest even, every NaN becoming ``0x7FC0`` (PyTorch's ``round_to_nearest_even``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import cuda, uint32

from ...core import dtypes
from .copy import contiguous
from .elementwise import convert
from .launch import Kernel
from .memory import CudaArray


def _widen_loop(x, out, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = uint32(x[i]) << uint32(16)


def _narrow_loop(x, out, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        b = x[i]
        if (b & uint32(0x7FFFFFFF)) > uint32(0x7F800000):
            out[i] = 0x7FC0
        else:
            out[i] = (b + uint32(0x7FFF) + ((b >> uint32(16)) & uint32(1))) >> uint32(16)


_widen = Kernel(_widen_loop, "void(uint16[::1], uint32[::1], int64)")
_narrow = Kernel(_narrow_loop, "void(uint32[::1], uint16[::1], int64)")


def _as(x: CudaArray, dtype: Any) -> CudaArray:
    """A C-contiguous ``x`` read as ``dtype`` of the same size (no copy)."""
    host = None if x.host is None else x.host.view(dtype)
    return CudaArray(x.shape, dtype, None, x.ptr, x, host)


def widen(x: CudaArray, dt: dtypes.dtype) -> CudaArray:
    """The values of ``x`` (storing ``dt``, a half dtype) as a float32 array."""
    if dt is dtypes.float16:
        return convert(x, new_dtype=dtypes.float32)
    x = contiguous(x)
    out = CudaArray.empty(x.shape, np.uint32)
    if x.size:
        _widen(x.size, x, out, x.size)
    return _as(out, np.float32)


def narrow(x: CudaArray, dt: dtypes.dtype) -> CudaArray:
    """A float32 (or any floating) array ``x`` rounded to ``dt``, a half dtype."""
    if x.dtype != np.float32:
        x = convert(x, new_dtype=dtypes.float32)
    if dt is dtypes.float16:
        return convert(x, new_dtype=dtypes.float16)
    x = contiguous(x)
    out = CudaArray.empty(x.shape, np.uint16)
    if x.size:
        _narrow(x.size, _as(x, np.uint32), out, x.size)
    return out
