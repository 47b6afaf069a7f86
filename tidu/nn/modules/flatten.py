"""``Flatten`` and ``Unflatten``."""

from __future__ import annotations

from typing import Any

from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one.

    >>> import tidu
    >>> tidu.nn.Flatten()(tidu.ones(2, 3, 4)).shape
    tidu.Size([2, 12])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into ``unflattened_size``.

    >>> import tidu
    >>> tidu.nn.Unflatten(1, (2, 3))(tidu.ones(4, 6)).shape
    tidu.Size([4, 2, 3])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if not isinstance(unflattened_size, tuple | list):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}")
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(size).__name__} at pos {i}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
