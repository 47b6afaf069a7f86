"""Matrix products on cuBLAS (NVIDIA's ``nvidia-cublas`` wheel, or the CUDA toolkit's library).

tidu's arrays are row-major; cuBLAS is column-major. A row-major ``C = op(A) @ op(B)`` is the
column-major ``C^T = op(B)^T @ op(A)^T``, so ``gemm`` calls cuBLAS with the operands swapped
and no copies. float32 runs in full fp32 by default, and on TF32 tensor cores when
``tidu.backends.cuda.matmul.allow_tf32`` is set, as in PyTorch.
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import sys

import numpy as np

from . import blaslt, driver
from .memory import CudaArray
from .runtime import runtime

CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH = 0, 3


class _MatmulFlags:
    """``tidu.backends.cuda.matmul``: ``allow_tf32`` (False by default, as in PyTorch)."""

    allow_tf32 = False


matmul = _MatmulFlags()


def _candidates(stem: str) -> list[str]:
    paths = []
    for root in sys.path:
        paths += glob.glob(os.path.join(root, "nvidia", "cu13", "lib", f"{stem}.so.13"))
        paths += glob.glob(os.path.join(root, "nvidia", "cublas", "lib", f"{stem}.so.1[23]"))
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    paths += glob.glob(os.path.join(home, "lib64", f"{stem}.so.1[23]"))
    paths += glob.glob(f"/usr/local/cuda-1[23]*/lib64/{stem}.so.1[23]")
    return paths + [f"{stem}.so.13", f"{stem}.so.12"]


def load(stem: str) -> ctypes.CDLL | None:
    """The first of NVIDIA's wheel's, the CUDA toolkit's or the loader's ``stem`` library that loads."""
    for path in _candidates(stem):
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    return None


class _SimulatedCublas:
    """cuBLAS's column-major strided-batched gemm on host memory, for Numba's CUDA simulator:
    it reads the same arguments at the same pointers, so CI checks how tidu calls cuBLAS."""

    def cublasCreate_v2(self, handle: object) -> int:  # noqa: N802 - cuBLAS's name
        return 0

    def cublasSetStream_v2(self, handle: object, stream: object) -> int:  # noqa: N802
        return 0

    def cublasSetMathMode(self, handle: object, mode: int) -> int:  # noqa: N802
        return 0

    @staticmethod
    def _matrix(ptr: int, dtype: np.dtype, rows: int, cols: int, ld: int, stride: int, batch: int) -> np.ndarray:
        """A column-major (rows x cols) matrix per batch at ``ptr`` with leading dimension ``ld``."""
        itemsize = dtype.itemsize
        span = (batch - 1) * stride + (cols - 1) * ld + rows
        flat = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))), (span,))
        return np.lib.stride_tricks.as_strided(
            flat, (batch, rows, cols), (stride * itemsize, itemsize, ld * itemsize))

    def _gemm(self, dtype: np.dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch):  # noqa: ANN001
        op = lambda x, t: np.swapaxes(x, 1, 2) if t else x  # noqa: E731
        A = op(self._matrix(a, dtype, k if ta else m, m if ta else k, lda, sa, batch), ta)
        B = op(self._matrix(b, dtype, n if tb else k, k if tb else n, ldb, sb, batch), tb)
        C = self._matrix(c, dtype, m, n, ldc, sc, batch)
        beta = beta._obj.value
        C[...] = alpha._obj.value * (A @ B) + (beta * C if beta else 0)  # cuBLAS never reads C when beta is 0
        return 0

    def cublasSgemmStridedBatched(self, *args) -> int:  # noqa: ANN002, N802
        return self._gemm(np.dtype(np.float32), *args[1:])

    def cublasDgemmStridedBatched(self, *args) -> int:  # noqa: ANN002, N802
        return self._gemm(np.dtype(np.float64), *args[1:])


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    if runtime().simulated:
        return _SimulatedCublas()  # type: ignore[return-value]
    lib = load("libcublas")
    if lib is None:
        raise RuntimeError("cuBLAS was not found: install tidu's CUDA extra (pip install 'tidu[cuda]')")
    vp, i = ctypes.c_void_p, ctypes.c_int
    lib.cublasCreate_v2.argtypes = [ctypes.POINTER(vp)]
    lib.cublasSetStream_v2.argtypes = [vp, vp]
    lib.cublasSetMathMode.argtypes = [vp, i]
    for name, scalar in (("cublasSgemmStridedBatched", ctypes.c_float), ("cublasDgemmStridedBatched", ctypes.c_double)):
        fn = getattr(lib, name)
        fn.argtypes = [vp, i, i, i, i, i, ctypes.POINTER(scalar), vp, i, ctypes.c_longlong, vp, i,
                       ctypes.c_longlong, ctypes.POINTER(scalar), vp, i, ctypes.c_longlong, i]
    return lib


def _check(call: str, status: int) -> None:
    if status:
        raise driver.CudaError(call, status, "cuBLAS call failed")


@functools.lru_cache(maxsize=1)
def handle() -> int:
    lib = library()
    h = ctypes.c_void_p()
    _check("cublasCreate_v2", lib.cublasCreate_v2(ctypes.byref(h)))
    _check("cublasSetStream_v2", lib.cublasSetStream_v2(h, runtime().stream))
    return h.value or 0


_GEMM = {np.dtype(np.float32): ("cublasSgemmStridedBatched", ctypes.c_float),
         np.dtype(np.float64): ("cublasDgemmStridedBatched", ctypes.c_double)}
_mode = [None]


def gemm(a: CudaArray, b: CudaArray, *, trans_a: bool = False, trans_b: bool = False) -> CudaArray:
    """``op(a) @ op(b)`` for C-contiguous (batch, rows, cols) or (rows, cols) arrays of one float dtype.

    ``trans_a`` means ``a`` holds the transpose of the left factor (row-major), and so on.
    """
    if a.dtype != b.dtype or a.dtype not in _GEMM:
        raise TypeError(f"gemm: float32 or float64 operands of one dtype expected, got {a.dtype} and {b.dtype}")
    if not (a.is_c_contiguous and b.is_c_contiguous):
        raise RuntimeError("gemm: operands must be C-contiguous")
    batch = a.shape[0] if a.ndim == 3 else 1
    if (b.shape[0] if b.ndim == 3 else 1) != batch or a.ndim not in (2, 3) or b.ndim != a.ndim:
        raise RuntimeError(f"gemm: batch shapes {a.shape} and {b.shape} do not match")
    ra, ca = a.shape[-2:]
    rb, cb = b.shape[-2:]
    m, k = (ca, ra) if trans_a else (ra, ca)
    k2, n = (cb, rb) if trans_b else (rb, cb)
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    out = CudaArray.empty((batch, m, n) if a.ndim == 3 else (m, n), a.dtype)
    if out.size == 0:
        return out
    gemm_strided(a.dtype, trans_a, trans_b, m, n, k, a.ptr, ca, ra * ca, b.ptr, cb, rb * cb, out.ptr, n, m * n, batch)
    return out


def gemm_strided(dtype: np.dtype, trans_a: bool, trans_b: bool, m: int, n: int, k: int,
                 a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
                 c: int, ldc: int, stride_c: int, batch: int) -> None:
    """``C[i] = op(A[i]) @ op(B[i])`` (m x n, k summed) for ``i < batch``, row-major, on device pointers.

    Each matrix is row-major with row stride ``ld*`` (elements); ``stride_*`` is the step between
    batch members (0 shares one matrix). ``op(A)`` is ``A`` (stored m x k) or, with ``trans_a``,
    ``A^T`` (stored k x m); likewise ``B`` (k x n, or n x k with ``trans_b``). ``C`` is
    overwritten, never read. ``k`` must be positive.

    On a GPU a product of up to ``blaslt.MAX_MACS`` multiply-adds runs cuBLASLt's matmul with a
    plan made once per shape and layout (tidu/backends/cuda/blaslt.py); a larger one (whose host
    cost does not matter), one with no plan, or any under the simulator runs cuBLAS's
    strided-batched gemm.
    """
    tf32 = matmul.allow_tf32 and dtype == np.float32
    if batch * m * n * k <= blaslt.MAX_MACS and not runtime().simulated:
        plan = blaslt.plan(dtype, tf32, trans_a, trans_b, m, n, k, lda, stride_a, ldb, stride_b, ldc, stride_c, batch)
        if plan is not None:
            blaslt.run(plan, a, b, c)
            return
    name, scalar = _GEMM[np.dtype(dtype)]
    lib, h = library(), handle()
    mode = CUBLAS_TF32_TENSOR_OP_MATH if tf32 else CUBLAS_DEFAULT_MATH
    if _mode[0] != mode:
        _check("cublasSetMathMode", lib.cublasSetMathMode(h, mode))
        _mode[0] = mode
    alpha, beta = scalar(1.0), scalar(0.0)
    # column-major: C^T (n x m) = op(B)^T (n x k) @ op(A)^T (k x m)
    status = getattr(lib, name)(
        h, CUBLAS_OP_T if trans_b else CUBLAS_OP_N, CUBLAS_OP_T if trans_a else CUBLAS_OP_N, n, m, k,
        ctypes.byref(alpha), b, ldb, stride_b, a, lda, stride_a, ctypes.byref(beta), c, ldc, stride_c, batch,
    )
    _check(name, status)
