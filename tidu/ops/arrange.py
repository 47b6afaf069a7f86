"""Arranging tensors: stacking (``hstack``, ``vstack``, ``dstack``, ``column_stack``, ``meshgrid``),
splitting (``tensor_split``, ``hsplit``, ``vsplit``, ``dsplit``), tiling (``tile``,
``repeat_interleave``), turning (``rot90``, ``fliplr``, ``flipud``), ``diff``, ``as_strided``, and the
products of sets: ``block_diag``, ``cartesian_prod``, ``combinations``, and the powers of ``vander``.

All are composed from reshapes, concatenation, slices, flips and ``index_select``, so their
gradients are those primitives'.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from ..backends.layout import element_geometry, storage
from ..core import dtypes
from ..core.aval import wrap_dim
from ..primitives.strided import as_strided as as_strided_p
from ..tensor import Tensor
from . import creation, cumulative, indexing, math, shape
from ._operands import convert

__all__ = [
    "as_strided", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "diff", "dsplit", "dstack", "fliplr", "flipud",
    "hsplit", "hstack", "meshgrid", "repeat_interleave", "rot90", "row_stack", "tensor_split", "tile", "vsplit",
    "vstack", "block_diag", "cartesian_prod", "combinations", "vander",
]
# ``Tensor.unfold`` is a method only (``tidu.nn.functional.unfold`` is im2col)


def _at_least(tensors: tuple, lift: Any) -> Any:
    """``lift`` of one tensor, or a tuple of ``lift`` of each (given as arguments or one sequence)."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return lift(tensors[0])
    items = tensors[0] if len(tensors) == 1 else tensors
    return tuple(lift(t) for t in items)


def _lift1(x: Any) -> Any:
    return shape.reshape(x, (1,)) if x.ndim == 0 else x


def _lift3(x: Any) -> Any:
    if x.ndim == 0:
        return shape.reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return shape.reshape(x, (1, x.shape[0], 1))
    if x.ndim == 2:
        return shape.reshape(x, (*x.shape, 1))
    return x


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least one dim (a 0-d one becomes ``(1,)``).

    >>> import tidu
    >>> tidu.atleast_1d(tidu.tensor(1.0))
    tensor([1.])
    """
    return _at_least(tensors, _lift1)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least two dims (leading ones added).

    >>> import tidu
    >>> tidu.atleast_2d(tidu.tensor([1, 2])).shape
    tidu.Size([1, 2])
    """
    return _at_least(tensors, lambda x: x if x.ndim >= 2 else shape.reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape)))


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least three dims: ``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` becomes
    ``(m, n, 1)``.

    >>> import tidu
    >>> tidu.atleast_3d(tidu.zeros(2, 3)).shape
    tidu.Size([2, 3, 1])
    """
    return _at_least(tensors, _lift3)


def _sequence(tensors: Any, name: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, list | tuple):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors: Any) -> Any:
    """Concatenate along the columns: dim 1, or dim 0 if every tensor is 1-D (0-d ones count as 1-D).

    >>> import tidu
    >>> tidu.hstack([tidu.tensor([1, 2]), tidu.tensor([3])])
    tensor([1, 2, 3])
    """
    items = [_lift1(t) for t in _sequence(tensors, "hstack")]
    return shape.cat(items, 0 if all(t.ndim == 1 for t in items) else 1)


def vstack(tensors: Any) -> Any:
    """Concatenate along the rows (dim 0), 0-d and 1-D tensors taken as rows.

    >>> import tidu
    >>> tidu.vstack([tidu.tensor([1, 2]), tidu.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return shape.cat(list(atleast_2d(_sequence(tensors, "vstack"))), 0)


row_stack = vstack


def dstack(tensors: Any) -> Any:
    """Concatenate along the depth (dim 2), after ``atleast_3d``.

    >>> import tidu
    >>> tidu.dstack([tidu.tensor([1, 2]), tidu.tensor([3, 4])])
    tensor([[[1, 3],
             [2, 4]]])
    """
    return shape.cat(list(atleast_3d(_sequence(tensors, "dstack"))), 2)


def column_stack(tensors: Any) -> Any:
    """Concatenate along dim 1, 0-d and 1-D tensors taken as columns.

    >>> import tidu
    >>> tidu.column_stack([tidu.tensor([1, 2]), tidu.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    items = [shape.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in _sequence(tensors, "column_stack")]
    return shape.cat(items, 1)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple:
    """Coordinate grids of 0-d or 1-D tensors, as broadcast views; ``indexing='ij'`` (the default,
    with PyTorch's warning when not given) puts the first tensor along dim 0, ``'xy'`` along dim 1.

    >>> import tidu
    >>> x, y = tidu.meshgrid(tidu.tensor([1, 2]), tidu.tensor([3, 4, 5]), indexing="ij")
    >>> x
    tensor([[1, 1, 1],
            [2, 2, 2]])
    """
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    first = tensors[0]
    for t in tensors[1:]:
        if t.dtype is not first.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t.device != first.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    sizes = [t.numel() for t in tensors]
    order = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        order[0], order[1] = 1, 0
    grid = tuple(sizes[i] for i in order)
    out = []
    for i, t in enumerate(tensors):
        axis = order.index(i)
        column = shape.reshape(t, tuple(s if d == axis else 1 for d, s in enumerate(grid)))
        out.append(shape.expand(column, grid))
    return tuple(out)


def tile(input: Any, dims: Any) -> Any:  # noqa: A002
    """``repeat`` with ``dims`` padded with leading ones to ``input``'s number of dims.

    >>> import tidu
    >>> tidu.tensor([[1, 2]]).tile((2,))
    tensor([[1, 2, 1, 2]])
    """
    reps = [int(d) for d in (dims if isinstance(dims, list | tuple) else (dims,))]
    reps = [1] * (input.ndim - len(reps)) + reps
    return shape.repeat(input, *reps)


def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Any:
    """Each element (of the flattened input, or each slice along ``dim``) repeated ``repeats``
    times (a number, or a tensor of one count per element). With only a tensor of counts,
    ``repeat_interleave(counts)`` gives the indices ``0, 0, ..., 1, ...``.

    >>> import tidu
    >>> tidu.tensor([1, 2]).repeat_interleave(2)
    tensor([1, 1, 2, 2])
    >>> tidu.repeat_interleave(tidu.tensor([[1, 2], [3, 4]]), tidu.tensor([1, 2]), dim=0)
    tensor([[1, 2],
            [3, 4],
            [3, 4]])
    """
    if repeats is None:
        counts = input
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        input = creation.arange(counts.numel(), device=counts.device)  # noqa: A001
        repeats = counts
    if dim is None:
        input = shape.reshape(input, (-1,))  # noqa: A001
        d = 0
    else:
        d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (dtypes.int32, dtypes.int64):
            raise dtypes.not_implemented("repeat_interleave_cpu", repeats.dtype)
        if repeats.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        counts = repeats._host().reshape(-1).astype(np.int64)
        if counts.size == 1:
            counts = np.full(n, counts[0])
        elif counts.size != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({d}) = {n}")
    else:
        if int(repeats) < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = np.full(n, int(repeats))
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    positions = np.repeat(np.arange(n), counts)
    if output_size is not None and positions.size != output_size:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {positions.size} but got {output_size}")
    if input.ndim == 0:
        input = shape.reshape(input, (1,))  # noqa: A001
    index = creation.tensor(positions, dtype=dtypes.int64, device=input.device)
    return indexing.index_select(input, d, index)


def tensor_split(input: Any, indices_or_sections: Any = None, dim: int = 0, *, sections: Any = None,  # noqa: A002
                 indices: Any = None, tensor_indices_or_sections: Any = None) -> tuple:
    """Views of ``input`` split along ``dim``: into ``n`` nearly equal parts (the first
    ``size % n`` one longer), or at the listed indices.

    >>> import tidu
    >>> [p.tolist() for p in tidu.arange(5).tensor_split(3)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in tidu.arange(5).tensor_split([1, 4])]
    [[0], [1, 2, 3], [4]]
    """
    given = [s for s in (indices_or_sections, sections, indices, tensor_indices_or_sections) if s is not None]
    if len(given) != 1:  # (PyTorch's overloads: one of them, by position or by its name)
        raise TypeError("tensor_split() takes one of indices_or_sections, sections, indices or "
                        f"tensor_indices_or_sections, got {len(given)}")
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    spec = given[0]
    if isinstance(spec, Tensor):
        spec = spec.tolist()
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        base, extra = divmod(size, spec)
        bounds, start = [], 0
        for i in range(spec):
            start += base + (i < extra)
            bounds.append(start)
        bounds = bounds[:-1]
    else:
        bounds = [int(i) for i in spec]
    edges = [0, *bounds, size]
    pieces = []
    for lo, hi in zip(edges, edges[1:]):
        lo, hi = min(max(lo if lo >= 0 else lo + size, 0), size), min(max(hi if hi >= 0 else hi + size, 0), size)
        pieces.append(shape._narrow(input, d, lo, max(hi, lo)))
    return tuple(pieces)


def _split_at(name: str, dim: int, min_dims: int, input: Any, sections: Any) -> tuple:  # noqa: A002
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor "
                           f"with {input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input: Any, indices_or_sections: Any) -> tuple:  # noqa: A002
    """``tensor_split`` along dim 1 (dim 0 for a 1-D tensor); a number of sections must divide it.

    >>> import tidu
    >>> [p.shape for p in tidu.zeros(2, 4).hsplit(2)]
    [tidu.Size([2, 2]), tidu.Size([2, 2])]
    """
    return _split_at("hsplit", 1 if input.ndim > 1 else 0, 1, input, indices_or_sections)


def vsplit(input: Any, indices_or_sections: Any) -> tuple:  # noqa: A002
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims; a number of sections must divide it.

    >>> import tidu
    >>> [p.shape for p in tidu.zeros(4, 2).vsplit([1])]
    [tidu.Size([1, 2]), tidu.Size([3, 2])]
    """
    return _split_at("vsplit", 0, 2, input, indices_or_sections)


def dsplit(input: Any, indices_or_sections: Any) -> tuple:  # noqa: A002
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims; a number of sections must divide it.

    >>> import tidu
    >>> [p.shape for p in tidu.zeros(1, 1, 4).dsplit(2)]
    [tidu.Size([1, 1, 2]), tidu.Size([1, 1, 2])]
    """
    return _split_at("dsplit", 2, 3, input, indices_or_sections)


def rot90(input: Any, k: int = 1, dims: Any = (0, 1)) -> Any:  # noqa: A002
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first dim towards the second.

    >>> import tidu
    >>> tidu.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = wrap_dim(dims[0], input.ndim), wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    turns = k % 4
    if turns == 1:
        return shape.transpose(shape.flip(input, d1), d0, d1)
    if turns == 2:
        return shape.flip(input, d0, d1)
    if turns == 3:
        return shape.transpose(shape.flip(input, d0), d0, d1)
    return shape._copy(input)


def fliplr(input: Any) -> Any:  # noqa: A002
    """Reverse the columns (dim 1) of a tensor of at least 2 dims.

    >>> import tidu
    >>> tidu.tensor([[1, 2]]).fliplr()
    tensor([[2, 1]])
    """
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return shape.flip(input, 1)


def flipud(input: Any) -> Any:  # noqa: A002
    """Reverse the rows (dim 0) of a tensor of at least 1 dim.

    >>> import tidu
    >>> tidu.tensor([1, 2]).flipud()
    tensor([2, 1])
    """
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return shape.flip(input, 0)


def diff(input: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:  # noqa: A002
    """The ``n``-th forward difference along ``dim`` (``!=`` of neighbours for bool), after
    concatenating ``prepend`` and ``append`` there.

    >>> import tidu
    >>> tidu.tensor([1, 4, 9, 16]).diff()
    tensor([3, 5, 7])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.ndim)
    if any(p is not None and p.ndim != input.ndim for p in (prepend, append)):
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = shape.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        later, earlier = shape._narrow(x, d, 1, size), shape._narrow(x, d, 0, size - 1)
        x = math.ne(later, earlier) if x.dtype is dtypes.bool_ else math.sub(later, earlier)
    return x


def _unfold(input: Any, dimension: int, size: int, step: int) -> Any:  # noqa: A002
    """``Tensor.unfold``: the windows of ``size`` elements every ``step`` along ``dimension``, as a
    new last dim (``dimension`` holds the window count). A view when the windows tile the dim
    (``step == size``) of a row-major tensor; a copy otherwise (PyTorch's is always a view).

    >>> import tidu
    >>> tidu.arange(7.0).unfold(0, 3, 2)
    tensor([[0., 1., 2.],
            [2., 3., 4.],
            [4., 5., 6.]])
    """
    if input.ndim == 0:
        if size > 1:
            raise RuntimeError(f"maximum size for tensor at dimension 0 is 1 but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        return shape.reshape(input, (1,))
    x = input
    d = wrap_dim(dimension, x.ndim)
    n = x.shape[d]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    lead, trail = tuple(x.shape[:d]), tuple(x.shape[d + 1:])
    if step == size:
        windows = shape.reshape(shape._narrow(x, d, 0, count * size), (*lead, count, size, *trail))
    else:
        starts = np.arange(count)[:, None] * step + np.arange(size)[None, :]
        picked = indexing.index_select(x, d, creation.tensor(starts.reshape(-1), dtype=dtypes.int64, device=x.device))
        windows = shape.reshape(picked, (*lead, count, size, *trail))
    return shape.movedim(windows, d + 1, -1)


def as_strided(input: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:  # noqa: A002
    """A view of ``input``'s storage with the given ``size``, ``stride`` and ``storage_offset`` (in
    elements; ``None`` keeps ``input``'s offset): element ``i`` is the storage element at
    ``storage_offset + sum(i[d] * stride[d])``, wherever ``input`` itself lies in it. Writes through
    the view reach ``input``; a view whose elements overlap (a zero stride, windows that overlap)
    cannot be written in place, as in PyTorch.

    Gradient: PyTorch's ``as_strided_backward``: the output's gradient summed into the storage
    locations it reads (overlapping elements accumulate), then read at ``input``'s layout (divided
    among ``input``'s elements that share a location); locations outside ``input`` are constants
    (primitives ``as_strided``, ``as_strided_transpose``, tidu/primitives/strided.py).

    >>> import tidu
    >>> x = tidu.arange(5.0, requires_grad=True)
    >>> windows = tidu.as_strided(x, (3, 3), (1, 1))
    >>> windows
    tensor([[0., 1., 2.],
            [1., 2., 3.],
            [2., 3., 4.]], grad_fn=<as_strided>)
    >>> windows.sum().backward()
    >>> x.grad
    tensor([1., 2., 3., 2., 1.])
    >>> x.detach().as_strided((2,), (2,), 1)
    tensor([1., 3.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"as_strided(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    buf = input._buf
    input_stride, input_offset = element_geometry(buf)
    offset = input_offset if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    item, available = buf.dtype.itemsize, storage(buf).size
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > available:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize {item} "
            f"requiring a storage size of {needed * item} are out of bounds for storage of size {available * item}"
        )
    return as_strided_p.bind(input, size=size, stride=stride, storage_offset=offset, input_stride=input_stride,
                             input_offset=input_offset, view=True)


def block_diag(*tensors: Any) -> Any:
    """The tensors (0-d, 1-d as a row, or 2-d) as the blocks of a block-diagonal matrix, zeros
    elsewhere, in their promoted dtype.

    >>> import tidu
    >>> tidu.block_diag(tidu.tensor([[1, 2]]), tidu.tensor(3), tidu.tensor([4, 5]))
    tensor([[1, 2, 0, 0, 0],
            [0, 0, 3, 0, 0],
            [0, 0, 0, 4, 5]])
    """
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
        blocks.append(t.reshape(1, -1) if t.ndim < 2 else t)
    if not blocks:
        return creation.zeros(1, 0)
    dt = blocks[0].dtype
    for b in blocks[1:]:
        dt = dtypes.promote_types(dt, b.dtype)
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        pieces = [creation.zeros(r, left, dtype=dt, device=b.device), convert(b, dt),
                  creation.zeros(r, width - left - c, dtype=dt, device=b.device)]
        rows.append(shape.cat(pieces, 1))
        left += c
    return shape.cat(rows, 0)


def cartesian_prod(*tensors: Any) -> Any:
    """Every combination of one element of each 1-D tensor, one per row (``itertools.product``);
    a single tensor comes back as it is.

    >>> import tidu
    >>> tidu.cartesian_prod(tidu.tensor([1, 2]), tidu.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return shape.stack([g.reshape(-1) for g in grids], 1)


def combinations(input: Any, r: int = 2, with_replacement: bool = False) -> Any:  # noqa: A002
    """The length-``r`` combinations of the elements of a 1-D tensor, one per row, in
    ``itertools.combinations`` order (``with_replacement``: ``combinations_with_replacement``).

    >>> import tidu
    >>> tidu.combinations(tidu.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return creation.empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    positions = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    index = creation.tensor(positions.reshape(-1), dtype=dtypes.int64, device=input.device)
    return indexing.index_select(input, 0, index).reshape(-1, r)


METHODS = {
    "as_strided": as_strided,
    "unfold": _unfold,
    "tile": tile, "repeat_interleave": repeat_interleave, "tensor_split": tensor_split, "hsplit": hsplit,
    "vsplit": vsplit, "dsplit": dsplit, "rot90": rot90, "fliplr": fliplr, "flipud": flipud, "diff": diff,
}


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of the 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (``x ** j``
    when ``increasing``), ``N`` columns (default ``len(x)``); integers and bools give int64.

    Gradient: that of the running product (``cumprod``) the powers are made by, as PyTorch's.

    >>> import tidu
    >>> tidu.vander(tidu.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    columns = creation.ones(x.shape[0], min(n, 1), dtype=x.dtype, device=x.device)
    if n > 1:
        powers = cumulative.cumprod(shape.expand(shape.unsqueeze(x, 1), x.shape[0], n - 1), 1)
        columns = shape.cat([columns, powers], 1)
    return columns if increasing else shape.flip(columns, 1)
