"""Diagonals: ``diagonal``, ``diag``, ``diag_embed``, ``diagflat``, ``trace``, and the index lists
``tril_indices``/``triu_indices``.

All are composed from views, slices and concatenation, so their gradients are those primitives'.
``diagonal`` of a matrix whose last two dims are row-major is a view, as in PyTorch (other
layouts get a copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..core.autocast import policy as autocast_policy
from ..core.aval import wrap_dim
from ..tensor import Tensor
from . import creation, reduce, shape

__all__ = ["diag", "diag_embed", "diagflat", "diagonal", "trace", "tril_indices", "triu_indices"]


def _diagonal_size(n: int, m: int, offset: int) -> int:
    return max(min(n, m - offset) if offset >= 0 else min(n + offset, m), 0)


def diagonal(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:  # noqa: A002
    """The diagonal of the matrices in dims ``dim1`` and ``dim2`` (``offset`` above it, or below
    when negative), as the last dim, the other dims in their order.

    >>> import tidu
    >>> x = tidu.arange(9.0).reshape(3, 3)
    >>> x.diagonal()
    tensor([0., 4., 8.])
    >>> x.diagonal(1)
    tensor([1., 5.])
    """
    ndim = input.ndim
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    x = shape.movedim(input, (d1, d2), (-2, -1))
    n, m = x.shape[-2], x.shape[-1]
    k = _diagonal_size(n, m, offset)
    flat = shape.reshape(x, (*x.shape[:-2], n * m))
    start = offset if offset >= 0 else -offset * m
    if k == 0:
        start = 0
    return flat[..., start:start + (k - 1) * (m + 1) + 1:m + 1] if k else flat[..., 0:0]


_diagonal = diagonal  # ``diag``'s argument has the name


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:  # noqa: A002
    """Matrices whose diagonal (``offset`` above it, or below when negative) holds the last dim of
    ``input``, in the new dims ``dim1`` and ``dim2`` of the result; zero elsewhere.

    >>> import tidu
    >>> tidu.diag_embed(tidu.tensor([1.0, 2.0]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.],
            [0., 0., 0.]])
    """
    ndim = input.ndim + 1
    d1, d2 = wrap_dim(dim1, ndim), wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = int(offset)
    lead, k = tuple(input.shape[:-1]), input.shape[-1]

    def zeros(*size: int) -> Any:
        return creation.zeros((*lead, *size), dtype=input.dtype, device=input.device)

    # row i of a (k, k + 1) block, read row-major as k by k, has its element at column i
    rows = shape.cat([shape.unsqueeze(input, -1), zeros(k, k)], -1)
    square = shape.reshape(shape.reshape(rows, (*lead, k * (k + 1)))[..., :k * k], (*lead, k, k))
    if offset > 0:
        square = shape.cat([zeros(k, offset), square], -1)
        square = shape.cat([square, zeros(offset, k + offset)], -2)
    elif offset < 0:
        square = shape.cat([zeros(-offset, k), square], -2)
        square = shape.cat([square, zeros(k - offset, -offset)], -1)
    return shape.movedim(square, (-2, -1), (d1, d2))


def diag(input: Any, diagonal: int = 0) -> Any:  # noqa: A002
    """A 1-D tensor's matrix with it on the ``diagonal``-th diagonal, or a matrix's
    ``diagonal``-th diagonal (a copy).

    >>> import tidu
    >>> tidu.diag(tidu.tensor([1, 2]))
    tensor([[1, 0],
            [0, 2]])
    >>> tidu.diag(tidu.tensor([[1, 2], [3, 4]]), -1)
    tensor([3])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return shape._copy(_diagonal(input, diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input: Any, offset: int = 0) -> Any:  # noqa: A002
    """The flattened input on the ``offset``-th diagonal of a square matrix.

    >>> import tidu
    >>> tidu.diagflat(tidu.tensor([[1, 2]]))
    tensor([[1, 0],
            [0, 2]])
    """
    return diag_embed(shape.reshape(input, (-1,)), offset, 0, 1)


@autocast_policy("fp32")
def trace(input: Any) -> Any:  # noqa: A002
    """The sum of a matrix's diagonal (integers sum to int64, as ``sum``).

    >>> import tidu
    >>> tidu.trace(tidu.arange(9.0).reshape(3, 3))
    tensor(12.)
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype is dtypes.bool_:
        raise dtypes.not_implemented("trace", input.dtype)
    return reduce.sum(diagonal(input))


def _triangle_indices(which: str, row: int, col: int, offset: int, dtype: Any, device: Any) -> Tensor:
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    dt = dtypes.int64 if dtype is None else dtypes.as_dtype(dtype)
    if dt not in (dtypes.int32, dtypes.int64):
        raise dtypes.not_implemented(f"{which}_indices", dt)
    make = np.tril_indices if which == "tril" else np.triu_indices
    pairs = np.stack(make(row, offset, col)).astype(dt.np) if row and col else np.zeros((2, 0), dt.np)
    return creation.tensor(pairs, dtype=dt, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of a ``row`` by ``col`` matrix's lower triangle (on and below the
    ``offset``-th diagonal), row by row, as a (2, N) tensor.

    >>> import tidu
    >>> tidu.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _triangle_indices("tril", row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (row, column) indices of a ``row`` by ``col`` matrix's upper triangle (on and above the
    ``offset``-th diagonal), row by row, as a (2, N) tensor.

    >>> import tidu
    >>> tidu.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _triangle_indices("triu", row, col, offset, dtype, device)


METHODS = {"diagonal": diagonal, "diag": diag, "diag_embed": diag_embed, "diagflat": diagflat, "trace": trace}
