"""Indexing: ``x[index]``, ``x[index] = value``, ``index_put``, gather/scatter and masks.

An index expression becomes a ``_Plan``: a basic part (ints, slices with positive
steps, ``None``, ``...``: one ``slice`` + ``reshape``, a view like PyTorch's; of a CPU tensor
that does not require grad, numpy's view directly, with the binds replayed only if a write
through it later needs the graph) and an
advanced part (integer tensors/lists and boolean masks, broadcast together: one
``gather``). Everything is checked, with PyTorch's exception classes, before any
kernel runs. The plan's transpose (``pad`` + ``scatter_add``) writes values back, so
``x[index] = value`` is ``where(region, scattered value, x)`` followed by ``assign_``.

PyTorch's placement rule: ints select first; the advanced dimensions (broadcast
together) replace the indexed dimensions where those are adjacent in what remains,
and go first otherwise.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from math import prod
from typing import Any

import numpy as np

from ..core import deferred, dtypes, grad_mode
from ..core.device import CPU
from ..core.dispatch import bind_one, plain_view
from ..core.inplace import assign_, check_writable, read_from_base, written
from ..core.primitive import Var, bind
from ..primitives import gather as gather_prims
from ..primitives.slicing import pad, slice_p
from ..primitives.structural import broadcast_in_dim
from ..primitives.structural import reshape as reshape_p
from ..primitives.structural import transpose as transpose_p
from ..tensor import Tensor, placed
from ._operands import broadcast_shapes, broadcast_to, constant, convert, is_value, kept, wrap_dim
from .math import where

__all__ = ["gather", "index_put", "index_select", "masked_fill", "scatter_add", "tril", "triu"]

INDEX_TYPES = "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices"


# --- parsing an index expression --------------------------------------------------------------
@dataclass
class _Plan:
    """``x[index]`` for a tensor of ``in_shape``: a basic slice, a reshape, then one gather."""

    in_shape: tuple[int, ...]
    starts: list[int] = field(default_factory=list)
    limits: list[int] = field(default_factory=list)
    strides: list[int] = field(default_factory=list)
    basic_shape: list[int] = field(default_factory=list)  # after ints removed and None inserted
    positions: list[int] = field(default_factory=list)  # advanced dims, in basic_shape
    arrays: list[np.ndarray] = field(default_factory=list)  # int64, in range, one per position
    error: str | None = None  # an index out of range (raised unless nothing is read)
    empty_dim_error: str | None = None  # an index into a dimension of size 0 (raised unless no index)

    @property
    def sliced(self) -> bool:
        return (self.starts, self.limits, self.strides) != (
            [0] * len(self.in_shape), list(self.in_shape), [1] * len(self.in_shape))

    @property
    def adjacent(self) -> bool:
        p = self.positions
        return p == list(range(p[0], p[0] + len(p)))

    @property
    def index_shape(self) -> tuple[int, ...]:
        return tuple(np.broadcast_shapes(*(a.shape for a in self.arrays)))

    def out_shape(self) -> tuple[int, ...]:
        if not self.positions:
            return tuple(self.basic_shape)
        rest = [s for d, s in enumerate(self.basic_shape) if d not in self.positions]
        at = self.positions[0] if self.adjacent else 0
        return tuple(rest[:at]) + self.index_shape + tuple(rest[at:])


def _legacy_tuple(items: list) -> bool:
    """PyTorch reads a short list holding slices, None, ... or sequences as a tuple of indices."""
    return len(items) < 32 and any(
        i is None or i is Ellipsis or isinstance(i, slice | list | tuple | Tensor | np.ndarray) for i in items
    )


def _as_array(item: Any) -> np.ndarray:
    """An advanced index (tensor, array or list) as a numpy array of bool or int64."""
    if isinstance(item, Var):
        raise TypeError("indexing with a symbolic value inside an AD rule is not supported; index with a tensor")
    if isinstance(item, Tensor):
        array = item._host()
        if item.dtype in (dtypes.int8, dtypes.int16):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors "
                             f"(got {item.dtype.name})")
    elif isinstance(item, np.ndarray):
        array = item
    else:
        try:
            array = np.asarray(item)
        except ValueError as e:
            raise IndexError(f"could not make an index tensor from {item!r}: {e}") from None
        if array.dtype == object or array.dtype.kind in "USV":
            raise TypeError(f"new(): invalid data type '{type(array.flat[0]).__name__}' in index {item!r}")
        if array.size == 0 and array.dtype.kind == "f":
            array = array.astype(np.int64)
    if array.dtype == np.bool_:
        return array
    if array.dtype == np.uint8:  # PyTorch's legacy byte mask
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                      UserWarning, stacklevel=4)
        return array != 0
    if array.dtype.kind not in "iu":
        raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors (got {array.dtype})")
    return array.astype(np.int64, copy=False)


def _items(index: Any) -> list:
    if isinstance(index, tuple):
        return list(index)
    if isinstance(index, list) and _legacy_tuple(index):
        return list(index)
    return [index]


def _classify(item: Any) -> tuple[str, Any]:
    """``(kind, value)``: kind is none, ellipsis, int, slice, bool (a scalar), mask or array."""
    if item is None:
        return "none", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, bool | np.bool_):
        return "bool", bool(item)
    if isinstance(item, int | np.integer):
        return "int", int(item)
    if isinstance(item, slice):
        return "slice", item
    if isinstance(item, Tensor | np.ndarray | list | tuple | Var):
        array = _as_array(item)
        if array.ndim == 0:
            return ("bool", bool(array)) if array.dtype == np.bool_ else ("int", int(array))
        return ("mask" if array.dtype == np.bool_ else "array"), array
    if isinstance(item, str):
        raise TypeError(f"new(): invalid data type 'str' (index {item!r})")
    raise IndexError(f"{INDEX_TYPES} (got {type(item).__name__})")


def _slice_bounds(item: slice, n: int) -> tuple[int, int, int]:
    for name in ("start", "stop", "step"):
        v = getattr(item, name)
        if v is not None and not isinstance(v, int | np.integer) and not (is_value(v) and v.numel() == 1):
            raise TypeError(f"slice indices must be integers or None, got {name}={v!r}")
    if item.step is not None and int(item.step) <= 0:
        raise ValueError("step must be greater than zero" if int(item.step) < 0 else "slice step cannot be zero")
    start, stop, step = slice(*(None if v is None else int(v) for v in (item.start, item.stop, item.step))).indices(n)
    return start, max(stop, start), step


def _plan(shape: tuple[int, ...], index: Any) -> _Plan:
    """Parse and check ``index`` for a tensor of ``shape``; raises PyTorch's errors."""
    items = [_classify(i) for i in _items(index)]
    if sum(kind == "ellipsis" for kind, _ in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if kind in ("int", "slice", "array") else v.ndim if kind == "mask" else 0 for kind, v in items)
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {consumed} indices)")
    dim = 0
    for kind, value in items:  # PyTorch applies ints and slices, in order, before advanced indices (masks)
        if kind == "slice" and isinstance(value.step, int | np.integer) and value.step <= 0:
            raise ValueError("step must be greater than zero" if value.step < 0 else "slice step cannot be zero")
        if kind == "int" and not -shape[dim] <= value < shape[dim]:
            raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {shape[dim]}")
        dim += (1 if kind in ("int", "slice", "array") else value.ndim if kind == "mask"
                else len(shape) - consumed if kind == "ellipsis" else 0)
    fill = [("slice", slice(None))] * (len(shape) - consumed)
    at = next((i for i, (kind, _) in enumerate(items) if kind == "ellipsis"), len(items))
    items[at:at + 1] = fill

    plan = _Plan(tuple(shape))
    dim = 0
    for kind, value in items:
        if kind in ("none", "bool"):
            if kind == "bool":
                plan.positions.append(len(plan.basic_shape))
                plan.arrays.append(np.zeros(1 if value else 0, np.int64))
            plan.basic_shape.append(1)
            continue
        if kind == "mask":
            for j, s in enumerate(value.shape):
                if s != shape[dim + j]:
                    raise IndexError(
                        f"The shape of the mask {list(value.shape)} at index {j} does not match the shape of the "
                        f"indexed tensor {list(shape)} at index {dim + j}"
                    )
            for coords in np.nonzero(value):
                _keep(plan, shape[dim])
                plan.positions.append(len(plan.basic_shape) - 1)
                plan.arrays.append(coords.astype(np.int64))
                dim += 1
            continue
        n = shape[dim]
        if kind == "slice":
            start, stop, step = _slice_bounds(value, n)
            plan.starts.append(start), plan.limits.append(stop), plan.strides.append(step)
            plan.basic_shape.append(len(range(start, stop, step)))
        elif kind == "int":
            if not -n <= value < n:
                raise IndexError(f"index {value} is out of bounds for dimension {dim} with size {n}")
            i = value % n
            plan.starts.append(i), plan.limits.append(i + 1), plan.strides.append(1)
        else:
            bad = value[(value < -n) | (value >= n)]
            message = f"index {int(bad.flat[0])} is out of bounds for dimension {dim} with size {n}" if bad.size else None
            if n == 0:
                plan.empty_dim_error = plan.empty_dim_error or message
            else:
                plan.error = plan.error or message
            value = np.clip(value, -n, max(n - 1, 0)) if bad.size else value
            _keep(plan, n)
            plan.positions.append(len(plan.basic_shape) - 1)
            plan.arrays.append(np.where(value < 0, value + n, value) if (value < 0).any() else value)
        dim += 1
    if plan.arrays:
        try:
            np.broadcast_shapes(*(a.shape for a in plan.arrays))
        except ValueError:
            shapes = ", ".join(str(list(a.shape)) for a in plan.arrays)
            raise IndexError(
                f"shape mismatch: indexing tensors could not be broadcast together with shapes {shapes}"
            ) from None
        # PyTorch checks no index when nothing is read, but any index into a dimension of size 0 fails.
        if plan.empty_dim_error and prod(plan.index_shape):
            raise IndexError(plan.empty_dim_error)
        if plan.error and prod(plan.out_shape()):
            raise IndexError(plan.error)
    return plan


def _keep(plan: _Plan, n: int) -> None:
    """A dimension the basic part keeps whole (an advanced index reads it later)."""
    plan.starts.append(0), plan.limits.append(n), plan.strides.append(1)
    plan.basic_shape.append(n)


# --- the plan as linear maps: read (gather) and its transpose (scatter) -----------------------
def _flat_index(plan: _Plan) -> tuple[np.ndarray, tuple[int, ...], int]:
    """The advanced dims as one: (flat index over their sizes, their sizes, where they sit)."""
    sizes = tuple(plan.basic_shape[p] for p in plan.positions)
    arrays = np.broadcast_arrays(*plan.arrays)
    flat = np.zeros(plan.index_shape, np.int64)
    for a, stride in zip(arrays, np.cumprod((1,) + sizes[:0:-1])[::-1]):
        flat += a * int(stride)
    return flat, sizes, plan.positions[0] if plan.adjacent else 0


def _adv_order(plan: _Plan) -> tuple[int, ...]:
    """The permutation of the basic result that puts the advanced dims together."""
    rest = [d for d in range(len(plan.basic_shape)) if d not in plan.positions]
    if plan.adjacent:
        return tuple(range(len(plan.basic_shape)))
    return tuple(plan.positions) + tuple(rest)


def _index_operand(flat: np.ndarray, lead: tuple, trail: tuple, like: Any) -> Tensor:
    """``flat`` (K values) broadcast to ``lead + (K,) + trail`` on ``like``'s device: a zero-stride
    view, not a copy."""
    k = flat.size
    shape = (1,) * len(lead) + (k,) + (1,) * len(trail)
    if like.device.type == "cpu":
        return Tensor(np.broadcast_to(flat.reshape(shape), lead + (k,) + trail), dtypes.int64)
    column = placed(np.ascontiguousarray(flat, np.int64).reshape(shape), dtypes.int64, like.device)
    return broadcast_to(column, lead + (k,) + trail)


def _basic(plan: _Plan) -> tuple[tuple | None, tuple[int, ...]]:
    """A plan's basic part: the ``slice`` params (``None``: nothing sliced) and the shape after it."""
    sliced = (tuple(plan.starts), tuple(plan.limits), tuple(plan.strides)) if plan.sliced else None
    return sliced, tuple(plan.basic_shape)


def _read_basic(x: Any, sliced: tuple | None, basic_shape: tuple[int, ...]) -> Any:
    out = x
    if sliced is not None:
        out = bind_one(slice_p, out, {"start_indices": sliced[0], "limit_indices": sliced[1], "strides": sliced[2]})
    if (out._buf.shape if out.__class__ is Tensor else tuple(out.shape)) != basic_shape:
        out = bind_one(reshape_p, out, {"new_sizes": basic_shape})
    return out


def _read(x: Any, plan: _Plan) -> Any:
    out = _read_basic(x, *_basic(plan))
    if not plan.positions:
        return out
    flat, sizes, at = _flat_index(plan)
    order = _adv_order(plan)
    if order != tuple(range(len(order))):
        out = bind(transpose_p, out, permutation=order)
    shape = tuple(out.shape)
    lead, trail = shape[:at], shape[at + len(sizes):]
    merged = lead + (prod(sizes),) + trail
    if shape != merged:
        out = bind(reshape_p, out, new_sizes=merged)
    out = bind(gather_prims.gather, out, _index_operand(flat, lead, trail, out), axis=at)
    return bind(reshape_p, out, new_sizes=lead + plan.index_shape + trail)


def _write_back(v: Any, plan: _Plan) -> Any:
    """The transpose of ``_read``: ``v`` (the indexed shape) placed into zeros of the input's shape;
    values at repeated indices add up."""
    out = v
    if plan.positions:
        flat, sizes, at = _flat_index(plan)
        order = _adv_order(plan)
        lead, trail = tuple(v.shape[:at]), tuple(v.shape[at + len(plan.index_shape):])
        out = bind(reshape_p, out, new_sizes=lead + (flat.size,) + trail)
        zeros = constant(0, v.dtype, v, lead + (prod(sizes),) + trail)
        out = bind(gather_prims.scatter_add, zeros, _index_operand(flat, lead, trail, out), out, axis=at)
        out = bind(reshape_p, out, new_sizes=lead + sizes + trail)
        if order != tuple(range(len(order))):
            out = bind(transpose_p, out, permutation=tuple(int(i) for i in np.argsort(order)))
    sliced = tuple(len(range(s, e, k)) for s, e, k in zip(plan.starts, plan.limits, plan.strides))
    if tuple(out.shape) != sliced:
        out = bind(reshape_p, out, new_sizes=sliced)
    if plan.sliced:
        config = tuple(
            (s, n - (s + (m - 1) * k + 1 if m else s), k - 1)
            for n, s, m, k in zip(plan.in_shape, plan.starts, sliced, plan.strides)
        )
        out = bind(pad, out, padding_config=config)
    return out


def getitem(input: Any, index: Any) -> Any:  # noqa: A002
    """``input[index]``: ints, slices (positive steps), ``None``, ``...``, integer tensors or lists,
    boolean masks, and mixtures, with PyTorch's result shapes.

    Basic indices give views; advanced ones gather (primitive ``gather``), and the gradient
    scatters back with ``scatter_add``, so repeated indices accumulate.

    >>> import tidu
    >>> x = tidu.arange(12).reshape(3, 4)
    >>> x[1]
    tensor([4, 5, 6, 7])
    >>> x[:, ::2]
    tensor([[ 0,  2],
            [ 4,  6],
            [ 8, 10]])
    >>> x[[0, 2], -1]
    tensor([ 3, 11])
    >>> x[x > 8]
    tensor([ 9, 10, 11])
    >>> w = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> w[[0, 0, 1]].sum().backward()
    >>> w.grad
    tensor([2., 1.])
    """
    key = _basic_key(index)
    if key is None:
        if isinstance(index, Var) or type(index) is tuple and any(isinstance(i, Var) for i in index):
            return _take_symbolic(input, index)
        return _read(input, _plan(tuple(input.shape), index))
    shape = input._buf.shape if input.__class__ is Tensor else tuple(input.shape)
    found = _BASIC_PLANS.get((shape, key))
    if found is None:
        plan = _plan(shape, index)
        if plan.positions:
            return _read(input, plan)
        sliced, basic_shape = _basic(plan)
        window = None if sliced is None else tuple(slice(*bounds) for bounds in zip(*sliced))
        found = (sliced, basic_shape, window, functools.partial(_read_basic, sliced=sliced, basic_shape=basic_shape))
        if len(_BASIC_PLANS) >= 4096:
            _BASIC_PLANS.clear()
        _BASIC_PLANS[(shape, key)] = found
    sliced, basic_shape, window, replay = found
    if input.__class__ is Tensor and not input._requires_grad and input._device is CPU and not input._is_stale_view():
        # nothing to record: numpy's view, and the binds only if a write through it ever needs them
        if deferred.PENDING and deferred.reads_pending((input._buf,)):
            deferred.flush()  # as a bind: a fused loop must not read a view of what it writes
        array = input._buf if window is None else input._buf[window]
        return plain_view(input, array if array.shape == basic_shape else array.reshape(basic_shape), replay)
    return _read_basic(input, sliced, basic_shape)


def _take_symbolic(input: Any, index: Any) -> Any:  # noqa: A002
    """``input[i]``, ``input[:, i]``, ``input[..., i]``... where ``i`` is a symbolic integer index
    (a ``vmap``-ed one: ``vmap(lambda x, i: x[i])``): a ``gather`` along its dim, whose kernel
    checks the bounds on the values. Other symbolic indices (masks, two of them, mixed with
    ints or slices) raise."""
    from .math import add, lt, where

    items = list(index) if type(index) is tuple else [index]
    at = [k for k, item in enumerate(items) if isinstance(item, Var)]
    ellipses = [k for k, item in enumerate(items) if item is Ellipsis]  # (``==`` on a Var is an op)
    i = items[at[0]]
    if len(at) != 1 or len(ellipses) > 1 or i.dtype not in (dtypes.int32, dtypes.int64) or not all(
            k in at or k in ellipses or isinstance(item, slice) and item == slice(None) for k, item in enumerate(items)):
        raise TypeError("indexing with a symbolic value (inside vmap or an AD rule) takes one int32 or int64 tensor "
                        "index, the other indices full slices ':' or '...'")
    e = ellipses[0] if ellipses else len(items)
    d = at[0] if at[0] < e else input.ndim - (len(items) - at[0])
    if not 0 <= d < input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    shape = tuple(input.shape)
    n, lead, trail = shape[d], shape[:d], shape[d + 1:]
    flat = where(lt(i, 0), add(i, n), i).reshape(-1)
    picks = flat.reshape((1,) * d + (-1,) + (1,) * len(trail)).expand(*lead, flat.shape[0], *trail)
    return gather(input, d, picks).reshape(*lead, *i.shape, *trail)


# (input shape, basic index) -> (slice params or None, result shape, the numpy index of the slice, the
# view's replay from its base):
# ints, slices, None and ``...``
_BASIC_PLANS: dict[tuple, tuple] = {}


def _basic_key(index: Any) -> tuple | None:
    """A hashable form of an index made only of ints, int slices, ``None`` and ``...``; ``None``
    for any other index (tensors, lists, bools: planned afresh each time)."""
    if type(index) is int:  # ``x[t]``: no loop
        return (index,)
    key = []
    for item in index if type(index) is tuple else (index,):
        kind = type(item)
        if kind is int or item is None or item is Ellipsis:
            key.append(item)
        elif kind is slice and all(v is None or type(v) is int for v in (item.start, item.stop, item.step)):
            key.append((item.start, item.stop, item.step))
        else:
            return None
    return tuple(key)


# --- writing -----------------------------------------------------------------------------------
def _fitting(value: Any, shape: tuple[int, ...], trimmed: tuple[int, ...] | None = None) -> None:
    """PyTorch's error where ``value`` (its shape without leading 1s: ``trimmed``) does not
    broadcast to the indexed ``shape``."""
    if trimmed is None:
        extra = value.ndim - len(shape)
        trimmed = tuple(value.shape[extra:]) if extra > 0 and all(s == 1 for s in value.shape[:extra]) \
            else tuple(value.shape)
    try:
        if broadcast_shapes(trimmed, shape) == shape:
            return
    except RuntimeError:
        pass
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be broadcast to indexing "
                       f"result of shape {list(shape)}")


def _value_operand(value: Any, shape: tuple[int, ...], dtype: dtypes.dtype, like: Any) -> Any:
    """``value`` cast to ``dtype`` and broadcast to the indexed shape (leading 1s dropped)."""
    if not is_value(value):
        if not isinstance(value, bool | int | float | np.generic):
            raise TypeError(
                f"can't assign a {type(value).__module__}.{type(value).__name__} to a tensor: the value must be a Tensor or a number"
            )
        return constant(value, dtype, like, shape)
    v = convert(value, dtype)
    extra = v.ndim - len(shape)
    if extra > 0 and all(s == 1 for s in v.shape[:extra]):
        v = bind(reshape_p, v, new_sizes=tuple(v.shape[extra:]))
    _fitting(value, shape, tuple(v.shape))
    if tuple(v.shape) == shape:
        return v
    lead = len(shape) - v.ndim
    return bind(broadcast_in_dim, v, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


def _last_writes(plan: _Plan) -> np.ndarray | None:
    """Where advanced indices repeat a position: which entries of the indexed shape write it
    (the last one, as a sequential write leaves it); ``None`` when no position repeats."""
    if not plan.positions:
        return None
    flat = _flat_index(plan)[0].reshape(-1)
    if np.unique(flat).size == flat.size:
        return None
    _, last_from_end = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(flat.size, bool)
    keep[flat.size - 1 - last_from_end] = True
    return keep.reshape(plan.index_shape)


def _put(x: Any, plan: _Plan, value: Any, accumulate: bool) -> Any:
    """``x`` with ``value`` written (or added) at the plan's region, out of place and recorded."""
    shape = plan.out_shape()
    v = _value_operand(value, shape, x.dtype, x)
    if isinstance(x, Tensor) and not x.requires_grad:
        # A constant: its current data, so that writing into x later does not touch the node's input
        # (a copy through a bind: a dual tensor's keeps its tangent)
        x = x.clone()
    if accumulate:
        return x + _write_back(v, plan)
    keep = _last_writes(plan)
    if keep is not None:
        at = plan.positions[0] if plan.adjacent else 0
        keep = keep.reshape((1,) * at + keep.shape + (1,) * (len(shape) - at - keep.ndim))
        v = where(placed(np.broadcast_to(keep, shape).copy(), None, x.device), v, constant(0, x.dtype, x, ()))
    region = _write_back(Tensor(np.ones(shape, np.int64), dtypes.int64), plan)._data != 0
    return where(placed(region, None, x.device), _write_back(v, plan), x)


def index_update(input: Any, index: Any, value: Any, accumulate: bool = False) -> Any:  # noqa: A002
    """Out of place ``input[index] = value`` (or ``+=`` with ``accumulate``) for any index expression:
    the value ``__setitem__`` assigns. Not part of PyTorch's API.

    >>> import tidu
    >>> from tidu.ops.indexing import index_update
    >>> index_update(tidu.zeros(2, 2), (slice(None), 0), 1.0)
    tensor([[1., 0.],
            [1., 0.]])
    """
    return _put(input, _plan(tuple(input.shape), index), value, accumulate)


def _no_byte_mask_fill(index: Any) -> None:
    """PyTorch writes a number through a mask with ``masked_fill_``, which takes bool masks only:
    a uint8 mask (which reading accepts) is an error there."""
    for item in index if isinstance(index, tuple) else (index,):
        if isinstance(item, Tensor) and item.dtype is dtypes.uint8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")


def no_tangents(input: Any, value: Any) -> bool:  # noqa: A002
    """Whether a write into ``input`` may skip the binds: inside a forward-AD dual level, a
    write of or into a dual tensor goes through them (``autograd/forward_ad.py`` swaps this)."""
    return True


def _puts(index: Any, value: Tensor) -> bool:
    """Whether PyTorch writes ``value`` at ``index`` with ``index_put_`` (which takes only a value
    of the tensor's dtype): an advanced index (a list, an array, a tensor that is not a 0-d
    integer), but for one boolean mask and a 0-d value (``masked_fill``, which casts)."""
    items = index if type(index) is tuple else (index,)
    advanced = [i for i in items if isinstance(i, list | np.ndarray) or isinstance(i, Tensor) and (
        i.ndim or i.dtype in (dtypes.bool_, dtypes.uint8))]
    if not advanced:
        return False
    return not (len(items) == 1 and isinstance(items[0], Tensor) and items[0].dtype is dtypes.bool_ and value.ndim == 0)


def setitem(input: Any, index: Any, value: Any) -> None:  # noqa: A002
    """``input[index] = value``: ``value`` (a tensor or number) is cast to ``input``'s dtype and
    broadcast to the indexed shape; repeated indices keep the last write.

    In place (``tidu.core.inplace.assign_``): under grad mode the gradient of what is
    computed from ``input`` afterwards flows to the old ``input`` outside the written
    region and to ``value`` inside it.

    >>> import tidu
    >>> x = tidu.zeros(2, 3)
    >>> x[0, 1:] = 5
    >>> x[1, [0, 2]] = tidu.tensor([1.0, 2.0])
    >>> x
    tensor([[0., 5., 5.],
            [1., 0., 2.]])
    """
    if isinstance(input, Var):
        raise NotImplementedError("__setitem__: tidu's vmap and function transforms do not support in-place writes "
                                  "into the values they map or differentiate; use the out-of-place torch.where, "
                                  "index_put or scatter instead")
    if isinstance(value, Var):  # a tensor cannot hold a transformed (vmapped, differentiated) value
        raise RuntimeError("vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor "
                           "`other` in extra_args that has more elements than `self`. This happened due to `other` "
                           "being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
                           "out-of-place operators instead of index_put_.")
    check_writable(input, "__setitem__")
    if not is_value(value) or value.ndim == 0:
        _no_byte_mask_fill(index)
    if isinstance(value, int | float) and not input.dtype.is_floating_point:
        dtypes.check_fits(value, input.dtype)  # PyTorch fills with the number: 300 is an error in uint8 (1e6 is inf in float16)
    plan = _plan(tuple(input.shape), index)
    if isinstance(value, Tensor) and value.dtype is not input.dtype and _puts(index, value):
        _fitting(value, plan.out_shape())  # PyTorch's shape error comes first
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]} for the destination and "
                           f"{dtypes.TORCH_NAMES[value.dtype.name]} for the source.")
    view = input._view
    tracked = grad_mode.is_grad_enabled() and (
        input.requires_grad or (is_value(value) and value.requires_grad)
        or view is not None and view.no_grad and view.base._requires_grad  # refused by ``assign_``
    )
    if tracked or input.device.type != "cpu" or not no_tangents(input, value):  # on the GPU: computed out of place
        read_from_base(input)
        assign_(input, _put(input, plan, value, accumulate=False), op="__setitem__")
        return
    # Nothing to record: write into the storage through a numpy view of the region.
    with grad_mode.no_grad():
        v = _value_operand(value, plan.out_shape(), input.dtype, input)._data
    view = _basic_view(input._data, plan)
    if plan.positions:
        at = plan.positions[0] if plan.adjacent else 0
        view = view.transpose(_adv_order(plan))
        view[(slice(None),) * at + tuple(np.broadcast_arrays(*plan.arrays))] = v
    else:
        view[...] = v
    written(input)


def _basic_view(data: np.ndarray, plan: _Plan) -> np.ndarray:
    view = data[tuple(slice(s, e, k) for s, e, k in zip(plan.starts, plan.limits, plan.strides)) + (Ellipsis,)]
    view = view.reshape(plan.basic_shape)
    if not np.shares_memory(view, data) and view.size:
        raise RuntimeError("__setitem__: internal error: the indexed region is not a view of the storage")
    return view


def index_put(input: Any, indices: Any, values: Any, accumulate: bool = False) -> Any:  # noqa: A002
    """A copy of ``input`` with ``values`` at ``input[indices]`` (``indices``: a tuple of index
    tensors); ``accumulate=True`` adds instead, repeated indices adding up.

    Gradient: the cotangent with the written region zeroed for ``input`` (all of it when
    accumulating), and the cotangent at the region for ``values``.

    >>> import tidu
    >>> x = tidu.zeros(4)
    >>> tidu.index_put(x, (tidu.tensor([0, 2, 0]),), tidu.tensor(1.0), accumulate=True)
    tensor([2., 0., 1., 0.])
    """
    if not isinstance(indices, tuple | list):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for i in indices:
        if i is not None and not isinstance(i, Tensor):
            raise TypeError(f"index_put(): indices must be Tensors or None, got {type(i).__name__}")
    items = tuple(slice(None) if i is None else i for i in indices)
    if not is_value(values):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not {type(values).__name__}")
    if values.dtype is not input.dtype:
        raise RuntimeError(
            f"Index put requires the source and destination dtypes match, got {input.dtype.name} for the "
            f"destination and {values.dtype.name} for the source."
        )
    return index_update(input, items, values, accumulate)


# --- gather, scatter_add, index_select -----------------------------------------------------------
def _int_index(index: Any, op: str) -> Any:
    if not isinstance(index, Tensor | Var):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype is dtypes.int32:
        return convert(index, dtypes.int64)
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{op}(): Expected dtype int64 for index (got {index.dtype.name})")
    return index


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:  # noqa: A002
    """``out[i][j] = input[i][index[i][j]]`` for ``dim=1`` (``index`` has ``input``'s number of dims
    and no larger sizes outside ``dim``; the output has ``index``'s shape).

    Gradient: ``scatter_add`` of the cotangent at ``index`` (primitive ``gather``); dense with
    ``sparse_grad=True`` too (tidu has no sparse tensors: its values are PyTorch's ``to_dense()``).
    A 0-d ``input`` or ``index`` counts as 1-D, as in PyTorch.

    >>> import tidu
    >>> tidu.gather(tidu.tensor([[1, 2], [3, 4]]), 1, tidu.tensor([[0, 0], [1, 0]]))
    tensor([[1, 1],
            [4, 3]])
    """
    index = _int_index(index, "gather")
    d = wrap_dim(dim, input.ndim)
    if input.ndim <= 1 and index.ndim <= 1 and (input.ndim == 0 or index.ndim == 0):
        x1 = bind(reshape_p, input, new_sizes=(input.numel(),)) if input.ndim == 0 else input
        i1 = bind(reshape_p, index, new_sizes=(index.numel(),)) if index.ndim == 0 else index
        out = bind(gather_prims.gather, x1, i1, axis=0)
        return bind(reshape_p, out, new_sizes=()) if index.ndim == 0 else out
    return bind(gather_prims.gather, input, index, axis=d)


def scatter_add(input: Any, dim: int, index: Any, src: Any) -> Any:  # noqa: A002
    """A copy of ``input`` with ``src[i][j]`` added at ``[i][index[i][j]]`` for ``dim=1``.

    Gradient: the cotangent for ``input``; for ``src``, the cotangent gathered at
    ``index`` (primitive ``scatter_add``).

    >>> import tidu
    >>> tidu.zeros(3).scatter_add(0, tidu.tensor([0, 2, 0]), tidu.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.])
    """
    index = _int_index(index, "scatter_add")
    if not is_value(src):
        raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src.dtype is not input.dtype:
        raise RuntimeError(
            f"scatter(): Expected self.dtype to be equal to src.dtype (got {input.dtype.name} and {src.dtype.name})"
        )
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        one = (lambda t: bind(reshape_p, t, new_sizes=(1,)) if t.ndim == 0 else t)
        out = bind(gather_prims.scatter_add, one(input), one(index), one(src), axis=0)
        return bind(reshape_p, out, new_sizes=())
    return bind(gather_prims.scatter_add, input, index, src, axis=d)


def index_select(input: Any, dim: int, index: Any) -> Any:  # noqa: A002
    """The entries ``index`` (1-d) of dimension ``dim``.

    >>> import tidu
    >>> tidu.tensor([[1, 2], [3, 4]]).index_select(1, tidu.tensor([1, 1, 0]))
    tensor([[2, 2, 1],
            [4, 4, 3]])
    """
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index.dtype not in (dtypes.int32, dtypes.int64):
        raise RuntimeError(f"index_select(): Expected dtype int32 or int64 for index (got {index.dtype.name})")
    if index.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector (got shape {tuple(index.shape)})")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    array = index._host().reshape(-1).astype(np.int64)
    if input.ndim == 0 and array.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {array.size} value(s)")
    if n == 0 and array.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = array[(array < 0) | (array >= n)]
    if bad.size:
        raise IndexError(f"index out of range in self: index {int(bad[0])} for dimension {d} with size {n}")
    if input.ndim == 0:
        return input
    lead, trail = tuple(input.shape[:d]), tuple(input.shape[d + 1:])
    return bind(gather_prims.gather, input, _index_operand(array, lead, trail, input), axis=d)


def select_positions(input: Any, dim: int, positions: np.ndarray) -> Any:  # noqa: A002
    """``index_select`` by host ``positions`` (in range: the caller computed them) that a node
    keeps when released (``kept``): for ops whose positions stand for sizes PyTorch's backward
    holds as numbers (``interpolate``)."""
    lead, trail = tuple(input.shape[:dim]), tuple(input.shape[dim + 1:])
    return bind(gather_prims.gather, input, kept(_index_operand(positions, lead, trail, input)), axis=dim)


# --- masks -----------------------------------------------------------------------------------------
def masked_fill(input: Any, mask: Any, value: Any) -> Any:  # noqa: A002
    """``value`` where ``mask`` (bool, broadcast) is true, else ``input``; ``value`` is a number or a
    0-d tensor (cast to ``input``'s dtype; differentiable).

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0, 3.0])
    >>> x.masked_fill(x > 1.5, 0.0)
    tensor([1., 0., 0.])
    """
    if not is_value(mask):
        raise TypeError(f"masked_fill(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.C_TYPES[mask.dtype.name]}")
    if is_value(value):
        if value.ndim != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} "
                "dimension(s)."
            )
        if isinstance(value, Tensor) and value.dtype is not input.dtype and value.dtype is not dtypes.bool_ and input.dtype is not dtypes.float64:
            dtypes.check_fits(value.item(), input.dtype)  # PyTorch fills with the number: as for a number
        value = convert(value, input.dtype)
    elif isinstance(input, Tensor) and isinstance(value, bool | int | float):
        dtypes.check_fits(value, input.dtype)
        # the number in the result's shape at once: a cached constant (on the CPU), not a broadcast bind
        shape = tuple(broadcast_shapes(mask.shape, input.shape, op="masked_fill"))
        value = constant(value, input.dtype, input, shape)
    else:
        dtypes.check_fits(value, input.dtype)
        value = constant(value, input.dtype, input)
    return where(mask, value, input)


def _triangle(input: Any, diagonal: int, op: str, lower: bool) -> Any:
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions (got shape {tuple(input.shape)})")
    rows, cols = input.shape[-2:]
    keep = np.tri(rows, cols, diagonal, dtype=bool) if lower else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    # the mask stands for the diagonal, which PyTorch's backward holds as a number
    return where(kept(placed(keep, None, input.device)), input, constant(0, input.dtype, input))


def tril(input: Any, diagonal: int = 0) -> Any:  # noqa: A002
    """The lower triangle of the last two dimensions (on and below ``diagonal``); the rest zero.

    >>> import tidu
    >>> tidu.tril(tidu.ones(2, 3), diagonal=1)
    tensor([[1., 1., 0.],
            [1., 1., 1.]])
    """
    return _triangle(input, int(diagonal), "tril", lower=True)


def triu(input: Any, diagonal: int = 0) -> Any:  # noqa: A002
    """The upper triangle of the last two dimensions (on and above ``diagonal``); the rest zero.

    >>> import tidu
    >>> tidu.triu(tidu.ones(2, 3))
    tensor([[1., 1., 1.],
            [0., 1., 1.]])
    """
    return _triangle(input, int(diagonal), "triu", lower=False)


METHODS = {
    "__getitem__": getitem,
    "gather": gather, "scatter_add": scatter_add, "index_select": index_select, "masked_fill": masked_fill,
    "tril": tril, "triu": triu, "index_put": index_put, "__setitem__": setitem,
}
