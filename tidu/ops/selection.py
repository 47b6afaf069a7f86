"""Selecting and writing elements by position: ``nonzero``/``argwhere``, ``masked_select``,
``count_nonzero``, ``take``, ``take_along_dim``, ``scatter``, ``index_add``, ``index_copy`` and
``index_fill``.

Positions that depend on values (``nonzero``, ``masked_select``) are found on the host, as in
PyTorch, whose result sizes depend on them too. The writes are composed from ``scatter_add``,
``gather`` and ``where``, so their gradients are those primitives': a written position passes
no gradient to ``input``, and the gradient of ``src`` is the output's gathered at ``index``.
Where ``index`` repeats a position, ``scatter`` and ``index_copy`` keep the last write (row-major
order), which is what PyTorch's CPU kernels do; PyTorch leaves that case unspecified.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..autograd.function import Function
from ..core import dtypes, grad_mode
from ..core.aval import wrap_dim
from ..tensor import Tensor
from . import creation, indexing, math, reduce, shape
from ._operands import broadcast_shapes, convert, is_value

__all__ = [
    "argwhere", "count_nonzero", "index_add", "index_copy", "index_fill", "masked_select", "nonzero", "nonzero_static",
    "scatter", "unravel_index",
    "take", "take_along_dim", "diagonal_scatter", "index_reduce", "masked_scatter", "put", "scatter_reduce",
    "select_scatter", "slice_scatter",
]


def _positions(array: np.ndarray, like: Tensor) -> Tensor:
    return creation.tensor(array.astype(np.int64), dtype=dtypes.int64, device=like.device)


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the non-zero elements: an (N, ndim) int64 tensor in row-major order, or with
    ``as_tuple`` one 1-D tensor per dim.

    >>> import tidu
    >>> tidu.tensor([[0, 1], [2, 0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    """
    values = input._values()
    if as_tuple:
        return tuple(_positions(p, input) for p in np.nonzero(np.atleast_1d(values)))
    return _positions(np.argwhere(values), input)


def nonzero_static(input: Any, *, size: int, fill_value: int = -1) -> Any:  # noqa: A002
    """``nonzero(input)`` as exactly ``size`` rows: the first ``size`` indices, then rows of
    ``fill_value``.

    >>> import tidu
    >>> tidu.nonzero_static(tidu.tensor([0, 3, 4]), size=3, fill_value=-7)
    tensor([[ 1],
            [ 2],
            [-7]])
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not {type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    found = np.argwhere(input._values())[:size]
    rows = np.full((int(size), input.ndim), fill_value, dtype=np.int64)
    rows[:len(found)] = found
    return _positions(rows, input)


def unravel_index(indices: Any, shape: Any) -> tuple:
    """The coordinates in a tensor of ``shape`` of the flat (row-major) ``indices``: one int64
    tensor per dim, each of ``indices``' shape (indices out of range wrap, as PyTorch's).

    >>> import tidu
    >>> tidu.unravel_index(tidu.tensor([5, 7]), (2, 4))
    (tensor([1, 1]), tensor([1, 3]))
    """
    if indices.dtype.is_floating_point or indices.dtype is dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype.name}")
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    for n in dims:
        if isinstance(n, bool) or not isinstance(n, int | np.integer):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(n)}")
    if any(n < 0 for n in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    strides = [int(np.prod(dims[i + 1:], dtype=np.int64)) for i in range(len(dims))]
    flat = convert(indices, dtypes.int64)
    return tuple(math.remainder(math.floor_divide(flat, s), n) for s, n in zip(strides, dims))


def argwhere(input: Any) -> Any:  # noqa: A002
    """``nonzero(input)``: the (N, ndim) indices of the non-zero elements.

    >>> import tidu
    >>> tidu.argwhere(tidu.tensor([0.0, 3.0]))
    tensor([[1]])
    """
    return nonzero(input)


def count_nonzero(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """How many elements are non-zero, over ``dim`` (an int or a tuple) or all of them.

    >>> import tidu
    >>> tidu.tensor([[0, 1], [2, 3]]).count_nonzero(dim=1)
    tensor([1, 2])
    """
    hits = math.ne(input, 0)
    return reduce.sum(hits) if dim is None else reduce.sum(hits, dim)


def masked_select(input: Any, mask: Any) -> Any:  # noqa: A002
    """The elements of ``input`` where ``mask`` (bool; both broadcast) is true, as a 1-D tensor.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.masked_select(x > 1.5)
    tensor([2., 3., 4.])
    """
    if not is_value(mask):
        raise TypeError(f"masked_select(): argument 'mask' (position 2) must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    size = tuple(broadcast_shapes(tuple(mask.shape), tuple(input.shape), op="masked_select"))
    flat = shape.reshape(shape.expand(input, size), (-1,))
    chosen = np.flatnonzero(np.broadcast_to(mask._host(), size))
    return indexing.index_select(flat, 0, _positions(chosen, input))


def take(input: Any, index: Any) -> Any:  # noqa: A002
    """The elements of the flattened ``input`` at ``index`` (any shape; negative counts from the
    end), in ``index``'s shape.

    >>> import tidu
    >>> tidu.tensor([[1, 2], [3, 4]]).take(tidu.tensor([[0, -1]]))
    tensor([[1, 4]])
    """
    index = indexing._int_index(index, "take")
    n = input.numel()
    positions = index._host().astype(np.int64)
    bad = positions[(positions < -n) | (positions >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.flat[0])} on a tensor of {n} elements.")
    flat = shape.reshape(input, (-1,))
    picked = indexing.index_select(flat, 0, _positions(np.where(positions < 0, positions + n, positions).reshape(-1),
                                                       input))
    return shape.reshape(picked, tuple(index.shape))


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Any:  # noqa: A002
    """``gather`` along ``dim`` with ``input`` and ``indices`` broadcast to each other in the other
    dims, each index taken modulo the size of ``dim`` (as PyTorch does); without ``dim``, both are
    flattened first and the indices must be in range.

    >>> import tidu
    >>> x = tidu.tensor([[10, 30, 20]])
    >>> tidu.take_along_dim(x, x.argsort(dim=1), dim=1)
    tensor([[10, 20, 30]])
    """
    if dim is None:
        indices = indexing._int_index(indices, "take_along_dim")
        return indexing.gather(shape.reshape(input, (-1,)), 0, shape.reshape(indices, (-1,)))
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {wrap_dim(dim, 0)} but tensor has no dimensions")
    if input.ndim != indices.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    if indices.dtype is not dtypes.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{dtypes.TORCH_NAMES[indices.dtype.name]}")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0 and indices.numel():
        raise RuntimeError("ZeroDivisionError")
    indices = math.remainder(indices, max(n, 1))  # PyTorch's wraps every index into range
    rest = broadcast_shapes(*[tuple(s if i != d else 1 for i, s in enumerate(t.shape)) for t in (input, indices)],
                            op="take_along_dim")
    x = shape.expand(input, tuple(input.shape[d] if i == d else s for i, s in enumerate(rest)))
    index = shape.expand(indices, tuple(indices.shape[d] if i == d else s for i, s in enumerate(rest)))
    return indexing.gather(x, d, index)


def _written(input: Any, d: int, index: Any) -> Any:
    """Where a scatter along ``d`` at ``index`` writes into ``input``: a bool tensor of its shape."""
    hits = indexing.scatter_add(creation.zeros(tuple(input.shape), dtype=dtypes.int64, device=input.device), d,
                                index, creation.ones(tuple(index.shape), dtype=dtypes.int64, device=input.device))
    return math.gt(hits, 0)


def _last_writes(target_shape: tuple, d: int, index: np.ndarray) -> np.ndarray | None:
    """For a scatter along ``d``: which positions of ``index`` write last to their target (row-major
    order), or ``None`` when no target repeats."""
    grid = np.indices(index.shape)
    grid[d] = index
    flat = np.ravel_multi_index(tuple(grid), target_shape).reshape(-1)
    if np.unique(flat).size == flat.size:
        return None
    last = np.zeros(flat.size, bool)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    last[flat.size - 1 - first_from_end] = True
    return last.reshape(index.shape)


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,  # noqa: A002
            reduce: str | None = None) -> Any:
    """A copy of ``input`` with ``src[i][j]`` (or the number ``value``) written at
    ``[i][index[i][j]]`` for ``dim=1``; ``reduce='add'`` adds instead (``scatter_add``).

    >>> import tidu
    >>> tidu.zeros(2, 3).scatter(1, tidu.tensor([[2], [0]]), tidu.tensor([[1.0], [2.0]]))
    tensor([[0., 0., 1.],
            [2., 0., 0.]])
    >>> tidu.zeros(3).scatter(0, tidu.tensor([1]), 5.0)
    tensor([0., 5., 0.])
    """
    if src is None and value is None:
        raise TypeError("scatter() missing 1 required positional argument: 'src' or 'value'")
    if src is not None and value is not None:
        raise TypeError("scatter() got both 'src' and 'value'")
    if src is not None and not is_value(src):
        src, value = None, src
    index = indexing._int_index(index, "scatter")
    d = wrap_dim(dim, max(input.ndim, 1))
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if src is not None and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if reduce is not None and src is not None:
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=2)
    if src is None:
        src = creation.full(tuple(index.shape), value, dtype=input.dtype, device=input.device)
    _check_scalar_target(input, index, src)
    return _one_dim(lambda x, i, s: _scatter_into(x, d, i, s, reduce), input, index, src)


def _check_scalar_target(input: Any, index: Any, src: Any) -> None:  # noqa: A002
    """PyTorch's errors for a scatter into a 0-d ``input`` (taken as 1-D) of ``index``/``src`` with more dims."""
    if input.ndim == 0:
        for name, t in (("self", index), ("src", src)):
            if t.ndim > 1:
                raise RuntimeError(f"Index tensor must have the same number of dimensions as {name} tensor")


def _scatter_into(input: Any, d: int, index: Any, src: Any, reduce: str | None) -> Any:  # noqa: A002
    """``scatter`` of the tensor ``src`` past its argument checks."""
    if reduce == "add":
        return indexing.scatter_add(input, d, index, src)
    if reduce == "multiply":
        return _reduce_into(input, d, index, src, "prod", True, "scatter_reduce")
    written = _written(input, d, index)  # raises PyTorch's errors for out-of-range indices and sizes
    for i, n in enumerate(index.shape):  # only the part of ``src`` that ``index`` covers is read
        src = shape._narrow(src, i, 0, n)
    last = _last_writes(tuple(input.shape), d, index._host().astype(np.int64))
    if last is not None:
        keep = creation.tensor(last, device=input.device)
        src = math.where(keep, src, creation.zeros((), dtype=src.dtype, device=src.device))
    placed = indexing.scatter_add(creation.zeros(tuple(input.shape), dtype=input.dtype, device=input.device),
                                  d, index, src)
    return math.where(written, placed, input)


def _along(index: Any, d: int, size: tuple) -> Any:
    """A 1-D ``index`` along dim ``d``, expanded to ``size`` (a scatter's index of that shape)."""
    return shape.expand(shape.reshape(index, tuple(-1 if i == d else 1 for i in range(len(size)))), size)


def _index_source(op: str, input: Any, dim: int, index: Any, source: Any) -> tuple[int, Any]:  # noqa: A002
    """Check ``index_add_``'s or ``index_copy_``'s operands as PyTorch does (its classes and messages
    differ between the two); the wrapped dim and the int64 index."""
    index = indexing._int_index(index, op)
    copy = op == "index_copy_"
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {index.ndim})" if copy else
                         f"{op}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{dtypes.TORCH_NAMES[index.dtype.name]} and size: {list(index.shape)}")
    d = wrap_dim(dim, max(input.ndim, 1))
    if copy and source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"{op}(): When source and destination are not scalars, their dimensionality must match. "
                         f"Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
    n = source.shape[d] if source.ndim > d else 1
    if index.numel() != n:
        raise (IndexError(f"{op}(): Number of indices ({index.numel()}) should be equal to source.size(dim) ({n})")
               if copy else RuntimeError(f"{op}(): Number of indices ({index.numel()}) should be equal to "
                                         f"source.size(dim): ({n}), for dim: {dim}"))
    if source.ndim and input.ndim:
        for i, (a, b) in enumerate(zip(input.shape, source.shape)):
            if i != d and a != b:
                raise RuntimeError(
                    f"{op}(): Source/destination tensor must have same slice shapes. Destination slice shape: {a} "
                    f"at dimension {i - (i > d)} and source slice shape: {b} at dimension {i - (i > d)}." if copy else
                    "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                    f"self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"{op}(): self ({dtypes.TORCH_NAMES[input.dtype.name]}) and source "
                           f"({dtypes.TORCH_NAMES[source.dtype.name]}) must have the same scalar type")
    if copy:
        size = input.shape[d] if input.ndim else 1
        positions = index._host().reshape(-1)
        bad = positions[(positions < 0) | (positions >= size)]
        if bad.size:
            raise IndexError(f"{op}(): index {int(bad[0])} is out of bounds for dimension {d} with size {size}")
    return d, index


def _one_dim(fn: Any, input: Any, *rest: Any) -> Any:  # noqa: A002
    """``fn`` on 0-d operands taken as 1-D, its result back to 0-d."""
    if input.ndim:
        return fn(input, *rest)
    lifted = [shape.reshape(r, (1,)) if isinstance(r, Tensor) and r.ndim == 0 else r for r in rest]
    return shape.reshape(fn(shape.reshape(input, (1,)), *lifted), ())


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:  # noqa: A002
    """A copy of ``input`` with ``alpha * source``'s slices along ``dim`` added at ``index`` (1-D;
    repeats add up).

    >>> import tidu
    >>> tidu.zeros(3).index_add(0, tidu.tensor([0, 0, 2]), tidu.tensor([1.0, 2.0, 3.0]))
    tensor([3., 0., 3.])
    """
    d, index = _index_source("index_add_", input, dim, index, source)
    if alpha != 1:
        source = math.mul(source, alpha)
    return _one_dim(lambda x, s: indexing.scatter_add(x, d, _along(index, d, tuple(s.shape)), s), input, source)


def index_copy(input: Any, dim: int, index: Any, source: Any) -> Any:  # noqa: A002
    """A copy of ``input`` with ``source``'s slices along ``dim`` written at ``index`` (1-D).

    >>> import tidu
    >>> tidu.zeros(2, 2).index_copy(0, tidu.tensor([1]), tidu.tensor([[1.0, 2.0]]))
    tensor([[0., 0.],
            [1., 2.]])
    """
    d, index = _index_source("index_copy_", input, dim, index, source)
    return _one_dim(lambda x, s: scatter(x, d, _along(index, d, tuple(s.shape)), s), input, source)


def index_fill(input: Any, dim: int, index: Any, value: Any) -> Any:  # noqa: A002
    """A copy of ``input`` with the slices at ``index`` (1-D) along ``dim`` set to ``value`` (a
    number or a 0-d tensor, which is differentiable).

    >>> import tidu
    >>> tidu.ones(2, 3).index_fill(1, tidu.tensor([0, 2]), -1.0)
    tensor([[-1.,  1., -1.],
            [-1.,  1., -1.]])
    """
    index = indexing._int_index(index, "index_fill")
    if index.ndim > 1:
        raise IndexError("index_fill_(): Index is supposed to be a vector")
    if is_value(value) and value.ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    d = wrap_dim(dim, max(input.ndim, 1))
    n = input.shape[d] if input.ndim else 1
    positions = index._host().astype(np.int64).reshape(-1)
    bad = positions[(positions < -n) | (positions >= n)]
    if bad.size:
        raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {n}")
    chosen = np.zeros(n, bool)
    chosen[positions] = True
    mask = creation.tensor(chosen.reshape(tuple(n if i == d else 1 for i in range(input.ndim))), device=input.device)
    fill = convert(value, input.dtype) if is_value(value) else value
    return indexing.masked_fill(input, mask, fill)


_REDUCTIONS = {"amax": np.maximum, "amin": np.minimum, "prod": np.multiply}


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *,  # noqa: A002
                   include_self: bool = True) -> Any:
    """A copy of ``input`` where each position that ``index`` points at (along ``dim``, as in
    ``scatter``) holds the ``reduce`` (``'sum'``, ``'prod'``, ``'mean'``, ``'amax'``, ``'amin'``)
    of the ``src`` elements sent there, and of its own value if ``include_self``.

    Gradients are PyTorch's formulas: ``sum`` and ``mean`` as the sums; ``amax``/``amin`` split
    evenly between the elements equal to the result (an excluded ``input`` element equal to it
    counts too, as in PyTorch); ``prod`` passes each element the product of the others. ``prod``,
    ``amax`` and ``amin`` reduce on the host, their gradients written in tidu ops (so ``prod`` has
    PyTorch's second derivatives, and, as there, none for ``src`` with two zeros in one place).

    >>> import tidu
    >>> src = tidu.tensor([1.0, 2.0, 3.0, 4.0])
    >>> tidu.zeros(2).scatter_reduce(0, tidu.tensor([0, 1, 0, 1]), src, "amax", include_self=False)
    tensor([3., 4.])
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # PyTorch's older names, still taken
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    index = indexing._int_index(index, "scatter_reduce")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = wrap_dim(dim, max(input.ndim, 1))
    _check_scalar_target(input, index, src)
    return _one_dim(lambda x, i, s: _reduce_into(x, d, i, s, reduce, include_self, "scatter_reduce"), input, index,
                    src)


def _reduce_into(input: Any, d: int, index: Any, src: Any, reduce: str, include_self: bool,  # noqa: A002
                 op: str) -> Any:
    """``scatter_reduce`` past its argument checks; ``op`` names the public function in errors."""
    written = _written(input, d, index)  # PyTorch's errors for out-of-range indices and sizes
    for i, n in enumerate(index.shape):
        src = shape._narrow(src, i, 0, n)
    if reduce in ("sum", "mean"):
        base = input if include_self else math.where(written, creation.zeros((), dtype=input.dtype), input)
        total = indexing.scatter_add(base, d, index, src)
        if reduce == "sum":
            return total
        ones = creation.ones(tuple(index.shape), dtype=dtypes.int64, device=input.device)
        start = creation.full(tuple(input.shape), int(include_self), dtype=dtypes.int64, device=input.device)
        count = indexing.scatter_add(start, d, index, ones)
        count = convert(math.where(math.eq(count, 0), 1, count), input.dtype)
        return math.div(total, count) if input.dtype.is_floating_point else math.floor_divide(total, count)
    if grad_mode.is_grad_enabled() and (input.requires_grad or src.requires_grad):
        return _HostReduce.apply(input, src, d, index, reduce, include_self, written, op)
    return _host_reduce(input, d, index, src, reduce, include_self, written)


def _host_reduce(input: Any, d: int, index: Any, src: Any, reduce: str, include_self: bool,  # noqa: A002
                 written: Any) -> Any:
    """The ``prod``, ``amax`` or ``amin`` of ``scatter_reduce``, found on the host (values only)."""
    x, s, idx = input._values(), src._values(), index._host().astype(np.int64)
    grid = np.indices(idx.shape)
    grid[d] = idx
    result = x.copy()
    if not include_self:
        result[written._host()] = 1 if reduce == "prod" else (
            -np.inf if reduce == "amax" else np.inf) if x.dtype.kind == "f" else (
            np.iinfo(x.dtype).min if reduce == "amax" else np.iinfo(x.dtype).max)
    _REDUCTIONS[reduce].at(result, tuple(grid), s)
    return creation.tensor(result, dtype=input.dtype, device=input.device)


class _HostReduce(Function):
    """``scatter_reduce`` with ``prod``, ``amax`` or ``amin``: the values from the host, the
    gradients ``_reduce_grads``; forward mode applies the same linear map."""

    @staticmethod
    def forward(ctx: Any, input: Any, src: Any, d: int, index: Any, reduce: str, include_self: bool,  # noqa: A002
                written: Any, op: str) -> Any:
        out = _host_reduce(input, d, index, src, reduce, include_self, written)
        ctx.save_for_backward(input, src, out)
        ctx.args = (d, index, reduce, include_self, written, op)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        return (*_reduce_grads(*ctx.saved_tensors, *ctx.args, grad, ctx.needs_input_grad[:2]),) + (None,) * 6

    @staticmethod
    def jvp(ctx: Any, t_input: Any, t_src: Any, *_: Any) -> Any:
        input, src, out = ctx.saved_tensors
        d, index = ctx.args[:2]
        c_self, c_src = _reduce_grads(input, src, out, *ctx.args, creation.ones_like(out), (True, True))
        return indexing.scatter_add(c_self * t_input, d, index, c_src * t_src)


class _NoDoubleBackward(Function):
    """Its input's value; differentiating it raises ``message`` (PyTorch's ``DelayedError``)."""

    @staticmethod
    def forward(ctx: Any, value: Any, message: str) -> Any:
        ctx.message = message
        return value.clone()

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        raise RuntimeError(ctx.message)


def _reduce_grads(input: Any, src: Any, out: Any, d: int, index: Any, reduce: str, include_self: bool,  # noqa: A002
                  written: Any, op: str, grad: Any, needed: tuple) -> tuple[Any, Any]:
    """The gradients of ``input`` and ``src`` (where ``needed``) of ``out = scatter_reduce(...)``,
    PyTorch's ``scatter_reduce_backward`` step for step, so its values, infinities and NaNs too."""
    grad_self = grad_src = None
    if reduce == "prod":
        if needed[0]:
            masked_self = math.where(math.eq(input, 0), 1, input)
            grad_self = grad * _reduce_into(masked_self, d, index, src, reduce, include_self, op) / masked_self
        if needed[1]:
            src_zero = math.eq(src, 0)
            zeros = indexing.scatter_add(creation.zeros_like(input), d, index, convert(src_zero, input.dtype))
            zeros = indexing.gather(zeros, d, index)
            single = math.logical_and(src_zero, math.eq(zeros, 1))
            masked_result = _reduce_into(input, d, index, math.where(single, 1, src), reduce, include_self, op)
            grad_src = math.where(single, indexing.gather(grad * masked_result, d, index),
                                  indexing.gather(grad * out, d, index) / math.where(src_zero, 1, src))
            if grad_mode.is_grad_enabled() and grad_src.requires_grad and bool(math.gt(zeros, 1).any()):
                what = "src" if op == "scatter_reduce" else "source"
                grad_src = _NoDoubleBackward.apply(grad_src, f"{op}(): Double backward is unsupported for {what} when "
                                                   f">1 zeros in {what} are scattered to the same position in self")
    else:
        self_is = convert(math.eq(input, out), input.dtype)
        src_is = convert(math.eq(src, indexing.gather(out, d, index)), input.dtype)
        distributed = grad / indexing.scatter_add(self_is, d, index, src_is)  # excluded ``input`` counted, as PyTorch
        grad_self = self_is * distributed
        grad_src = src_is * indexing.gather(distributed, d, index)
    if grad_self is not None and not include_self:
        grad_self = math.where(written, creation.zeros((), dtype=input.dtype, device=input.device), grad_self)
    return grad_self, grad_src


def index_reduce(input: Any, dim: int, index: Any, source: Any, reduce: str, *,  # noqa: A002
                 include_self: bool = True) -> Any:
    """A copy of ``input`` whose slices at ``index`` (1-D) along ``dim`` hold the ``reduce``
    (``'prod'``, ``'mean'``, ``'amax'``, ``'amin'``) of the ``source`` slices sent there (and their
    own, if ``include_self``): ``scatter_reduce`` with ``index`` along ``dim``.

    >>> import tidu
    >>> tidu.ones(3).index_reduce(0, tidu.tensor([0, 0, 2]), tidu.tensor([2.0, 3.0, 4.0]), "prod")
    tensor([6., 1., 4.])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d, index = _index_source("index_reduce_", input, dim, index, source)
    positions = index._host()
    if ((positions < 0) | (positions >= (input.shape[d] if input.ndim else 1))).any():
        raise IndexError("index out of range in self")
    return _one_dim(lambda x, s: _reduce_into(x, d, _along(index, d, tuple(s.shape)), s, reduce, include_self,
                                              "index_reduce"), input, source)


def masked_scatter(input: Any, mask: Any, source: Any) -> Any:  # noqa: A002
    """A copy of ``input`` with the elements of ``source``, in row-major order, written where
    ``mask`` (broadcast to ``input``) is True; differentiable in both.

    >>> import tidu
    >>> tidu.zeros(2, 2).masked_scatter(tidu.tensor([[True, False], [False, True]]), tidu.tensor([5.0, 6.0, 7.0]))
    tensor([[5., 0.],
            [0., 6.]])
    """
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.TORCH_NAMES[mask.dtype.name]}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]} and {dtypes.TORCH_NAMES[source.dtype.name]}")
    size = broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    picked = np.broadcast_to(mask._host(), size)
    k = int(picked.sum())
    if k > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    base = shape.expand(input, *size) if tuple(input.shape) != size else input
    values = shape._narrow(shape.reshape(source, (-1,)), 0, 0, k)
    return indexing.index_update(base, creation.tensor(picked.copy(), device=input.device), values)


def put(input: Any, index: Any, source: Any, accumulate: bool = False) -> Any:  # noqa: A002
    """A copy of ``input`` with ``source``'s elements written (or added, ``accumulate``) at the
    flat positions ``index`` (as if ``input`` were 1-D; negative positions count from the end).

    >>> import tidu
    >>> tidu.zeros(2, 2).put(tidu.tensor([0, 3]), tidu.tensor([1.0, 2.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    index = indexing._int_index(index, "put")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {dtypes.TORCH_NAMES[input.dtype.name]} and source.dtype = "
                           f"{dtypes.TORCH_NAMES[source.dtype.name]}")
    flat = shape.reshape(input, (-1,))
    out = indexing.index_update(flat, shape.reshape(index, (-1,)), shape.reshape(source, (-1,)), accumulate)
    return shape.reshape(out, tuple(input.shape))


def _embedded(input: Any, src: Any, where: tuple, expected: tuple, op: str) -> Any:  # noqa: A002
    """``input`` with ``src`` (of shape ``expected``) written at the index expression ``where``."""
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"{op}: src must have shape {list(expected)}, but got {list(src.shape)}" if op else
                           f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(expected)}")
    return indexing.index_update(input, where, convert(src, input.dtype))


def select_scatter(input: Any, src: Any, dim: int, index: int) -> Any:  # noqa: A002
    """A copy of ``input`` with ``src`` written at ``input.select(dim, index)``.

    >>> import tidu
    >>> tidu.zeros(2, 2).select_scatter(tidu.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    expected = tuple(input.shape[:d]) + tuple(input.shape[d + 1:])
    return _embedded(input, src, (slice(None),) * d + (index % n,), expected, "")


def slice_scatter(input: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None,  # noqa: A002
                  step: int = 1) -> Any:
    """A copy of ``input`` with ``src`` written at the slice ``start:end:step`` of ``dim``.

    >>> import tidu
    >>> tidu.zeros(4).slice_scatter(tidu.ones(2), start=1, step=2)
    tensor([0., 1., 0., 1.])
    """
    d = wrap_dim(dim, input.ndim)
    region = (slice(None),) * d + (slice(start, end, step),)
    expected = tuple(input.shape[:d]) + (len(range(input.shape[d])[slice(start, end, step)]),) + tuple(
        input.shape[d + 1:])
    return _embedded(input, src, region, expected, "")


def diagonal_scatter(input: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:  # noqa: A002
    """A copy of ``input`` with ``src`` written on its diagonal ``input.diagonal(offset, dim1, dim2)``
    (``src`` has that diagonal's shape: the other dims, then the diagonal's).

    >>> import tidu
    >>> tidu.zeros(2, 3).diagonal_scatter(tidu.tensor([1.0, 2.0]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.]])
    """
    d1, d2 = wrap_dim(dim1, input.ndim), wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rows, cols = input.shape[d1], input.shape[d2]
    length = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    steps = np.arange(length)
    at = [slice(None)] * input.ndim
    at[d1] = creation.tensor(steps - min(offset, 0), device=input.device)
    at[d2] = creation.tensor(steps + max(offset, 0), device=input.device)
    others = tuple(n for i, n in enumerate(input.shape) if i not in (d1, d2))
    expected = others + (length,)
    if tuple(src.shape) != expected:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(expected)}")
    # numpy's rule: adjacent advanced indices put their dim where they stand, others in front
    place = min(d1, d2) if abs(d1 - d2) == 1 else 0
    return indexing.index_update(input, tuple(at), shape.movedim(convert(src, input.dtype), -1, place))


METHODS = {
    "nonzero": nonzero, "argwhere": argwhere, "count_nonzero": count_nonzero, "masked_select": masked_select,
    "take": take, "take_along_dim": take_along_dim, "scatter": scatter, "index_add": index_add,
    "index_copy": index_copy, "index_fill": index_fill, "scatter_reduce": scatter_reduce, "index_reduce": index_reduce,
    "masked_scatter": masked_scatter, "put": put, "select_scatter": select_scatter, "slice_scatter": slice_scatter,
    "diagonal_scatter": diagonal_scatter, "nonzero_static": nonzero_static,
}
