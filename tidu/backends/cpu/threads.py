"""Multi-core work: the kernels release the GIL (``nogil``), so a large flat loop runs as one
chunk per thread on a small thread pool, with no second compiled variant; reductions split
into tasks fixed by the shape (``run_tasks``), one range of tasks per thread.

``tidu.set_num_threads(n)`` sets the number of chunks (and, with ``threadpoolctl``
installed, numpy's BLAS threads); below ``PARALLEL_MIN`` elements a loop stays on one
thread, where a pool hand-off would cost more than it saves (``TASKS_PARALLEL_MIN`` for the
reductions, whose vector loops stream about 20 elements a nanosecond).

A matrix product of fewer than ``BLAS_PARALLEL_MIN`` multiply-adds runs on one BLAS thread
(``serial_blas``): splitting it gains nothing on an idle machine, and on a busy one each hand-off
waits for a core (a 32x128x128 product took 17 us on one thread and 120-200 us on two).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

PARALLEL_MIN = 1 << 18  # elements; a 1M-float tanh takes ~2.6 ms on one core, a hand-off ~30 us
TASKS_PARALLEL_MIN = 1 << 20  # elements; a vectorized 1M-float sum takes ~50 us on one core

# multiply-adds; on 2 idle cores OpenBLAS's second thread starts paying at about 1M (64x128x128)
BLAS_PARALLEL_MIN = 1 << 20

_state: dict[str, Any] = {"threads": os.cpu_count() or 1, "pool": None, "blas": None, "blas_calls": None}


def get_num_threads() -> int:
    """The number of threads tidu's CPU kernels use (PyTorch's ``torch.get_num_threads``).

    >>> import tidu
    >>> tidu.get_num_threads() >= 1
    True
    """
    return _state["threads"]


def set_num_threads(n: int) -> None:
    """Use ``n`` threads for large elementwise kernels, reductions and numpy's BLAS (``torch.set_num_threads``).

    >>> import tidu
    >>> before = tidu.get_num_threads()
    >>> tidu.set_num_threads(1)
    >>> tidu.get_num_threads()
    1
    >>> tidu.set_num_threads(before)
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, got {n!r}")
    n = int(n)
    if n != _state["threads"] and _state["pool"] is not None:
        _state["pool"].shutdown(wait=True)
        _state["pool"] = None
    _state["threads"] = n
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    _state["blas"] = threadpool_limits(limits=n, user_api="blas")


def _pool(threads: int) -> ThreadPoolExecutor:
    pool = _state["pool"]
    if pool is None:
        pool = _state["pool"] = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="tidu")
    return pool


def run_chunked(loop: Callable[..., None], *arrays: np.ndarray) -> None:
    """``loop(*arrays)`` over flat arrays of one length, split across threads when large."""
    n = arrays[0].shape[0]
    threads = _state["threads"]
    if threads == 1 or n < PARALLEL_MIN:
        loop(*arrays)
        return
    pool = _pool(threads)
    bounds = [n * i // threads for i in range(threads + 1)]
    futures = [pool.submit(loop, *(a[lo:hi] for a in arrays)) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    loop(*(a[: bounds[1]] for a in arrays))
    for future in futures:
        future.result()


def run_tasks(kernel: Callable[..., None], tasks: int, size: int, *args: Any) -> None:
    """``kernel(*args, lo, hi)`` runs the tasks ``[lo, hi)`` of ``range(tasks)``: one contiguous range
    per thread when the work (``size`` elements) is large. Each task writes only its own outputs,
    so the results do not depend on the number of threads."""
    threads = min(_state["threads"], tasks)
    if threads <= 1 or size < TASKS_PARALLEL_MIN:
        kernel(*args, 0, tasks)
        return
    pool = _pool(_state["threads"])
    bounds = [tasks * i // threads for i in range(threads + 1)]
    futures = [pool.submit(kernel, *args, lo, hi) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    kernel(*args, 0, bounds[1])
    for future in futures:
        future.result()


def _openblas_calls() -> tuple[Callable[[], int], Callable[[int], Any]] | None:
    """``openblas_get_num_threads`` and ``openblas_set_num_threads`` of numpy's BLAS (found through
    threadpoolctl), or ``None``: no threadpoolctl, another BLAS, or OpenBLAS on OpenMP (whose
    limit is per calling thread, set by other means)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    for lib in ThreadpoolController().select(internal_api="openblas").lib_controllers:
        if getattr(lib, "threading_layer", None) != "pthreads":
            continue
        dll = ctypes.CDLL(lib.filepath)
        for prefix in ("", "scipy_"):
            for suffix in ("", "64_", "_64"):
                get = getattr(dll, f"{prefix}openblas_get_num_threads{suffix}", None)
                put = getattr(dll, f"{prefix}openblas_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    return get, put
    return None


def serial_blas(size: int, product: Callable[..., Any], *args: Any) -> Any:
    """``product(*args)``, on one BLAS thread when it does fewer than ``BLAS_PARALLEL_MIN``
    multiply-adds (``size``); the BLAS's thread count is put back afterwards. After
    ``set_num_threads(1)``, which limits the BLAS to one thread, the count is not asked again
    (a limit raised later by other means, threadpoolctl's, lets small products take threads)."""
    if size >= BLAS_PARALLEL_MIN or _state["threads"] == 1 and _state["blas"] is not None:  # tidu limited it to one
        return product(*args)
    calls = _state["blas_calls"]
    if calls is None:
        calls = _state["blas_calls"] = _openblas_calls() or ()
    if not calls:
        return product(*args)
    get, put = calls
    before = get()
    if before == 1:
        return product(*args)
    put(1)
    try:
        return product(*args)
    finally:
        put(before)
