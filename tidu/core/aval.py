"""``ShapeDtype``: what a shape rule sees of a value (JAX's abstract value)."""

from __future__ import annotations

from math import prod
from typing import NamedTuple

from .dtypes import dtype


class ShapeDtype(NamedTuple):
    """A value's shape, dtype and device type, without data.

    >>> import tidu
    >>> tidu.ShapeDtype((2, 3), tidu.float32)
    ShapeDtype(shape=(2, 3), dtype=tidu.float32)
    >>> tidu.ShapeDtype((2,), tidu.float32, "cuda")
    ShapeDtype(shape=(2,), dtype=tidu.float32, device='cuda')

    Shape rules need not set the device: ``abstract_eval`` gives outputs their inputs'.
    """

    shape: tuple[int, ...]
    dtype: dtype
    device: str = "cpu"

    def __repr__(self) -> str:
        tail = "" if self.device == "cpu" else f", device={self.device!r}"
        return f"ShapeDtype(shape={self.shape}, dtype={self.dtype}{tail})"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return prod(self.shape)

    def update(self, shape: tuple[int, ...] | None = None, dtype: dtype | None = None) -> ShapeDtype:
        return ShapeDtype(self.shape if shape is None else tuple(shape), self.dtype if dtype is None else dtype,
                          self.device)


def wrap_dim(dim: int, ndim: int) -> int:
    """A dimension index in ``range(ndim)`` (negative counts from the end), as PyTorch checks it."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
