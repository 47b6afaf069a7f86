"""``tidu.profiler``: PyTorch's profiler for tidu's ops, on the host's clock.

``profile`` records every op a script runs (``tidu::mul``, ``tidu::dot_general``, ... named by
their primitives), the queued elementwise work running (``tidu::flush_deferred``), each backward
pass (``autograd::backward``) and the ranges a script names with ``record_function``. Each event's
CPU time is the wall time on the host from the op's call to its return, its self time that less
the events inside it. ``key_averages()`` sums them by name into PyTorch's table.

While no profiler records, tidu's op path is the same code as without this module: ``profile``
swaps timed wrappers in for tidu's dispatch functions when it starts recording, and puts the
originals back when it stops (see "The profiler" in docs/guides/pytorch-differences.md).

>>> import tidu
>>> from tidu.profiler import profile, record_function, ProfilerActivity
>>> x, w = tidu.ones(8, 4), tidu.ones(4, 2)
>>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
...     with record_function("block"):
...         y = x @ w
>>> [(e.key, e.count, e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)]
[('block', 1, []), ('tidu::dot_general', 1, [[8, 4], [4, 2]])]
"""

from __future__ import annotations

import enum
import functools
import gzip
import importlib
import json
import os
import socket
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from .core.swaps import restore_globals, swap_globals

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """The activities PyTorch's profiler can trace. tidu times ops on the host (``CPU``); with
    ``CUDA`` asked for, CUDA ops are timed on the host too, from their call to their return (the
    kernels' own device time is not measured).

    >>> from tidu.profiler import ProfilerActivity
    >>> ProfilerActivity.CPU in (ProfilerActivity.CPU, ProfilerActivity.CUDA)
    True
    """

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    """The activities this machine can trace: ``CPU``, and ``CUDA`` where tidu has a CUDA device.

    >>> from tidu.profiler import ProfilerActivity, supported_activities
    >>> ProfilerActivity.CPU in supported_activities()
    True
    """
    from . import cuda

    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if cuda.is_available() else set())


class ProfilerAction(enum.Enum):
    """What a ``schedule`` asks of the profiler at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A ``profile`` schedule: after ``skip_first`` steps, cycles of ``wait`` idle steps, ``warmup``
    steps, and ``active`` recorded steps, the last of which hands the trace to ``on_trace_ready``;
    ``repeat`` cycles (``0``: until the profiler stops). ``skip_first_wait`` skips the first wait.

    >>> from tidu.profiler import schedule
    >>> s = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", stacklevel=2)
    cycle = wait + warmup + active

    def action(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step = step - skip_first + (wait if skip_first_wait else 0)
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        within = step % cycle
        if within < wait:
            return ProfilerAction.NONE
        if within < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if within < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


def _record_always(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[Any], None]:
    """An ``on_trace_ready`` that writes each trace to ``dir_name`` as
    ``{worker_name}.{milliseconds}.pt.trace.json`` (``.gz`` with ``use_gzip``), in the Chrome trace
    format TensorBoard's profiler plugin reads; ``worker_name`` defaults to ``{host}_{pid}``.

    >>> import os, tempfile, tidu
    >>> from tidu.profiler import profile, tensorboard_trace_handler
    >>> folder = tempfile.mkdtemp()
    >>> with profile(on_trace_ready=tensorboard_trace_handler(folder, "w0")):
    ...     _ = tidu.ones(2) + 1
    >>> [name.startswith("w0.") and name.endswith(".pt.trace.json") for name in os.listdir(folder)]
    [True]
    """
    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))

    return handler


# --- events -----------------------------------------------------------------------------------------------


class FunctionEvent:
    """One timed call: ``name``, the host times in microseconds (``cpu_time_total``, and
    ``self_cpu_time_total`` without the events inside it), ``input_shapes`` (with
    ``record_shapes``) and ``stack`` (with ``with_stack``)."""

    __slots__ = ("name", "start_ns", "end_ns", "child_ns", "input_shapes", "stack", "is_user_annotation",
                 "thread", "depth", "_dispatch")
    count = 1

    def __init__(self, name: str, input_shapes: list, stack: list[str], user: bool, depth: int,
                 dispatch: bool) -> None:
        self.name, self.input_shapes, self.stack, self.is_user_annotation = name, input_shapes, stack, user
        self.thread, self.depth, self._dispatch = threading.get_ident(), depth, dispatch
        self.child_ns = self.end_ns = 0
        self.start_ns = time.perf_counter_ns()

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000

    @property
    def self_cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns - self.child_ns) / 1000

    cpu_time = cpu_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} cpu_time_total={_format_time(self.cpu_time_total)} "
                f"self_cpu_time_total={_format_time(self.self_cpu_time_total)}>")


class FunctionEventAvg:
    """The events of one key summed: ``count``, ``cpu_time_total``, ``self_cpu_time_total`` and
    the mean ``cpu_time`` (microseconds)."""

    def __init__(self, key: str, input_shapes: list, stack: list[str]) -> None:
        self.key, self.input_shapes, self.stack = key, input_shapes, stack
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0
        self.is_user_annotation = False

    def add(self, event: Any) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    @property
    def self_cpu_time(self) -> float:
        return self.self_cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={_format_time(self.cpu_time_total)} "
                f"self_cpu_time_total={_format_time(self.self_cpu_time_total)}>")


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events (``profile.events()``) or of their sums (``key_averages()``), with
    PyTorch's ``table``."""

    def table(self, sort_by: str | None = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as PyTorch's text table: name, self and total CPU time (and their shares of
        the total self time), mean CPU time and number of calls, with input shapes and the source
        where they were recorded; sorted by the attribute ``sort_by`` (largest first), at most
        ``row_limit`` rows (``-1``: all).

        >>> import tidu
        >>> from tidu.profiler import profile
        >>> with profile() as prof:
        ...     _ = tidu.ones(3) * 2
        >>> print(prof.key_averages().table(sort_by="count", row_limit=1))  # doctest: +ELLIPSIS
        ---...
        Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls...
        Self CPU time total: ...
        """
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "depth", 0) == 0]
        if sort_by is not None:
            attr = sort_by.replace("cuda_", "device_")
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        self_total = sum(e.self_cpu_time_total for e in self) or 1.0
        fmt = _format_time if time_unit is None else functools.partial(_in_unit, unit=time_unit)
        shapes = any(e.input_shapes for e in rows)
        stacks = any(e.stack for e in rows)
        name_width = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        widths = [name_width] + [12] * 6
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
        if shapes:
            widths.append(min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_column_width))
            headers.append("Input Shapes")
        if stacks:
            widths.append(max_src_column_width)
            headers.append("Source Location")
        line = "  ".join("-" * w for w in widths) + "  "

        def row(cells: list[str]) -> str:
            return "".join(f"{cell[:w]:>{w}}  " for cell, w in zip(cells, widths))

        out = ([header] if header else []) + [line, row(headers), line]
        for e in rows:
            cells = [e.key[: name_width - 3] + "..." if len(e.key) > name_width else e.key,
                     f"{100 * e.self_cpu_time_total / self_total:.2f}%", fmt(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / self_total:.2f}%", fmt(e.cpu_time_total),
                     fmt(e.cpu_time_total / max(e.count, 1)), str(e.count)]
            if shapes:
                cells.append(str(e.input_shapes))
            if stacks:
                where = e.stack[0] if e.stack else ""
                cells.append(where if len(where) <= widths[-1] else "..." + where[len(where) - widths[-1] + 3:])
            out.append(row(cells))
        out += [line, f"Self CPU time total: {fmt(sum(e.self_cpu_time_total for e in self))}", ""]
        return "\n".join(out)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one, keyed ``Total``."""
        total = FunctionEventAvg("Total", [], [])
        for e in self:
            total.add(e)
        return total

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0) -> EventList:
        """The events summed by name (and input shapes, and the top ``group_by_stack_n`` frames)."""
        groups: dict[tuple, FunctionEventAvg] = {}
        for e in self:
            shapes = e.input_shapes if group_by_input_shapes else []
            stack = e.stack[:group_by_stack_n] if group_by_stack_n else []
            key = (e.key, str(shapes), tuple(stack))
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, shapes, stack)
            groups[key].add(e)
        return EventList(groups.values())


def _in_unit(us: float, unit: str) -> str:
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}
    if unit not in scale:
        raise ValueError(f"time_unit must be one of 's', 'ms', 'us', got {unit!r}")
    return f"{us / scale[unit]:.3f}{unit}"


# --- recording ----------------------------------------------------------------------------------------------


class _Session:
    """The events of one recording, and the open ones of each thread."""

    def __init__(self, record_shapes: bool, with_stack: bool) -> None:
        self.record_shapes, self.with_stack = record_shapes, with_stack
        self.events: list[FunctionEvent] = []
        self.local = threading.local()

    def open(self, name: str, tensors: Iterable[Any], user: bool, dispatch: bool = False) -> FunctionEvent | None:
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        if dispatch and stack and stack[-1]._dispatch and stack[-1].name == name:
            return None  # a dispatch function handing the same call to another: one op
        shapes = [list(getattr(t, "shape", ())) for t in tensors] if self.record_shapes else []
        where = _user_frames() if self.with_stack else []
        event = FunctionEvent(name, shapes, where, user, len(stack), dispatch)
        stack.append(event)
        self.events.append(event)
        return event

    def close(self, event: FunctionEvent | None) -> None:
        if event is None:
            return
        event.end_ns = time.perf_counter_ns()
        stack = self.local.stack
        while stack and stack.pop() is not event:  # an event left open by an exception inside it
            pass
        if stack:
            stack[-1].child_ns += event.end_ns - event.start_ns


def _user_frames() -> list[str]:
    """The calling frames outside tidu, innermost first, as PyTorch's ``file(line): function``."""
    here = os.path.dirname(os.path.abspath(__file__))
    frames = traceback.extract_stack()
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not os.path.abspath(f.filename).startswith(here)]


_SESSION: _Session | None = None  # the recording session, while one records


def _dispatch_targets() -> list[tuple[Any, str, Callable[[tuple], tuple[str, tuple]]]]:
    """The functions every op's call goes through, and how to read its name and tensors from
    their arguments: the one table of what the profiler times."""
    from .core import deferred, dispatch

    _backward = importlib.import_module("tidu.autograd.backward")  # tidu.autograd.backward is the function

    return [
        (dispatch, "bind_eager", lambda a: ("tidu::" + a[0].name, a[1])),
        (dispatch, "bind_same", lambda a: ("tidu::" + a[0].name, a[1])),
        (dispatch, "bind_one", lambda a: ("tidu::" + a[0].name, (a[1],))),
        (dispatch, "bind_broadcast", lambda a: ("tidu::broadcast_in_dim", (a[0],))),
        (dispatch, "bind_product", lambda a: ("tidu::dot_general", a[:2])),
        (deferred, "flush", lambda a: ("tidu::flush_deferred", ())),
        (_backward, "run_backward", lambda a: ("autograd::backward", ())),
    ]


def _timed(fn: Callable[..., Any], describe: Callable[[tuple], tuple[str, tuple]]) -> Callable[..., Any]:
    is_flush = fn.__name__ == "flush"  # called often with nothing queued: recorded only when it runs work

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        session = _SESSION
        if session is None:
            return fn(*args, **kwargs)
        if is_flush and not _pending():
            return fn(*args, **kwargs)
        name, tensors = describe(args)
        event = session.open(name, tensors, False, dispatch=True)
        try:
            return fn(*args, **kwargs)
        finally:
            session.close(event)

    return timed


def deferred_flush() -> None:
    """Run the queued elementwise work (through the timed ``flush`` while recording)."""
    from .core import deferred

    deferred.flush()


def _pending() -> bool:
    from .core.deferred import PENDING

    return bool(PENDING)


_SWAPPED: list[tuple[dict, str, Any, Any]] = []  # (module globals, name, original, wrapper) while wrappers are in


def _swap_in() -> None:
    """Put the timed wrappers in place of the dispatch functions in every tidu module that holds
    one (``core/swaps.py``)."""
    originals = {}
    for module, name, describe in _dispatch_targets():
        fn = getattr(module, name)
        originals[id(fn)] = (fn, _timed(fn, describe))
    _SWAPPED.extend(swap_globals(originals))


def _swap_out() -> None:
    restore_globals(_SWAPPED)


def _start_session(record_shapes: bool, with_stack: bool) -> _Session:
    global _SESSION
    if _SESSION is not None:
        raise RuntimeError("Profiler is already enabled: tidu records one profile at a time")
    _SESSION = _Session(record_shapes, with_stack)
    _swap_in()
    return _SESSION


def _stop_session() -> None:
    global _SESSION
    _swap_out()
    _SESSION = None


class record_function:  # noqa: N801 - PyTorch's name
    """Name a range of a script: while a profiler records, its time shows as an event called
    ``name``, with the ops inside it as its children. A context manager and a decorator; outside
    a profile it does nothing.

    >>> import tidu
    >>> from tidu.profiler import profile, record_function
    >>> @record_function("total")
    ... def total(x):
    ...     return x.sum()
    >>> with profile() as prof:
    ...     _ = total(tidu.ones(2))
    >>> [e.key for e in prof.key_averages()]
    ['total', 'tidu::reduce_sum']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"record_function(): name must be a str, got {type(name).__name__}")
        self.name, self.args = name, args
        self._events: list[tuple[_Session, FunctionEvent | None]] = []

    def __enter__(self) -> record_function:
        session = _SESSION
        if session is not None:
            self._events.append((session, session.open(self.name, (), True)))
        else:
            self._events.append((None, None))  # type: ignore[arg-type]
        return self

    def __exit__(self, *exc: Any) -> None:
        session, event = self._events.pop()
        if session is not None:
            session.close(event)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


class profile:  # noqa: N801 - PyTorch's name
    """Record tidu's ops inside a ``with`` block (or between ``start()`` and ``stop()``).

    With a ``schedule``, ``step()`` marks each training step and only the steps the schedule makes
    active are recorded, each cycle handed to ``on_trace_ready``. ``record_shapes`` keeps the
    input shapes of each op, ``with_stack`` the calling frames outside tidu. ``profile_memory``,
    ``with_flops`` and ``with_modules`` are accepted; tidu does not measure those, so the table has
    no such columns.

    >>> import tidu
    >>> from tidu.profiler import profile, schedule
    >>> traces = []
    >>> sched = schedule(wait=1, warmup=1, active=2)
    >>> with profile(schedule=sched, on_trace_ready=traces.append) as prof:
    ...     for step in range(8):
    ...         _ = tidu.ones(4).sum()
    ...         prof.step()
    >>> len(traces), prof.step_num
    (2, 8)
    >>> [(e.key, e.count) for e in prof.key_averages()]
    [('ProfilerStep#6', 1), ('tidu::reduce_sum', 2), ('ProfilerStep#7', 1)]
    """

    def __init__(self, *, activities: Iterable[ProfilerActivity] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        for a in activities or ():
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"profile(): activities must be ProfilerActivity values, got {a!r}")
        self.activities = set(activities) if activities is not None else supported_activities()
        self.record_shapes, self.with_stack = record_shapes, with_stack
        self.profile_memory, self.with_flops, self.with_modules = profile_memory, with_flops, with_modules
        self.schedule = schedule or _record_always
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._events: list[FunctionEvent] = []
        self._session: _Session | None = None
        self._step_range: record_function | None = None

    # the schedule's transitions, as PyTorch's profiler makes them
    def _start_trace(self) -> None:
        deferred_flush()  # work queued before recording is not the recorded code's
        self._session = _start_session(self.record_shapes, self.with_stack)

    def _stop_trace(self) -> None:
        if self._session is not None:
            deferred_flush()  # the recorded code's queued work runs, and is timed, before recording stops
            self._events = self._session.events
            self._session = None
            _stop_session()

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, before: ProfilerAction | None, after: ProfilerAction | None) -> None:
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if before is ProfilerAction.WARMUP and after is ProfilerAction.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
        if before in recording and (before is ProfilerAction.RECORD_AND_SAVE or after not in recording):
            if after is not None and before is ProfilerAction.RECORD:
                warnings.warn(f"Incorrect schedule: RECORD followed by {after.name}", stacklevel=3)
            self._stop_trace()
            if before is ProfilerAction.RECORD_AND_SAVE or after is None:
                self._trace_ready()
        if after in recording and self._session is None:
            self._start_trace()

    def start(self) -> None:
        """Start recording (as entering the ``with`` block)."""
        self._transit(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self._enter_step()

    def stop(self) -> None:
        """Stop recording (as leaving the ``with`` block); the trace goes to ``on_trace_ready``."""
        self._exit_step()
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Mark the start of the next step: the schedule decides whether it is recorded."""
        self._exit_step()
        before = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(before, self.current_action)
        if self.record_steps:
            self._enter_step()

    def _enter_step(self) -> None:
        self._step_range = record_function(f"ProfilerStep#{self.step_num}")
        self._step_range.__enter__()

    def _exit_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def events(self) -> EventList:
        """The recorded events, in the order they started."""
        return EventList(self._events)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events summed by name (and by input shapes with ``group_by_input_shape``, which
        needs ``record_shapes``; by the top ``group_by_stack_n`` frames, which needs ``with_stack``)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in the Chrome trace format (``chrome://tracing``, Perfetto, TensorBoard)."""
        origin = min((e.start_ns for e in self._events), default=0)
        trace = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.name,
                  "pid": os.getpid(), "tid": e.thread, "ts": (e.start_ns - origin) / 1000,
                  "dur": (e.end_ns - e.start_ns) / 1000,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}} for e in self._events]
        text = json.dumps({"traceEvents": trace, "displayTimeUnit": "ms"})
        if path.endswith(".gz"):
            with gzip.open(path, "wt") as f:
                f.write(text)
        else:
            with open(path, "w") as f:
                f.write(text)
