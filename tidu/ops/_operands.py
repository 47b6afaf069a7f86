"""Broadcasting, promotion and scalar lifting: where PyTorch's conventions live.

Primitives take operands of one shape and dtype; the public ops get them
there. Everything here works on ``Tensor`` and on ``Var`` (inside AD rules).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ad import UndefinedPrimal
from ..core import dtypes
from ..core.aval import wrap_dim
from ..core.device import CPU
from ..core.dispatch import bind_broadcast, broadcast_operand
from ..core.primitive import Var, bind
from ..core.tape import KEPT
from ..primitives import creation, structural
from ..tensor import SHORT_PATH_TYPES, Tensor, of_array


def is_value(x: Any) -> bool:
    return isinstance(x, Tensor | Var)


def is_linear(x: Any) -> bool:
    """In a transpose rule: is ``x`` the linear input (an ``UndefinedPrimal``)?"""
    return isinstance(x, UndefinedPrimal)


def _constant_key(value: Any, dtype: dtypes.dtype, shape: tuple[int, ...], device: Any) -> tuple:
    """The cache key of ``constant`` and ``kept_constant`` (which must agree: a kept constant
    finds the plain one of its key to copy it). The device by its type: a tensor's device is
    CPU or CUDA (``as_device``), and ``device.__hash__`` is Python-level."""
    return (value, type(value), dtype, shape, device.type)


def constant(value: Any, dtype: dtypes.dtype, like: Any = None, shape: tuple[int, ...] = ()) -> Any:
    """``value`` in ``shape`` and ``dtype``, on ``like``'s device (as ``like``'s kind: Tensor or Var)."""
    if isinstance(like, Var):
        params = {"shape": tuple(shape), "value": value, "dtype": dtype}
        if like.aval.device != "cpu":
            params["device"] = like.aval.device
        return like.tracer.emit(creation.full, [], params)
    device = CPU if like is None else like._device
    if device is not CPU and shape:  # one cached element, broadcast as a view: kernels read it in place
        scalar = constant(value, dtype, like)
        return bind(structural.broadcast_in_dim, scalar, shape=tuple(shape), broadcast_dimensions=())
    key = _constant_key(value, dtype, shape, device)
    cached = _CONSTANTS.get(key)
    if cached is None:
        value = dtypes.wrap(value, dtype)  # an integer operand wraps, as PyTorch casts it (uint8: 300 is 44)
        if device is CPU and math.prod(shape) > 4096:  # one element, broadcast: kernels read it in place
            cached = Tensor(np.broadcast_to(dtypes.cast(value, dtype), shape), dtype)
        elif device is CPU:
            cached = Tensor(np.full(shape, dtypes.cast(value, dtype)), dtype)
        else:
            cached = creation.full.bind(shape=tuple(shape), value=value, dtype=dtype, device=device.type)
        if len(_CONSTANTS) >= 256:
            _CONSTANTS.clear()
        _CONSTANTS[key] = cached
    return cached


# Constant tensors (small, or one element broadcast), shared: nothing writes into a constant
# (ops never write their inputs).
_CONSTANTS: dict[tuple, Tensor] = {}


def kept_constant(value: Any, dtype: dtypes.dtype, like: Any, shape: tuple[int, ...] = ()) -> Any:
    """``constant`` for a number an op adds that PyTorch's backward holds as a number, not as a
    saved tensor (``mean``'s element count, ``add``'s ``alpha``): a node that saved it keeps it
    when released, so a second backward may read it (Note [release] in core/tape.py). A number
    the caller passes as an operand is a plain ``constant``: PyTorch saves it as a tensor and
    frees it (``(x * 2).sum()`` cannot be run backward twice)."""
    if isinstance(like, Var):
        return constant(value, dtype, like, shape)
    key = _constant_key(value, dtype, shape, like._device)
    cached = _KEPT_CONSTANTS.get(key)
    if cached is None:
        cached = constant(value, dtype, like, shape)
        if cached is _CONSTANTS.get(key):  # that one is a plain constant too: this one is its copy
            cached = Tensor(cached._buf, dtype, device=cached._device)
        if len(_KEPT_CONSTANTS) >= 256:
            _KEPT_CONSTANTS.clear()
        _KEPT_CONSTANTS[key] = kept(cached)
    return cached


_KEPT_CONSTANTS: dict[tuple, Tensor] = {}


def kept(t: Tensor) -> Tensor:
    """``t`` (a constant an op builds: a mask, weights, positions) marked to be kept when a node
    that saved it is released, as ``kept_constant``'s: PyTorch's backward holds what it stands
    for as numbers (``tril``'s diagonal, ``interpolate``'s sizes), so a second backward that reads
    nothing else may run (Note [release] in core/tape.py)."""
    KEPT[id(t)] = t
    return t


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast") -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to (numpy's and PyTorch's rule); ``op`` names the op in the
    error. Results are remembered per tuple of shapes.

    >>> broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    try:
        found = _SHAPES.get(shapes)
    except TypeError:  # a list among the shapes
        return _broadcast_shapes(shapes, op)
    if found is None:
        found = _broadcast_shapes(shapes, op)
        if len(_SHAPES) >= 4096:
            _SHAPES.clear()
        _SHAPES[shapes] = found
    return found


_SHAPES: dict[tuple, tuple[int, ...]] = {}  # shapes -> their broadcast shape (``broadcast_shapes``)


def _broadcast_shapes(shapes: tuple, op: str) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for shape in shapes:
        for i in range(len(shape) - 1, -1, -1):  # from the last dim, as PyTorch's: it names the last mismatch
            size = shape[i]
            j = ndim - len(shape) + i
            if size == out[j] or size == 1:
                continue
            if out[j] == 1:
                out[j] = size
                continue
            raise RuntimeError(
                f"The size of tensor a ({out[j]}) must match the size of tensor b ({size}) at non-singleton "
                f"dimension {j} ({op} of shapes {tuple(shapes[0])} and {tuple(shape)})"
            )
    return tuple(out)


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    short = type(x) is Tensor or type(x) in SHORT_PATH_TYPES
    current = x._buf.shape if short else tuple(x.shape)
    if current == shape:
        return x
    if len(current) > len(shape):
        raise RuntimeError(
            f"The number of sizes provided ({len(shape)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(current)})"
        )
    if short:
        return bind_broadcast(x, shape)
    lead = len(shape) - len(current)
    return bind(structural.broadcast_in_dim, x, shape=shape, broadcast_dimensions=tuple(range(lead, len(shape))))


def convert(x: Any, dtype: dtypes.dtype) -> Any:
    if x.dtype is dtype:
        return x
    return bind(structural.convert_element_type, x, new_dtype=dtype)


def lift(x: Any, dtype: dtypes.dtype, like: Any) -> Any:
    """A Python scalar becomes a 0-d constant of ``dtype``; values are converted."""
    if is_value(x):
        return convert(x, dtype)
    if isinstance(x, np.ndarray):
        return convert(of_array(x), dtype)
    if not isinstance(x, bool | int | float | np.generic):
        raise TypeError(f"unsupported operand type {type(x).__name__}; expected a Tensor or a number")
    return constant(x, dtype, like)


def operands(*args: Any, op: str, float_only: bool = False, dtype: dtypes.dtype | None = None) -> list[Any]:
    """Promote to one dtype and broadcast to one shape (PyTorch's rules).

    Python scalars become constants of the final shape directly.
    """
    if len(args) == 2 and dtype is None:
        same = same_or_scalar(args[0], args[1], float_only)
        if same is not None:
            return same
    like = None
    for a in args:
        if isinstance(a, Tensor | Var):
            like = a
            break
    if like is None:
        raise TypeError(f"{op}(): expected at least one Tensor argument")
    dt = dtype or dtypes.result_type(*args)
    if isinstance(like, Tensor) and any(isinstance(a, Tensor) and a._device is not like._device for a in args):
        args = _on_one_device(args)
    if float_only and not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    shape = broadcast_shapes(*[a.shape for a in args if isinstance(a, Tensor | Var)], op=op)
    out = []
    for a in args:
        if isinstance(a, Tensor | Var):
            out.append(broadcast_to(convert(a, dt), shape))
        else:
            out.append(broadcast_to(lift(a, dt, like), shape) if isinstance(a, np.ndarray)
                       else _scalar(a, dt, like, shape))
    return out


def same_or_scalar(a: Any, b: Any, float_only: bool = False) -> list[Any] | None:
    """The common cases without the general machinery: two tensors of the short paths' types
    (``tensor.SHORT_PATH_TYPES``) of one dtype and device (broadcast to one shape), or one and a
    Python number of no higher category; ``None`` otherwise. The operands come back as such
    tensors of one shape, dtype and device, ready for ``dispatch.bind_same``."""
    if type(a) is Tensor or type(a) in SHORT_PATH_TYPES:
        t, other, first = a, b, True
    elif type(b) is Tensor or type(b) in SHORT_PATH_TYPES:
        t, other, first = b, a, False
    else:
        return None
    floating = t._dtype.is_floating_point
    if float_only and not floating:
        return None
    kind = type(other)
    if kind is Tensor or kind in SHORT_PATH_TYPES:
        if other._dtype is not t._dtype or other._device is not t._device:
            return None
        sa, sb = a._buf.shape, b._buf.shape
        if sa == sb:
            return [a, b]
        shape = _SHAPES.get((sa, sb))  # broadcast_shapes's memo, read without its call
        if shape is None:
            try:
                shape = broadcast_shapes(sa, sb)
            except RuntimeError:
                return None  # the general path raises, naming the op
        return [a if sa == shape else broadcast_operand(a, shape), b if sb == shape else broadcast_operand(b, shape)]
    if kind is float and floating or kind is int and t._dtype.category:  # no higher category
        c = constant(other, t._dtype, t, t._buf.shape)
        return [t, c] if first else [c, t]
    return None


def _on_one_device(args: Sequence[Any]) -> list[Any]:
    """0-d CPU tensors join CUDA operands (PyTorch's rule); other mixes fail in ``bind``."""
    if not any(isinstance(a, Tensor) and a._device is not CPU for a in args):
        return list(args)
    return [a.to("cuda") if isinstance(a, Tensor) and a._device is CPU and a.ndim == 0 else a for a in args]


def _scalar(x: Any, dtype: dtypes.dtype, like: Any, shape: tuple[int, ...]) -> Any:
    if not isinstance(x, bool | int | float | np.generic):
        raise TypeError(f"unsupported operand type {type(x).__name__}; expected a Tensor or a number")
    return constant(x, dtype, like, shape)


def float_operand(x: Any, op: str) -> Any:
    if not is_value(x):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    if not x.dtype.is_floating_point:
        return convert(x, dtypes.get_default_dtype())
    return x


def wrap_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """Reduction dims in ``range(ndim)``; a 0-d tensor accepts dim 0 or -1 (and reduces nothing)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, bool):  # (an int to Python: PyTorch refuses it)
        raise TypeError("argument 'dim' must be an int or a tuple of ints, not bool")
    if isinstance(dim, int):
        dim = (dim,)
    dims = tuple(wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        repeated = next(d for k, d in enumerate(dims) if d in dims[:k])
        raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
    return dims if ndim else ()
