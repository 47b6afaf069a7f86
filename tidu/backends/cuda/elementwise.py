"""Elementwise CUDA kernels made from the same scalar functions as the CPU kernels.

``unary_kernel(f)``/``binary_kernel(f)`` take the plain scalar function a primitive declares
once (the CPU factories in tidu/backends/cpu/elementwise.py take the same one), compile it as
a numba.cuda device function and build a loop around it, compiled per dtype signature on
first use and launched by ``launch.Kernel``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

from .launch import Kernel
from .memory import CudaArray


def device_function(scalar_fn: Callable) -> Callable:
    return cuda.jit(device=True)(scalar_fn)


def _contiguous(x: CudaArray) -> CudaArray:
    if not x.is_c_contiguous:
        raise NotImplementedError("CUDA elementwise kernels take C-contiguous arrays (strided copies come next)")
    return x


def unary_kernel(scalar_fn: Callable) -> Callable[[CudaArray, Any], CudaArray]:
    f = device_function(scalar_fn)

    def loop(x, out, n):  # noqa: ANN001, ANN202
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            out[i] = f(x[i])

    kernels: dict[tuple, Kernel] = {}

    def run(x: CudaArray, out_dtype: Any) -> CudaArray:
        x = _contiguous(x)
        out_dtype = np.dtype(out_dtype)
        key = (x.dtype, out_dtype)
        kernel = kernels.get(key)
        if kernel is None:
            kernel = kernels[key] = Kernel(loop, f"void({x.dtype}[::1], {out_dtype}[::1], int64)")
        out = CudaArray.empty(x.shape, out_dtype)
        if x.size:
            kernel(x.size, x, out, x.size)
        return out

    return run


def binary_kernel(scalar_fn: Callable) -> Callable[[CudaArray, CudaArray, Any], CudaArray]:
    f = device_function(scalar_fn)

    def loop(a, b, out, n):  # noqa: ANN001, ANN202
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            out[i] = f(a[i], b[i])

    kernels: dict[tuple, Kernel] = {}

    def run(a: CudaArray, b: CudaArray, out_dtype: Any) -> CudaArray:
        a, b = _contiguous(a), _contiguous(b)
        out_dtype = np.dtype(out_dtype)
        key = (a.dtype, b.dtype, out_dtype)
        kernel = kernels.get(key)
        if kernel is None:
            kernel = kernels[key] = Kernel(loop, f"void({a.dtype}[::1], {b.dtype}[::1], {out_dtype}[::1], int64)")
        out = CudaArray.empty(a.shape, out_dtype)
        if a.size:
            kernel(a.size, a, b, out, a.size)
        return out

    return run
