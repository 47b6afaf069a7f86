"""The CUDA backend's launch path, memory and errors (Numba's simulator in CI; a GPU through the device tool).

On a real GPU, ``python bench/gpu.py`` runs the same checks plus zero-copy exchange with
PyTorch and the out-of-memory path, and times the launch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cuda

from tidu.backends.cuda import driver, is_available, numba_bridge, runtime
from tidu.backends.cuda.launch import Kernel, _slot_codes
from tidu.backends.cuda.memory import CudaArray


def _axpy(a, x, y, out, n):  # noqa: ANN001, ANN202
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 255, 256, 1000])
def test_kernel_matches_numpy(dtype: str, n: int) -> None:
    kernel = Kernel(_axpy, f"void({dtype}, {dtype}[::1], {dtype}[::1], {dtype}[::1], int64)")
    rng = np.random.default_rng(n)
    hx, hy = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    out = CudaArray.empty((n,), dtype)
    kernel(n, 2.5, CudaArray.from_host(hx), CudaArray.from_host(hy), out, n)
    # the GPU contracts a * x + y into one fused multiply-add (one rounding, not two)
    np.testing.assert_allclose(out.copy_to_host(), np.asarray(2.5 * hx + hy, dtype), rtol=1e-5, atol=1e-6)


def test_available_and_simulated_flag() -> None:
    assert is_available()
    assert runtime.simulated() == (driver.device_count() == 0)


def test_round_trip_and_array_interface() -> None:
    host = np.arange(12, dtype=np.float64).reshape(3, 4)
    dev = CudaArray.from_host(host)
    assert dev.shape == (3, 4) and dev.dtype == np.float64 and dev.nbytes == 96 and dev.is_c_contiguous
    np.testing.assert_array_equal(dev.copy_to_host(), host)
    cai = dev.__cuda_array_interface__
    assert cai["shape"] == (3, 4) and cai["typestr"] == "<f8" and cai["version"] == 3
    assert cai["data"] == (dev.ptr, False) and cai["strides"] is None


def test_wraps_foreign_device_arrays() -> None:
    foreign = cuda.to_device(np.arange(5, dtype=np.float32))
    wrapped = CudaArray.from_interface(foreign)
    assert wrapped.shape == (5,) and wrapped.dtype == np.float32
    np.testing.assert_array_equal(wrapped.copy_to_host(), np.arange(5, dtype=np.float32))


def test_parameter_layout_follows_numba_abi() -> None:
    from numba import types

    assert _slot_codes(types.float32[::1]) == ("q" * 7, 7)
    assert _slot_codes(types.float64[:, ::1]) == ("q" * 9, 9)
    assert _slot_codes(types.int64) == ("q", 1)
    assert _slot_codes(types.float32) == ("f4x", 1)
    with pytest.raises(TypeError, match="no parameter layout for numba type complex128"):
        _slot_codes(types.complex128)


class _Array:
    """What a launch reads of an array argument (a C-contiguous 2 x 3 float32 one)."""

    ptr, size, shape, strides = 0x1000, 6, (2, 3), (12, 4)


def test_generated_launch_packs_numba_abi(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated launcher packs each argument as numba's ABI lays it out and calls the driver
    with the grid it derives (checked here against a recording stand-in for ``cuLaunchKernel``)."""
    import ctypes
    import struct

    from numba import types

    from tidu.backends.cuda import launch

    calls: list[tuple] = []
    status = [0]
    monkeypatch.setattr(launch, "_driver_launch", lambda: lambda *args: calls.append(args) or status[0])
    grid, shaped, params = launch._launchers([types.float32[::1], types.int64, types.float32], 7, 9)
    grid(1000, _Array, 5, 2.5)
    grid(0, _Array, 5, 2.5)
    grid(10**9, _Array, 5, 2.5)
    shaped(3, 128, 64, _Array, 5, 2.5)
    assert calls == [(7, 4, 256, 0, 9, params), (7, 1, 256, 0, 9, params),
                     (7, launch.MAX_BLOCKS, 256, 0, 9, params), (7, 3, 128, 64, 9, params)]
    pointers = (ctypes.c_void_p * 9).from_address(params)
    assert [p - pointers[0] for p in pointers] == [8 * i for i in range(9)]
    # meminfo, parent, size, itemsize, data, shape, stride (a 1-D parameter takes the array flat)
    assert struct.unpack("=7qqf4x", ctypes.string_at(pointers[0], 72)) == (0, 0, 6, 4, 0x1000, 6, 4, 5, 2.5)
    status[0] = 700
    with pytest.raises(driver.CudaError, match="cuLaunchKernel"):
        grid(1000, _Array, 5, 2.5)


def test_fixed_launch_packs_only_the_pointers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A launch prepared once (``Kernel.fixed``'s) packs its template's sizes, strides and scalars
    once; each call writes only its arrays' pointers, which the parameter pointers address in a
    buffer of their own, and launches on the grid the template's size gives."""
    import ctypes
    import struct
    from types import SimpleNamespace

    from numba import types

    from tidu.backends.cuda import launch

    calls: list[tuple] = []
    monkeypatch.setattr(launch, "_driver_launch", lambda: lambda *args: calls.append(args) or 0)
    argtypes = [types.float32[::1], types.int64, types.float32[:, ::1]]
    template = (launch.dense_like((2, 3), "float32"), 5, launch.dense_like((2, 3), "float32"))
    fixed = launch._fixed_launcher(argtypes, 7, 9, launch._blocks(1000), template, [0, 2])
    fixed(SimpleNamespace(ptr=0x1000), SimpleNamespace(ptr=0x2000))
    (_, blocks, threads, shared, stream, params), = calls
    assert (blocks, threads, shared, stream) == (4, 256, 0, 9)
    pointers = (ctypes.c_void_p * 17).from_address(params)
    value = [struct.unpack("=q", ctypes.string_at(p, 8))[0] for p in pointers]
    # meminfo, parent, size, itemsize, data, shape, stride (flat); the scalar; the 2-D array's nine
    assert value == [0, 0, 6, 4, 0x1000, 6, 4, 5, 0, 0, 6, 4, 0x2000, 2, 3, 12, 4]
    fixed(SimpleNamespace(ptr=0x3000), SimpleNamespace(ptr=0x4000))
    value = [struct.unpack("=q", ctypes.string_at(p, 8))[0] for p in pointers]
    assert (value[4], value[12], value[2], value[13]) == (0x3000, 0x4000, 6, 2)
    assert launch._blocks(0) == 1 and launch._blocks(10**9) == launch.MAX_BLOCKS


def test_driver_errors_are_runtime_errors() -> None:
    with pytest.raises(driver.OutOfMemoryError) as info:
        driver.check("cuMemAllocAsync", driver.CUDA_ERROR_OUT_OF_MEMORY)
    assert isinstance(info.value, RuntimeError) and "cuMemAllocAsync" in str(info.value)
    with pytest.raises(driver.CudaError, match=r"cuLaunchKernel.*code 700"):
        driver.check("cuLaunchKernel", 700)
    driver.check("cuLaunchKernel", 0)


def test_unsupported_numba_cuda_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(numba_bridge, "numba_cuda_version", lambda: "0.99.1")
    with pytest.raises(RuntimeError, match=r"supports numba-cuda 0\.30\.x; found 0\.99\.1"):
        numba_bridge.check_version()


def _square(x):  # noqa: ANN001, ANN202
    return x * x


def _hypot(x, y):  # noqa: ANN001, ANN202
    return math.sqrt(x * x + y * y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_factories_share_the_scalar_function(dtype: str) -> None:
    from tidu.backends.cpu import elementwise as cpu
    from tidu.backends.cuda import elementwise as gpu

    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(300).astype(dtype), rng.standard_normal(300).astype(dtype)
    dx, dy = CudaArray.from_host(x), CudaArray.from_host(y)
    np.testing.assert_allclose(gpu.unary_kernel(_square)(dx, dtype).copy_to_host(),
                               cpu.unary_kernel(_square)(x, np.dtype(dtype)), rtol=1e-6)
    np.testing.assert_allclose(gpu.binary_kernel(_hypot)(dx, dy, dtype).copy_to_host(),
                               cpu.binary_kernel(_hypot)(x, y, np.dtype(dtype)), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [None, 3])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_matches_numpy(dtype: str, batch: int | None, trans_a: bool, trans_b: bool) -> None:
    from tidu.backends.cuda import blas

    rng = np.random.default_rng(4)
    m, k, n = 5, 3, 4
    sa, sb = ((k, m) if trans_a else (m, k)), ((n, k) if trans_b else (k, n))
    if batch:
        sa, sb = (batch, *sa), (batch, *sb)
    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    ref = (np.swapaxes(a, -1, -2) if trans_a else a) @ (np.swapaxes(b, -1, -2) if trans_b else b)
    got = blas.gemm(CudaArray.from_host(a), CudaArray.from_host(b), trans_a=trans_a, trans_b=trans_b)
    np.testing.assert_allclose(got.copy_to_host(), ref, rtol=1e-5)


def test_gemm_errors_name_the_shapes() -> None:
    from tidu.backends.cuda import blas

    a, b = CudaArray.from_host(np.ones((2, 3), np.float32)), CudaArray.from_host(np.ones((4, 2), np.float32))
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 4x2\)"):
        blas.gemm(a, b)
    with pytest.raises(TypeError, match="float32 or float64"):
        blas.gemm(a, CudaArray.from_host(np.ones((3, 2), np.float64)))


def test_view_metadata_without_host_memory() -> None:
    """A view of device memory (no simulator host array) gets numpy's layout facts."""
    from tidu.backends.cuda import views

    base = CudaArray((4, 6), np.float32, None, 0x1000, owner=None)  # metadata only: nothing is read
    t = views.transpose(base, permutation=(1, 0))
    assert (t.shape, t.strides, t.size, t.ptr, t.base) == ((6, 4), (4, 24), 24, 0x1000, base)
    assert not t.is_c_contiguous and t.flags.c_contiguous is False
    r = views.reshape(base, new_sizes=(2, 12))
    assert (r.shape, r.strides, r.is_c_contiguous, r.base) == ((2, 12), (48, 4), True, base)
    column = base.view((4, 1), (24, 4), offset=8)
    assert column.ptr == 0x1008 and column.is_c_contiguous is False and column.size == 4
    row = base.view((1, 6), (96, 4), offset=24)  # a size-1 dimension's stride addresses nothing
    assert row.is_c_contiguous and row.owner is base and row.pooled == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("tf32", [False, True])
def test_gemm_with_a_shared_batch_operand(dtype: str, tf32: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """One left matrix for every batch member (batch stride 0), as a broadcast matmul reads it; on
    a GPU through a cuBLASLt plan (TF32 when allowed, float32 only), under the simulator cuBLAS's path."""
    from tidu.backends.cuda import blas, blaslt

    monkeypatch.setattr(blas.matmul, "allow_tf32", tf32)
    rng = np.random.default_rng(5)
    m, k, n, batch = 4, 3, 5, 3
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((batch, k, n)).astype(dtype)
    da, db = CudaArray.from_host(a), CudaArray.from_host(b)
    out = CudaArray.empty((batch, m, n), dtype)
    blas.gemm_strided(np.dtype(dtype), False, False, m, n, k, da.ptr, k, 0, db.ptr, n, k * n, out.ptr, n, m * n, batch)
    np.testing.assert_allclose(out.copy_to_host(), a @ b, rtol=2e-3 if tf32 and dtype == "float32" else 1e-5)
    if not runtime.simulated():
        key = (np.dtype(dtype), tf32 and dtype == "float32", False, False, m, n, k, k, 0, n, k * n, n, m * n, batch)
        assert blaslt._plans.get(key) is not None
