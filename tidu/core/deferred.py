"""Deferred elementwise work: the forward's fusion.

An elementwise primitive (one with scalar functions) on floating-point tensors of one shape
does not run when it is bound: ``bind`` allocates its output and queues the work. The queue
runs ("flushes") as soon as a value may be needed: any other primitive's bind, any read of a
tensor's ``_data`` (``numpy()``, ``item()``, printing, an in-place write, a backward that reads
a queued value, the optimizers), or a full queue. A flush runs the queued work of each shape
and device as one generated loop (``fused_loop`` in tidu/backends/cpu/fusion.py,
``fused_into`` on the GPU) and stores only the outputs something still holds; intermediates
nobody holds stay in registers. So ``tanh(x * w + 0.5) * w`` reads ``x`` and ``w`` once and writes one array.

A queue whose structure (primitives, avals, wiring, which outputs are held) has been seen
fewer than ``FUSE_AFTER`` times runs op by op with the ordinary kernels instead: code that
runs once pays no compilation, a training loop fuses from its third step. Plans are cached
per structure, never per value; ``TIDU_FUSION=0`` turns deferral off with the other fusion.

Arrays handed to the user (``numpy()``, ``from_numpy``, ``__cuda_array_interface__``) are
*exposed*: the user may write them at any time, so work reading them is never deferred.

A built backward step of one fused loop that reads queued work is queued behind it as one
entry (``queue_loop``) and runs in that work's loop.

On the host, a product that a ``create_graph`` pass returns is queued too (``lazy_product``),
and so is a host sum of queued work made from it: a gradient only differentiated again (a
Hessian-vector product's) is never computed, since a flush leaves out work whose output
nothing holds or reads (``_live``). A queue where such a product is live runs op by op.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..backends.cpu import fusion
from ..backends.layout import storage
from . import groups
from .imports import module
from .instructions import Instr

ENABLED = fusion.ENABLED  # read at every bind: a test or a benchmark may switch it
FUSE_AFTER = 3  # a structure fuses on its third flush
MAX_QUEUE = 32  # a longer queue fuses more per flush, at a longer compile per new structure
MAX_PLANS = 512

# the queue, appended to by ``dispatch._defer`` under ``_lock`` (which flushes at ``MAX_QUEUE``
# entries); the lists, dict and set are never rebound
PENDING: list[tuple] = []  # (app, impl, params, in_slots, out_slot)
_slots: list[Any] = []  # the arrays the queue reads and writes
_index: dict[int, int] = {}  # id(array) -> slot
_structure: list[Any] = []  # the cache key: (app.uid, in_slots) per entry, the layout of each outside array
_pending_ids: set[int] = set()  # ids of the queued outputs
_lock = threading.RLock()
_flushing = threading.local()
_plans: dict[tuple, Callable[[list[Any]], None] | None] = {}  # None: the structure cannot be fused
_seen: dict[tuple, int] = {}
_UNPLANNED = object()  # a structure not yet seen often enough to be planned
_exposed: dict[int, weakref.ref] = {}
_refcount = sys.getrefcount
# a full float sum of a queued value on the GPU is queued too (at most one a queue:
# ``sum_deferrable``), run in its input's loop's launch; one mark while queued
_sums: list[int] = []
SUM_MIN, SUM_MAX = 33, 1 << 16  # its input's elements: the GPU's one-block row sum (backends/cuda/reduce.py)
# a gradient a ``create_graph`` pass returns, when it is a host product, is queued (one mark each
# while queued: ``lazy_product``), and so is a host sum of queued work made from it: a gradient
# nobody reads (a Hessian-vector product's) is never computed
_lazy: list[int] = []


def queueable(app: Any) -> bool:
    """Whether ``app`` (an ``Application``) can be deferred: a fusable elementwise primitive
    (scalar functions, ``select``, a float-to-float ``convert_element_type``) with one output
    and inputs of the output's shape, floating-point ones (and ``select``'s boolean predicate)."""
    if app.out_avals is None or len(app.out_avals) != 1 or not app.in_avals:
        return False
    out = app.out_avals[0]
    ins = app.in_avals[1:] if app.prim.name == "select" and app.in_avals[0].dtype.np == np.bool_ else app.in_avals
    if any(a.shape != out.shape for a in app.in_avals) or not all(a.dtype.is_floating_point for a in ins):
        return False
    kind = fusion._kind(Instr(None, (), (0,), app))
    if kind == "convert_element_type":
        return out.dtype.is_floating_point
    return kind in ("select", "fn")


def flush(for_kernel: bool = False) -> None:
    """Run everything queued (a no-op when nothing is, or inside a flush). A flush for the user
    (a read of a value, a backward, an optimizer's step) also closes the open group
    (core/groups.py), whose calls then end a step of their own; one ``for_kernel`` (an op that is
    not deferred reads queued work: W5's products read the last step's state) leaves it open, so
    a loop's calls join one group, up to its size."""
    if not PENDING or getattr(_flushing, "on", False):
        return
    with _lock:
        if not PENDING:
            return
        _flushing.on = True
        try:
            # held: referenced beyond the queue's list and getrefcount's own argument
            held = tuple([e[4] for e in PENDING if _refcount(_slots[e[4]]) > 2])
            key = (tuple(_structure), held)
            plan = _plans.get(key, _UNPLANNED)
            if plan is _UNPLANNED:
                if len(_seen) >= MAX_PLANS * 8:  # structures that never repeated
                    _seen.clear()
                seen = _seen[key] = _seen.get(key, 0) + 1
                if seen >= FUSE_AFTER:
                    _seen.pop(key)
                    plan = _build(PENDING, held)
                    if len(_plans) >= MAX_PLANS:
                        _plans.clear()
                    _plans[key] = plan
            if plan is None or plan is _UNPLANNED:
                _run_each(held)
            else:
                plan(_slots)
        finally:
            if not for_kernel and groups._open is not None:
                groups.close()
            PENDING.clear()
            _sums.clear()
            _lazy.clear()
            _slots.clear()
            _index.clear()
            _structure.clear()
            _pending_ids.clear()
            _flushing.on = False


def sum_deferrable(array: Any, axes: tuple[int, ...]) -> bool:
    """Whether ``reduce_sum`` of ``array`` (a device array) over ``axes`` can be queued: a sum of
    every axis of a queued float32 or float64 output (not a view of one) of ``SUM_MIN`` to
    ``SUM_MAX`` elements, while no other sum is queued. Its input's loop then sums it in one
    block, in the order of the sum's own kernel: the result is the unqueued sum's, bit for bit,
    and the launch is one where it was two. (On the host a queued sum saved nothing: the loop
    and the sum stay two calls; one is queued there only with a lazy product,
    ``host_sum_deferrable``.)"""
    return (ENABLED and not _sums and id(array) in _pending_ids and len(axes) == array.ndim
            and SUM_MIN <= array.size <= SUM_MAX and array.dtype.kind == "f" and array.dtype.itemsize >= 4)


def lazy_product(arrays: Sequence[Any]) -> bool:
    """Whether a host product of ``arrays`` that a ``create_graph`` pass returns can be queued:
    deferral on and no operand the user may write (``expose``). Such a product runs at the next
    flush, and only if something still holds its output or reads it (``_live``): the
    gradient of a Hessian-vector product, ``grad(loss, x, create_graph=True)``, is read by no one
    when only its gradient is taken next."""
    return ENABLED and not (_exposed and reads_exposed(arrays))


def host_sum_deferrable(array: Any) -> bool:
    """Whether a host sum of ``array`` can be queued: a queued output (not a view of one) made
    from a lazy product (``lazy_product``), which may go unread with it."""
    if not (_lazy and ENABLED and id(array) in _pending_ids):
        return False
    return any(e[0].prim.name == "dot_general" for e in _live(PENDING, (_index[id(array)],)))


def reads_pending(arrays: Sequence[Any]) -> bool:
    """Whether any of ``arrays`` is (a view of) a queued output: work reading it must flush first."""
    for a in arrays:
        if id(a if a.base is None else storage(a)) in _pending_ids:  # (most own their memory: no call)
            return True
    return False


_loop_uids = itertools.count()


class QueuedLoop:
    """A built backward step that is one fused loop of one result, as one queued entry
    (``queue_loop``): its kernel for running op by op, its parts for a fused plan, which joins
    them to the loop of the work queued before it (``_build``). Its own primitive, for the
    queue's readers of ``entry[0].prim``."""

    name = "backward_loop"

    def __init__(self, run: Callable[..., Any], parts: Sequence[Instr], ins: Sequence[int], out: int,
                 at: Sequence[int]) -> None:
        self.prim = self
        self.run = run  # the step's arrays (``at``) -> its result
        self.parts, self.ins, self.out = tuple(parts), tuple(ins), out  # in the step's slots
        self.at = tuple(at)  # the step's values the loop reads, in the order of ``ins``
        self.out_avals = next(part.app.out_avals for part in parts if part.outs[0] == out)
        self._uid = ("backward_loop", next(_loop_uids))  # the queue's structure names it

    def renamed(self, in_slots: Sequence[int], out_slot: int, fresh: Callable[[], int]) -> list[Instr]:
        """The parts over the queue's slots: inputs ``in_slots``, result ``out_slot``, and a fresh
        slot (never one of the queue's arrays) for each value made inside."""
        to = dict(zip(self.ins, in_slots))
        to[self.out] = out_slot
        renamed = []
        for part in self.parts:
            made = part.outs[0]
            if made not in to:
                to[made] = fresh()
            renamed.append(Instr(None, tuple(to[s] for s in part.ins), (to[made],), part.app))
        return renamed


def queue_loop(loop: QueuedLoop, values: Sequence[Any]) -> Any | None:
    """Queue a built backward step's one loop (``loop``) behind the queued work it reads instead
    of running it: the next flush runs both in one loop (on the GPU one launch where there were
    two, and a queued value only the step reads is never stored). Returns the step's result, a
    queued output; ``None``, nothing queued, where the queue cannot take it: full, inside a
    flush, holding a lazy product, or an operand that is a view of queued work (read in place,
    it would race with its writes) or exposed."""
    if len(PENDING) >= MAX_QUEUE or _lazy or getattr(_flushing, "on", False):
        return None
    arrays = [values[k] for k in loop.at]
    for a in arrays:
        if a.base is not None and id(storage(a)) in _pending_ids:
            return None
    if _exposed and reads_exposed(arrays):
        return None
    aval = loop.out_avals[0]
    out = np.empty(aval.shape, aval.dtype.np) if aval.device == "cpu" else \
        module("tidu.backends.cuda.memory").CudaArray.empty(aval.shape, aval.dtype.np)
    with _lock:
        in_slots = slots_of(arrays)
        slot = _index[id(out)] = len(_slots)
        _slots.append(out)
        _pending_ids.add(id(out))
        _structure.append((loop._uid, in_slots))
        PENDING.append((loop, loop.run, {}, in_slots, slot))
    return out


def slots_of(arrays: Sequence[Any]) -> tuple[int, ...]:
    """The queue's slots of ``arrays``, each array new to the queue added with its layout (part
    of the plan's key). The caller holds ``_lock``."""
    index, slots = _index, _slots
    found = []
    for a in arrays:
        slot = index.get(id(a))
        if slot is None:
            slot = index[id(a)] = len(slots)
            slots.append(a)
            _structure.append(fusion.layout_of(a))
        found.append(slot)
    return tuple(found)


def _live(entries: Sequence[tuple], held: tuple[int, ...]) -> list[tuple]:
    """The ``entries`` whose output is ``held`` or read by one that is live, in order."""
    needed = set(held)
    live = []
    for entry in reversed(entries):
        if entry[4] in needed:
            live.append(entry)
            needed.update(entry[3])
    live.reverse()
    return live


def _run_each(held: tuple[int, ...]) -> None:
    """The queue op by op with the ordinary kernels, each result copied into its held output; a
    call whose output nothing holds or reads is skipped."""
    keep = set(held)
    for _app, impl, params, ins, out in _live(PENDING, held):
        result = impl(*[_slots[i] for i in ins], **params)
        if out in keep:
            _copy_into(_slots[out], result)
        else:
            _slots[out] = result


def _copy_into(target: Any, value: Any) -> None:
    if type(target).__module__ == "numpy":
        target[...] = value
    else:
        from ..backends.cuda.copy import copy_into

        copy_into(target, value)


def _build(entries: Sequence[tuple], held: tuple[int, ...]) -> Callable[[list[Any]], None] | None:
    """One fused loop per (shape, device) group of ``entries`` (a queued sum joins its input's),
    run in the order their values need (``_group_order``); ``None`` if one cannot be built.
    Work nothing holds or reads is left out: a lazy product and its sum, dead by now, cost the
    loop nothing (``lazy_product``); a live one runs op by op."""
    if _lazy:
        entries = _live(entries, held)
        for app, *_ in entries:
            if app.prim.name == "dot_general" or app.prim.name == "reduce_sum" and app.out_avals[0].device != "cuda":
                return None
    groups: dict[Any, list[tuple]] = {}
    for entry in entries:
        app = entry[0]
        out = app.out_avals[0]
        shape = app.in_avals[0].shape if app.prim.name == "reduce_sum" else out.shape
        groups.setdefault((shape, out.device), []).append(entry)
    ordered = _group_order(groups, entries if _lazy else _live(entries, held))
    if ordered is None:
        return None
    order, crossing = ordered
    keep = {*held, *crossing}
    produced = {e[4] for e in entries}
    fresh = itertools.count(len(_slots)).__next__  # slots of the values a queued loop makes inside
    steps = []
    try:
        for key in order:
            group, device = groups[key], key[1]
            # a queued sum (on the GPU only: ``sum_deferrable``), where held or read by a later group
            total = next((e for e in group if e[0].prim.name == "reduce_sum" and e[4] in keep), None)
            if total is not None and device != "cuda":
                return None  # never queued (``sum_deferrable``): op by op, where each runs
            group = [e for e in group if e[0].prim.name != "reduce_sum"]
            outs = [e[4] for e in group if e[4] in keep]
            if not outs and total is None:
                continue  # nothing holds any of its values
            parts = []
            for app, _impl, _params, ins, out in group:
                if app.__class__ is QueuedLoop:
                    parts += app.renamed(ins, out, fresh)
                else:
                    parts.append(Instr(None, ins, (out,), app))
            layouts = {s: fusion.layout_of(_slots[s]) for _a, _i, _p, ins, _o in group for s in ins if s not in produced}
            along = {s: k for s, k in layouts.items() if k in (fusion.ROW, fusion.COL)}
            if device == "cuda":  # a broadcast scalar is read at i % 1 there
                from ..backends.cuda.fusion import fused_into

                if total is None:
                    into, body = fused_into(parts, outs, along)
                    steps.append(fusion.slot_runner(into, outs, body.ins))
                else:  # the sum in the loop's launch: its result is the last
                    into, body = fused_into(parts, outs, along, total=total[3][0])
                    steps.append(fusion.slot_runner(into, [*outs, total[4]], body.ins))
                continue
            once = {s for s, k in layouts.items() if k == fusion.SCALAR}
            into, body = fusion.fused_loop(parts, outs, once, along)
            # the layouts are part of the plan's key: an operand read in place is so on every run
            steps.append(fusion.slot_runner(into, outs, body.ins))
    except Exception:  # noqa: BLE001 - a loop that does not compile runs op by op instead
        return None
    if len(steps) == 1:
        return steps[0]

    def run(slots: list[Any]) -> None:
        for step in steps:
            step(slots)

    return run


def _group_order(groups: dict[Any, list[tuple]], live: Sequence[tuple]) -> tuple[list[Any], set[int]] | None:
    """The order to run ``groups`` in (each after the groups whose values it reads), and the
    values one group makes and another reads (a queued sum, read by the 0-d work after it):
    nothing outside the queue holds them, yet their group must store them. ``live``: the
    entries something holds or reads (``_live``). ``None`` where two groups read each other
    (then the queue runs op by op)."""
    group_of = {e[4]: key for key, members in groups.items() for e in members}
    after: dict[Any, set] = {key: set() for key in groups}
    crossing: set[int] = set()
    for entry in live:
        key = group_of[entry[4]]
        for slot in entry[3]:
            source = group_of.get(slot, key)
            if source != key:
                crossing.add(slot)
                after[key].add(source)
    order: list[Any] = []
    while len(order) < len(groups):
        ready = next((key for key in groups if key not in order and after[key].issubset(order)), None)
        if ready is None:
            return None
        order.append(ready)
    return order, crossing


def expose(array: Any) -> None:
    """Mark ``array``'s storage as writable by the user: work reading it runs at once."""
    root = storage(array)
    key = id(root)

    def forget(ref: weakref.ref, key: int = key) -> None:
        if _exposed.get(key) is ref:
            del _exposed[key]

    try:
        _exposed[key] = weakref.ref(root, forget)
    except TypeError:  # a numpy scalar: nobody can write it
        pass


def reads_exposed(arrays: Sequence[Any]) -> bool:
    """Whether any of ``arrays`` shares storage the user may write (``expose``)."""
    if not _exposed:
        return False
    for a in arrays:
        root = storage(a)
        ref = _exposed.get(id(root))
        if ref is not None and ref() is root:
            return True
    return False


def _reset_lock() -> None:
    global _lock
    _lock = threading.RLock()


# a forked child starts with nothing queued (the parent flushes first) and a lock nobody holds
os.register_at_fork(before=flush, after_in_child=_reset_lock)
