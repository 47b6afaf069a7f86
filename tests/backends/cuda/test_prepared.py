"""Prepared kernels (``Primitive.def_prepare``): the launch an eager call of one signature makes
once agrees with the primitive's CUDA kernel (``impls["cuda"]``), which ``oracle.check`` holds to
the CPU's; on C-contiguous operands through the prepared launch, on strided ones through the
kernel it falls back to. In the simulator in CI, on a GPU through the device tool."""

from __future__ import annotations

import numpy as np
import pytest

import tidu
from tidu.core import deferred, dispatch
from tidu.core.aval import ShapeDtype
from tidu.core.dtypes import bool_, float32, float64, int64
from tidu.core.primitive import REGISTRY

from .oracle import device_view, to_device

PREPARED = sorted((p for p in REGISTRY.values() if "cuda" in p.prepares), key=lambda p: p.name)


def _operand(dtype: object, rng: np.random.Generator) -> np.ndarray:
    """A (5, 3) array in every elementwise primitive's domain (positive, no zero divisor)."""
    if dtype is bool_:
        return rng.integers(0, 2, (5, 3)).astype(bool)
    if dtype is int64:
        return rng.integers(1, 6, (5, 3))
    return rng.uniform(0.5, 2.0, (5, 3)).astype(dtype.np)


def _signatures(prim: object) -> list[tuple[ShapeDtype, ...]]:
    """The operand avals, one dtype for all operands, that the primitive's shape rule accepts."""
    arity = prim.prepares["cuda"].__code__.co_argcount
    found = []
    for dtype in (float32, float64, int64, bool_):
        avals = (ShapeDtype((5, 3), dtype, "cuda"),) * arity
        try:
            prim.abstract_eval(*avals)
        except (TypeError, RuntimeError, ValueError):
            continue
        found.append(avals)
    return found


def test_the_elementwise_primitives_prepare() -> None:
    names = {p.name for p in PREPARED}
    assert {"add", "mul", "exp", "tanh", "sin", "neg"} <= names


@pytest.mark.parametrize("prim", PREPARED, ids=lambda p: p.name)
def test_prepared_kernel_matches_the_kernel(prim: object) -> None:
    rng = np.random.default_rng(0)
    signatures = _signatures(prim)
    assert signatures
    for avals in signatures:
        prepared = prim.prepares["cuda"](*avals)
        arrays = [_operand(a.dtype, rng) for a in avals]
        want = prim.impls["cuda"](*[to_device(a) for a in arrays]).copy_to_host()
        if prepared is None:  # an integer division's zero-divisor check reads the operands
            assert avals[0].dtype is int64 and prim.name in ("div", "floor_divide", "remainder", "fmod")
            continue
        out = prepared(*[to_device(a) for a in arrays])
        assert out.shape == (5, 3) and out.is_c_contiguous
        np.testing.assert_array_equal(out.copy_to_host(), want)
        # strided operands of the signature's shape: the transposes of (3, 5) arrays
        flipped = [np.ascontiguousarray(a.T) for a in arrays]
        views = [device_view(a, np.transpose) for a in flipped]
        assert not views[0].is_c_contiguous
        np.testing.assert_array_equal(prepared(*views).copy_to_host(), want)


def test_eager_calls_run_the_prepared_kernel() -> None:
    """``a + b`` with deferral off takes the signature's prepared kernel, with the kernel's values."""
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal((4, 6)).astype(np.float32) for _ in range(2))
    a, b = tidu.tensor(x, device="cuda"), tidu.tensor(y, device="cuda")
    switch, deferred.ENABLED = deferred.ENABLED, False
    try:
        out = a + b
        again = (a + b).exp()
    finally:
        deferred.ENABLED = switch
    entry = dispatch._SAME[(tidu.primitives.elementwise.add, (4, 6), tidu.float32, "cuda")]
    assert callable(entry[7])
    np.testing.assert_allclose(out.cpu().numpy(), x + y, rtol=1e-6)
    np.testing.assert_allclose(again.cpu().numpy(), np.exp(x + y), rtol=1e-5)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0), (1,)])
def test_prepared_kernels_of_empty_and_zero_dim_signatures(shape: tuple) -> None:
    """Zero-d and empty operands take the prepared kernel too (a launch over no elements for an
    empty one), with numpy's values and shapes."""
    rng = np.random.default_rng(2)
    x, y = (np.asarray(rng.standard_normal(shape), np.float32) for _ in range(2))
    a, b = tidu.tensor(x, device="cuda"), tidu.tensor(y, device="cuda")
    switch, deferred.ENABLED = deferred.ENABLED, False
    try:
        out = (a * b).tanh()
    finally:
        deferred.ENABLED = switch
    assert callable(dispatch._SAME[(tidu.primitives.elementwise.mul, shape, tidu.float32, "cuda")][7])
    assert out.shape == shape
    np.testing.assert_allclose(out.cpu().numpy(), np.tanh(x * y), rtol=1e-6)

