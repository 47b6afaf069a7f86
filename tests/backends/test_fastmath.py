"""The vectorizable float32 transcendentals against float64 numpy, over the whole float32 range."""

from __future__ import annotations

import numpy as np
import pytest

from tidu.backends.cpu import elementwise as cpu
from tidu.backends.cpu.fastmath import tanh_f32

F32 = np.dtype(np.float32)


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between float32 arrays (NaN positions must agree)."""
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "NaN where the reference has none (or the reverse)"
    g, r = (np.where(v.view(np.int32) < 0, -(v.view(np.int32) & 0x7FFFFFFF), v.view(np.int32)).astype(np.int64)
            for v in (got, ref))
    return np.where(np.isnan(ref), 0, np.abs(g - r))


def _reference(x: np.ndarray) -> np.ndarray:
    return np.tanh(x.astype(np.float64)).astype(np.float32)


@pytest.fixture(scope="module")
def kernel():
    return cpu.unary_kernel(tanh_f32)


def test_tanh_f32_within_one_ulp_over_every_exponent(kernel) -> None:
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)  # every sign and exponent
    x = bits.view(np.float32)
    with np.errstate(invalid="ignore"):
        assert _ulps(kernel(x, F32), _reference(x)).max() <= 1


def test_tanh_f32_within_one_ulp_where_it_bends(kernel) -> None:
    x = np.linspace(-11, 11, 4_000_001, dtype=np.float32)  # both branches and the switch at 0.625
    assert _ulps(kernel(x, F32), _reference(x)).max() <= 1


def test_tanh_f32_special_values(kernel) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-45, 20.0, -20.0], np.float32)
    got = kernel(x, F32)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], np.tanh(x[1:]))
    assert np.signbit(got[4]) and not np.signbit(got[3])
