"""The GPU benchmarks' one timer: the median over rounds of the time per call of ``fn``,
each round ending in ``sync()`` so that the time covers the queued device work."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_per_call(fn: Callable[[], Any], sync: Callable[[], None], *, repeat: int, rounds: int = 7,
                    warmup: int = 1) -> float:
    """Seconds per call: ``warmup`` calls, then ``rounds`` rounds of ``repeat`` calls."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)
