"""Elementwise CUDA kernels made from the same scalar functions as the CPU kernels.

``unary_kernel(f)``/``binary_kernel(f)`` take the plain scalar function a primitive declares
once (the CPU factories in tidu/backends/cpu/elementwise.py take the same one), compile it as
a numba.cuda device function and build a loop around it, compiled per dtype signature on
first use and launched by ``launch.Kernel``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import cuda

from ...core.dtypes import wrap
from ..layout import repeat_period
from .copy import contiguous, numba_name
from .launch import Kernel, dense_like
from .memory import CudaArray


def device_function(scalar_fn: Callable) -> Callable:
    return cuda.jit(device=True)(scalar_fn)


def _sig(*dtypes: Any, periods: int = 0) -> str:
    return f"void({', '.join(numba_name(np.dtype(d)) + '[::1]' for d in dtypes)}, int64{', int64' * periods})"


def repeated(x: CudaArray) -> tuple[CudaArray, int]:
    """``x`` as one contiguous vector and its period: element ``i`` of ``x`` (row-major) is
    ``vector[i % period]``. A broadcast scalar has period 1, a bias broadcast over rows its
    length; any other layout is copied to a contiguous array (period: its size). Kernels then
    read broadcast operands in place instead of materializing them."""
    n = x.size
    if x.is_c_contiguous:
        return x, max(n, 1)
    period = repeat_period(x.shape, x.strides, x.dtype.itemsize)
    if period is None:
        return contiguous(x), max(n, 1)
    return x.view((period,), (x.dtype.itemsize,)), max(period, 1)


# The contiguous loops: each thread of the grid-stride loop handles four elements a pass
# (``i``, ``i + s``, ``i + 2s``, ``i + 3s``: each load still coalesced across the warp), reading
# all four before computing, so four loads are in flight a thread. On an H200, exp on 64M
# float32 went from 0.72 to 0.94 of a device copy's bandwidth (one element a pass could not keep
# its memory busy); bench/RESULTS.md, stop 18.


def unary_kernel(scalar_fn: Callable) -> Callable[[CudaArray, Any], CudaArray]:
    f = device_function(scalar_fn)

    def loop(x, out, n):  # noqa: ANN001, ANN202
        # four elements a thread per pass, their loads first (see above)
        s = cuda.gridsize(1)
        i = cuda.grid(1)
        while i + 3 * s < n:
            x0, x1, x2, x3 = x[i], x[i + s], x[i + 2 * s], x[i + 3 * s]
            out[i], out[i + s], out[i + 2 * s], out[i + 3 * s] = f(x0), f(x1), f(x2), f(x3)
            i += 4 * s
        while i < n:
            out[i] = f(x[i])
            i += s

    kernels: dict[tuple, Kernel] = {}  # dtypes -> the kernel
    launches: dict[tuple, Callable[..., None]] = {}  # dtypes -> its launch (``Kernel.grid``)

    def run(x: CudaArray, out_dtype: Any) -> CudaArray:
        x = contiguous(x)
        out_dtype = np.dtype(out_dtype)
        key = (x.dtype, out_dtype)
        kernel = launches.get(key)
        if kernel is None:
            kernel = launches[key] = _kernel(kernels, key, loop).grid()
        out = CudaArray.empty(x.shape, out_dtype)
        n = out.size
        if n:
            kernel(n, x, out, n)
        return out

    def prepare(shape: tuple[int, ...], dtype: Any, out_dtype: Any) -> Callable[[CudaArray], CudaArray]:
        """``run`` of one signature: a C-contiguous ``x`` of ``shape`` and ``dtype`` launches through
        a launch prepared once (``Kernel.fixed``); any other takes ``run``."""
        out_dtype = np.dtype(out_dtype)
        launch = _fixed_loop(kernels, loop, shape, (dtype, out_dtype))

        def prepared(x: CudaArray) -> CudaArray:
            if not x.is_c_contiguous:
                return run(x, out_dtype)
            out = CudaArray.empty(shape, out_dtype)
            launch(x, out)
            return out

        return prepared

    run.prepare = prepare
    return run


def binary_kernel(scalar_fn: Callable) -> Callable[[CudaArray, CudaArray, Any], CudaArray]:
    f = device_function(scalar_fn)

    def loop(a, b, out, n):  # noqa: ANN001, ANN202
        s = cuda.gridsize(1)  # as the unary loop: four elements a thread per pass, loads first
        i = cuda.grid(1)
        while i + 3 * s < n:
            a0, a1, a2, a3 = a[i], a[i + s], a[i + 2 * s], a[i + 3 * s]
            b0, b1, b2, b3 = b[i], b[i + s], b[i + 2 * s], b[i + 3 * s]
            out[i], out[i + s], out[i + 2 * s], out[i + 3 * s] = f(a0, b0), f(a1, b1), f(a2, b2), f(a3, b3)
            i += 4 * s
        while i < n:
            out[i] = f(a[i], b[i])
            i += s

    kernels: dict[tuple, Kernel] = {}  # dtypes -> the kernel
    launches: dict[tuple, Callable[..., None]] = {}  # dtypes (and layout) -> a kernel's launch (``Kernel.grid``)

    def broadcast_loop(a, b, out, n, na, nb):  # noqa: ANN001, ANN202
        for i in range(cuda.grid(1), n, cuda.gridsize(1)):
            out[i] = f(a[i % na], b[i % nb])

    def run(a: CudaArray, b: CudaArray, out_dtype: Any) -> CudaArray:
        out_dtype = np.dtype(out_dtype)
        out = CudaArray.empty(a.shape, out_dtype)
        n = out.size
        if not n:
            return out
        if a.is_c_contiguous and b.is_c_contiguous:
            key = (a.dtype, b.dtype, out_dtype)
            kernel = launches.get(key)
            if kernel is None:
                kernel = launches[key] = _kernel(kernels, key, loop).grid()
            kernel(n, a, b, out, n)
            return out
        (va, na), (vb, nb) = repeated(a), repeated(b)
        key = (a.dtype, b.dtype, out_dtype, "repeated")
        kernel = launches.get(key)
        if kernel is None:
            kernel = launches[key] = Kernel(broadcast_loop, _sig(a.dtype, b.dtype, out_dtype, periods=2)).grid()
        kernel(n, va, vb, out, n, na, nb)
        return out

    def prepare(shape: tuple[int, ...], a_dtype: Any, b_dtype: Any, out_dtype: Any) -> Callable[..., CudaArray]:
        """``run`` of one signature: C-contiguous operands of ``shape`` and these dtypes launch
        through a launch prepared once (``Kernel.fixed``); any others take ``run``."""
        out_dtype = np.dtype(out_dtype)
        launch = _fixed_loop(kernels, loop, shape, (a_dtype, b_dtype, out_dtype))

        def prepared(a: CudaArray, b: CudaArray) -> CudaArray:
            if not (a.is_c_contiguous and b.is_c_contiguous):
                return run(a, b, out_dtype)
            out = CudaArray.empty(shape, out_dtype)
            launch(a, b, out)
            return out

        return prepared

    run.prepare = prepare
    return run


def _fixed_loop(kernels: dict[tuple, Kernel], loop: Callable, shape: tuple[int, ...],
                dtypes: tuple) -> Callable[..., None]:
    """The contiguous ``loop``'s launch over arrays of ``shape`` and ``dtypes`` (operands, then the
    output), prepared once (``Kernel.fixed``): it takes the arrays alone."""
    dtypes = tuple(np.dtype(d) for d in dtypes)
    n = math.prod(shape)
    return _kernel(kernels, dtypes, loop).fixed(n, *[dense_like(shape, d) for d in dtypes], n)


def _kernel(kernels: dict[tuple, Kernel], dtypes: tuple, loop: Callable) -> Kernel:
    """The contiguous ``loop`` compiled for ``dtypes`` (its arrays' dtypes), made once."""
    kernel = kernels.get(dtypes)
    if kernel is None:
        kernel = kernels[dtypes] = Kernel(loop, _sig(*dtypes))
    return kernel


def _select_loop(p, a, b, out, n, np_, na, nb):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = a[i % na] if p[i % np_] else b[i % nb]


_select_kernels: dict[Any, Kernel] = {}


def select(p: CudaArray, a: CudaArray, b: CudaArray) -> CudaArray:
    """``where(p, a, b)`` for arrays of one shape (broadcast operands read in place)."""
    kernel = _select_kernels.get(a.dtype)
    if kernel is None:
        kernel = _select_kernels[a.dtype] = Kernel(_select_loop, _sig(p.dtype, a.dtype, a.dtype, a.dtype, periods=3))
    out = CudaArray.empty(a.shape, a.dtype)
    n = out.size
    if n:
        (vp, n_p), (va, na), (vb, nb) = repeated(p), repeated(a), repeated(b)
        kernel(n, vp, va, vb, out, n, n_p, na, nb)
    return out


def _cast(x):  # noqa: ANN001, ANN202
    return x


def _to_bool(x):  # noqa: ANN001, ANN202
    return x != 0


_convert = unary_kernel(_cast)
_convert_bool = unary_kernel(_to_bool)


def convert(x: CudaArray, *, new_dtype: Any) -> CudaArray:
    target = np.dtype(new_dtype.np)
    return (_convert_bool if target == np.bool_ else _convert)(x, target)


def _fill_loop(out, value, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = value


_fill_kernels: dict[Any, Kernel] = {}


def fill(*, shape: tuple[int, ...], value: Any, dtype: Any, device: str = "cuda") -> CudaArray:
    """``full`` on the device."""
    target = np.dtype(dtype.np)
    kernel = _fill_kernels.get(target)
    if kernel is None:
        t = numba_name(target)
        kernel = _fill_kernels[target] = Kernel(_fill_loop, f"void({t}[::1], {t}, int64)")
    out = CudaArray.empty(tuple(shape), target)
    n = out.size
    if n:
        kernel(n, out, target.type(wrap(value, dtype)).item(), n)
    return out


def _axpy_loop(y, alpha, x, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        y[i] += alpha * x[i]


_axpy_kernels: dict[Any, Kernel] = {}


def axpy_(y: CudaArray, alpha: float, x: CudaArray) -> None:
    """``y += alpha * x`` in place for C-contiguous arrays of one dtype (an optimizer's step)."""
    kernel = _axpy_kernels.get(y.dtype)
    if kernel is None:
        t = numba_name(y.dtype)
        kernel = _axpy_kernels[y.dtype] = Kernel(_axpy_loop, f"void({t}[::1], {t}, {t}[::1], int64)")
    n = y.size
    if n:
        kernel(n, y, alpha, x, n)
