"""``tidu.set_num_threads``: large elementwise kernels split across threads give identical results."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tidu.backends.cpu import threads


@pytest.fixture
def restore_threads():
    before = tidu.get_num_threads()
    yield
    tidu.set_num_threads(before)


@pytest.mark.parametrize("n", [threads.PARALLEL_MIN - 1, threads.PARALLEL_MIN + 7, 3 * threads.PARALLEL_MIN + 1])
def test_chunked_kernels_match_one_thread(n: int, restore_threads) -> None:
    rng = np.random.default_rng(n)
    x = tidu.tensor(rng.standard_normal(n).astype(np.float32), requires_grad=True)
    y = tidu.tensor(rng.standard_normal(n).astype(np.float32))
    results = []
    for count in (1, 3):
        tidu.set_num_threads(count)
        out = tidu.where(x > 0, tidu.tanh(x * y), -x)
        out.sum().backward()
        results.append((out.detach().numpy().copy(), x.grad.numpy().copy()))
        x.grad = None
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def test_get_and_set_like_torch(restore_threads) -> None:
    tidu.set_num_threads(2)
    assert tidu.get_num_threads() == 2
    for bad in (0, -1, 1.5, True):
        with pytest.raises(RuntimeError, match="positive integer"):
            tidu.set_num_threads(bad)
    with pytest.raises((RuntimeError, TypeError)):
        torch.set_num_threads(0)


def test_blas_threads_follow(restore_threads) -> None:
    import threadpoolctl  # the test extra installs it (through scikit-learn); tidu uses it when present

    tidu.set_num_threads(1)
    blas = [info for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"]
    assert blas and all(info["num_threads"] == 1 for info in blas)


def test_small_products_run_on_one_blas_thread(restore_threads) -> None:
    threads.serial_blas(0, lambda: None)  # the calls serial_blas found: the BLAS numpy loaded first (another
    calls = threads._state["blas_calls"]  # one, scipy's, may be loaded since)
    if not calls:
        pytest.skip("numpy's BLAS is not OpenBLAS on pthreads")
    get, _ = calls
    tidu.set_num_threads(2)
    assert threads.serial_blas(threads.BLAS_PARALLEL_MIN - 1, get) == 1
    assert get() == 2  # put back
    assert threads.serial_blas(threads.BLAS_PARALLEL_MIN, get) == 2


def test_dot_general_passes_one_product_size(monkeypatch) -> None:
    from tidu.primitives import linalg

    sizes = []
    monkeypatch.setattr(linalg, "serial_blas", lambda size, fn, *args: sizes.append(size) or fn(*args))
    out = tidu.ones(5, 32, 16) @ tidu.ones(5, 16, 8)  # five 32x16x8 products
    assert sizes == [32 * 16 * 8]
    np.testing.assert_array_equal(out.numpy(), np.full((5, 32, 8), 16.0, np.float32))


def test_one_thread_set_by_tidu_asks_the_blas_no_more(restore_threads, monkeypatch) -> None:
    def refused() -> int:
        raise AssertionError("serial_blas asked the BLAS its thread count")

    monkeypatch.setitem(threads._state, "blas_calls", (refused, lambda n: None))
    tidu.set_num_threads(1)  # the BLAS limited to one thread by tidu itself: nothing to ask
    assert threads.serial_blas(threads.BLAS_PARALLEL_MIN - 1, lambda: 7) == 7
    tidu.set_num_threads(2)
    with pytest.raises(AssertionError, match="asked the BLAS"):
        threads.serial_blas(threads.BLAS_PARALLEL_MIN - 1, lambda: 7)
