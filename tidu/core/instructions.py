"""Array-level straight-line programs: ``Instr`` lists over numbered value slots.

A compiled backward step (and the fusion pass that rewrites it) is a list of
``Instr``: each reads arrays from ``slots[i]`` for ``i in ins``, runs ``fn`` on
them, and stores its results in ``slots[o]`` for ``o in outs``. ``app`` is the
``Application`` the instruction came from (primitive, params, avals) so passes
can inspect it; a fused instruction has ``app=None`` and keeps the instructions
it replaced in ``parts`` (an allocation, ``stacking.stacks_in_place``'s, has
neither). ``free`` lists the slots whose last reader this is: they are dropped
right after it runs, so residuals die as soon as the walk is past.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

from . import half


class Instr(NamedTuple):
    fn: Callable[..., Any]  # arrays in -> one array or a tuple of arrays
    ins: tuple[int, ...]
    outs: tuple[int, ...]
    app: Any = None
    parts: tuple = ()
    free: tuple[int, ...] = ()


def impl_instr(app: Any, ins: Sequence[int], outs: Sequence[int], device: str = "cpu") -> Instr:
    """The instruction running ``app``'s kernel for ``device`` with its params bound (on float16
    or bfloat16, the float32 kernel of Note [half precision] in tidu/core/half.py). A kernel with
    a ``planned`` attribute (the host's product) is planned once for the operands' shapes."""
    impl = half.kernel(app.prim, device, app.in_avals, app.out_avals) or app.prim.impls[device]
    planned = getattr(impl, "planned", None)  # a kernel that plans its work once for fixed shapes
    if planned is not None:
        fn = planned(*[a.shape for a in app.in_avals], **dict(app.params))
    else:
        fn = partial(impl, **dict(app.params)) if app.params else impl
    return Instr(fn, tuple(ins), tuple(outs), app)


def producers(program: Sequence[Instr]) -> dict[int, int] | None:
    """Each slot's writer (its index in ``program``), or ``None`` when a slot is written twice
    (the program passes leave such a program alone)."""
    producer: dict[int, int] = {}
    for k, instr in enumerate(program):
        for o in instr.outs:
            if o in producer:
                return None
            producer[o] = k
    return producer


def run(program: Sequence[Instr], slots: list[Any]) -> None:
    """Execute ``program`` in place on ``slots``."""
    for instr in program:
        result = instr.fn(*[slots[i] for i in instr.ins])
        if len(instr.outs) == 1:
            slots[instr.outs[0]] = result[0] if type(result) is tuple else result
        else:
            for o, r in zip(instr.outs, result):
                slots[o] = r
        for i in instr.free:
            slots[i] = None
