"""``tidu.Stream`` and ``tidu.Event``: PyTorch's device-generic streams and events.

tidu queues work in order, on one queue per device: on the CPU, the elementwise work it holds back
to fuse (``tidu/core/deferred.py``), run by ``synchronize``; on ``cuda``, one CUDA stream. So every
stream of a device is that queue. An event marks a point in it: on a GPU a CUDA event
(``numba.cuda.event``) recorded on tidu's stream; on the CPU, and under Numba's CUDA simulator
(which runs each kernel to its end at launch), the host's clock once the queued work has run.

>>> import tidu
>>> start, end = tidu.Event(enable_timing=True), tidu.Event(enable_timing=True)
>>> start.record()
>>> y = tidu.ones(256) * 2
>>> end.record()
>>> end.synchronize()
>>> start.elapsed_time(end) >= 0.0
True
"""

from __future__ import annotations

import time
from typing import Any

from .core.device import device as _device

__all__ = ["Event", "Stream"]


def _device_of(spec: Any) -> _device:
    """The device ``spec`` names; ``None``: the current accelerator's (``cuda`` where there is
    one), else the CPU, as PyTorch picks."""
    if spec is None:
        from .backends.cuda.runtime import is_available

        return _device("cuda", 0) if is_available() else _device("cpu")
    if isinstance(spec, int) and not isinstance(spec, bool):
        return _device("cuda", spec)
    d = spec if isinstance(spec, _device) else _device(spec)
    if d.type == "cuda":
        if d.index not in (None, 0):
            raise ValueError(f"Expected a cuda device with index 0 (tidu uses one GPU), but got: {d}")
        return _device("cuda", 0)
    return d


def _flush() -> None:
    """Launch the work tidu holds back to fuse, so that what an event marks has been queued."""
    from .core import deferred

    deferred.flush()


class Stream:
    """A device's queue of work: tidu keeps one per device, so every ``Stream`` of a device is
    the same one. ``synchronize`` waits for all of it; ``wait_stream`` and ``wait_event`` have
    nothing to order (one queue runs in order). A context manager, as PyTorch's.

    >>> import tidu
    >>> s = tidu.Stream("cpu")
    >>> s.device, s.query()
    (device(type='cpu'), True)
    >>> with s:
    ...     y = tidu.ones(2) + 1
    >>> s.synchronize()
    """

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = _device_of(device)
        self.priority = priority

    @property
    def device_type(self) -> int:
        """PyTorch's number for the device type: 0 for the CPU, 1 for CUDA."""
        return 0 if self.device.type == "cpu" else 1

    @property
    def device_index(self) -> int:
        return -1 if self.device.type == "cpu" else 0

    @property
    def stream_id(self) -> int:
        return 0

    def synchronize(self) -> None:
        """Wait for all the work queued on this device."""
        _flush()
        if self.device.type == "cuda":
            from .backends.cuda import runtime

            runtime.synchronize()

    def query(self) -> bool:
        """Whether all queued work is done (it is, once this returns: it waits)."""
        self.synchronize()
        return True

    def wait_stream(self, stream: Stream) -> None:
        """Nothing to wait for: a device's work is queued in order on one queue."""

    def wait_event(self, event: Event) -> None:
        """Nothing to wait for, as ``wait_stream``."""

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one if ``None``) at this point of the queue, and return it."""
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.device == self.device

    def __hash__(self) -> int:
        return hash((Stream, self.device))

    def __repr__(self) -> str:
        return f"tidu.Stream device_type={self.device.type}, device_index={self.device_index}, stream_id=0"


class Event:
    """A point in a device's queue of work: ``record`` marks it, ``query`` says whether the work
    before it is done, ``synchronize`` waits for that, ``elapsed_time(end)`` gives the
    milliseconds from this event to ``end`` (both made with ``enable_timing=True``). On a GPU
    it is a CUDA event on tidu's stream; on the CPU and under the simulator, the host's clock
    once the work before it has run. ``blocking`` is accepted (waiting blocks either way);
    ``interprocess`` events are not supported.

    >>> import tidu
    >>> e = tidu.Event("cpu")
    >>> e.query()
    True
    >>> e.record(); e.synchronize()
    """

    _error: type[Exception] = ValueError  # PyTorch's torch.Event raises ValueError, torch.cuda.Event RuntimeError

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        if interprocess:
            raise NotImplementedError("tidu's events cannot be shared between processes (interprocess=True)")
        self.device = _device_of(device)
        self.enable_timing, self.blocking = bool(enable_timing), bool(blocking)
        self._ns: int | None = None  # the host's clock at record (CPU and the simulator)
        self._gpu: Any = None  # the CUDA event on a GPU

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current point of the queue (of ``stream``'s device, which must be this
        event's)."""
        if stream is not None and stream.device.type != self.device.type:
            raise self._error(f"Event device type {self.device.type} does not match recording stream's device "
                              f"type {stream.device.type}.")
        _flush()
        if self.device.type == "cuda":
            from .backends.cuda import runtime

            state = runtime.runtime()
            if not state.simulated:
                from numba import cuda

                if self._gpu is None:
                    self._gpu = cuda.event(timing=self.enable_timing)
                self._gpu.record(cuda.external_stream(state.stream))
                return
        self._ns = time.perf_counter_ns()

    @property
    def _recorded(self) -> bool:
        return self._ns is not None or self._gpu is not None

    def query(self) -> bool:
        """Whether the work queued before the last ``record`` is done (True before any record)."""
        return self._gpu.query() if self._gpu is not None else True

    def synchronize(self) -> None:
        """Wait until the work queued before the last ``record`` is done."""
        if self._gpu is not None:
            self._gpu.synchronize()

    def wait(self, stream: Stream | None = None) -> None:
        """Make work queued later on ``stream`` wait for this event (tidu's one queue per device
        runs in order already)."""
        if self._gpu is not None:
            from numba import cuda

            from .backends.cuda import runtime

            self._gpu.wait(cuda.external_stream(runtime.runtime().stream))

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event's record to ``end_event``'s (waits for ``end_event``)."""
        if not isinstance(end_event, Event):
            raise TypeError(f"elapsed_time(): end_event must be an Event, not {type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise self._error("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise self._error("Both events must be recorded before calculating elapsed time.")
        if end_event.device.type != self.device.type:
            raise self._error(f"Both events must be on one device, got {self.device} and {end_event.device}.")
        if self._gpu is not None and end_event._gpu is not None:
            end_event.synchronize()
            return float(self._gpu.elapsed_time(end_event._gpu))
        return (end_event._ns - self._ns) / 1e6

    def __repr__(self) -> str:
        return (f"tidu.Event device_type={self.device.type}, device_index={-1 if self.device.type == 'cpu' else 0}, "
                f"enable_timing={self.enable_timing}, recorded={self._recorded}")
