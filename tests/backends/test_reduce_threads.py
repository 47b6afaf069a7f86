"""Large reductions split over threads: values as numpy's, and the same bits for any thread count."""

from __future__ import annotations

import numpy as np
import pytest

import tidu
from tidu.backends.cpu import reduce as cpu
from tidu.backends.cpu import threads

N = threads.PARALLEL_MIN

# (shape, axes): full and row reductions (blocks along a row), a reduction over a short inner
# axis (blocks of the reduced axis), over the leading axis (column chunks), middle axes, and
# one just below the threshold.
CASES = [((2 * N + 5,), (0,)), ((3, 2 * N + 1), (1,)), ((N // 2 + 3, 4), (0,)), ((2 * N // 600, 600), (0,)),
         ((5, N // 7, 9), (1,)), ((4, 97, N // 400, 3), (1, 2)), ((2 * N // 64, 64), (1,)),
         ((N - 1,), (0,)), ((7, N // 3, 2), (0, 2))]
DTYPES = [np.float32, np.float64, np.int32]


@pytest.fixture
def restore_threads(monkeypatch):
    """Also splits every reduction of the cases over the threads (the real threshold is higher)."""
    monkeypatch.setattr(threads, "TASKS_PARALLEL_MIN", 0)
    before = tidu.get_num_threads()
    yield
    tidu.set_num_threads(before)


def _data(shape: tuple[int, ...], dtype: type, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = np.nan if seed % 2 else flat[0]  # NaN, or repeats for argmax ties
        return x
    return rng.integers(-1000, 1000, shape).astype(dtype)


def _near_one(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    rng = np.random.default_rng(1)
    if np.dtype(dtype).kind == "f":
        return (1 + rng.standard_normal(shape) * 1e-3).astype(dtype)
    return rng.choice(np.array([1, 1, 1, -1, 3], dtype), shape)  # wraps in int64 like numpy


def _each_thread_count(fn) -> np.ndarray:  # noqa: ANN001
    results = []
    for count in (1, 2, 3):
        tidu.set_num_threads(count)
        results.append(fn())
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])  # bit-identical, NaN in the same places
        assert other.dtype == results[0].dtype
    return results[0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes"), CASES)
def test_sum_and_max(shape: tuple[int, ...], axes: tuple[int, ...], dtype: type, restore_threads) -> None:
    x = _data(shape, dtype, seed=len(shape))
    got = _each_thread_count(lambda: cpu.sum_axes(x, axes))
    exact = np.sum(x.astype(np.float64 if x.dtype.kind == "f" else np.int64), axis=axes)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, exact.astype(got.dtype), rtol=tol, atol=tol)
    np.testing.assert_array_equal(_each_thread_count(lambda: cpu.max_axes(x, axes)), np.max(x, axis=axes))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes"), CASES)
def test_prod(shape: tuple[int, ...], axes: tuple[int, ...], dtype: type, restore_threads) -> None:
    x = _near_one(shape, dtype)
    got = _each_thread_count(lambda: cpu.prod_axes(x, axes))
    exact = np.prod(x.astype(np.float64 if x.dtype.kind == "f" else np.int64), axis=axes).astype(got.dtype)
    np.testing.assert_allclose(got, exact, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [*DTYPES, np.bool_])
@pytest.mark.parametrize(("shape", "axes"), [c for c in CASES if len(c[1]) == 1])
def test_argmax_and_argmin(shape: tuple[int, ...], axes: tuple[int, ...], dtype: type, restore_threads) -> None:
    for seed in (1, 2):  # with NaNs, with ties
        x = _data(shape, dtype, seed) if dtype != np.bool_ else np.random.default_rng(seed).random(shape) < 1e-5
        for largest, ref in ((True, np.argmax), (False, np.argmin)):
            got = _each_thread_count(lambda: cpu.arg_axis(x, axes[0], largest))  # noqa: B023
            np.testing.assert_array_equal(got, ref(x, axis=axes[0]))


def test_public_reductions_agree_across_thread_counts(restore_threads) -> None:
    x = tidu.tensor(_data((4 * N + 4,), np.float32, seed=4))
    for op in (x.sum, x.max, x.argmax, lambda: x.reshape(-1, 4).sum(0), lambda: x.reshape(4, -1).sum(1)):
        _each_thread_count(lambda: op().numpy())  # noqa: B023


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arg_and_max_on_signed_zeros_infinities_and_nans(dtype: type) -> None:
    for values in ([-0.0, 0.0, -1.0], [0.0, -0.0], [1, np.nan, 5, np.nan], [-np.inf, -np.inf], [np.inf, 3, np.inf],
                   [-np.nan, 2.0], [-3.0, -np.inf]):
        x = np.array(values, dtype)
        assert cpu.arg_axis(x, 0, True) == np.argmax(x)
        assert cpu.arg_axis(x, 0, False) == np.argmin(x)
        np.testing.assert_array_equal(cpu.max_axes(x, (0,)), np.max(x))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_small_sums_take_numpy_with_the_same_accumulation(dtype):
    """At and below ``SMALL_SUM`` elements a sum is numpy's (float64 or int64 accumulation, as the
    blocked path's); the two paths agree on either side of the threshold, 0-d results included."""
    rng = np.random.default_rng(3)
    for n in (cpu.SMALL_SUM, cpu.SMALL_SUM + 16):  # 256 or 257 rows of 16
        x = (rng.standard_normal((n // 16, 16)) * 100).astype(dtype) if dtype is not np.bool_ else rng.random((n // 16, 16)) > 0.5
        for axes in ((0,), (1,), (0, 1)):
            got = cpu.sum_axes(x, axes)
            want = np.add.reduce(x, axis=axes, dtype=np.float64 if dtype is np.float32 else np.int64)
            assert type(got) is np.ndarray and got.shape == want.shape
            assert got.dtype == (np.int64 if dtype is np.bool_ else dtype)
            np.testing.assert_allclose(got, want.astype(got.dtype), rtol=1e-7)
