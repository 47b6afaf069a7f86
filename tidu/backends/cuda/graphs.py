"""Compiled backward steps replayed as CUDA graphs: one launch for a whole backward pass.

A compiled backward step (tidu/autograd/compiled.py) runs the same kernels on every pass of a
training loop, and on the GPU each instruction costs host time (tidu's launch and allocation,
cuBLASLt's own call: 10-50 µs an instruction measured on an H200 host) that is most of a small
step's time. From a step's ``CAPTURE_AFTER``-th run on, its program is captured once
(``cuStreamBeginCapture`` on tidu's stream) and each later pass replays the graph:

- an input whose value lay in the same array, at the same place, on the run before the capture
  (a weight or a view of one, the batch of a loop over one batch) is read *in place*: a pass
  checks that its value is at that address in that layout, and copies nothing;
- the graph reads every other input from a fixed *static* array, laid out as the value it was
  captured with; each pass copies its gathered values in (one batched copy where they are laid
  out alike);
- the program's own arrays are the graph's memory (allocation nodes; the graph frees them
  when it is launched again), never tidu's cache;
- its results are copied into fresh arrays after the launch, so a pass's gradients outlive
  the next pass.

A pass whose in-place input is elsewhere runs the kernels, and ``MAX_MISSES`` such passes in
a row drop the graph (the step is captured again, copying every input). A graph's first
``TRIALS`` replays are timed against the kernels' run, and one no faster is dropped; a program
of fewer than ``MIN_PROGRAM`` instructions is never captured. A program that cannot be
captured (it reads a value on the host, copies a host constant, an input that is not a device
array) runs its kernels as before, and is not tried again. Graphs are off under the simulator
and with ``TIDU_CUDA_GRAPHS=0``; a step whose inputs and own memory exceed ``MAX_GRAPH_BYTES``
keeps its kernels, and at most ``MAX_REPLAYS`` steps hold a graph (the least recently replayed
gives its memory back first).
"""

from __future__ import annotations

import ctypes
import os
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..layout import storage
from . import driver, memory
from .copy import copy_into
from .memory import CudaArray
from .runtime import runtime
from .strided import span

ENABLED = os.environ.get("TIDU_CUDA_GRAPHS", "1") != "0"
CAPTURE_AFTER = 3  # a step is captured on its third run (the first two also compile its kernels)
MAX_REPLAYS = 32
CU_STREAM_CAPTURE_MODE_RELAXED = 2
CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1
MIN_PROGRAM = 8  # instructions; a shorter program is never captured
MAX_GRAPH_BYTES = 256 << 20  # a graph's static inputs and own memory; a larger step is not captured
TRIALS = 3  # replays timed against the kernels' run before a graph is kept
MAX_MISSES = 3  # passes in a row whose in-place inputs moved before a graph is dropped
STATS = {"captured": 0, "replayed": 0, "failed": 0, "dropped": 0, "missed": 0, "in_place": 0, "copied": 0}

_vp = ctypes.c_void_p
_PROTOTYPES = {
    "cuStreamBeginCapture_v2": [_vp, ctypes.c_int],
    "cuStreamEndCapture": [_vp, ctypes.POINTER(_vp)],
    "cuGraphInstantiateWithFlags": [ctypes.POINTER(_vp), _vp, ctypes.c_ulonglong],
    "cuGraphLaunch": [_vp, _vp],
    "cuGraphExecDestroy": [_vp],
    "cuGraphDestroy": [_vp],
}
_replays: OrderedDict[int, weakref.ref] = OrderedDict()  # id(step) -> the step, for steps holding a Replay
_moved: weakref.WeakSet = weakref.WeakSet()  # steps whose inputs read in place moved: they copy every input


def _library() -> ctypes.CDLL | None:
    """libcuda with the graph calls' argument types, or ``None`` (a driver without them)."""
    lib = driver.library()
    if not getattr(lib, "_tidu_graphs", False):
        try:
            for name, argtypes in _PROTOTYPES.items():
                fn = getattr(lib, name)
                fn.argtypes = argtypes
                fn.restype = ctypes.c_int
        except AttributeError:
            return None
        lib._tidu_graphs = True
    return lib


def runner(step: Any) -> Callable[[list[Any]], Sequence[Any]]:
    """What runs ``step``'s program on a pass's gathered device arrays: its kernels one by one
    (``step.fn``; the run before the capture timed), the capture (on the ``CAPTURE_AFTER``-th
    run), or the replay of its graph."""
    state = step.replay
    if state.__class__ is Replay:
        _replays.move_to_end(id(step))
        return lambda values: _replayed(state, step, values)
    if state is False or not ENABLED or runtime().simulated:
        return step.fn
    if state is None and len(step.program) < MIN_PROGRAM:
        step.replay = False  # a few kernels: their launches cost less than a replay's copies
        return step.fn
    count = 1 if state is None else state[0] + 1
    if count < CAPTURE_AFTER - 1:
        step.replay = (count, None, None)
        return step.fn
    if count == CAPTURE_AFTER - 1:
        return lambda values: _timed(step, count, values)
    return lambda values: _capture(step, values, state[1], state[2])


def _timed(step: Any, count: int, values: list[Any]) -> Sequence[Any]:
    """``step.fn(values)``, its host time kept for the capture to compare its replays with, and
    where its values lay (the capture reads in place those that lie there again)."""
    seen = [_lies(v) for v in values]
    start = time.perf_counter()
    results = step.fn(values)
    step.replay = (count, time.perf_counter() - start, seen)
    return results


def _place(value: Any) -> tuple | None:
    """Where a device array is and how it is laid out (``None`` for anything else)."""
    return (value.ptr, value.shape, value.strides, value.dtype) if type(value) is CudaArray else None


def _lies(value: Any) -> tuple | None:
    """The array whose memory a device array lies in (its root base, weakly) and its place there;
    ``None`` for anything else. Two are equal when the value lies at one place of one live array
    (weak references compare their referents)."""
    return (weakref.ref(storage(value)), _place(value)) if type(value) is CudaArray else None


def _replayed(replay: Replay, step: Any, values: list[Any]) -> Sequence[Any]:
    trial = replay.trials is not None
    if trial:
        start = time.perf_counter()
    results = replay(values)
    if results is None:
        if replay.misses >= MAX_MISSES:  # its in-place inputs moved for good: captured again later,
            step.replay = None  # copying every input
            _replays.pop(id(step), None)
            _moved.add(step)
            STATS["dropped"] += 1
        return step.fn(values)
    if trial:
        replay.trials.append(time.perf_counter() - start)
        if len(replay.trials) == TRIALS:
            if min(replay.trials) >= replay.eager:  # no faster than the kernels: not kept
                step.replay = False
                _replays.pop(id(step), None)
                STATS["dropped"] += 1
            replay.trials = None
    return results


class Replay:
    """A step's program as an instantiated CUDA graph; calling it on a pass's values checks that
    those it reads in place are where they were captured (``in_place``: input index and place),
    copies the others into their static arrays (``statics``, for the inputs ``copied``),
    launches the graph and returns copies of its results.

    Its first ``TRIALS`` replays are timed against the kernels' run (``eager`` seconds of host
    time): a graph no faster is dropped (a program of a few kernels and many inputs)."""

    __slots__ = ("graph", "exec", "statics", "copied", "in_place", "misses", "outs", "allocated", "launched",
                 "copy_in", "copy_out", "eager", "trials", "__weakref__")

    def __init__(self, graph: int, exec_: int, statics: list[Static], copied: list[int],
                 in_place: list[tuple[int, tuple]], copy_in: Copies, outs: list[CudaArray],
                 allocated: list[tuple[int, int]], eager: float | None) -> None:
        self.graph, self.exec, self.statics, self.outs, self.allocated = graph, exec_, statics, outs, allocated
        self.copied, self.in_place, self.misses = copied, in_place, 0
        self.launched = False
        self.copy_in = copy_in
        dense = [o for o in outs if o.is_c_contiguous and o.size]
        self.copy_out = Copies(None, [o.ptr for o in dense], [o.nbytes for o in dense])
        self.eager = eager
        self.trials: list[float] | None = None if eager is None else []

    def __call__(self, values: Sequence[CudaArray]) -> list[CudaArray] | None:
        """The results of the program on ``values``; ``None`` when an input read in place has
        moved (counted in ``misses``) or a value's layout cannot be copied into its static array
        (the caller runs the kernels instead)."""
        for i, place in self.in_place:
            value = values[i]
            if type(value) is not CudaArray or value.ptr != place[0] or value.strides != place[2]:
                self.misses += 1
                STATS["missed"] += 1
                return None
        self.misses = 0
        return self.launch() if _fill(self.statics, [values[i] for i in self.copied], self.copy_in) else None

    def launch(self) -> list[CudaArray]:
        lib, stream = driver.library(), runtime().stream
        driver.check("cuGraphLaunch", lib.cuGraphLaunch(self.exec, stream))
        self.launched = True
        STATS["replayed"] += 1
        results = []
        dsts = []
        for out in self.outs:
            fresh = CudaArray.empty(out.shape, out.dtype)
            if out.is_c_contiguous:
                if out.size:
                    dsts.append(fresh.ptr)
            else:
                copy_into(fresh, out)
            results.append(fresh)
        self.copy_out.run(dsts, None)
        return results

    def __del__(self) -> None:
        try:
            lib, stream = driver.library(), runtime().stream
            if self.launched:  # the last launch's memory stays the graph's until freed
                for ptr, _ in self.allocated:
                    lib.cuMemFreeAsync(ptr, stream)
            lib.cuGraphExecDestroy(self.exec)
            lib.cuGraphDestroy(self.graph)
        except Exception:  # noqa: BLE001, S110 - at interpreter exit the driver may be gone
            pass


class _MemcpyAttributes(ctypes.Structure):
    """``CUmemcpyAttributes``: source access order, source and destination location hints, flags."""

    _fields_ = [("src_access_order", ctypes.c_int), ("src_type", ctypes.c_int), ("src_id", ctypes.c_int),
                ("dst_type", ctypes.c_int), ("dst_id", ctypes.c_int), ("flags", ctypes.c_uint)]


CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 1
_batch = [None]  # cuMemcpyBatchAsync (CUDA 12.8's signature, kept by later drivers), or False


class Copies:
    """A fixed list of device-to-device copies whose destinations or sources change per run:
    one ``cuMemcpyBatchAsync`` call where the driver has it, else one copy call each."""

    __slots__ = ("dsts", "srcs", "sizes", "n")

    def __init__(self, dsts: list[int] | None, srcs: list[int] | None, sizes: list[int]) -> None:
        n = self.n = len(sizes)
        self.dsts, self.srcs = (ctypes.c_uint64 * n)(*(dsts or ())), (ctypes.c_uint64 * n)(*(srcs or ()))
        self.sizes = (ctypes.c_size_t * n)(*sizes)

    def run(self, dsts: list[int] | None, srcs: list[int] | None) -> None:
        if not self.n:
            return
        if dsts is not None:
            self.dsts[:] = dsts
        if srcs is not None:
            self.srcs[:] = srcs
        lib, stream = driver.library(), runtime().stream
        batch = _batch[0]
        if batch is None:
            batch = _batch[0] = _batch_call(lib)
        if batch:
            fail = ctypes.c_size_t()
            code = batch(self.dsts, self.srcs, self.sizes, self.n, ctypes.byref(_ATTRS), ctypes.byref(_ZERO), 1,
                         ctypes.byref(fail), stream)
            if not code:
                return
            _batch[0] = False  # not supported for these copies: one call each from now on
        copy = lib.cuMemcpyDtoDAsync_v2
        for dst, src, size in zip(self.dsts, self.srcs, self.sizes):
            driver.check("cuMemcpyDtoDAsync_v2", copy(dst, src, size, stream))


_ATTRS = _MemcpyAttributes(CU_MEMCPY_SRC_ACCESS_ORDER_STREAM, 0, 0, 0, 0, 0)
_ZERO = ctypes.c_size_t(0)


def _batch_call(lib: ctypes.CDLL) -> Any:
    fn = getattr(lib, "cuMemcpyBatchAsync", None)
    if fn is None or os.environ.get("TIDU_CUDA_BATCH_COPY", "1") == "0":
        return False
    p = ctypes.POINTER
    fn.argtypes = [p(ctypes.c_uint64), p(ctypes.c_uint64), p(ctypes.c_size_t), ctypes.c_size_t, p(_MemcpyAttributes),
                   p(ctypes.c_size_t), ctypes.c_size_t, p(ctypes.c_size_t), _vp]
    fn.restype = ctypes.c_int
    return fn


class Static:
    """A program input's fixed array, laid out as the value it was captured with (so the graph
    runs the kernels that value ran), and how a pass's value is copied in."""

    __slots__ = ("array", "strides", "lead", "nbytes", "writable")

    def __init__(self, value: CudaArray) -> None:
        item = value.dtype.itemsize
        self.strides = value.strides
        if value.is_c_contiguous:
            self.array, self.lead, self.nbytes = CudaArray.empty(value.shape, value.dtype), 0, value.nbytes
        else:  # the memory the value's layout spans, and the layout over it
            extent, start = span(value)
            raw = CudaArray.empty(extent.shape, value.dtype)
            self.array = raw.view(value.shape, value.strides, start * item)
            self.lead, self.nbytes = start * item, extent.nbytes
        # elements at distinct places: any value of its shape can be written into it
        self.writable = _distinct(value.shape, value.strides, item)


def _distinct(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Whether a layout (non-negative strides) puts every element at a place of its own.

    >>> _distinct((2, 3), (12, 4), 4), _distinct((2, 3), (4, 8), 4), _distinct((2, 3), (0, 4), 4)
    (True, True, False)
    """
    reach = itemsize
    for stride, n in sorted((st, n) for n, st in zip(shape, strides) if n > 1):
        if stride < reach:
            return False
        reach = stride * n
    return True


def _fill(statics: Sequence[Static], values: Sequence[CudaArray], copies: Copies) -> bool:
    """Copy each pass value into its static array: its memory span when laid out alike (one
    batch of copies), else element by element; ``False`` (nothing copied) when a static repeats
    elements that the value does not."""
    srcs = []
    odd = []
    for static, value in zip(statics, values):
        if value.strides == static.strides or value.is_c_contiguous and static.array.is_c_contiguous:
            if static.nbytes:
                srcs.append(value.ptr - static.lead)
        elif static.writable:
            odd.append((static, value))
            if static.nbytes:  # the batch's copy for it copies its span onto itself (the same bytes)
                srcs.append(static.array.ptr - static.lead)
        else:
            return False
    copies.run(None, srcs)
    for static, value in odd:
        copy_into(static.array, value)
    return True


def _capture(step: Any, values: list[Any], eager: float | None, seen: list | None) -> Sequence[Any]:
    """Capture ``step``'s program, reading in place the values that lie where those of the run
    before lay (``seen``: ``_lies`` of each) and static copies of the others, and run it by
    launching the graph; when it cannot be captured, run it as before and mark the step
    (``replay = False``)."""
    lib = _library()
    if lib is None or not all(type(v) is CudaArray for v in values):
        step.replay = False
        return step.fn(values)
    seen = [] if seen is None or step in _moved else seen
    in_place = [(i, _place(v)) for i, v in enumerate(values) if i < len(seen) and seen[i] is not None
                and seen[i] == _lies(v)]
    fixed = {i for i, _ in in_place}
    copied = [i for i in range(len(values)) if i not in fixed]
    static_bytes = sum(values[i].nbytes for i in copied)
    if static_bytes > MAX_GRAPH_BYTES:  # large values: kernels outweigh launches, and copies would double them
        step.replay = False
        return step.fn(values)
    statics = [Static(values[i]) for i in copied]
    copy_in = Copies([s.array.ptr - s.lead for s in statics if s.nbytes], None, [s.nbytes for s in statics if s.nbytes])
    _fill(statics, [values[i] for i in copied], copy_in)
    read = list(values)
    for i, static in zip(copied, statics):
        read[i] = static.array
    stream = runtime().stream
    graph, exec_ = _vp(), _vp()
    allocated: list[tuple[int, int]] = []
    outs = None
    memory.begin_capture(allocated)
    try:
        driver.call("cuStreamBeginCapture_v2", stream, CU_STREAM_CAPTURE_MODE_RELAXED)
        try:
            outs = list(step.fn(read))
        finally:
            ended = lib.cuStreamEndCapture(stream, ctypes.byref(graph))
            memory.end_capture()
        driver.check("cuStreamEndCapture", ended)
        driver.check("cuGraphInstantiateWithFlags", lib.cuGraphInstantiateWithFlags(
            ctypes.byref(exec_), graph, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH))
    except Exception:  # noqa: BLE001 - not capturable: the kernels run one by one, as before
        if graph.value:
            lib.cuGraphDestroy(graph)
        outs = None
    if outs is not None and (not all(type(o) is CudaArray for o in outs)
                             or static_bytes + sum(n for _, n in allocated) > MAX_GRAPH_BYTES):
        lib.cuGraphExecDestroy(exec_)
        lib.cuGraphDestroy(graph)
        outs = None
    if outs is None:
        step.replay = False
        STATS["failed"] += 1
        return step.fn(values)
    replay = step.replay = Replay(graph.value or 0, exec_.value or 0, statics, copied, in_place, copy_in, outs,
                                  allocated, eager)
    STATS["captured"] += 1
    STATS["in_place"] += len(in_place)
    STATS["copied"] += len(copied)
    _replays[id(step)] = weakref.ref(step)
    while len(_replays) > MAX_REPLAYS:
        _drop(_replays.popitem(last=False)[1])
    return replay.launch()


def _drop(ref: weakref.ref) -> None:
    step = ref()
    if step is not None and step.replay.__class__ is Replay:
        step.replay = None  # its graph and memory are given back; it may be captured again


def clear() -> None:
    """Drop every graph (a step dropped from the compiled cache drops its own)."""
    while _replays:
        _drop(_replays.popitem()[1])


def release_memory() -> int:
    """Drop every graph and give its memory back to the driver (an allocation failed); the
    number of graphs dropped."""
    count = len(_replays)
    if count:
        clear()
        runtime().synchronize()  # the graphs' frees done: trimming keeps what a queued launch uses
        trim = getattr(driver.library(), "cuDeviceGraphMemTrim", None)
        if trim is not None:
            trim(0)
    return count


memory.ON_OUT_OF_MEMORY.append(release_memory)
