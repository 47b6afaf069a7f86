"""Elementwise kernel factories: one scalar function gives a contiguous 1-D loop.

Kernels compile lazily, once per dtype actually used, and are cached on disk.
Inputs of a primitive have one shape (the ops layer broadcasts); strided or
broadcast inputs are made contiguous before the loop. Large loops run in chunks
on several threads (``threads.run_chunked``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.extending import register_jitable

from ..layout import repeat_period
from .threads import run_chunked

JIT = {"cache": True, "error_model": "numpy", "nogil": True}


def scalar(fn: Callable) -> Callable:
    """Make a module-level scalar function callable from kernels.

    ``register_jitable`` keeps the plain function, which pickles by name, so the
    kernel closure that captures it has a stable on-disk cache key (a captured
    dispatcher would get a new key in every process and never load from cache).
    """
    return register_jitable(fn)


def code_token(fn: Callable) -> int:
    """A digest of ``fn``'s code and of the module-level functions it calls, for a kernel's closure.

    Numba keys a kernel's disk cache on the loop's own file and on its closure, where the
    scalar function is pickled by name: without this token an edited scalar function (or a
    helper it calls) would keep running its old compiled body.
    """
    digest = hashlib.sha256()
    seen: set[int] = set()

    def add(f: Callable) -> None:
        if id(f) in seen:
            return
        seen.add(id(f))
        code = f.__code__
        digest.update(code.co_code + repr((code.co_consts, code.co_names)).encode())
        for name in code.co_names:
            callee = f.__globals__.get(name)
            if callable(callee) and hasattr(callee, "__code__"):
                add(callee)

    add(fn)
    return int.from_bytes(digest.digest()[:7], "little")


def contiguous(x: np.ndarray) -> np.ndarray:
    """C-contiguous data, keeping the shape (``np.ascontiguousarray`` makes 0-d arrays 1-d)."""
    return x if x.flags.c_contiguous else np.ascontiguousarray(x).reshape(x.shape)


def unary_kernel(scalar_fn: Callable) -> Callable[[np.ndarray, np.dtype], np.ndarray]:
    f = scalar(scalar_fn)
    token = code_token(scalar_fn)

    @njit(**JIT)
    def loop(x, out):  # pragma: no cover - compiled
        _ = token  # in the closure, hence in the cache key
        for i in range(x.shape[0]):
            out[i] = f(x[i])

    def run(x: np.ndarray, out_dtype: np.dtype) -> np.ndarray:
        x = contiguous(x)
        out = np.empty(x.shape, out_dtype)
        run_chunked(loop, x.reshape(-1), out.reshape(-1))
        return out

    return run


def binary_kernel(scalar_fn: Callable) -> Callable[[np.ndarray, np.ndarray, np.dtype], np.ndarray]:
    f = scalar(scalar_fn)
    token = code_token(scalar_fn)

    @njit(**JIT)
    def loop(a, b, out):  # pragma: no cover - compiled
        _ = token  # in the closure, hence in the cache key
        for i in range(a.shape[0]):
            out[i] = f(a[i], b[i])

    @njit(**JIT)
    def loop_scalar_b(a, s, out):  # pragma: no cover - compiled
        _ = token
        for i in range(a.shape[0]):
            out[i] = f(a[i], s)

    @njit(**JIT)
    def loop_scalar_a(s, b, out):  # pragma: no cover - compiled
        _ = token
        for i in range(b.shape[0]):
            out[i] = f(s, b[i])

    @njit(**JIT)
    def loop_rows_b(a, v, out):  # pragma: no cover - compiled; a, out: (rows, period)
        _ = token
        for r in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[r, j] = f(a[r, j], v[j])

    @njit(**JIT)
    def loop_rows_a(v, b, out):  # pragma: no cover - compiled
        _ = token
        for r in range(b.shape[0]):
            for j in range(b.shape[1]):
                out[r, j] = f(v[j], b[r, j])

    def run(a: np.ndarray, b: np.ndarray, out_dtype: np.dtype) -> np.ndarray:
        out = np.empty(a.shape, out_dtype)
        if not out.size:
            return out
        flat = out.reshape(-1)
        if a.flags.c_contiguous and b.flags.c_contiguous:
            run_chunked(loop, a.reshape(-1), b.reshape(-1), flat)
            return out
        # a broadcast operand is read in place: a scalar, or a vector repeated over rows
        va, pa = repeated(a)
        vb, pb = repeated(b)
        n = out.size
        if pb == 1 and pa == n:
            s = vb[0]
            run_chunked(lambda x, o: loop_scalar_b(x, s, o), va, flat)
        elif pa == 1 and pb == n:
            s = va[0]
            run_chunked(lambda x, o: loop_scalar_a(s, x, o), vb, flat)
        elif pa == n and pb < n:
            run_chunked(lambda x, o: loop_rows_b(x, vb, o), va.reshape(-1, pb), out.reshape(-1, pb))
        elif pb == n and pa < n:
            run_chunked(lambda x, o: loop_rows_a(va, x, o), vb.reshape(-1, pa), out.reshape(-1, pa))
        else:
            run_chunked(loop, contiguous(a).reshape(-1), contiguous(b).reshape(-1), flat)
        return out

    return run


def repeated(x: np.ndarray) -> tuple[np.ndarray, int]:
    """``x`` (flattened, row-major) as ``vector[i % period]``: a C-contiguous array is its own
    vector; a broadcast one (zero strides on its leading dims, dense trailing dims) is the
    repeated vector, read in place; anything else is copied."""
    n = x.size
    if x.flags.c_contiguous:
        return x.reshape(-1), n
    period = repeat_period(x.shape, x.strides, x.itemsize)
    if period is None:
        return np.ascontiguousarray(x).reshape(-1), n
    return np.lib.stride_tricks.as_strided(x, (period,), (x.itemsize,), writeable=False), period


@njit(**JIT)
def _select_loop(pred, a, b, out):  # pragma: no cover - compiled
    for i in range(pred.shape[0]):
        out[i] = a[i] if pred[i] else b[i]


def select(pred: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    pred, a, b = (contiguous(v) for v in (pred, a, b))
    out = np.empty(a.shape, a.dtype)
    run_chunked(_select_loop, pred.reshape(-1), a.reshape(-1), b.reshape(-1), out.reshape(-1))
    return out


@njit(**JIT)
def _axpy_loop(y, alpha, x):  # pragma: no cover - compiled
    for i in range(y.shape[0]):
        y[i] += alpha * x[i]


def axpy_(y: np.ndarray, alpha: float, x: np.ndarray) -> None:
    """``y += alpha * x`` in place for C-contiguous arrays of one dtype, in one pass (numpy's
    ``y += alpha * x`` makes a temporary and two); ``alpha`` is rounded to ``y``'s dtype first,
    and the product and the sum are each rounded, as numpy's."""
    a = y.dtype.type(alpha)
    run_chunked(lambda ys, xs: _axpy_loop(ys, a, xs), y.reshape(-1), x.reshape(-1))
