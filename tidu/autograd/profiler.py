"""``tidu.autograd.profiler``: PyTorch's older profiler names, on ``tidu.profiler``'s recording.

>>> import tidu
>>> with tidu.autograd.profiler.profile() as prof:
...     with tidu.autograd.profiler.record_function("scaled"):
...         _ = tidu.ones(2, 2) @ tidu.ones(2)
>>> [e.key for e in prof.key_averages()]
['scaled', 'tidu::dot_general']
"""

from __future__ import annotations

from typing import Any

from ..profiler import EventList, FunctionEvent, FunctionEventAvg, record_function
from ..profiler import profile as _profile

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]


class profile(_profile):  # noqa: N801 - PyTorch's name
    """The older profiler: records the ops inside a ``with`` block unless ``enabled=False``, with
    ``tidu.profiler.profile``'s ``key_averages``, ``table`` and ``export_chrome_trace``.

    >>> import tidu
    >>> with tidu.autograd.profiler.profile(enabled=False) as prof:
    ...     _ = tidu.ones(2) * 3
    >>> len(prof.function_events)
    0
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: Any = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, post_processing_timeout_s: float | None = None,
                 activity_filters: Any = None) -> None:
        super().__init__(record_shapes=record_shapes, with_stack=with_stack, with_flops=with_flops,
                         profile_memory=profile_memory, with_modules=with_modules)
        self.enabled = enabled

    def start(self) -> None:
        if self.enabled:
            super().start()

    def stop(self) -> None:
        if self.enabled:
            super().stop()

    @property
    def function_events(self) -> EventList:
        """The recorded events (``events()``)."""
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of every event, in microseconds."""
        return sum(e.self_cpu_time_total for e in self._events)

    def table(self, *args: Any, **kwargs: Any) -> str:
        """``key_averages().table(...)``."""
        return self.key_averages().table(*args, **kwargs)

    def total_average(self) -> FunctionEventAvg:
        return self.events().total_average()
