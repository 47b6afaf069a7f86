"""Shape-rule helpers shared by the primitive families."""

from __future__ import annotations

from typing import Any

from ..core.aval import ShapeDtype
from ..core.dtypes import dtype
from ..core.imports import module


def same_shape_dtype(name: str, *avals: ShapeDtype) -> ShapeDtype:
    first = avals[0]
    for other in avals[1:]:
        if other.shape != first.shape:
            raise RuntimeError(
                f"{name}: operand shapes must match, got {tuple(first.shape)} and {tuple(other.shape)} "
                "(the public op broadcasts; the primitive does not)"
            )
        if other.dtype is not first.dtype:
            raise TypeError(f"{name}: operand dtypes must match, got {first.dtype.name} and {other.dtype.name}")
    return first


def check_dtype(name: str, aval: ShapeDtype, allowed: tuple[dtype, ...]) -> None:
    if aval.dtype not in allowed:
        names = ", ".join(d.name for d in allowed)
        raise TypeError(f"{name}: no kernel for dtype {aval.dtype.name} (supported: {names})")


def check_axes(name: str, ndim: int, axes: Any) -> tuple[int, ...]:
    axes = tuple(axes)
    for a in axes:
        if not 0 <= a < ndim:
            raise IndexError(f"{name}: axis {a} is out of range for a tensor of dimension {ndim}")
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{name}: axes {axes} repeat an axis")
    return axes


class _LazyOps:
    """``tidu.ops`` for rules, looked up at call time (ops import the primitives)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(module("tidu.ops"), name)


ops = _LazyOps()

