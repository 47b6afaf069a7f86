"""Fusion: chains of elementwise instructions become one generated Numba loop.

``fuse(program, keep)`` rewrites an ``Instr`` program (tidu/core/instructions.py). It
groups the elementwise instructions over arrays of one shape - primitives declared by
``unary``/``binary`` (their ``scalar_fns``), ``select``, ``convert_element_type``, ``full``
and ``broadcast_in_dim`` of a one-element value - and replaces each group of two or more
by one instruction running a generated ``@njit(cache=True, nogil=True)`` loop: every group
member is computed per element into a local variable, and only the values read outside
the group or listed in ``keep`` are stored. Each intermediate is rounded to its dtype
exactly as the unfused kernel's store rounds it, so results are bit-identical.

The generated source is written to ``<numba cache dir or ~/.cache/tidu>/fusion/`` under a
digest of the source and of the scalar functions' code, and imported from there, so a
second process loads the compiled loop from Numba's disk cache. Kernels do not depend on
the shape: one kernel per (group structure, dtypes). ``TIDU_FUSION=0`` turns the pass off.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib.util
import math
import os
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import numpy as np
from numba.core import config as numba_config

from ...core.instructions import Instr, producers
from ..layout import in_place_layout
from ..pad_sums import concat_pads
from ..stacking import stack_sums
from .elementwise import JIT, code_token
from .threads import PARALLEL_MIN, TASKS_PARALLEL_MIN, run_chunked, run_tasks

ENABLED = os.environ.get("TIDU_FUSION", "1") != "0"
ALONG_INDEX = {"row": "c", "col": "r"}  # a row operand is read at the column, a column one at the row
INLINED = ("full", "broadcast")  # recomputed in every group that reads them

_kernels: dict[str, Callable[..., None]] = {}  # source digest -> compiled loop


def _np_name(dt: Any) -> str:
    return "np.bool_" if dt.np == np.bool_ else f"np.{dt.np.name}"


def _scalar_fn(app: Any) -> Callable | None:
    fns = app.prim.scalar_fns
    dt = app.in_avals[0].dtype
    key = ("float32" if dt.np == np.float32 else "float") if dt.is_floating_point else "int"
    if key != "int" and app.out_avals[0].device == "cuda":
        key = "cuda"
    fn = fns.get(key, fns["float"]) if key in ("float32", "cuda") else fns.get(key)
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if fn is None or getattr(module, fn.__qualname__, None) is not fn:
        return None  # a lambda or a local function cannot be imported by the generated module
    return fn


def _kind(instr: Instr) -> str | None:
    """How a fused loop computes ``instr``, or ``None`` where it cannot."""
    app = instr.app
    if app is None or app.out_avals is None or len(app.out_avals) != 1 or len(instr.outs) != 1:
        return None
    if app.out_avals[0].dtype.is_half or any(a.dtype.is_half for a in app.in_avals or ()):
        return None  # computed in float32 and rounded per op (Note [half precision], core/half.py)
    name = app.prim.name
    if getattr(app.prim, "scalar_fns", None) is not None:
        return "fn" if _scalar_fn(app) is not None else None
    if name in ("select", "convert_element_type", "full"):
        return name
    if name == "broadcast_in_dim" and app.in_avals[0].size == 1:
        return "broadcast"
    return None


def fuse(program: Sequence[Instr], keep: set[int]) -> list[Instr]:
    """``program`` with its groups of elementwise instructions fused; the slots in ``keep``
    (and every value read by an unfused instruction) are still produced. Sums of small like
    products are first stacked into one product (``backends.stacking``).

    Free lists are recomputed: a slot the original program frees is freed after its last
    reader in the new one; the others are never freed. Sums of pads that tile their result
    become one concatenation (``backends.pad_sums``). Groups whose values nobody reads
    are dropped. A program that writes a slot twice is returned unchanged.

    >>> import numpy as np, tidu
    >>> from tidu.backends.cpu import fusion
    >>> switch, fusion.ENABLED = fusion.ENABLED, True  # shown even under TIDU_FUSION=0
    >>> from tidu.core.instructions import impl_instr, run
    >>> from tidu.core.primitive import Application
    >>> from tidu.primitives import elementwise as ew
    >>> f64 = tidu.ShapeDtype((3,), tidu.float64)
    >>> program = [impl_instr(Application(ew.mul, (), (f64, f64)), [0, 1], [2]),
    ...            impl_instr(Application(ew.tanh, (), (f64,)), [2], [3])]
    >>> fused = fuse(program, keep={3})
    >>> [(instr.ins, instr.outs, [part.app.prim.name for part in instr.parts]) for instr in fused]
    [((0, 1), (3,), ['mul', 'tanh'])]
    >>> slots = [np.array([0.5, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]), None, None]
    >>> unfused = list(slots)
    >>> run(fused, slots)
    >>> run(program, unfused)
    >>> bool((slots[3] == unfused[3]).all()) and slots[2] is None
    True
    >>> fusion.ENABLED = switch
    """
    program = list(program)
    if not ENABLED:
        return program
    program = concat_pads(stack_sums(program, keep), keep)
    producer = producers(program)
    if producer is None:
        return program
    kinds = [_kind(instr) for instr in program]
    for grouping in (_group_greedy, _group_sealed):
        groups = [_with_inlined(g, program, kinds, producer) for g in grouping(program, kinds, producer)]
        groups = [g for g in groups if len(g) > 1]
        if not groups:
            return program
        plan = _plan(program, kinds, groups, keep)
        if plan is not None:
            break
    assert plan is not None, "sealed groups cannot wait on each other"
    nodes = [node if isinstance(node, Instr) else _fused_instr(*node) for node in plan]
    freeable = {s for instr in program for s in instr.free} - keep
    return _free_lists(nodes, freeable)


def _union_find(n: int) -> tuple[list[int], list[list[int]], Callable[[int], int]]:
    root = list(range(n))
    members: list[list[int]] = [[k] for k in range(n)]

    def find(k: int) -> int:
        while root[k] != k:
            root[k] = root[root[k]]
            k = root[k]
        return k

    return root, members, find


def _grouped(kinds: list[str | None]) -> list[bool]:
    """Which instructions may join a group: the fusable ones, less those copied into each reader."""
    return [kind is not None and kind not in INLINED for kind in kinds]


def _like_producers(instr: Instr, program: list[Instr], grouped: list[bool], producer: dict[int, int]) -> Iterator[int]:
    """The grouped instructions making operands of ``instr`` of its own shape: the groups it may join."""
    shape = instr.app.out_avals[0].shape
    for t in instr.ins:
        p = producer.get(t)
        if p is not None and grouped[p] and program[p].app.out_avals[0].shape == shape:
            yield p


def _merge(root: list[int], members: list[list[int]], g: int, own: int) -> int:
    """The union of the groups of roots ``g`` and ``own`` (the larger's root kept); its root."""
    if len(members[g]) < len(members[own]):
        g, own = own, g
    root[own] = g
    members[g] += members[own]
    return g


def _group_greedy(program: list[Instr], kinds: list[str | None], producer: dict[int, int]) -> list[list[int]]:
    """Groups of instruction indices, grown in program order; a merge is refused where a path
    leads from one group through an outside instruction into the other. Groups can still wait
    on each other through a third group (``fuse`` checks the order and falls back to
    ``_group_sealed``). ``full`` and broadcasts are not grouped: ``_plan`` copies them into
    each group reading them.

    ``dep[s]`` is the bitmask of the grouped instructions slot ``s`` depends on, ``strict[s]``
    those it depends on through a path that leaves the instruction's group.
    """
    n = len(program)
    root, members, find = _union_find(n)
    mask = [1 << k for k in range(n)]  # members of each root
    dep: dict[int, int] = {}
    strict: dict[int, int] = {}

    def reaches(a: int, b: int) -> bool:
        return any(strict.get(t, 0) & mask[a] for m in members[b] for t in program[m].ins)

    grouped = _grouped(kinds)
    for k, instr in enumerate(program):
        if grouped[k]:
            for p in _like_producers(instr, program, grouped, producer):
                g, own = find(p), find(k)
                if g == own or any(strict.get(u, 0) & mask[g] for u in instr.ins):
                    continue
                if len(members[own]) > 1 and (reaches(g, own) or reaches(own, g)):
                    continue
                merged = _merge(root, members, g, own)
                mask[merged] = mask[g] | mask[own]
        own_mask = mask[find(k)] if grouped[k] else 0
        d = (1 << k) if grouped[k] else 0
        s = 0
        for t in instr.ins:
            dt = dep.get(t, 0)
            d |= dt
            s |= strict.get(t, 0) | (dt & ~own_mask)
        for o in instr.outs:
            dep[o], strict[o] = d, s
    return [sorted(members[k]) for k in range(n) if grouped[k] and find(k) == k]


def _group_sealed(program: list[Instr], kinds: list[str | None], producer: dict[int, int]) -> list[list[int]]:
    """Groups of instruction indices, grown in program order: a group grows until an
    instruction outside it reads one of its values, then it is sealed. Every value a group
    reads is then complete before its last member runs, so these groups never make a cycle.
    """
    n = len(program)
    root, members, find = _union_find(n)
    sealed = [False] * n
    grouped = _grouped(kinds)
    for k, instr in enumerate(program):
        if grouped[k]:
            for p in _like_producers(instr, program, grouped, producer):
                g, own = find(p), find(k)
                if g == own or sealed[g]:
                    continue
                _merge(root, members, g, own)
        own = find(k) if grouped[k] else -1
        for t in instr.ins:
            p = producer.get(t)
            if p is not None and grouped[p] and find(p) != own:
                sealed[find(p)] = True
    return [sorted(members[k]) for k in range(n) if grouped[k] and find(k) == k]


def _with_inlined(group: list[int], program: list[Instr], kinds: list[str | None],
                  producer: dict[int, int]) -> list[int]:
    """``group`` and the ``full``/broadcast instructions its members read (transitively)."""
    parts = set(group)
    todo = list(group)
    while todo:
        for t in program[todo.pop()].ins:
            p = producer.get(t)
            if p is not None and kinds[p] in INLINED and p not in parts:
                parts.add(p)
                todo.append(p)
    return sorted(parts)


def _plan(program: list[Instr], kinds: list[str | None], groups: list[list[int]],
          keep: set[int]) -> list[Instr | tuple[list[Instr], list[int]]] | None:
    """The new program in a valid order, a fused group as ``(parts, outs)``; ``None`` where
    the groups wait on each other."""
    group_of = {m: gi for gi, g in enumerate(groups) for m in g if kinds[m] not in INLINED}
    readers: dict[int, set[int]] = {}
    for k, instr in enumerate(program):
        for t in instr.ins:
            readers.setdefault(t, set()).add(k)
    nodes: list[tuple[Any, tuple[int, ...], tuple[int, ...], int]] = []  # (node, ins, outs, position)
    done = set()
    for k, instr in enumerate(program):
        gi = group_of.get(k)
        if gi is None:
            nodes.append((instr, instr.ins, instr.outs, k))
        elif gi not in done:
            done.add(gi)
            g = groups[gi]
            outs = [program[m].outs[0] for m in g if m in group_of and (
                program[m].outs[0] in keep or any(group_of.get(r) != gi for r in readers.get(program[m].outs[0], ())))]
            needed = set(outs)
            for m in reversed(g):  # members nothing needs are left out
                if program[m].outs[0] in needed:
                    needed.update(program[m].ins)
            parts = [program[m] for m in g if program[m].outs[0] in needed]
            made = {p.outs[0] for p in parts}
            ins = tuple(dict.fromkeys(t for p in parts for t in p.ins if t not in made))
            if len(parts) == 1:
                nodes.append((parts[0], parts[0].ins, parts[0].outs, k))
            elif outs:
                nodes.append(((parts, outs), ins, tuple(outs), k))
    live = set(keep)  # the full/broadcast instructions still read after inlining
    inlined = {id(program[k]) for k, kind in enumerate(kinds) if kind in INLINED}
    kept = []
    for node in reversed(nodes):
        if id(node[0]) not in inlined or live.intersection(node[2]):
            live.update(node[1])
            kept.append(node)
    kept.reverse()
    return _schedule(kept)


def _schedule(nodes: list[tuple[Any, tuple[int, ...], tuple[int, ...], int]]) -> list[Any] | None:
    """A topological order of ``nodes``, each as early as its position allows (Kahn, by
    position); ``None`` if there is a cycle."""
    made = {o: j for j, node in enumerate(nodes) for o in node[2]}
    waiting = [0] * len(nodes)
    users: list[list[int]] = [[] for _ in nodes]
    for j, node in enumerate(nodes):
        for p in {made[t] for t in node[1] if t in made}:
            waiting[j] += 1
            users[p].append(j)
    ready = [(nodes[j][3], j) for j in range(len(nodes)) if waiting[j] == 0]
    heapq.heapify(ready)
    ordered = []
    while ready:
        _, j = heapq.heappop(ready)
        ordered.append(nodes[j][0])
        for u in users[j]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (nodes[u][3], u))
    return ordered if len(ordered) == len(nodes) else None


def _free_lists(program: list[Instr], freeable: set[int]) -> list[Instr]:
    last: dict[int, int] = {}
    for k, instr in enumerate(program):
        for s in (*instr.ins, *instr.outs):
            if s in freeable:
                last[s] = k
    frees: list[list[int]] = [[] for _ in program]
    for s, k in last.items():
        frees[k].append(s)
    return [instr._replace(free=tuple(sorted(f))) for instr, f in zip(program, frees)]


def _fused_instr(parts: list[Instr], outs: list[int]) -> Instr:
    """One instruction computing ``parts`` in one loop and returning the slots ``outs``
    (a CUDA kernel for device values: tidu/backends/cuda/fusion.py)."""
    if parts[0].app.out_avals[0].device == "cuda":
        from ..cuda.fusion import fused_into
        from ..cuda.memory import CudaArray

        into, body = fused_into(parts, outs)
        device_empty = CudaArray.empty
        cuda_results_of = [(a.shape, a.dtype.np) for a in body.out_avals]

        def run_cuda(*values: Any) -> tuple[Any, ...]:
            results = tuple([device_empty(shape, dtype) for shape, dtype in cuda_results_of])
            into(results, values)
            return results

        return Instr(run_cuda, tuple(body.ins), tuple(outs), None, tuple(parts))
    into, body = fused_loop(parts, outs)
    out_avals = body.out_avals
    ins = tuple(body.ins)
    # broadcast operands (a seed of ones, a bias's cotangent) are read in place, as the forward's
    # deferred loops read them: one loop per layout of the inputs, built when first met
    variants: dict[tuple, tuple[Callable[..., None], tuple[int, ...]]] = {}

    empty = np.empty
    results_of = [(a.shape, a.dtype.np) for a in out_avals]

    def run(*values: Any) -> tuple[Any, ...]:
        results = tuple([empty(shape, dtype) for shape, dtype in results_of])
        layouts = tuple(map(layout_of, values))
        if not any(layouts):
            into(results, values)
            return results
        variant = variants.get(layouts)
        if variant is None:
            once = {slot for slot, kind in zip(ins, layouts) if kind == SCALAR}
            along = {slot: kind for slot, kind in zip(ins, layouts) if kind in (ROW, COL)}
            loop, loop_body_ = fused_loop(parts, outs, once, along)
            variant = variants[layouts] = (loop, tuple(ins.index(slot) for slot in loop_body_.ins))
        loop, order = variant
        loop(results, [values[k] for k in order])
        return results

    flat = getattr(into, "flat", None)
    if flat is not None:
        run = _direct_run(flat, results_of, len(ins), run)
    return Instr(run, ins, tuple(outs), None, tuple(parts))


def _direct_run(flat: tuple, results_of: list[tuple], n_ins: int, general: Callable[..., Any],
                block: tuple[int, int, int] | None = None) -> Callable[..., Any]:
    """A fused instruction's ``run`` for a one-thread loop (``fused_loop``'s ``flat``), generated:
    when every operand is C-contiguous, the loop is called on them as they are, else
    ``general`` decides how to read each. W5's backward runs 100 such loops a step; without
    the lists and the layout of each operand a call costs about 1 µs less.

    ``block = (j, lo, hi)``: ``run`` takes one more argument, an array whose rows ``lo:hi`` the
    ``j``-th result is written into (and returned as); ``run.into_block(j, lo, hi)`` makes it."""
    results = [f"r{j}" for j in range(len(results_of))]
    values = [f"v{k}" for k in range(n_ins)]
    contiguous = " and ".join(f"{v}.flags.c_contiguous" for v in values) or "True"
    if block is None:
        lines = [f"def run({', '.join(values)}):",
                 f"    if not ({contiguous}):",
                 f"        return general({', '.join(values)})"]
    else:
        j, lo, hi = block
        lines = [f"def run({', '.join([*values, 'into'])}):",
                 f"    if not ({contiguous}):",
                 f"        out = list(general({', '.join(values)}))",
                 f"        into[{lo}:{hi}] = out[{j}]",
                 f"        out[{j}] = into[{lo}:{hi}]",
                 "        return tuple(out)",
                 f"    r{j} = into[{lo}:{hi}]"]
    lines += [*(f"    r{k} = empty(shape{k}, dtype{k})" for k in range(len(results_of)) if block is None or k != block[0]),
              f"    loop({_loop_args(flat, results, values, flat[2])})",
              f"    return ({', '.join(results)},)"]
    namespace: dict[str, Any] = {"loop": flat[0], "c": flat[4], "empty": np.empty, "general": general}
    for k, (shape, dtype) in enumerate(results_of):
        namespace[f"shape{k}"], namespace[f"dtype{k}"] = shape, dtype
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from counts
    run = namespace["run"]
    if block is None:
        run.into_block = lambda j, lo, hi: _direct_run(flat, results_of, n_ins, general, (j, lo, hi))
    return run


SCALAR, ROW, COL = "scalar", "row", "col"  # operands a fused loop reads in place (in_place_layout)


def layout_of(a: Any) -> str | None:
    """How a fused loop reads ``a`` (an operand of the output's shape): element by element
    (``None``; a layout other than ``in_place_layout``'s is copied first) or in place."""
    if a.size <= 1 or (a.flags.c_contiguous if type(a) is np.ndarray else a.is_c_contiguous):
        return None
    return in_place_layout(a.shape, a.strides, a.dtype.itemsize)


def fused_loop(parts: list[Instr], outs: list[int], once: Collection[int] = (),
               along: dict[int, str] | None = None) -> tuple[Callable[..., None], LoopBody]:
    """``(into, body)``: ``into(results, values)`` computes ``parts`` in one generated loop,
    storing the slots ``outs`` into the preallocated C-contiguous ``results``; ``values`` are
    the arrays of the slots ``body.ins``. Slots in ``once`` are read once (zero-stride arrays).

    ``along`` names broadcast operands read in place over the result's last axis: a ``"row"``
    slot holds one row (element ``c`` of every row), a ``"col"`` slot one value per row (its
    last dimension broadcast); the loop then runs over rows and columns."""
    along = along or {}
    body = loop_body(parts, outs, once=once)
    out_names = [f"o{k}" for k in range(len(outs))]
    params = [*out_names, *(f"a{k}" for k in range(len(body.arrays))), *(f"s{k}" for k in range(len(body.scalars))),
              *(f"c{k}" for k in range(len(body.consts)))]
    jit = f"@njit({', '.join(f'{k}={v!r}' for k, v in JIT.items())})"
    if along:
        loop_lines = [
            f"def loop({', '.join([*params, 'cols', 'lo', 'hi'])}):  # pragma: no cover - compiled",
            "    for r in range(lo, hi):",
            "        for c in range(cols):",
            # unsigned: Numba's negative-index wraparound on a signed ``i`` stops vectorization
            "            i = np.uint64(r) * np.uint64(cols) + np.uint64(c)",
            *(f"            x{k} = a{k}[{ALONG_INDEX.get(along.get(slot, ''), 'i')}]" for k, slot in enumerate(body.arrays)),
            *("    " + line for line in (*body.lines, *body.stores)),
        ]
    else:
        loop_lines = [
            f"def loop({', '.join(params)}):  # pragma: no cover - compiled",
            "    for i in range(o0.shape[0]):",
            *(f"        x{k} = a{k}[i]" for k in range(len(body.arrays))),
            *body.lines,
            *body.stores,
        ]
    source = "\n".join([
        "# generated by tidu.backends.cpu.fusion",
        "import numpy as np",
        "from numba import njit",
        *body.imports,
        "",
        "",
        jit,
        *loop_lines,
        "",
    ])
    loop = _load(source, body.tokens)
    consts = body.consts
    ins = body.ins
    array_at = [ins.index(s) for s in body.arrays]
    scalar_at = [ins.index(s) for s in body.scalars]
    kinds = [along.get(s) for s in body.arrays]
    dense = np.ascontiguousarray  # one C call per operand (a 0-d one comes back 1-d)

    def chunked(results: Sequence[np.ndarray], values: Sequence[np.ndarray]) -> None:
        tail = (*(np.asarray(values[k]).flat[0] for k in scalar_at), *consts)
        flat = [r.ravel() for r in results]
        if along:
            shape = results[0].shape
            cols = shape[-1]
            rows = flat[0].shape[0] // cols if cols else 0
            for k, kind in zip(array_at, kinds):
                v = values[k]
                if kind == "row":
                    flat.append(v[(0,) * (v.ndim - 1)])  # the row every row repeats
                elif kind == "col":
                    flat.append(v[..., 0].ravel())  # one value per row
                else:
                    flat.append(v.ravel())
            if rows:
                run_tasks(loop, rows, flat[0].shape[0], *flat, *tail, cols)
            return
        flat += [values[k].ravel() for k in array_at]
        if tail:
            run_chunked(lambda *chunks: loop(*chunks, *tail), *flat)
        else:
            run_chunked(loop, *flat)

    shape = body.out_avals[0].shape
    size = math.prod(shape)
    if size >= (TASKS_PARALLEL_MIN if along else PARALLEL_MIN):
        return chunked, body
    # one thread: no split. How the loop reads each operand (an expression on ``{}``, the array):
    # dense and flat, or (``along``) the row every row repeats, or the value of each row; then
    # each one-element operand's value
    reads = [_read(kind, len(shape)) for kind in kinds]
    bounds = (shape[-1], 0, size // shape[-1] if shape[-1] else 0) if along else ()
    flat = (loop, array_at, reads, scalar_at, tuple(consts), bounds, len(shape))  # for slot_runner
    # a strided operand read element by element is copied first (``dense``), as the chunked loop does
    copying = [("dense({})" if len(shape) == 1 else "{}.ravel()") if kind is None else read
               for kind, read in zip(kinds, reads)]
    args = _loop_args(flat, [f"r[{j}]" for j in range(len(outs))], [f"v[{k}]" for k in range(len(ins))], copying)
    namespace: dict[str, Any] = {"loop": loop, "dense": dense, "c": tuple(consts)}
    exec(f"def into(r, v):\n    loop({args})\n", namespace)  # noqa: S102 - generated from slot numbers
    into = namespace["into"]
    into.flat = flat
    return into, body


def _loop_args(flat: tuple, outs: list[str], values: list[str], reads: list[str]) -> str:
    """The arguments of a one-thread loop's call (``fused_loop``'s ``flat``) as source: the
    results named ``outs`` viewed flat, then the operands named ``values`` (by position in the
    body's inputs), each array as ``reads`` has it, each one-element operand as its value, then
    the constants (``c``) and the row bounds."""
    _loop, array_at, _reads, scalar_at, consts, bounds, ndim = flat
    view = "" if ndim == 1 else ".ravel()"
    return ", ".join([*(f"{o}{view}" for o in outs), *(read.format(values[k]) for k, read in zip(array_at, reads)),
                      *(f"{values[k]}.flat[0]" for k in scalar_at), *(f"c[{j}]" for j in range(len(consts))),
                      *map(str, bounds)])


def _read(kind: str | None, ndim: int) -> str:
    """How a one-thread loop reads an operand ``{}`` of ``ndim`` dims: flat (``ravel`` copies
    one that is not C-contiguous), or for a ``"row"`` operand its first row (element ``c`` of
    every row), for a ``"col"`` one its first column."""
    if kind == ROW:
        return "{}[" + ", ".join(["0"] * (ndim - 1)) + "]"
    if kind == COL:
        return "{}[..., 0].ravel()"
    return "{}" if ndim == 1 else "{}.ravel()"


def slot_runner(into: Callable[..., None], outs: Sequence[int], ins: Sequence[int]) -> Callable[[Sequence[Any]], None]:
    """``run(slots)``: ``into`` on the arrays at ``outs`` and ``ins`` of a list of slots. When the
    loop runs on one thread without per-call setup (``into.flat``), ``run`` is generated to call
    the loop with the slots' arrays as it reads them (``_read``): no lists, no thread split to
    decide."""
    flat = getattr(into, "flat", None)
    if flat is None:
        return lambda slots: into([slots[o] for o in outs], [slots[i] for i in ins])
    loop, _array_at, reads, _scalar_at, consts, _bounds, _ndim = flat
    args = _loop_args(flat, [f"s[{o}]" for o in outs], [f"s[{i}]" for i in ins], reads)
    namespace: dict[str, Any] = {"loop": loop, "c": consts}
    exec(f"def run(s):\n    loop({args})\n", namespace)  # noqa: S102 - generated from slot numbers
    return namespace["run"]


class LoopBody:
    """A fused group as the statements of one element's iteration, for either code generator.

    ``arrays``/``scalars`` are the external slots read element by element (``x{k} = a{k}[i]``
    is the generator's) or once (``s{k}``, a one-element value), ``consts`` the ``full``
    values (``c{k}``); ``lines`` compute ``v{j}`` per group member; ``stores`` write ``o{k}``;
    ``locals`` names each member's value by its slot.
    """

    def __init__(self) -> None:
        self.arrays: list[int] = []
        self.scalars: list[int] = []
        self.consts: list[Any] = []
        self.imports: list[str] = []
        self.functions: list[str] = []  # the aliases of the imported scalar functions
        self.tokens: list[int] = []
        self.lines: list[str] = []
        self.stores: list[str] = []
        self.ins: list[int] = []
        self.out_avals: list[Any] = []
        self.locals: dict[int, str] = {}


def loop_body(parts: list[Instr], outs: list[int], scalar: str = "s{}", once: Collection[int] = ()) -> LoopBody:
    """The per-element statements of ``parts``; ``scalar`` formats how a one-element operand
    (a broadcast's, or a slot in ``once``) is read."""
    body = LoopBody()
    local = body.locals = {p.outs[0]: f"v{j}" for j, p in enumerate(parts)}

    def operand(slot: int, single: bool) -> str:
        if slot in local:
            return local[slot]
        single = single or slot in once
        seen = body.scalars if single else body.arrays
        if slot not in seen:
            seen.append(slot)
        return scalar.format(seen.index(slot)) if single else f"x{seen.index(slot)}"

    for j, part in enumerate(parts):
        app, kind = part.app, _kind(part)
        out_type = _np_name(app.out_avals[0].dtype)
        if kind == "fn":
            fn = _scalar_fn(app)
            alias = f"{fn.__module__.rpartition('.')[2]}_{fn.__qualname__}"
            line = f"from {fn.__module__} import {fn.__qualname__} as {alias}"
            if line not in body.imports:
                body.imports.append(line)
                body.functions.append(alias)
                body.tokens.append(code_token(fn))
            args = ", ".join(operand(t, False) for t in part.ins)
            expr = f"{out_type}({alias}({args}))"
        elif kind == "select":
            p, a, b = (operand(t, False) for t in part.ins)
            expr = f"{a} if {p} else {b}"
        elif kind == "convert_element_type":
            expr = f"{out_type}({operand(part.ins[0], False)})"
        elif kind == "broadcast":
            expr = operand(part.ins[0], True)
        else:  # full
            body.consts.append(app.out_avals[0].dtype.np.type(dict(app.params)["value"]))
            expr = f"c{len(body.consts) - 1}"
        body.lines.append(f"        v{j} = {expr}")
    body.stores = [f"        o{k}[i] = {local[s]}" for k, s in enumerate(outs)]
    body.ins = list(dict.fromkeys([*body.arrays, *body.scalars]))
    body.out_avals = [next(p.app.out_avals[0] for p in parts if p.outs[0] == s) for s in outs]
    return body


def cache_dir() -> str:
    """Where generated kernel sources live: ``fusion/`` under Numba's cache dir when
    ``NUMBA_CACHE_DIR`` is set, else under ``$XDG_CACHE_HOME/tidu`` (``~/.cache/tidu``)."""
    base = numba_config.CACHE_DIR or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tidu")
    return os.path.join(base, "fusion")


def _load(source: str, tokens: list[int]) -> Callable[..., None]:
    """The compiled loop of ``source``: imported from its file so Numba can cache it on disk."""
    digest = hashlib.sha256((source + repr(tokens)).encode()).hexdigest()[:20]
    loop = _kernels.get(digest)
    if loop is not None:
        return loop
    path = _write(f"fused_{digest}.py", source)
    name = f"tidu_fused_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cached code finds its globals by module name
    spec.loader.exec_module(module)
    loop = _kernels[digest] = module.loop
    return loop


def _write(filename: str, source: str) -> str:
    """The path of ``filename`` holding ``source`` in the cache directory (or, where that is
    not writable, in the temporary directory), written atomically unless already there."""
    for folder in (cache_dir(), os.path.join(tempfile.gettempdir(), "tidu-fusion")):
        path = os.path.join(folder, filename)
        try:
            if not os.path.exists(path):
                os.makedirs(folder, exist_ok=True)
                fd, tmp = tempfile.mkstemp(suffix=".py", dir=folder)
                with os.fdopen(fd, "w") as f:
                    f.write(source)
                os.replace(tmp, path)  # a concurrent process sees the whole file or none
            return path
        except OSError as err:
            error = err
    raise error
