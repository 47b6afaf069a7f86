"""``torch.utils.benchmark``: ``Timer`` runs a statement many times and returns a ``Measurement``
(the time per run, with its median and spread), as PyTorch's does for Python statements. The
timer runs with ``num_threads`` of tidu's threads and waits for the GPU at each reading.

>>> from tidu.utils.benchmark import Timer
>>> m = Timer("x + y", globals={"x": 1, "y": 2}).timeit(1000)
>>> m.number_per_run, len(m.times), m.mean > 0
(1000, 1, True)
"""

from __future__ import annotations

import statistics
import textwrap
import timeit as _timeit
from collections.abc import Callable
from typing import Any

__all__ = ["Measurement", "Timer"]


def _synchronized_clock() -> float:
    from .. import cuda

    if cuda.is_available():
        cuda.synchronize()
    return _timeit.default_timer()


def _format(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(seconds) >= scale or unit == "ns":
            return f"{seconds / scale:.2f} {unit}"
    raise AssertionError("unreachable")


class Measurement:
    """The times of one ``Timer`` call: ``raw_times`` (seconds per block of ``number_per_run``
    runs), ``times`` (seconds per run, one per block), their ``mean``, ``median`` and ``iqr``."""

    def __init__(self, number_per_run: int, raw_times: list[float], task_spec: dict[str, Any],
                 metadata: dict | None = None) -> None:
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def iqr(self) -> float:
        if len(self.times) < 2:
            return 0.0
        q = statistics.quantiles(self.times, n=4, method="inclusive")
        return q[2] - q[0]

    @property
    def title(self) -> str:
        spec = self.task_spec
        return spec.get("label") or spec["stmt"]

    def __repr__(self) -> str:
        spec = self.task_spec
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>", self.title]
        if spec.get("sub_label") or spec.get("description"):
            lines.append(": ".join(x for x in (spec.get("sub_label"), spec.get("description")) if x))
        threads = spec["num_threads"]
        thread_text = f"{threads} thread{'s' if threads != 1 else ''}"
        if len(self.times) == 1:
            lines.append(f"  {_format(self.median)}")
            lines.append(f"  1 measurement, {self.number_per_run} runs , {thread_text}")
        else:
            q = statistics.quantiles(self.times, n=4, method="inclusive")
            lines.append(f"  Median: {_format(self.median)}")
            lines.append(f"  IQR:    {_format(self.iqr)} ({_format(q[0])} to {_format(q[2])})")
            lines.append(f"  {len(self.times)} measurements, {self.number_per_run} runs per measurement, {thread_text}")
        return "\n".join(lines)


class Timer:
    """Time ``stmt`` (Python source, or a callable) after ``setup``, with ``globals`` as its
    namespace and tidu on ``num_threads`` threads; ``label``, ``sub_label`` and ``description``
    title the measurement."""

    def __init__(self, stmt: str | Callable[[], Any] = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = _synchronized_clock, globals: dict | None = None,  # noqa: A002
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language: str = "python") -> None:
        if language not in ("python", "py"):
            raise ValueError(f"tidu's Timer runs Python statements, not {language!r}")
        if not isinstance(stmt, str) and not callable(stmt):
            raise ValueError("Currently only a `str` stmt is supported.")
        namespace = dict(globals or {})
        if global_setup:
            exec(textwrap.dedent(global_setup), namespace)  # noqa: S102 - the caller's own code, as PyTorch's
        self._timer = _timeit.Timer(stmt if callable(stmt) else textwrap.dedent(stmt), textwrap.dedent(setup),
                                    timer=timer, globals=namespace)
        self._num_threads = num_threads
        self._task_spec = {"stmt": stmt if isinstance(stmt, str) else getattr(stmt, "__name__", repr(stmt)),
                           "setup": setup, "label": label, "sub_label": sub_label, "description": description,
                           "env": env, "num_threads": num_threads}

    def _run(self, number: int) -> float:
        from .. import get_num_threads, set_num_threads

        previous = get_num_threads()
        set_num_threads(self._num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            set_num_threads(previous)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs (after a warm-up of ``min(number, 100)`` runs)."""
        self._run(min(number, 100))
        return Measurement(number, [self._run(number)], self._task_spec)

    def _block_size(self, min_block_time: float = 0.025) -> int:
        """Runs per block: doubled until a block takes ``min_block_time``."""
        number = 1
        while self._run(number) < min_block_time and number < 1 << 30:
            number *= 2
        return number

    def blocked_autorange(self, callback: Callable[[int, float], None] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of runs, each long enough to time well, until ``min_run_time`` has passed."""
        number = self._block_size()
        times: list[float] = []
        while sum(times) < min_run_time or not times:
            elapsed = self._run(number)
            times.append(elapsed)
            if callback is not None:
                callback(number, elapsed)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable[[int, float], None] | None = None) -> Measurement:
        """Blocks of runs until the spread of the per-run times (``iqr / median``) is below
        ``threshold`` with ``min_run_time`` spent, or ``max_run_time`` has passed."""
        number = self._block_size()
        times: list[float] = []
        while True:
            elapsed = self._run(number)
            times.append(elapsed)
            if callback is not None:
                callback(number, elapsed)
            m = Measurement(number, times, self._task_spec)
            spent = sum(times)
            if len(times) > 3 and spent >= min_run_time and m.iqr / m.median < threshold:
                return m
            if spent >= max_run_time:
                return m
