"""The vectorizable float32 transcendentals against float64 numpy, over the whole float32 range."""

from __future__ import annotations

import numpy as np
import pytest

from tidu.backends.cpu import elementwise as cpu
from tidu.backends.cpu import fastmath

F32 = np.dtype(np.float32)


def _logistic(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


FUNCTIONS = {"tanh": (fastmath.tanh_f32, np.tanh), "exp": (fastmath.exp_f32, np.exp),
             "logistic": (fastmath.logistic_f32, _logistic)}


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between float32 arrays (NaN positions must agree)."""
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "NaN where the reference has none (or the reverse)"
    g, r = (np.where(v.view(np.int32) < 0, -(v.view(np.int32) & 0x7FFFFFFF), v.view(np.int32)).astype(np.int64)
            for v in (got, ref))
    return np.where(np.isnan(ref), 0, np.abs(g - r))


def _check(name: str, x: np.ndarray) -> None:
    fast, exact = FUNCTIONS[name]
    with np.errstate(invalid="ignore", over="ignore"):
        ref = exact(x.astype(np.float64)).astype(np.float32)
    assert _ulps(cpu.unary_kernel(fast)(x, F32), ref).max() <= 1


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_within_one_ulp_over_every_exponent(name: str) -> None:
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)  # every sign and exponent
    _check(name, bits.view(np.float32))


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_within_one_ulp_where_it_bends(name: str) -> None:
    _check(name, np.linspace(-11, 11, 2_000_001, dtype=np.float32))  # tanh's switch at 0.625, saturation
    _check(name, np.linspace(-104, 89, 2_000_001, dtype=np.float32))  # exp's subnormal results and overflow


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_special_values(name: str) -> None:
    fast, exact = FUNCTIONS[name]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-45, 20.0, -20.0, 88.8, -104.0], np.float32)
    got = cpu.unary_kernel(fast)(x, F32)
    with np.errstate(over="ignore"):
        ref = exact(x.astype(np.float64)).astype(np.float32)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], ref[1:])
    np.testing.assert_array_equal(np.signbit(got[1:]), np.signbit(ref[1:]))
