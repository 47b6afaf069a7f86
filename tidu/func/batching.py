"""The batching interpreter behind ``vmap``: batched values and how a bind is batched.

Design (JAX's batching, without a tracer class of its own): inside ``vmap`` a
batched value is a ``Var`` whose ``tracer`` is a ``BatchTrace`` (one per vmap
level), whose ``value`` holds the whole batch with the batch dimension at
position 0, and whose ``aval`` is the per-example shape. The ops layer already
accepts ``Var`` wherever it accepts tensors, and ``bind`` hands a ``Var``
argument to its tracer's ``emit``; ``BatchTrace.emit`` then runs the
primitive's batching rule (``Primitive.def_batch``) on the batch values, which
binds primitives on ordinary tensors (recorded on the tape as usual) or, when
vmaps nest, on the ``Var`` of the level below. A primitive without a rule is
run once per example and the results stacked, with a one-time warning.

Nesting: level ``k``'s ``Var`` holds a value of level ``k - 1``; ``emit``
defers to the innermost level among its arguments. ``lower`` turns a value
into one tensor of shape ``(B_1, ..., B_k, *example_shape)`` over every active
level and ``lift`` is its inverse: the AD transforms (``grad``, ``vjp``,
``jvp``...) run on lowered tensors, which is exact because the examples of a
batch never interact.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..core.aval import ShapeDtype
from ..core.primitive import Primitive, Var
from ..primitives.slicing import pad
from ..primitives.structural import broadcast_in_dim, reshape, transpose

LEVELS: list[BatchTrace] = []
# the ``randomness`` of each transform running its function batched (``vmap``'s, ``jacfwd``'s):
# what a random op inside does (ops/creation.py: ``_check_vmap_randomness``)
RANDOMNESS: list[str] = []
_warned: set[str] = set()


class BatchTrace:
    """One ``vmap`` level: the batch size and how binds on its values run."""

    __slots__ = ("size", "level")

    def __init__(self, size: int) -> None:
        self.size = size
        self.level = len(LEVELS) + 1

    def __repr__(self) -> str:
        return f"BatchTrace(level={self.level}, size={self.size})"

    def emit(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        top = self
        for a in args:
            if is_batched(a) and a.tracer.level > top.level:
                top = a.tracer
        if top is not self:
            return top.emit(prim, args, params)
        values = [a.value if self.owns(a) else a for a in args]
        dims = [0 if self.owns(a) else None for a in args]
        if all(d is None for d in dims):
            return prim.bind(*values, **params)
        if prim.batch_rule is None:
            out, out_dim = _loop(prim, values, dims, params, self.size), 0
        else:
            out, out_dim = prim.batch_rule(values, dims, **params)
        if isinstance(out, tuple):
            dims_out = out_dim if isinstance(out_dim, tuple) else (out_dim,) * len(out)
            return tuple(self.wrap(move_to_front(o, d)) for o, d in zip(out, dims_out))
        return self.wrap(move_to_front(out, out_dim))

    def owns(self, x: Any) -> bool:
        return type(x) is Var and x.tracer is self

    def wrap(self, value: Any) -> Var:
        return Var(self, value, ShapeDtype(tuple(value.shape[1:]), value.dtype), False)


def is_batched(x: Any) -> bool:
    return type(x) is Var and isinstance(x.tracer, BatchTrace)


def move_to_front(x: Any, dim: int) -> Any:
    if dim == 0:
        return x
    perm = (dim, *[d for d in range(x.ndim) if d != dim])
    return transpose.bind(x, permutation=perm)


def move_from_front(x: Any, dim: int) -> Any:
    if dim == 0:
        return x
    rest = list(range(1, x.ndim))
    perm = (*rest[:dim], 0, *rest[dim:])
    return transpose.bind(x, permutation=tuple(perm))


def add_batch_dim(x: Any, size: int) -> Any:
    """An unbatched value repeated ``size`` times along a new dimension 0."""
    return broadcast_in_dim.bind(x, shape=(size, *x.shape), broadcast_dimensions=tuple(range(1, x.ndim + 1)))


def stack(values: Sequence[Any]) -> Any:
    """Values of one shape stacked along a new dimension 0 (differentiable, from pad and add)."""
    n = len(values)
    total = None
    for i, v in enumerate(values):
        row = reshape.bind(v, new_sizes=(1, *v.shape))
        placed = pad.bind(row, padding_config=((i, n - 1 - i, 0), *[(0, 0, 0)] * v.ndim))
        total = placed if total is None else total + placed
    return total


def _loop(prim: Primitive, values: list[Any], dims: list[Any], params: dict[str, Any], size: int) -> Any:
    if prim.name not in _warned:
        _warned.add(prim.name)
        warnings.warn(
            f"vmap: primitive {prim.name!r} has no batching rule ({prim.name}.def_batch); "
            "running it once per example in a Python loop", stacklevel=4)
    results = [prim.bind(*[v[i] if d is not None else v for v, d in zip(values, dims)], **params)
               for i in range(size)]
    if isinstance(results[0], tuple):
        return tuple(stack([r[j] for r in results]) for j in range(len(results[0])))
    return stack(results)


def lower(x: Any) -> Any:
    """A value as one tensor of shape ``(B_1, ..., B_k, *example_shape)`` over the active levels."""
    for trace in reversed(LEVELS):
        x = x.value if trace.owns(x) else add_batch_dim(x, trace.size)
    return x


def lift(x: Any) -> Any:
    """The inverse of ``lower``: a tensor with the active levels' batch dims in front, as a batched value."""
    for trace in LEVELS:
        x = trace.wrap(x)
    return x
