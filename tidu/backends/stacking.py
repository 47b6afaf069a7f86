"""Sums of small products become one product over stacked operands (a program pass).

A weight used at every step of a loop (an RNN's) gets one cotangent term per step, and the
backward program sums them: ``dW = x_1.T @ g_1 + ... + x_n.T @ g_n``, n small products and an
n-term add. ``stack_sums(program, keep)`` rewrites each such sum as one product of the
operands concatenated along a contracted dimension, ``concat(x).T @ concat(g)``, and a sum of
``reduce_sum`` terms (a broadcast bias's cotangent) as one ``reduce_sum`` of the concatenation
along a summed axis. One concatenation serves every sum that stacks the same slots in the same
order (``g`` above, for ``dW``, ``dU`` and ``db``).

Only products of fewer than ``threads.BLAS_PARALLEL_MIN`` multiply-adds and reductions of
fewer than ``SMALL_REDUCE`` elements are stacked: there the calls cost more than the arithmetic,
and the copies into the stacks stay cheap. A term is stacked only if the sum is its one reader.
The result differs from the term-by-term sum by rounding only (another summation order).

The order of terms: a sum may take its terms in any order, so each group takes them in the
descending order of their last input's slot; groups that share an operand (``g`` above: the last
input of ``x.T @ g``, ``h.T @ g`` and ``reduce_sum(g)``) then stack it in one order, and share
it. A loop's backward reads its last step's values first (into lower slots), so this is the
loop's own order: an RNN's inputs ``x[0], x[1], ...``, rows of one array, are stacked as a view
of it (``stacked_rows``) rather than copied.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..core.instructions import Instr, impl_instr, producers
from ..core.primitive import Application
from .cpu.threads import BLAS_PARALLEL_MIN

SMALL_REDUCE = 1 << 16  # elements of one reduce_sum term
_address, _char = ctypes.addressof, ctypes.c_char.from_buffer
_STACKED = ("dot_general", "reduce_sum")


def _stack_dims(app: Application) -> tuple[int, ...] | None:
    """Per input, the dimension its terms are concatenated along; ``None``: not stackable."""
    name, params = app.prim.name, dict(app.params)
    if name == "dot_general":
        (ca, cb), _ = params["dimension_numbers"]
        a, b = app.in_avals
        k = 1
        for d in ca:
            k *= a.shape[d]
        if not ca or a.size * b.size // max(k, 1) >= BLAS_PARALLEL_MIN:
            return None
        return ca[0], cb[0]
    if name == "reduce_sum":
        axes = params["axes"]
        if not axes or app.in_avals[0].size >= SMALL_REDUCE:
            return None
        return (axes[0],)
    return None


def stack_sums(program: Sequence[Instr], keep: Collection[int]) -> list[Instr]:
    """``program`` with its sums of two or more like small products (or reductions) computed as
    one product (reduction) of concatenated operands; the slots in ``keep`` are still produced.

    >>> import numpy as np, tidu
    >>> from tidu.core.instructions import impl_instr, run
    >>> from tidu.core.primitive import Application
    >>> from tidu.primitives import elementwise as ew, linalg
    >>> v, m = tidu.ShapeDtype((4, 3), tidu.float64), tidu.ShapeDtype((3, 3), tidu.float64)
    >>> dims = (("dimension_numbers", (((0,), (0,)), ((), ()))),)
    >>> program = [impl_instr(Application(linalg.dot_general, dims, (v, v)), [0, 1], [4]),
    ...            impl_instr(Application(linalg.dot_general, dims, (v, v)), [2, 3], [5]),
    ...            impl_instr(Application(ew.add, (), (m, m)), [4, 5], [6])]
    >>> stacked = stack_sums(program, keep={6})
    >>> [(instr.app.name.split("[")[0], instr.ins, instr.outs) for instr in stacked]
    [('concatenate', (2, 0), (7,)), ('concatenate', (3, 1), (8,)), ('dot_general', (7, 8), (6,))]
    >>> rng = np.random.default_rng(0)
    >>> slots = [rng.standard_normal((4, 3)) for _ in range(4)] + [None] * 5
    >>> run(stacked, slots)
    >>> a, b, c, d = slots[:4]
    >>> bool(np.allclose(slots[6], a.T @ b + c.T @ d))
    True
    """
    program = list(program)
    found = sums(program, keep)
    if found is None:
        return program
    producer, readers, trees = found
    next_slot = [max((s for instr in program for s in (*instr.ins, *instr.outs)), default=-1) + 1]
    concats: dict[tuple, int] = {}  # (slots, dimension) -> the slot of their concatenation
    removed: set[int] = set()
    replaced: dict[int, list[Instr]] = {}
    for k, adds, leaves in trees:
        instr = program[k]
        groups: dict[Application, list[int]] = {}
        for leaf in leaves:
            p = producer.get(leaf)
            if p is None or readers[leaf] != 1 or leaf in keep or program[p].app is None:
                continue
            app = program[p].app
            if app.prim.name in _STACKED and _stack_dims(app) is not None:
                groups.setdefault(app, []).append(p)
        groups = {app: ps for app, ps in groups.items() if len(ps) > 1}
        if not groups:
            continue
        new: list[Instr] = []
        stacked = {p for ps in groups.values() for p in ps}
        terms = [leaf for leaf in leaves if producer.get(leaf) not in stacked]
        for app, ps in groups.items():
            ps.sort(key=lambda p: program[p].ins[::-1], reverse=True)  # see the note on the order of terms
            removed.update(ps)
            stacks = []
            for i, dim in enumerate(_stack_dims(app)):
                parts = tuple(program[p].ins[i] for p in ps)
                slot = concats.get((parts, dim))
                if slot is None:
                    slot = concats[(parts, dim)] = _fresh(next_slot)
                    new.append(concat_instr(parts, dim, (app.in_avals[i],) * len(parts), (slot,)))
                stacks.append(slot)
            avals = tuple(a.update(shape=_stacked_shape(a.shape, d, len(ps))) for a, d in
                          zip(app.in_avals, _stack_dims(app)))
            merged = Application(app.prim, app.params, avals)
            new.append(impl_instr(merged, stacks, (_fresh(next_slot),), merged.out_avals[0].device))
            terms.append(new[-1].outs[0])
        aval = instr.app.out_avals[0]
        add = Application(instr.app.prim, (), (aval, aval))
        total = terms[0]
        for term in terms[1:]:
            new.append(impl_instr(add, (total, term), (_fresh(next_slot),), aval.device))
            total = new[-1].outs[0]
        new[-1] = new[-1]._replace(outs=instr.outs)  # the sum keeps its slot
        removed.update(adds)
        replaced[k] = new
    if not replaced:
        return program
    out: list[Instr] = []
    for k, instr in enumerate(program):
        if k in replaced:
            out += replaced[k]
        elif k not in removed:
            out.append(instr)
    return out


def sums(program: list[Instr], keep: Collection[int]) -> tuple[dict[int, int], Counter, list[tuple]] | None:
    """The sums of ``program`` for a pass to rewrite: ``(producer, readers, trees)``, where
    ``producer`` maps a slot to the instruction writing it, ``readers`` counts each slot's
    readers and each tree is ``(k, adds, leaves)``: the outermost add at ``k``, the adds of its
    sum (partial sums read only by it and not in ``keep``) and its terms in order. ``None``
    when a slot is written twice (a pass leaves such a program alone)."""
    producer = producers(program)
    if producer is None:
        return None
    readers = Counter(i for instr in program for i in instr.ins)
    keep = set(keep)

    def inner(slot: int) -> bool:
        """``slot`` is a partial sum read only by the sum it belongs to."""
        p = producer.get(slot)
        return p is not None and _is_add(program[p]) and readers[slot] == 1 and slot not in keep

    internal = {producer[i] for instr in program if _is_add(instr) for i in instr.ins if inner(i)}
    trees = [(k, *_tree(program, k, producer, inner)) for k, instr in enumerate(program)
             if _is_add(instr) and k not in internal]
    return producer, readers, trees


def _is_add(instr: Instr) -> bool:
    app = instr.app
    return (app is not None and app.prim.name == "add" and len(instr.ins) == 2 and len(instr.outs) == 1
            and app.in_avals is not None and app.in_avals[0] == app.in_avals[1] == app.out_avals[0])


def _tree(program: list[Instr], root: int, producer: dict[int, int], inner: Any) -> tuple[list[int], list[int]]:
    """The add instructions of the sum ending at ``root`` and its terms (slots), in order."""
    adds, leaves, stack = [], [], [root]
    while stack:
        k = stack.pop()
        adds.append(k)
        for slot in reversed(program[k].ins):
            if inner(slot):
                stack.append(producer[slot])
            else:
                leaves.append(slot)
    return adds, leaves


def _fresh(counter: list[int]) -> int:
    counter[0] += 1
    return counter[0] - 1


def _stacked_shape(shape: tuple[int, ...], dim: int, n: int) -> tuple[int, ...]:
    return tuple(s * n if d == dim else s for d, s in enumerate(shape))


def concat_instr(parts: Sequence[int], dim: int, avals: Sequence[Any], out: Sequence[int]) -> Instr:
    """The instruction concatenating the slots ``parts`` (of ``avals``) along ``dim`` into ``out``;
    on the host along the first dimension, ``stacked_rows``."""
    from ..primitives.structural import concatenate

    app = Application(concatenate, (("dimension", dim),), tuple(avals))
    if dim == 0 and avals[0].device == "cpu" and len(parts) > 1 and avals[0].shape:
        return Instr(stacked_rows, tuple(parts), tuple(out), app)
    return impl_instr(app, parts, out, avals[0].device)


def stacked_rows(*parts: np.ndarray) -> np.ndarray:
    """``np.concatenate(parts)`` (along the first dimension), or a read-only view of the same
    values where the parts already lie one after the other in one array's memory: an RNN's
    inputs ``x[0], x[1], ...`` are the rows of ``x``. Each part's address is read through a
    ctypes buffer (0.4 µs on a fresh array; numpy's ``__array_interface__`` costs 1.1 µs), and
    only when every part views one base; a part that is read-only or not C-contiguous is
    copied as before.

    >>> import numpy as np
    >>> x = np.arange(24.0).reshape(4, 3, 2)
    >>> stacked = stacked_rows(*x)
    >>> stacked.shape, bool(np.shares_memory(stacked, x)), bool((stacked == x.reshape(12, 2)).all())
    ((12, 2), True, True)
    >>> np.shares_memory(stacked_rows(x[1], x[0]), x)  # another order: a copy
    False
    """
    first = parts[0]
    base = first.base
    step = first.nbytes
    if base is not None and step:
        try:
            start = _address(_char(first))
            at = start
            for part in parts:
                if part.base is not base or _address(_char(part)) != at or part.shape != first.shape:
                    break
                at += step
            else:
                shape = (first.shape[0] * len(parts), *first.shape[1:])
                strides = [first.itemsize] * len(shape)
                for d in range(len(shape) - 2, -1, -1):
                    strides[d] = strides[d + 1] * shape[d + 1]
                return as_strided(first, shape, tuple(strides), writeable=False)
        except (TypeError, ValueError, BufferError):  # read-only, or not C-contiguous: no address here
            pass
    return np.concatenate(parts)


def stacks_in_place(program: Sequence[Instr], keep: Collection[int]) -> list[Instr]:
    """``program`` (fused, on the host) with each stack of rows (``stacked_rows``) whose parts
    its fused loops make written in place: the stack is allocated before the first of them,
    each loop writes its part into its rows, and the stack's instruction returns the stack
    (reading the parts, so that it runs after them), not a copy.
    An RNN's cotangents ``g_t``, read by the weights' stacked products, are made so. A part
    kept as a result, or made by an instruction that cannot write into given rows, leaves its
    stack as it was.

    >>> import numpy as np, tidu
    >>> from tidu.backends.cpu import fusion
    >>> from tidu.core.instructions import impl_instr, run
    >>> from tidu.core.primitive import Application
    >>> from tidu.primitives import elementwise as ew
    >>> switch, fusion.ENABLED = fusion.ENABLED, True  # shown even under TIDU_FUSION=0
    >>> v = tidu.ShapeDtype((2, 3), tidu.float64)
    >>> parts = [impl_instr(Application(ew.tanh, (), (v,)), [i], [i + 2]) for i in range(2)]
    >>> scaled = [impl_instr(Application(ew.mul, (), (v, v)), [i + 2, i], [i + 4]) for i in range(2)]
    >>> program = fusion.fuse([*parts, *scaled, concat_instr([4, 5], 0, (v, v), [6])], keep={6})
    >>> placed = stacks_in_place(program, keep={6})
    >>> [(instr.ins, instr.outs) for instr in placed]
    [((), (7,)), ((0, 7), (4,)), ((1, 7), (5,)), ((4, 5, 7), (6,))]
    >>> x = [np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)]
    >>> slots = x + [None] * 6
    >>> run(placed, slots)
    >>> bool(np.allclose(slots[6], np.concatenate([np.tanh(a) * a for a in x]))), slots[6] is slots[7]
    (True, True)
    >>> fusion.ENABLED = switch
    """
    program = list(program)
    stacks = [k for k, instr in enumerate(program) if instr.fn is stacked_rows]
    if not stacks:
        return program
    producer = producers(program)
    if producer is None:
        return program
    fresh = 1 + max(s for instr in program for s in (*instr.ins, *instr.outs))
    rewritten: dict[int, Instr] = {}
    allocations: dict[int, list[Instr]] = {}  # a position -> the stacks allocated before it
    for k in stacks:
        parts = program[k].ins
        avals = program[k].app.in_avals
        aval = avals[0]
        if any(a != aval for a in avals):  # (a concatenation of pads: parts of other sizes)
            continue
        ps = [producer.get(s) for s in parts]
        if len(set(parts)) != len(parts) or keep and set(parts) & set(keep) or None in ps or len(set(ps)) != len(ps):
            continue
        if any(p in rewritten or getattr(program[p].fn, "into_block", None) is None for p in ps):
            continue
        rows = aval.shape[0]
        stack_aval = aval.update(shape=_stacked_shape(aval.shape, 0, len(parts)))
        for i, (slot, p) in enumerate(zip(parts, ps)):
            instr = program[p]
            j = instr.outs.index(slot)
            rewritten[p] = instr._replace(fn=instr.fn.into_block(j, i * rows, (i + 1) * rows), ins=(*instr.ins, fresh))
        # the stack's instruction now reads its parts (so it still runs after them) and returns the
        # stack they were written into: no check of their addresses
        rewritten[k] = program[k]._replace(fn=_written_stack, ins=(*parts, fresh))
        shape, dtype = stack_aval.shape, stack_aval.dtype.np
        allocations.setdefault(min(ps), []).append(Instr(lambda shape=shape, dtype=dtype: np.empty(shape, dtype),
                                                         (), (fresh,)))
        fresh += 1
    if not rewritten:
        return program
    out: list[Instr] = []
    for k, instr in enumerate(program):
        out += allocations.get(k, [])
        out.append(rewritten.get(k, instr))
    return out


def _written_stack(*parts_then_stack: np.ndarray) -> np.ndarray:
    """The stack its parts were written into (``stacks_in_place``): the last argument."""
    return parts_then_stack[-1]
