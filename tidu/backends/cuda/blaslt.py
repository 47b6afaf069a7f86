"""Matrix products through cuBLASLt with a plan per shape: the matmul's host cost cut by a quarter.

``cublasSgemmStridedBatched`` chooses its algorithm on every call (about 24-30 µs of host time
an H100 machine's CPU measured, more than the kernel of a small product). A ``Plan`` keeps what
that choice needs, made once per (dtype, TF32, transposes, sizes, leading dimensions, batch
strides, batch): the operation descriptor, the three matrix layouts and the algorithm
cuBLASLt's heuristic picks within a ``WORKSPACE``-byte workspace. A call is then one
``cublasLtMatmul``, called from a Numba-compiled function (17-22 µs measured against 24-30).
Only small products take this path (``MAX_MACS``): for large ones the host's cost is nothing
beside the kernel's, and cuBLAS's own choice measured faster.

The layouts are column-major, as in ``blas.gemm_strided``: the row-major ``C = op(A) @ op(B)``
is the column-major ``C^T = op(B)^T @ op(A)^T``. Where cuBLASLt is missing or has no algorithm
for a case (or the plan cache is full), ``plan`` returns ``None`` and the caller runs cuBLAS's
gemm instead.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import driver
from .memory import allocate
from .runtime import runtime

CUDA_R_32F, CUDA_R_64F = 0, 1
CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F, CUBLAS_COMPUTE_32F_FAST_TF32 = 68, 70, 77
DESC_TRANSA, DESC_TRANSB = 3, 4
LAYOUT_BATCH_COUNT, LAYOUT_STRIDED_BATCH_OFFSET = 5, 6
PREF_MAX_WORKSPACE_BYTES = 1
HEURISTIC_RESULT_BYTES = 96  # cublasLtMatmulHeuristicResult_t: the algorithm (64 bytes) comes first
WORKSPACE = 4 << 20
MAX_PLANS = 4096
# Products up to this many multiply-adds take a plan (microseconds on the GPU: the host's cost is
# the product's); larger ones take cuBLAS's gemm, whose algorithm choice measured faster there
# (a 4096^3 TF32 product: 386 TFLOP/s against 316 through the heuristic's first plan).
MAX_MACS = 1 << 28


class Plan:
    """One product's descriptor, layouts and algorithm, and what a call passes with them."""

    __slots__ = ("desc", "la", "lb", "lc", "algo", "alpha", "beta", "_keep")

    def __init__(self, desc: int, la: int, lb: int, lc: int, algo: Any, scalars: tuple[Any, Any]) -> None:
        self.desc, self.la, self.lb, self.lc = desc, la, lb, lc
        self.algo = ctypes.addressof(algo)
        self.alpha, self.beta = (ctypes.addressof(v) for v in scalars)
        self._keep = (algo, scalars)


class _State:
    """The process's cuBLASLt: library, handle, workspace, the compiled matmul call."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        vp, i32, u64, i64, size = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int64, ctypes.c_size_t
        lib.cublasLtCreate.argtypes = [ctypes.POINTER(vp)]
        lib.cublasLtMatmulDescCreate.argtypes = [ctypes.POINTER(vp), i32, i32]
        lib.cublasLtMatmulDescSetAttribute.argtypes = [vp, i32, vp, size]
        lib.cublasLtMatrixLayoutCreate.argtypes = [ctypes.POINTER(vp), i32, u64, u64, i64]
        lib.cublasLtMatrixLayoutSetAttribute.argtypes = [vp, i32, vp, size]
        lib.cublasLtMatmulPreferenceCreate.argtypes = [ctypes.POINTER(vp)]
        lib.cublasLtMatmulPreferenceSetAttribute.argtypes = [vp, i32, vp, size]
        lib.cublasLtMatmulAlgoGetHeuristic.argtypes = [vp, vp, vp, vp, vp, vp, vp, i32, vp, ctypes.POINTER(i32)]
        self.lib = lib
        handle = vp()
        _check("cublasLtCreate", lib.cublasLtCreate(ctypes.byref(handle)))
        self.handle = handle.value or 0
        self.workspace, _ = allocate(WORKSPACE)  # kept for the process
        self.stream = runtime().stream
        pref = vp()
        _check("cublasLtMatmulPreferenceCreate", lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)))
        limit = u64(WORKSPACE)
        _check("cublasLtMatmulPreferenceSetAttribute", lib.cublasLtMatmulPreferenceSetAttribute(
            pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(limit), 8))
        self.preference = pref
        self.matmul = _compiled_matmul(ctypes.cast(lib.cublasLtMatmul, ctypes.c_void_p).value or 0)
        self.scalars = {np.dtype(np.float32): (ctypes.c_float(1.0), ctypes.c_float(0.0)),
                        np.dtype(np.float64): (ctypes.c_double(1.0), ctypes.c_double(0.0))}


def _check(call: str, status: int) -> None:
    if status:
        raise driver.CudaError(call, status, "cuBLASLt call failed")


def _compiled_matmul(address: int) -> Callable[..., int]:
    """``cublasLtMatmul`` called from a Numba-compiled function, its 16 arguments as integers (not
    cached on disk: it calls this process's library at its address)."""
    from numba import njit

    proto = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_uint64] * 16)
    cublas_lt_matmul = proto(address)

    @njit
    def call(h, desc, alpha, a, la, b, lb, beta, c, lc, d, ld, algo, ws, ws_size, stream):  # noqa: ANN001, ANN202
        return cublas_lt_matmul(h, desc, alpha, a, la, b, lb, beta, c, lc, d, ld, algo, ws, ws_size, stream)

    return call


@functools.lru_cache(maxsize=1)
def _state() -> _State | None:
    from .blas import load

    lib = load("libcublasLt")
    return None if lib is None else _State(lib)


_plans: dict[tuple, Plan | None] = {}


def plan(dtype: Any, tf32: bool, trans_a: bool, trans_b: bool, m: int, n: int, k: int, lda: int, stride_a: int,
         ldb: int, stride_b: int, ldc: int, stride_c: int, batch: int) -> Plan | None:
    """The plan of ``blas.gemm_strided``'s product (its arguments' meanings), or ``None``."""
    key = (dtype, tf32, trans_a, trans_b, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, batch)
    found = _plans.get(key, _plans)
    if found is not _plans:
        return found
    state = _state()
    if state is None or len(_plans) >= MAX_PLANS:
        return None
    found = _plans[key] = _make(state, *key)
    return found


def _make(state: _State, dtype: Any, tf32: bool, trans_a: bool, trans_b: bool, m: int, n: int, k: int,
          lda: int, stride_a: int, ldb: int, stride_b: int, ldc: int, stride_c: int, batch: int) -> Plan | None:
    lib, vp, i32 = state.lib, ctypes.c_void_p, ctypes.c_int
    dtype = np.dtype(dtype)
    data = CUDA_R_64F if dtype == np.float64 else CUDA_R_32F
    compute = CUBLAS_COMPUTE_64F if dtype == np.float64 else (CUBLAS_COMPUTE_32F_FAST_TF32 if tf32 else CUBLAS_COMPUTE_32F)
    desc = vp()
    _check("cublasLtMatmulDescCreate", lib.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, data))
    for attr, transposed in ((DESC_TRANSA, trans_b), (DESC_TRANSB, trans_a)):  # cuBLASLt's A is our b
        op = i32(1 if transposed else 0)
        _check("cublasLtMatmulDescSetAttribute", lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(op), 4))

    def layout(rows: int, cols: int, ld: int, stride: int) -> Any:
        out = vp()
        _check("cublasLtMatrixLayoutCreate", lib.cublasLtMatrixLayoutCreate(ctypes.byref(out), data, rows, cols, ld))
        if batch > 1:
            count, step = i32(batch), ctypes.c_int64(stride)
            for attr, value, size in ((LAYOUT_BATCH_COUNT, count, 4), (LAYOUT_STRIDED_BATCH_OFFSET, step, 8)):
                _check("cublasLtMatrixLayoutSetAttribute",
                       lib.cublasLtMatrixLayoutSetAttribute(out, attr, ctypes.byref(value), size))
        return out

    la = layout(*((k, n) if trans_b else (n, k)), ldb, stride_b)
    lb = layout(*((m, k) if trans_a else (k, m)), lda, stride_a)
    lc = layout(n, m, ldc, stride_c)
    result = ctypes.create_string_buffer(HEURISTIC_RESULT_BYTES)
    count = i32()
    status = lib.cublasLtMatmulAlgoGetHeuristic(state.handle, desc, la, lb, lc, lc, state.preference, 1, result,
                                                ctypes.byref(count))
    if status or count.value < 1:
        return None
    return Plan(desc.value or 0, la.value or 0, lb.value or 0, lc.value or 0, result, state.scalars[dtype])


def run(p: Plan, a: int, b: int, c: int) -> None:
    """``c = op(a) @ op(b)`` by plan ``p`` (device pointers, row-major as ``blas.gemm_strided``)."""
    state = _state()
    status = state.matmul(state.handle, p.desc, p.alpha, b, p.la, a, p.lb, p.beta, c, p.lc, c, p.lc, p.algo,
                          state.workspace, WORKSPACE, state.stream)
    if status:
        _check("cublasLtMatmul", status)
