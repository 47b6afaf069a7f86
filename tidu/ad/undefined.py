"""``UndefinedPrimal``: a linear input seen by a transpose rule (JAX's name)."""

from __future__ import annotations

from typing import Any


class UndefinedPrimal:
    """Stands for the linear input a transpose rule computes the cotangent of.

    It has no value, only ``aval`` (with ``.shape`` and ``.dtype`` when the
    operand type has them).
    """

    __slots__ = ("aval",)

    def __init__(self, aval: Any) -> None:
        self.aval = aval

    @property
    def shape(self) -> Any:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval!r})"


def is_undefined_primal(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)
