"""The vectorizable float32 transcendentals against float64 numpy, over the whole float32 range."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tidu.backends.cpu import elementwise as cpu
from tidu.backends.cpu import fastmath

F32 = np.dtype(np.float32)


def _logistic(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


_erf = np.frompyfunc(math.erf, 1, 1)


def _erf64(x: np.ndarray) -> np.ndarray:
    return _erf(x).astype(np.float64)


FUNCTIONS = {"tanh": (fastmath.tanh_f32, np.tanh), "exp": (fastmath.exp_f32, np.exp),
             "logistic": (fastmath.logistic_f32, _logistic), "log": (fastmath.log_f32, np.log),
             "log1p": (fastmath.log1p_f32, np.log1p), "expm1": (fastmath.expm1_f32, np.expm1),
             "sin": (fastmath.sin_f32, np.sin), "cos": (fastmath.cos_f32, np.cos),
             "tan": (fastmath.tan_f32, np.tan), "erf": (fastmath.erf_f32, _erf64)}

# Where each one switches formula, saturates, or loses digits to cancellation.
BENDS = {"tanh": [(-11, 11)], "exp": [(-104, 89)], "logistic": [(-11, 11), (-104, 89)],
         "log": [(0.5, 2), (1e-3, 1e3)], "log1p": [(-1, 1), (-1e-6, 1e-6)], "expm1": [(-1, 1), (-20, 89)],
         "sin": [(-10, 10), (-1e4, 1e4)], "cos": [(-10, 10), (-1e4, 1e4)], "tan": [(-10, 10), (-1e4, 1e4)],
         "erf": [(-4.5, 4.5)]}


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between float32 arrays (NaN positions must agree)."""
    assert np.array_equal(np.isnan(got), np.isnan(ref)), "NaN where the reference has none (or the reverse)"
    g, r = (np.where(v.view(np.int32) < 0, -(v.view(np.int32) & 0x7FFFFFFF), v.view(np.int32)).astype(np.int64)
            for v in (got, ref))
    return np.where(np.isnan(ref), 0, np.abs(g - r))


def _check(name: str, x: np.ndarray) -> None:
    fast, exact = FUNCTIONS[name]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ref = exact(x.astype(np.float64)).astype(np.float32)
    assert _ulps(cpu.unary_kernel(fast)(x, F32), ref).max() <= 1


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_within_one_ulp_over_every_exponent(name: str) -> None:
    bits = np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32)  # every sign and exponent
    _check(name, bits.view(np.float32))


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_within_one_ulp_where_it_bends(name: str) -> None:
    for lo, hi in BENDS[name]:
        _check(name, np.linspace(lo, hi, 2_000_001, dtype=np.float32))


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_within_one_ulp_next_to_multiples_of_half_pi(name: str) -> None:
    """The float32 numbers nearest k pi/2 (k < 2^20) and their neighbours: the deepest cancellation."""
    near = (np.arange(1, 1 << 20) * (np.pi / 2)).astype(np.float32)
    _check(name, np.concatenate([near, np.nextafter(near, np.float32(0)), np.nextafter(near, np.float32(np.inf)), -near]))


def test_reduction_uses_two_over_pi() -> None:
    import mpmath  # installed with torch (sympy)
    with mpmath.workprec(300):
        assert fastmath.TWO_OVER_PI == int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** 256))


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_special_values(name: str) -> None:
    fast, exact = FUNCTIONS[name]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-45, 20.0, -20.0, 88.8, -104.0, 1.0, -1.0,
                  3e38, -3e38], np.float32)
    got = cpu.unary_kernel(fast)(x, F32)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ref = exact(x.astype(np.float64)).astype(np.float32)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], ref[1:])
    number = ~np.isnan(ref[1:])
    np.testing.assert_array_equal(np.signbit(got[1:])[number], np.signbit(ref[1:])[number])


@pytest.mark.parametrize("name", ["sin", "erf", "log1p", "tanh", "expm1"])
def test_vectorizes_inside_a_kernel_loop(name: str) -> None:
    """The point of these functions: inlined into the loop (alwaysinline), LLVM vectorizes it."""
    from numba import njit

    f = cpu.scalar(FUNCTIONS[name][0])  # registered again, as the kernel factories do

    @njit(error_model="numpy")
    def loop(x, out):  # noqa: ANN001, ANN202
        for i in range(x.shape[0]):
            out[i] = f(x[i])

    x = np.ones(4, np.float32)
    loop(x, np.empty_like(x))
    assert "vector.body" in loop.inspect_llvm(loop.signatures[0])


def test_fma_is_fused_when_compiled_and_plain_in_python() -> None:
    """Compiled, ``fma`` is LLVM's fmuladd (one instruction with FMA); called from Python, ``a * b + c``."""
    from numba import njit

    @njit(error_model="numpy")
    def loop(x, out):  # noqa: ANN001, ANN202
        for i in range(x.shape[0]):
            out[i] = fastmath.fma(x[i], 3.0, 1.0)

    x = np.arange(8, dtype=np.float64)
    out = np.empty_like(x)
    loop(x, out)
    np.testing.assert_array_equal(out, x * 3.0 + 1.0)
    assert "llvm.fmuladd" in loop.inspect_llvm(loop.signatures[0])
    assert fastmath.fma(2.0, 3.0, 1.0) == 7.0
