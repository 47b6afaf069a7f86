"""Shape ops: reshape, permute, transpose, expand, squeeze, unsqueeze, flatten."""

from __future__ import annotations

from math import prod
from typing import Any

from ..core.primitive import bind
from ..primitives.structural import reshape as reshape_p
from ..primitives.structural import transpose as transpose_p
from ._operands import broadcast_to, wrap_dim

__all__ = ['expand', 'flatten', 'permute', 'reshape', 'squeeze', 't', 'transpose', 'unsqueeze', 'view']

def _sizes(shape: tuple) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        return tuple(shape[0])
    return tuple(shape)


def reshape(input: Any, *shape: Any) -> Any:  # noqa: A002
    """A tensor with the same data and a new shape (one size may be -1).

    >>> import tidu
    >>> tidu.arange(6).reshape(2, -1)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    sizes = [int(s) for s in _sizes(shape)]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in sizes:
        known = prod(s for s in sizes if s != -1)
        total = prod(input.shape)
        if known == 0 or total % known:
            raise RuntimeError(f"shape '{sizes}' is invalid for input of size {total}")
        sizes[sizes.index(-1)] = total // known
    if tuple(sizes) == tuple(input.shape):
        return input
    return bind(reshape_p, input, new_sizes=tuple(sizes))


view = reshape


def permute(input: Any, *dims: Any) -> Any:  # noqa: A002
    """Reorder dimensions.

    >>> import tidu
    >>> tidu.zeros(2, 3, 4).permute(2, 0, 1).shape
    tidu.Size([4, 2, 3])
    """
    dims = _sizes(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute(): number of dims don't match in permute: input.dim() = {input.ndim}, len(dims) = {len(dims)}"
        )
    perm = tuple(wrap_dim(d, input.ndim) for d in dims)
    if perm == tuple(range(input.ndim)):
        return input
    return bind(transpose_p, input, permutation=perm)


def transpose(input: Any, dim0: int, dim1: int) -> Any:  # noqa: A002
    """Swap two dimensions.

    >>> import tidu
    >>> tidu.zeros(2, 3).transpose(0, 1).shape
    tidu.Size([3, 2])
    """
    a, b = wrap_dim(dim0, input.ndim), wrap_dim(dim1, input.ndim)
    if input.ndim == 0:
        return input
    perm = list(range(input.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return permute(input, perm)


def t(input: Any) -> Any:  # noqa: A002
    """Transpose of a tensor of at most 2 dimensions."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def expand(input: Any, *sizes: Any) -> Any:  # noqa: A002
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension).

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0]).expand(2, -1)
    tensor([[1., 2.],
            [1., 2.]])
    """
    sizes = list(_sizes(sizes))
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({input.ndim})"
        )
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension ({i})")
            sizes[i] = input.shape[i - lead]
    return broadcast_to(input, sizes)


def unsqueeze(input: Any, dim: int) -> Any:  # noqa: A002
    """Insert a dimension of size 1 at ``dim``."""
    d = wrap_dim(dim, input.ndim + 1)
    shape = list(input.shape)
    shape.insert(d, 1)
    return bind(reshape_p, input, new_sizes=tuple(shape))


def squeeze(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """Remove dimensions of size 1 (all, or those in ``dim``)."""
    if dim is None:
        dims = {d for d, s in enumerate(input.shape) if s == 1}
    else:
        dims = {wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if input.shape[d] == 1}
    shape = tuple(s for d, s in enumerate(input.shape) if d not in dims)
    return input if shape == tuple(input.shape) else bind(reshape_p, input, new_sizes=shape)


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:  # noqa: A002
    """Merge dimensions ``start_dim..end_dim`` into one."""
    if input.ndim == 0:
        return reshape(input, 1)
    a, b = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if a > b:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(input.shape[:a]) + [prod(input.shape[a:b + 1])] + list(input.shape[b + 1:])
    return reshape(input, shape)


METHODS = {
    "reshape": reshape, "view": view, "permute": permute, "transpose": transpose, "t": t, "expand": expand,
    "unsqueeze": unsqueeze, "squeeze": squeeze, "flatten": flatten,
    "expand_as": lambda self, other: expand(self, *other.shape),
}
