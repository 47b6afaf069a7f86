"""Sums of pads that tile their result become one concatenation (a program pass).

The transpose of ``split`` (``x.split(d, dim=-1)``, ``chunk``) pads each piece's cotangent
back to the whole shape with zeros, and the backward program adds the pads: for ``q, k, v =
qkv.split(d, -1)``, three zero-filled arrays of ``qkv``'s size and two full-size adds.
``concat_pads(program, keep)`` rewrites a sum whose terms are all such pads (along one
dimension, no interior padding, each read only by the sum) and whose pieces tile that
dimension exactly as one ``concatenate`` of the pieces. No arithmetic is left, so the result
equals the sum's except that ``-0.0`` in a piece stays ``-0.0`` (``-0.0 + 0.0`` is ``0.0``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..core.instructions import Instr
from .stacking import concat_instr, sums


def _piece(instr: Instr) -> tuple[int, int, int] | None:
    """``(dimension, start, stop)`` of the region a pad instruction fills, or ``None``."""
    app = instr.app
    if app is None or app.prim.name != "pad" or app.in_avals is None:
        return None
    config = dict(app.params)["padding_config"]
    padded = [d for d, c in enumerate(config) if tuple(c) != (0, 0, 0)]
    if len(padded) != 1 or config[padded[0]][2] != 0:
        return None
    d = padded[0]
    lo = config[d][0]
    return d, lo, lo + app.in_avals[0].shape[d]


def concat_pads(program: Sequence[Instr], keep: Collection[int]) -> list[Instr]:
    """``program`` with each sum of pads tiling one dimension computed as a concatenation;
    the slots in ``keep`` are still produced.

    >>> import numpy as np, tidu
    >>> from tidu.core.instructions import impl_instr, run
    >>> from tidu.core.primitive import Application
    >>> from tidu.primitives import elementwise as ew, slicing
    >>> piece, whole = tidu.ShapeDtype((2, 1), tidu.float64), tidu.ShapeDtype((2, 3), tidu.float64)
    >>> def pad(lo, hi):
    ...     return Application(slicing.pad, (("padding_config", ((0, 0, 0), (lo, hi, 0))),), (piece,))
    >>> add = Application(ew.add, (), (whole, whole))
    >>> program = [impl_instr(pad(0, 2), [0], [3]), impl_instr(pad(2, 0), [2], [4]), impl_instr(pad(1, 1), [1], [5]),
    ...            impl_instr(add, [3, 4], [6]), impl_instr(add, [6, 5], [7])]
    >>> [(i.app.name.split("[")[0], i.ins, i.outs) for i in concat_pads(program, keep={7})]
    [('concatenate', (0, 1, 2), (7,))]
    >>> slots = [np.full((2, 1), v) for v in (1.0, 2.0, 3.0)] + [None] * 5
    >>> run(concat_pads(program, keep={7}), slots)
    >>> slots[7].tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    """
    program = list(program)
    found = sums(program, keep)
    if found is None:
        return program
    producer, readers, trees = found
    keep = set(keep)
    removed: set[int] = set()
    replaced: dict[int, Instr] = {}
    for k, adds, leaves in trees:
        pieces = []
        for leaf in leaves:
            p = producer.get(leaf)
            piece = None if p is None or readers[leaf] != 1 or leaf in keep else _piece(program[p])
            if piece is None:
                break
            pieces.append((*piece, p))
        else:
            dims = {d for d, _, _, _ in pieces}
            if len(dims) != 1:
                continue
            d = dims.pop()
            pieces.sort(key=lambda piece: piece[1])
            bounds = [0, *(stop for _, _, stop, _ in pieces)]
            if [start for _, start, _, _ in pieces] != bounds[:-1] or bounds[-1] != program[k].app.out_avals[0].shape[d]:
                continue  # gaps or overlaps
            parts = [program[p] for *_, p in pieces]
            replaced[k] = concat_instr([i.ins[0] for i in parts], d, [i.app.in_avals[0] for i in parts], program[k].outs)
            removed.update(adds)
            removed.update(p for *_, p in pieces)
    if not replaced:
        return program
    return [replaced.get(k, instr) for k, instr in enumerate(program) if k in replaced or k not in removed]
