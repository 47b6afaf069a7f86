"""The CUDA kernels of the reductions, cumsum and softmax against the CPU kernels.

Each case runs ``prim.impls["cuda"]`` on a ``CudaArray`` and ``prim.impls["cpu"]`` on the
same numpy array: same shape, same dtype, values equal (ints, bool) or close (floats).
In CI this is Numba's simulator (cooperative kernels with 4 threads a block); on a GPU,
``python bench/gpu_kernels.py`` runs the same kernels on large arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

from tidu.backends.cuda import reduce as kernels
from tidu.backends.cuda import scan, softmax
from tidu.backends.cuda.memory import CudaArray
from tidu.primitives import nn
from tidu.primitives import reduce as red

RTOL = {"float32": 2e-5, "float64": 1e-12}


def make(shape: tuple[int, ...], dtype: str, seed: int = 0, low: int = -5, high: int = 6) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        return rng.integers(low, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def check(prim, a: np.ndarray, atol: float = 0.0, **params) -> None:  # noqa: ANN001
    want = prim.impls["cpu"](a, **params)
    got = prim.impls["cuda"](CudaArray.from_host(a), **params)
    assert isinstance(got, CudaArray) and got.is_c_contiguous
    got = got.copy_to_host()
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype.name], atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


# (shape, axes): 0-d, no axes, short rows (a thread each), rows longer than a block, inner > 1,
# non-adjacent axes, several adjacent axes, size-1 axes, empty input and empty output, full.
CASES = [
    ((), ()),
    ((6,), ()),
    ((5,), (0,)),
    ((3, 70), (1,)),
    ((2, 300), (1,)),
    ((4, 3, 5), (1,)),
    ((4, 3, 5), (0,)),
    ((4, 3, 5), (0, 2)),
    ((2, 3, 40), (1, 2)),
    ((1, 1, 7), (0, 1)),
    ((3, 1), (1,)),
    ((3, 50), (0, 1)),
    ((0, 4), (0,)),
    ((3, 0), (0,)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize(("shape", "axes"), CASES)
def test_reduce_sum(shape: tuple[int, ...], axes: tuple[int, ...], dtype: str) -> None:
    check(red.reduce_sum, make(shape, dtype), atol=1e-5, axes=axes)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize(("shape", "axes"), CASES)
def test_reduce_prod(shape: tuple[int, ...], axes: tuple[int, ...], dtype: str) -> None:
    rng = np.random.default_rng(1)
    if dtype.startswith("int"):
        a = rng.choice(np.array([-1, 1, 1, 1, 2, 0], dtype), shape)
    else:
        a = rng.uniform(0.9, 1.1, shape).astype(dtype)
    check(red.reduce_prod, a, axes=axes)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize(("shape", "axes"), [c for c in CASES if c != ((0, 4), (0,))])  # max of nothing: an error
def test_reduce_max(shape: tuple[int, ...], axes: tuple[int, ...], dtype: str) -> None:
    check(red.reduce_max, make(shape, dtype), axes=axes)


def with_specials(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random floats with rows of NaN (one, several), -inf and +inf along the last axis."""
    a = make(shape, dtype, seed=2)
    rows = a.reshape(-1, shape[-1])
    rows[0, 3] = np.nan
    rows[1, 1], rows[1, -2] = np.nan, np.nan
    rows[2, :] = -np.inf
    rows[3, 2] = np.inf
    return a


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "axes"), [((5, 6), (1,)), ((5, 40), (1,)), ((5, 6), (0,)), ((5, 40), (0, 1))])
def test_reduce_max_propagates_nan(shape: tuple[int, ...], axes: tuple[int, ...], dtype: str) -> None:
    check(red.reduce_max, with_specials(shape, dtype), axes=axes)


ARG_CASES = [((5,), 0), ((3, 70), 1), ((2, 300), 1), ((4, 3, 5), 1), ((4, 3, 5), 0), ((4, 3, 5), 2),
             ((1, 1, 7), 2), ((3, 1), 1), ((3, 0), 0), ((0, 3), 1)]


@pytest.mark.parametrize("prim", [red.argmax, red.argmin], ids=["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
@pytest.mark.parametrize(("shape", "axis"), ARG_CASES)
def test_arg_reductions_take_the_first_extreme(prim, shape: tuple[int, ...], axis: int, dtype: str) -> None:  # noqa: ANN001
    check(prim, make(shape, dtype, low=0, high=3), axis=axis)  # few distinct values: many ties


@pytest.mark.parametrize("prim", [red.argmax, red.argmin], ids=["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "axis"), [((5, 6), 1), ((5, 40), 1), ((5, 40), 0)])
def test_arg_reductions_take_the_first_nan(prim, shape: tuple[int, ...], axis: int, dtype: str) -> None:  # noqa: ANN001
    check(prim, with_specials(shape, dtype), axis=axis)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
@pytest.mark.parametrize("shape", [(3, 50), (3, 5)])
def test_extremes_equal_to_the_identity(dtype: str, shape: tuple[int, ...]) -> None:
    """Rows at the dtype's lowest (highest) value: max is that value, argmax (argmin) the first index."""
    lo, hi = (-np.inf, np.inf) if dtype.startswith("float") else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    low, high = np.full(shape, lo, dtype), np.full(shape, hi, dtype)
    check(red.reduce_max, low, axes=(1,))
    check(red.argmax, low, axis=1)
    check(red.argmin, high, axis=1)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split rows and columns into chunks as a GPU would for large arrays."""
    for module in (kernels, scan, softmax):
        monkeypatch.setattr(module, "ROW_CHUNK", 16)
        monkeypatch.setattr(module, "TARGET_BLOCKS", 8)
    for module in (kernels, scan, softmax):
        monkeypatch.setattr(module, "COL_CHUNK", 4)
        monkeypatch.setattr(module, "TARGET_THREADS", 16)
    monkeypatch.setattr(kernels, "SPLIT_MIN", 0)


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
@pytest.mark.parametrize(("shape", "axes"), [((2, 60), (1,)), ((41, 3), (0,)), ((120,), (0,)), ((3, 37, 2), (0, 2))])
def test_chunked_reductions(shape: tuple[int, ...], axes: tuple[int, ...], dtype: str) -> None:
    a = make(shape, dtype, low=0, high=4)
    check(red.reduce_sum, a, atol=1e-4, axes=axes)
    check(red.reduce_max, a, axes=axes)
    if len(axes) == 1:
        check(red.argmax, a, axis=axes[0])
        check(red.argmin, a, axis=axes[0])


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("dtype", ["float64", "int64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("shape", "axis"), [((1, 70), 1), ((30, 3), 0), ((2, 21, 3), 1)])
def test_chunked_cumsum(shape: tuple[int, ...], axis: int, dtype: str, reverse: bool) -> None:
    check(red.cumsum, make(shape, dtype), atol=1e-9, axis=axis, reverse=reverse)


SCAN_CASES = [((), 0), ((5,), 0), ((2, 40), 1), ((1, 100), 1), ((4, 3, 5), 1), ((4, 3, 5), 0), ((4, 3, 5), 2),
              ((0, 3), 1), ((3, 0), 1), ((3, 1), 1)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize(("shape", "axis"), SCAN_CASES)
def test_cumsum(shape: tuple[int, ...], axis: int, dtype: str, reverse: bool) -> None:
    check(red.cumsum, make(shape, dtype), atol=1e-4, axis=axis, reverse=reverse)


SOFTMAX_CASES = [((), 0), ((5,), 0), ((3, 70), 1), ((2, 300), 1), ((4, 3, 5), 1), ((4, 3, 5), 0), ((4, 3, 5), 2),
                 ((0, 4), 1), ((3, 1), 1)]


@pytest.mark.parametrize("prim", [nn.softmax, nn.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "axis"), SOFTMAX_CASES)
def test_softmax(prim, shape: tuple[int, ...], axis: int, dtype: str) -> None:  # noqa: ANN001
    check(prim, 3 * make(shape, dtype), atol=1e-6, axis=axis)


# inf - inf: the simulator computes on numpy scalars in its own threads, which warn
QUIET = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


@QUIET
@pytest.mark.parametrize("prim", [nn.softmax, nn.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "axis"), [((5, 6), 1), ((5, 40), 1), ((5, 6), 0)])
def test_softmax_of_nan_and_infinite_rows(prim, shape: tuple[int, ...], axis: int, dtype: str) -> None:  # noqa: ANN001
    check(prim, with_specials(shape, dtype), atol=1e-6, axis=axis)


@QUIET
@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize(("prim", "dtype"), [(nn.softmax, "float32"), (nn.log_softmax, "float64")],
                         ids=["softmax", "log_softmax"])
def test_chunked_softmax(prim, dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    """Rows cut into chunks of 14: one with a NaN, one whose first chunk is all -inf (it adds
    nothing), one all -inf (NaN, as the CPU), one finite."""
    monkeypatch.setattr(softmax, "TARGET_BLOCKS", 64)
    assert softmax.split(40, 4, softmax.ROW_CHUNK, softmax.TARGET_BLOCKS) == 3
    a = make((4, 40), dtype)
    a[0, 3] = np.nan
    a[1, :20] = -np.inf
    a[2] = -np.inf
    check(prim, a, atol=1e-6, axis=1)


@QUIET
@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize(("prim", "dtype"), [(nn.softmax, "float64"), (nn.log_softmax, "float32")],
                         ids=["softmax", "log_softmax"])
def test_chunked_softmax_along_columns(prim, dtype: str) -> None:  # noqa: ANN001
    """Columns of 20 cut into 3 chunks: one with a NaN, one whose first chunk is all -inf, one all -inf."""
    a = make((2, 20, 3), dtype)
    a[0, 3, 0] = np.nan
    a[0, :8, 1] = -np.inf
    a[1, :, 2] = -np.inf
    assert softmax.split(20, 6, softmax.COL_CHUNK, softmax.TARGET_THREADS) == 3
    check(prim, a, atol=1e-6, axis=1)


@QUIET
@pytest.mark.parametrize("x", [0.5, -np.inf, np.inf, np.nan])
def test_softmax_of_a_scalar(x: float) -> None:
    check(nn.softmax, np.array(x), axis=0)
    check(nn.log_softmax, np.array(x), axis=0)


def test_block_shapes() -> None:
    assert [kernels.block_threads(n) for n in (1, 33, 64, 65, 1000)] == [32, 64, 64, 128, 256]
    assert kernels.split(10_000_000, 1, kernels.ROW_CHUNK, kernels.TARGET_BLOCKS) == 1024
    assert kernels.split(4096, 4096, kernels.ROW_CHUNK, kernels.TARGET_BLOCKS) == 1
    assert kernels.split(10, 1, 4, 100) == 3  # no empty chunk: 4 + 4 + 2
    assert kernels.split(0, 1, 4, 100) == 1


def test_small_column_sums_launch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bias gradient's column sum (128 x 512) is one launch: no chunk partials for small inputs."""
    from tidu.backends.cuda import launch

    launches = []
    for method in ("launch", "__call__"):
        run = getattr(launch.Kernel, method)
        monkeypatch.setattr(launch.Kernel, method,
                            lambda self, *a, run=run, **k: launches.append(1) or run(self, *a, **k))
    prepare = launch.Kernel.fixed_shaped  # a prepared launch (``fixed`` too): count what it returns

    def counted(self, *a):  # noqa: ANN001, ANN202
        run = prepare(self, *a)
        return lambda *arrays: launches.append(1) or run(*arrays)

    monkeypatch.setattr(launch.Kernel, "fixed_shaped", counted)
    monkeypatch.setattr(kernels, "_ONE_LAUNCH", {})  # prepared afresh, through the spies
    a = make((128, 512), "float32", low=0, high=4)
    check(red.reduce_sum, a, atol=1e-3, axes=(0,))
    assert len(launches) == 1


def test_a_reduction_of_one_launch_is_prepared_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full sum, a row sum and a row max launch from an argument buffer packed when their
    signature is first met; reductions over two runs of axes, or in two launches, do not."""
    from tidu.backends.cuda import launch

    prepared = []
    prepare = launch.Kernel.fixed_shaped  # ``fixed``'s too
    monkeypatch.setattr(launch.Kernel, "fixed_shaped", lambda self, *a: prepared.append(a) or prepare(self, *a))
    monkeypatch.setattr(kernels, "_ONE_LAUNCH", {})
    a = make((4, 1000), "float32", low=-2, high=2)
    for _ in range(3):
        check(red.reduce_sum, a, atol=1e-3, axes=(0, 1))
        check(red.reduce_sum, a, atol=1e-3, axes=(1,))
        check(red.reduce_max, a, axes=(1,))
    assert len(prepared) == 3
    check(red.reduce_sum, make((4, 6, 5), "float64"), atol=1e-9, axes=(0, 2))  # two runs of axes
    monkeypatch.setattr(kernels, "SPLIT_MIN", 64)  # 5000 elements then take partials and a second launch
    check(red.reduce_sum, make((5000,), "float32"), atol=1e-3, axes=(0,))
    assert len(prepared) == 3
