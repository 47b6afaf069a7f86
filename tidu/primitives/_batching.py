"""Helpers for batching rules (``Primitive.def_batch``): ``rule(args, batch_dims, **params)``.

Batch dimensions arrive at 0 or ``None`` (not batched); rules return the
output with its batch dimension (0 here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def batch_size(args: Sequence[Any], dims: Sequence[int | None]) -> int:
    return next(a.shape[d] for a, d in zip(args, dims) if d is not None)


def at_front(x: Any, dim: int | None, size: int) -> Any:
    """``x`` with its batch dimension at 0; an unbatched ``x`` is broadcast along a new one."""
    from .structural import broadcast_in_dim, transpose

    if dim is None:
        return broadcast_in_dim.bind(x, shape=(size, *x.shape), broadcast_dimensions=tuple(range(1, x.ndim + 1)))
    if dim == 0:
        return x
    return transpose.bind(x, permutation=(dim, *[d for d in range(x.ndim) if d != dim]))


def shifted(axes: Sequence[int]) -> tuple[int, ...]:
    """Per-example axes as axes of the batch (batch dimension at 0)."""
    return tuple(a + 1 for a in axes)


def elementwise(prim: Any) -> Callable[..., Any]:
    """The rule of a same-shape primitive: every operand batched at 0, applied once."""

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> tuple[Any, int]:
        size = batch_size(args, dims)
        return prim.bind(*[at_front(a, d, size) for a, d in zip(args, dims)], **params), 0

    return rule


def along_axis(prim: Any) -> Callable[..., Any]:
    """The rule of a primitive with an ``axis`` param: every operand batched at 0, the per-example
    axis one further."""

    def rule(args: Sequence[Any], dims: Sequence[int | None], *, axis: int, **params: Any) -> tuple[Any, int]:
        size = batch_size(args, dims)
        return prim.bind(*[at_front(a, d, size) for a, d in zip(args, dims)], axis=axis + 1, **params), 0

    return rule


def unary(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The rule of a one-operand primitive from ``fn(x_batched_at_0, **params) -> out`` (batch at 0)."""

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> tuple[Any, int]:
        (x,), (d,) = args, dims
        return fn(at_front(x, d, x.shape[d]), **params), 0

    return rule
