"""A primitive's CUDA kernel against its CPU kernel, on the same arrays and params."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from tidu.backends.cuda.memory import CudaArray
from tidu.core.primitive import Primitive

TOL = {np.dtype(np.float32): 1e-5, np.dtype(np.float64): 1e-12}


def to_device(a: np.ndarray) -> CudaArray:
    return CudaArray.from_host(np.asarray(a))


def check(prim: Primitive, *arrays: np.ndarray, **params: Any) -> np.ndarray:
    """Run both kernels; the results must agree in shape, dtype and value (tolerance by dtype)."""
    want = np.asarray(prim.impls["cpu"](*arrays, **params))
    out = prim.impls["cuda"](*[to_device(a) for a in arrays], **params)
    assert isinstance(out, CudaArray) and out.is_c_contiguous
    got = out.copy_to_host()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    tol = TOL.get(want.dtype)
    if tol is None:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))
    return got


@contextmanager
def recorded(prim: Primitive) -> Iterator[list[tuple[tuple, dict]]]:
    """Record every call of ``prim``'s CPU kernel (its arrays and params) inside the block."""
    calls: list[tuple[tuple, dict]] = []
    cpu = prim.impls["cpu"]

    def recorder(*arrays: Any, **params: Any) -> Any:
        calls.append((tuple(np.array(a) for a in arrays), dict(params)))
        return cpu(*arrays, **params)

    prim.impls["cpu"] = recorder
    try:
        yield calls
    finally:
        prim.impls["cpu"] = cpu


def device_view(a: np.ndarray, view: Callable[[np.ndarray], np.ndarray]) -> CudaArray:
    """``view(a)`` (a strided numpy view: transposed, sliced, broadcast...) over a device copy of ``a``."""
    a = np.ascontiguousarray(a)
    v = view(a)
    offset = v.__array_interface__["data"][0] - a.__array_interface__["data"][0]
    base = to_device(a)
    host = None if base.host is None else view(base.host)
    return CudaArray(v.shape, v.dtype, v.strides, base.ptr + offset, base, host)
