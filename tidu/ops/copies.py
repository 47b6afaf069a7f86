"""The copying forms of the view ops (``view_copy``, ``permute_copy``, ``slice_copy``...): the
view, then a recorded copy (``clone``) in new storage, so writes to the result never reach the
input; differentiable as the view is. Also ``unsafe_chunk``/``unsafe_split`` (PyTorch's splits
without view tracking: tidu's own splits) and ``as_strided_scatter``.

>>> import tidu
>>> x = tidu.arange(6.0).reshape(2, 3)
>>> y = tidu.transpose_copy(x, 0, 1)
>>> y[0, 0] = 9.0
>>> x[0, 0].item(), y.is_contiguous()
(0.0, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..core.aval import wrap_dim
from ..tensor import Tensor
from . import arrange, diagonals, shape

__all__ = [
    "alias_copy", "as_strided_copy", "as_strided_scatter", "detach_copy", "diagonal_copy", "expand_copy",
    "narrow_copy", "permute_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
    "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy", "unfold_copy", "unsafe_chunk", "unsafe_split",
    "unsafe_split_with_sizes", "unsqueeze_copy", "view_copy",
]


def _fresh(view: Any) -> Any:
    """A recorded copy of ``view`` in new, row-major storage."""
    out = shape.clone(view)
    return out.contiguous() if isinstance(out, Tensor) and not out.is_contiguous() else out


def view_copy(input: Any, size: Any) -> Any:  # noqa: A002
    """``input.view(size)`` in new storage; with a dtype of the same size for ``size``, the
    elements' bits read as that dtype (not differentiable, as PyTorch's).

    >>> import tidu
    >>> tidu.view_copy(tidu.arange(4.0), (2, 2))
    tensor([[0., 1.],
            [2., 3.]])
    >>> tidu.view_copy(tidu.tensor([1.0]), tidu.int32)
    tensor([1065353216], dtype=tidu.int32)
    """
    if isinstance(size, dtypes.dtype):
        return _reinterpret(input, size)
    return _fresh(shape.view(input, size))


def _reinterpret(input: Any, dt: dtypes.dtype) -> Tensor:  # noqa: A002
    from .creation import tensor

    have = input.dtype.itemsize
    if have != dt.itemsize and (input.ndim == 0 or (input.shape[-1] * have) % dt.itemsize):
        raise RuntimeError(f"self.size(-1) must be divisible by {dt.itemsize // have} to view "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]} as {dtypes.TORCH_NAMES[dt.name]} (different "
                           f"element sizes), but got {input.shape[-1] if input.ndim else 1}")
    bits = np.ascontiguousarray(input._host()).view(dt.np)
    return tensor(bits, dtype=dt, device=input.device)


def permute_copy(input: Any, dims: Any) -> Any:  # noqa: A002
    """``input.permute(dims)`` in new, row-major storage.

    >>> import tidu
    >>> tidu.permute_copy(tidu.zeros(2, 3, 4), (2, 0, 1)).stride()
    (6, 3, 1)
    """
    return _fresh(shape.permute(input, dims))


def transpose_copy(input: Any, dim0: int, dim1: int) -> Any:  # noqa: A002
    """``input.transpose(dim0, dim1)`` in new storage.

    >>> import tidu
    >>> tidu.transpose_copy(tidu.tensor([[1, 2]]), 0, 1)
    tensor([[1],
            [2]])
    """
    return _fresh(shape.transpose(input, dim0, dim1))


def t_copy(input: Any) -> Any:  # noqa: A002
    """``input.t()`` in new storage.

    >>> import tidu
    >>> tidu.t_copy(tidu.tensor([[1, 2]])).shape
    tidu.Size([2, 1])
    """
    return _fresh(shape.t(input))


def unsqueeze_copy(input: Any, dim: int) -> Any:  # noqa: A002
    """``input.unsqueeze(dim)`` in new storage.

    >>> import tidu
    >>> tidu.unsqueeze_copy(tidu.zeros(2), -1).shape
    tidu.Size([2, 1])
    """
    return _fresh(shape.unsqueeze(input, dim))


def squeeze_copy(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """``input.squeeze(dim)`` (an int, a tuple, or all size-1 dims) in new storage.

    >>> import tidu
    >>> tidu.squeeze_copy(tidu.zeros(1, 2, 1), (0, 2)).shape
    tidu.Size([2])
    """
    return _fresh(shape.squeeze(input, dim))


def expand_copy(input: Any, size: Any, *, implicit: bool = False) -> Any:  # noqa: A002
    """``input.expand(size)`` with every element stored (``implicit`` is PyTorch's tracing flag).

    >>> import tidu
    >>> tidu.expand_copy(tidu.tensor([1, 2]), (2, -1)).stride()
    (2, 1)
    """
    return _fresh(shape.expand(input, size))


def select_copy(input: Any, dim: int, index: int) -> Any:  # noqa: A002
    """``input.select(dim, index)`` in new storage.

    >>> import tidu
    >>> tidu.select_copy(tidu.arange(6).reshape(2, 3), 1, -1)
    tensor([2, 5])
    """
    return _fresh(shape.select(input, dim, index))


def slice_copy(input: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:  # noqa: A002
    """``input[..., start:end:step, ...]`` along ``dim`` in new storage (bounds clamped, as slices).

    >>> import tidu
    >>> tidu.slice_copy(tidu.arange(6), 0, 1, None, 2)
    tensor([1, 3, 5])
    """
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    return _fresh(input[(slice(None),) * d + (slice(start, end, step),)])


def diagonal_copy(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:  # noqa: A002
    """``input.diagonal(offset, dim1, dim2)`` in new storage.

    >>> import tidu
    >>> tidu.diagonal_copy(tidu.arange(4).reshape(2, 2))
    tensor([0, 3])
    """
    return _fresh(diagonals.diagonal(input, offset, dim1, dim2))


def detach_copy(input: Any) -> Any:  # noqa: A002
    """``input.detach()`` in new storage: a copy that does not require grad.

    >>> import tidu
    >>> tidu.detach_copy(tidu.ones(2, requires_grad=True)).requires_grad
    False
    """
    return _fresh(input.detach())


def alias_copy(input: Any) -> Any:  # noqa: A002
    """A copy of ``input`` (PyTorch's ``alias`` is a view of all of it); differentiable.

    >>> import tidu
    >>> x = tidu.ones(2, requires_grad=True)
    >>> tidu.alias_copy(x)
    tensor([1., 1.], grad_fn=<convert_element_type>)
    """
    return _fresh(input)


def narrow_copy(input: Any, dim: int, start: Any, length: int) -> Any:  # noqa: A002
    """``input.narrow(dim, start, length)`` in new storage.

    >>> import tidu
    >>> tidu.narrow_copy(tidu.arange(6), 0, -4, 2)
    tensor([2, 3])
    """
    return _fresh(shape.narrow(input, dim, start, length))


def unfold_copy(input: Any, dimension: int, size: int, step: int) -> Any:  # noqa: A002
    """``input.unfold(dimension, size, step)`` (windows as a new last dim) in new storage.

    >>> import tidu
    >>> tidu.unfold_copy(tidu.arange(5), 0, 2, 2)
    tensor([[0, 1],
            [2, 3]])
    """
    return _fresh(arrange._unfold(input, dimension, size, step))


def unbind_copy(input: Any, dim: int = 0) -> tuple:  # noqa: A002
    """``input.unbind(dim)``, each slice in new storage.

    >>> import tidu
    >>> tidu.unbind_copy(tidu.arange(4).reshape(2, 2), 1)
    (tensor([0, 2]), tensor([1, 3]))
    """
    return tuple(_fresh(p) for p in shape.unbind(input, dim))


def split_copy(input: Any, split_size: int, dim: int = 0) -> tuple:  # noqa: A002
    """``input.split(split_size, dim)``, each piece in new storage.

    >>> import tidu
    >>> tidu.split_copy(tidu.arange(5), 2)
    (tensor([0, 1]), tensor([2, 3]), tensor([4]))
    """
    return tuple(_fresh(p) for p in shape.split(input, split_size, dim))


def split_with_sizes_copy(input: Any, split_sizes: Any, dim: int = 0) -> tuple:  # noqa: A002
    """``input.split_with_sizes(split_sizes, dim)``, each piece in new storage.

    >>> import tidu
    >>> tidu.split_with_sizes_copy(tidu.arange(5), [1, 4])
    (tensor([0]), tensor([1, 2, 3, 4]))
    """
    return tuple(_fresh(p) for p in shape.split_with_sizes(input, split_sizes, dim))


def as_strided_copy(input: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:  # noqa: A002
    """``input.as_strided(size, stride, storage_offset)`` in new, row-major storage.

    >>> import tidu
    >>> tidu.as_strided_copy(tidu.arange(5), (2, 2), (1, 2))
    tensor([[0, 2],
            [1, 3]])
    """
    return _fresh(arrange.as_strided(input, size, stride, storage_offset))


def unsafe_chunk(input: Any, chunks: int, dim: int = 0) -> tuple:  # noqa: A002
    """``chunk``: PyTorch's form without view tracking (tidu's pieces are views, and writes to
    them are tracked as ever).

    >>> import tidu
    >>> tidu.unsafe_chunk(tidu.arange(5), 2)
    (tensor([0, 1, 2]), tensor([3, 4]))
    """
    return shape.chunk(input, chunks, dim)


def unsafe_split(input: Any, split_size: int, dim: int = 0) -> tuple:  # noqa: A002
    """``split`` by one size (an int, as PyTorch's), without view tracking in PyTorch.

    >>> import tidu
    >>> tidu.unsafe_split(tidu.arange(5), 3)
    (tensor([0, 1, 2]), tensor([3, 4]))
    """
    if isinstance(split_size, bool) or not isinstance(split_size, int | np.integer):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return shape.split(input, int(split_size), dim)


def unsafe_split_with_sizes(input: Any, split_sizes: Any, dim: int = 0) -> tuple:  # noqa: A002
    """``split_with_sizes``, without view tracking in PyTorch.

    >>> import tidu
    >>> tidu.unsafe_split_with_sizes(tidu.arange(5), [4, 1])
    (tensor([0, 1, 2, 3]), tensor([4]))
    """
    return shape.split_with_sizes(input, split_sizes, dim)


def as_strided_scatter(input: Any, src: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:  # noqa: A002
    """A copy of ``input`` (in new row-major storage) with ``src`` written where
    ``as_strided(size, stride, storage_offset)`` of that copy reads; differentiable in both.

    >>> import tidu
    >>> tidu.as_strided_scatter(tidu.zeros(6), tidu.tensor([[1.0, 2.0], [3.0, 4.0]]), (2, 2), (1, 2))
    tensor([1., 3., 2., 4., 0., 0.])
    """
    out = _fresh(input)
    region = arrange.as_strided(out, size, stride, storage_offset)
    if tuple(src.shape) != tuple(region.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region.shape)}")
    region.copy_(src)
    return out


METHODS = {"unsafe_chunk": unsafe_chunk, "unsafe_split": unsafe_split, "narrow_copy": narrow_copy,
           "unsafe_split_with_sizes": unsafe_split_with_sizes, "as_strided_scatter": as_strided_scatter}
