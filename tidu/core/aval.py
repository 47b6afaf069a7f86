"""``ShapeDtype``: what a shape rule sees of a value (JAX's abstract value)."""

from __future__ import annotations

from math import prod
from typing import NamedTuple

from .dtypes import dtype


class ShapeDtype(NamedTuple):
    """A value's shape and dtype, without data.

    >>> import tidu
    >>> tidu.ShapeDtype((2, 3), tidu.float32)
    ShapeDtype(shape=(2, 3), dtype=tidu.float32)
    """

    shape: tuple[int, ...]
    dtype: dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return prod(self.shape)

    def update(self, shape: tuple[int, ...] | None = None, dtype: dtype | None = None) -> ShapeDtype:
        return ShapeDtype(self.shape if shape is None else tuple(shape), self.dtype if dtype is None else dtype)


def wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in ``range(ndim)`` (negative counts from the end), as PyTorch checks it."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
