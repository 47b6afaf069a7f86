"""Operators and methods shared by ``Tensor`` and ``Var`` (values inside AD rules), and the
``Tensor``-only ones: in-place ops (computed out of place, then ``core.inplace.assign_``), ``clone``...

>>> import tidu
>>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
>>> y = x * 2
>>> y.add_(1).mul_(x)
tensor([ 3., 10.], grad_fn=<mul>)
>>> y.sum().backward()
>>> x.grad
tensor([5., 9.])
>>> x.add_(1)
Traceback (most recent call last):
RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.
"""

from __future__ import annotations

import importlib
import warnings
from math import prod as math_prod
from typing import Any

import numpy as np

from ..core import dtypes, formats, grad_mode
from ..core.device import as_device
from ..core.imports import module
from ..core.inplace import VIEW_OF_LEAF_ERROR, assign_, check_writable, mark, read_from_base, written
from ..core.primitive import Var
from ..legacy import LegacyType, tensor_new
from ..primitives import transfer
from ..tensor import Tensor, placed
from . import (
    activation,
    arrange,
    complex,
    conv,
    copies,
    counting,
    creation,
    cumulative,
    diagonals,
    indexing,
    linalg,
    math,
    metadata,
    order,
    pointwise,
    reduce,
    selection,
    shape,
    special,
)
from ._operands import broadcast_to, convert


def _to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(tensor)``; differentiable.
    ``memory_format`` is checked as PyTorch checks it; other than ``preserve_format`` it makes the
    storage row-major (tidu/core/formats.py).

    >>> import tidu
    >>> tidu.tensor([1, 2]).to("cpu", tidu.float64)
    tensor([1., 2.], dtype=tidu.float64)
    >>> tidu.ones(1, 2, 2, 2).to(memory_format=tidu.channels_last).shape
    tidu.Size([1, 2, 2, 2])
    """
    target = kwargs.pop("dtype", None)
    where = None
    for a in args:
        if isinstance(a, Tensor):
            target, where = a.dtype, a.device
        elif isinstance(a, dtypes.dtype) or a in (float, int, bool):
            target = a
        else:
            where = as_device(a)
    if "device" in kwargs:
        where = as_device(kwargs.pop("device"))
    kwargs.pop("non_blocking", None)
    copy = kwargs.pop("copy", False)
    fmt = formats.check_memory_format(kwargs.pop("memory_format", None), self.ndim, "to")
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    out = self if target is None else convert(self, dtypes.as_dtype(target))
    if fmt is not formats.preserve_format:
        out = out.contiguous()
    if where is not None and where != out.device:
        return transfer.device_put.bind(out, device=where.type)
    return out.clone() if copy and out is self else out


def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """A copy on the GPU (``self`` when it is there already)."""
    return _to(self, as_device("cuda" if device is None else device if not isinstance(device, int) else f"cuda:{device}"))


def _cpu(self: Tensor) -> Tensor:
    """A copy in host memory (``self`` when it is there already).

    >>> import tidu
    >>> x = tidu.ones(2)
    >>> x.cpu() is x
    True
    """
    return _to(self, "cpu")


def _byte(self: Tensor) -> Tensor:
    """``self.to(tidu.uint8)``: integers wrap modulo 256, floats truncate toward zero.

    >>> import tidu
    >>> tidu.tensor([-1, 255, 300]).byte()
    tensor([255, 255,  44], dtype=tidu.uint8)
    """
    return convert(self, dtypes.uint8)


def _char(self: Tensor) -> Tensor:
    """``self.to(tidu.int8)``: integers wrap into ``[-128, 127]``, floats truncate toward zero.

    >>> import tidu
    >>> tidu.tensor([127, 128, -129]).char(), tidu.tensor([-2.7, 3.9]).char()
    (tensor([ 127, -128,  127], dtype=tidu.int8), tensor([-2,  3], dtype=tidu.int8))
    """
    return convert(self, dtypes.int8)


def _short(self: Tensor) -> Tensor:
    """``self.to(tidu.int16)`` (``tidu.short``).

    >>> import tidu
    >>> tidu.tensor([40000, -3]).short()
    tensor([-25536,     -3], dtype=tidu.int16)
    """
    return convert(self, dtypes.int16)


CONVERSIONS = {
    "to": _to,
    "float": lambda self: convert(self, dtypes.float32), "double": lambda self: convert(self, dtypes.float64),
    "half": lambda self: convert(self, dtypes.float16), "bfloat16": lambda self: convert(self, dtypes.bfloat16),
    "long": lambda self: convert(self, dtypes.int64), "int": lambda self: convert(self, dtypes.int32),
    "bool": lambda self: convert(self, dtypes.bool_),
    "byte": _byte, "char": _char, "short": _short,
    "type_as": lambda self, other: convert(self, other.dtype),
}
COMMON = {**CONVERSIONS}
for _module in (arrange, conv, copies, counting, creation, cumulative, diagonals, indexing, linalg, activation, math, order, pointwise,
                reduce, selection, shape, special):
    COMMON.update(_module.METHODS)


def _backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
              inputs: Any = None) -> None:
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on."""
    module("tidu.autograd.backward").backward(self, gradient, retain_graph, create_graph, inputs)




def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category


def _fit(self: Tensor, value: Any, name: str, *, cast: bool = False) -> Tensor:
    """The out-of-place result as ``self``'s new value: same shape (broadcast only for
    ``copy_``/``fill_``), cast to ``self``'s dtype where PyTorch allows it."""
    if not isinstance(value, Tensor):
        value = placed(np.asarray(value, dtype=self.dtype.np), self.dtype, self._device)
    if tuple(value.shape) != tuple(self.shape):
        if not cast:
            raise RuntimeError(
                f"{name}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(value.shape)}"
            )
        value = broadcast_to(value, tuple(self.shape))
    if value.dtype is not self.dtype:
        if not cast and not _can_cast(value.dtype, self.dtype):
            raise RuntimeError(
                f"result type {dtypes.TORCH_NAMES[value.dtype.name]} can't be cast to the desired output type "
                f"{dtypes.TORCH_NAMES[self.dtype.name]}"
            )
        value = convert(value, self.dtype)
    if cast and value.device != self.device:  # copy_ across devices (differentiable)
        value = _to(value, self.device)
    return value


def _inplace(compute: Any, name: str, *, cast: bool = False, overwrites: bool = False, checked: bool = False) -> Any:
    """An in-place method: the new value computed out of place (recorded), then ``assign_``
    (``overwrites``: the new value does not read the old one; ``checked``: ``compute`` raises the
    leaf error itself, before ``assign_``'s checks)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if not checked:
            check_writable(self, name)
        read_from_base(self)
        since = mark()
        value = compute(self, *args, **kwargs)
        if isinstance(value, Var):  # a tensor cannot hold a transformed (vmapped, differentiated) value
            raise RuntimeError(_INTO_TENSOR.format(name))
        value = _fit(self, value, name, cast=cast)
        return assign_(self, value, op=name, since=since, overwrites=overwrites)

    method.__name__ = name
    method.__doc__ = f"In-place ``{name}``: the tensor takes the new value in its own storage."
    return method


_INTO_TENSOR = ("vmap: {0}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
                "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not "
                "being vmapped over in a vmap. Please try to use out-of-place operators instead of {0}.")
_ON_VAR = ("{0}: tidu's vmap and function transforms do not support in-place operations on the values they map or "
           "differentiate; use the out-of-place form (x = x.{1}(...)), or torch.where / index_put for a write "
           "into part of a value")


def _var_inplace(name: str) -> Any:
    """The in-place method ``name`` on a ``Var``: a clear error (PyTorch runs it; tidu's values
    inside the transforms are immutable, and an alias of one would not see the write)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_ON_VAR.format(name, name.rstrip("_")))

    method.__name__ = name
    return method


def _integer_inplace(compute: Any) -> Any:
    """``compute`` (an op of integer tensors) for an in-place method: a result type that cannot
    be cast back to ``self``'s dtype is PyTorch's cast error, raised before the op's own."""

    def checked(self: Tensor, other: Any) -> Any:
        dt = dtypes.result_type(self, other)
        if dt is not self.dtype and not _can_cast(dt, self.dtype):
            raise RuntimeError(f"result type {dtypes.TORCH_NAMES[dt.name]} can't be cast to the desired output "
                               f"type {dtypes.TORCH_NAMES[self.dtype.name]}")
        return compute(self, other)

    return checked


def _copy(self: Tensor, src: Any, non_blocking: bool = False) -> Any:
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' must be Tensor, not {type(src).__name__}")
    return src


def _fill(self: Tensor, value: Any) -> Any:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return value
    return creation.full(tuple(self.shape), value, dtype=self.dtype, device=self._device)


def _require(ok: bool, message: str) -> None:
    """PyTorch's check of a random fill's parameter (before numpy's own, which says less)."""
    if not ok:
        raise RuntimeError(message)


def _normal_draw(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
    _require(std >= 0, f"normal expects std >= 0.0, but found std {std:g}")
    return _random(self, lambda g, n: g.normal(mean, std, n), "normal_kernel_cpu", generator)


def _uniform_draw(self: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None, **kw: Any) -> Any:
    low, high = kw.get("from", a), kw.get("to", b)
    _require(low <= high, f"uniform_ expects to return a [from, to) range, but found from={low:g} > to={high:g}")
    return _random(self, lambda g, n: g.uniform(low, high, n), "uniform_kernel_cpu", generator)


def _bernoulli_draw(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Any:
    if not isinstance(p, Tensor):
        _require(0 <= p <= 1, f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    return _random(self, lambda g, n: (g.random(n) < _probability(p, self)), "bernoulli_", generator)


def _exponential_draw(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Any:
    _require(lambd > 0, f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _random(self, lambda g, n: g.exponential(1.0 / lambd, n), "exponential_", generator)


def _log_normal_draw(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Any = None) -> Any:
    _require(std > 0, f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _random(self, lambda g, n: g.lognormal(mean, std, n), "log_normal_", generator)


def _cauchy_draw(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Any = None) -> Any:
    _require(sigma > 0, f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _random(self, lambda g, n: median + sigma * g.standard_cauchy(n), "cauchy_", generator)


def _geometric_draw(self: Tensor, p: float, *, generator: Any = None) -> Any:
    _require(0 < p < 1, f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _random(self, lambda g, n: g.geometric(p, n), "geometric_", generator)


def _random(self: Tensor, draw: Any, name: str, generator: Any = None) -> Any:
    if not self.dtype.is_floating_point:
        raise dtypes.not_implemented(name, self.dtype)
    stream = creation._stream(generator)
    return placed(dtypes.cast(draw(stream, self._buf.shape), self.dtype), self.dtype, self._device)


# PyTorch's C names of the dtypes, in random_'s bound errors
_C_TYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
           "int64": "long", "float32": "float", "float64": "double"}


def _random_draw(self: Tensor, *args: Any, generator: Any = None, **bounds: Any) -> Tensor:
    """``random_(to)``, ``random_(from, to)`` or ``random_()``: integers drawn uniformly from
    ``[0, to)``, ``[from, to)``, or with no bound given from every integer the dtype holds exactly
    (``[0, 2**mantissa]`` for floats)."""
    unknown = set(bounds) - {"from", "to"}
    if unknown or len(args) > 2:
        raise TypeError(f"random_() got unexpected arguments {sorted(unknown) or list(args)}")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        low, high = (args[0], bounds["to"]) if "to" in bounds else (0, args[0])
    else:
        low, high = bounds.get("from", 0), bounds.get("to")
    return _random_integers(self, int(low), high, generator)


def _random_integers(self: Tensor, low: int, high: Any, generator: Any) -> Tensor:
    dt = self.dtype
    if high is None:
        if dt.is_floating_point:
            high = _exact_integers(dt) + 1
        else:
            high = 2 if dt is dtypes.bool_ else int(np.iinfo(dt.np).max) + 1
    else:
        high = int(high)
        if low >= high:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt is not dtypes.bool_ and not dt.is_floating_point:
        info = np.iinfo(dt.np)
        if not info.min <= low <= info.max:
            raise RuntimeError(f"from is out of bounds for {_C_TYPE[dt.name]}")
        if not info.min <= high - 1 <= info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {_C_TYPE[dt.name]}")
    elif dt.is_floating_point:
        exact = _exact_integers(dt)
        for bound, name in ((low, "from"), (high - 1, "to - 1")):
            if -exact <= bound <= exact:
                continue
            if not dt.is_half:
                raise RuntimeError(f"{name} is out of bounds for {_C_TYPE[dt.name]}")
            warnings.warn(f"{name} is out of bounds [-(2^{exact.bit_length() - 1}), 2^{exact.bit_length() - 1}]. "
                          f"Due to precision limitations c10::{dtypes.TORCH_NAMES[dt.name]} can support discrete "
                          "uniform distribution only within this range. This warning will become an error in "
                          "version 1.7 release, please fix the code in advance", UserWarning, stacklevel=3)
    draws = creation._stream(generator).integers(low, high, self._buf.shape, dtype=np.int64, endpoint=False)
    return placed(dtypes.cast(draws, dt), dt, self._device)


def _exact_integers(dt: dtypes.dtype) -> int:
    """The float dtype's largest run of exact integers, ``2 ** (mantissa bits + 1)``."""
    return int(round(2 / metadata.finfo(dt).eps))


def _resize_(self: Tensor, *sizes: Any) -> Tensor:
    """``resize_``: the tensor takes the shape ``sizes``, keeping its first elements in row-major
    order; new elements are zeros (PyTorch leaves them uninitialized). Not for tensors that require
    grad, as in PyTorch."""
    size = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], tuple | list) else tuple(sizes)
    if any(not isinstance(d, int | np.integer) or d < 0 for d in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check_writable(self, "resize_")
    if size == tuple(self.shape):
        return self
    count = int(np.prod(size))
    flat = shape.reshape(self.detach(), (-1,))
    if count <= flat.shape[0]:
        new = shape.reshape(flat[:count], size)
    else:
        new = shape.reshape(shape.cat([flat, creation.zeros(count - flat.shape[0], dtype=self.dtype,
                                                           device=self.device)]), size)
    self._buf = new._data
    self._view = None
    written(self)
    return self


def _resize_as_(self: Tensor, other: Tensor) -> Tensor:
    """``resize_(other.shape)``."""
    return _resize_(self, tuple(other.shape))


def _probability(p: Any, like: Tensor) -> Any:
    """``bernoulli_``'s ``p``: a number, or a tensor broadcast to ``like``'s shape, on the host."""
    return np.broadcast_to(p._values(), like._buf.shape) if isinstance(p, Tensor) else p


# in-place forms of elementwise ops: ``x.exp_()`` is ``x.copy_(x.exp())``, recorded as such
_SAME_SHAPE_INPLACE = (
    "abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sigmoid", "relu", "reciprocal",
    "floor", "ceil", "round", "trunc", "frac", "sign", "square", "erf", "pow", "fmod", "remainder", "lerp",
    "clamp_min", "clamp_max", "nan_to_num", "tril", "triu", "logit", "addcmul", "addcdiv", "hypot", "atan2",
    "logical_not", "logical_and", "logical_or", "logical_xor",
    "bitwise_not", "xlogy", "float_power", "deg2rad", "rad2deg", "sinc", "absolute", "negative",
    "arcsin", "arccos", "arctan", "arctan2", "erfc", "erfinv", "lgamma", "digamma", "polygamma", "i0", "mvlgamma", "igamma", "igammac", "cumprod",
    "arcsinh", "arccosh", "arctanh", "fix", "sgn", "cumsum", "divide", "multiply", "subtract", "true_divide",
    "floor_divide", "copysign", "gcd", "lcm", "ldexp", "nextafter", "heaviside", "addr", "renorm",
    "scatter_reduce", "index_reduce", "masked_scatter", "put", "addbmm", "addmm", "addmv", "baddbmm",
)
_INTEGER_INPLACE = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal")


def _detach_(self: Tensor) -> Tensor:
    """Cut this tensor from the graph, in place (it becomes a leaf)."""
    if self._view is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
            "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
            "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
        )
    self._trace = None
    self._key = None
    self._requires_grad = False
    return self


def _restride_(name: str, view: Any) -> Any:
    """An in-place view op (``t_``, ``squeeze_``...): the tensor keeps its storage and takes the
    shape and strides of ``view(self, *args)``, a view op of ``tidu.ops.shape``. Under autograd it
    takes that op's place in the graph (PyTorch's ``UnsqueezeBackward`` on the tensor itself); the
    version counter is bumped, as PyTorch's is."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        from ..tensor import ViewInfo

        check_writable(self, name)
        recorded = grad_mode.is_grad_enabled() and self.requires_grad
        value = view(self if recorded else self.detach(), *args, **kwargs)
        data = self._data
        # the same op on the storage's metadata: numpy's own view ops, or the strides read off an
        # array of ``data``'s layout that is never read (a ``CudaArray``)
        probe = data if type(data) is np.ndarray else np.lib.stride_tricks.as_strided(
            np.empty(1, data.dtype), data.shape, data.strides)
        moved = _NUMPY_VIEWS[name](probe, tuple(self.shape), tuple(value.shape), *args, **kwargs)
        self._buf = moved if type(data) is np.ndarray else data.view(moved.shape, moved.strides)
        if recorded:
            self._version.value += 1
            self._key, self._trace = value._key, value._trace
        else:
            written(self)
        if self._view is not None:
            inner = self._view.fn
            self._view = ViewInfo(self._view.base, lambda base: view(inner(base), *args, **kwargs),
                                  self._version.value, self._view.no_grad)
        return self

    method.__name__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: the tensor takes the new shape and strides over its own storage."
    return method


def _squeezed(a: np.ndarray, old: tuple, new: tuple, *args: Any, **kwargs: Any) -> np.ndarray:
    if len(old) == len(new):
        return a
    dims = tuple(d for d, n in enumerate(old) if n == 1)
    if len(new) != len(old) - len(dims):  # only some of the size-1 dims
        wanted = shape.wrap_dims(args[0] if args else kwargs["dim"], len(old))
        dims = tuple(d for d in wanted if old[d] == 1)
    return a.squeeze(dims)


def _t_dims(old: tuple) -> tuple:
    if len(old) > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {len(old)}D")
    return (0, 1) if len(old) == 2 else (0, 0)


# what each in-place view op does to an ndarray, given the old and new shapes and the op's arguments
_NUMPY_VIEWS = {
    "squeeze_": _squeezed,
    "unsqueeze_": lambda a, old, new, dim: np.expand_dims(a, shape.wrap_dim(dim, len(old) + 1)),
    "t_": lambda a, old, new: a.T if len(old) == 2 else a,
    "transpose_": lambda a, old, new, d0, d1: np.swapaxes(a, shape.wrap_dim(d0, len(old)), shape.wrap_dim(d1, len(old))),
}
_NUMPY_VIEWS["swapaxes_"] = _NUMPY_VIEWS["swapdims_"] = _NUMPY_VIEWS["transpose_"]


def _fill_diagonal(self: Tensor, fill_value: Any, wrap: bool = False) -> Any:
    """``fill_diagonal_``'s new value: ``fill_value`` on the main diagonal (of a matrix, or of a
    tensor whose dims are all equal); ``wrap``: a tall matrix's diagonal restarts every ``m + 1``
    rows, as numpy's ``fill_diagonal``."""
    if grad_mode.is_grad_enabled() and self._requires_grad and self._trace is None:
        raise RuntimeError(VIEW_OF_LEAF_ERROR)  # PyTorch writes through a view of the diagonal
    dims = tuple(self.shape)
    if len(dims) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(dims) > 2 and len(set(dims)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(dims, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return math.where(placed(mask, dtypes.bool_, self._device), _fill(self, fill_value), self)


INPLACE = {
    "add_": _inplace(lambda s, o, *deprecated, alpha=1: math.add(s, o, *deprecated, alpha=alpha), "add_"),
    "sub_": _inplace(lambda s, o, *deprecated, alpha=1: math.sub(s, o, *deprecated, alpha=alpha), "sub_"),
    "mul_": _inplace(math.mul, "mul_"),
    "div_": _inplace(math.div, "div_"),
    "zero_": _inplace(lambda s: _fill(s, 0), "zero_"),
    "fill_": _inplace(_fill, "fill_", cast=True, overwrites=True),
    "copy_": _inplace(_copy, "copy_", cast=True, overwrites=True),
    "normal_": _inplace(_normal_draw, "normal_"),
    "uniform_": _inplace(_uniform_draw, "uniform_"),
    "__iadd__": _inplace(math.add, "__iadd__"),
    "__isub__": _inplace(math.sub, "__isub__"),
    "__imul__": _inplace(math.mul, "__imul__"),
    "__itruediv__": _inplace(math.div, "__itruediv__"),
    "__ifloordiv__": _inplace(math.floor_divide, "__ifloordiv__"),
    "__imod__": _inplace(math.remainder, "__imod__"),
    "__ilshift__": _inplace(_integer_inplace(math.bitwise_left_shift), "__ilshift__"),
    "__irshift__": _inplace(_integer_inplace(math.bitwise_right_shift), "__irshift__"),
    "clamp_": _inplace(math.clamp, "clamp_"),
    "clip_": _inplace(math.clamp, "clip_"),
    "masked_fill_": _inplace(indexing.masked_fill, "masked_fill_"),
    "bernoulli_": _inplace(_bernoulli_draw, "bernoulli_"),
    "exponential_": _inplace(_exponential_draw, "exponential_"),
    "log_normal_": _inplace(_log_normal_draw, "log_normal_"),
    "cauchy_": _inplace(_cauchy_draw, "cauchy_"),
    "geometric_": _inplace(_geometric_draw, "geometric_"),
    "random_": _inplace(_random_draw, "random_", cast=True, overwrites=True),
    "scatter_": _inplace(selection.scatter, "scatter_"),
    "scatter_add_": _inplace(indexing.scatter_add, "scatter_add_"),
    "index_add_": _inplace(selection.index_add, "index_add_"),
    "index_copy_": _inplace(selection.index_copy, "index_copy_"),
    "index_fill_": _inplace(selection.index_fill, "index_fill_"),
    "detach_": _detach_,
    "index_put_": _inplace(indexing.index_put, "index_put_"),
    "fill_diagonal_": _inplace(_fill_diagonal, "fill_diagonal_", checked=True),
    "squeeze_": _restride_("squeeze_", shape.squeeze),
    "unsqueeze_": _restride_("unsqueeze_", shape.unsqueeze),
    "t_": _restride_("t_", lambda x: (_t_dims(tuple(x.shape)), shape.t(x))[1]),
    "transpose_": _restride_("transpose_", shape.transpose),
    "swapaxes_": _restride_("swapaxes_", shape.transpose),
    "swapdims_": _restride_("swapdims_", shape.transpose),
}
INPLACE.update({f"{name}_": _inplace(COMMON[name], f"{name}_") for name in _SAME_SHAPE_INPLACE})
INPLACE.update({f"{name}_": _inplace(_integer_inplace(COMMON[name]), f"{name}_") for name in _INTEGER_INPLACE})
INPLACE.update({f"{name}_": _inplace(COMMON[name], f"{name}_", cast=True) for name in _COMPARISONS})


# PyTorch's top-level forms of in-place methods (``torch.exp_(x)`` is ``x.exp_()``)
TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_",
    "i0_", "index_put_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_",
    "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_", "gcd_", "lcm_", "ldexp_",
)


def top_level_inplace() -> dict[str, Any]:
    """``{name: function}`` for ``TOP_LEVEL_INPLACE``: each calls the method on its first argument.

    >>> import tidu
    >>> x = tidu.tensor([0.0, 1.0])
    >>> tidu.exp_(x) is x, x
    (True, tensor([1.0000, 2.7183]))
    """
    def make(name: str) -> Any:
        def fn(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
            return getattr(input, name)(*args, **kwargs)

        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"``input.{name}(...)``: in place, as the method."
        return fn

    return {name: make(name) for name in TOP_LEVEL_INPLACE if hasattr(Tensor, name)}


def _contiguous(self: Tensor, memory_format: Any = formats.contiguous_format) -> Tensor:
    """``self`` when its storage is already in row-major order, else a row-major copy. A
    channels-last ``memory_format`` is checked as PyTorch checks it and gives row-major storage
    too (tidu/core/formats.py).

    >>> import tidu
    >>> x = tidu.zeros(2, 3).t()
    >>> x.is_contiguous(), x.contiguous().is_contiguous()
    (False, True)
    """
    fmt = formats.check_memory_format(formats.as_memory_format(memory_format, "contiguous"), self.ndim, "contiguous")
    if self._data.flags.c_contiguous:
        return self
    if fmt is formats.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self._device.type == "cuda":
        return shape.clone(self)
    return self.reshape(-1).reshape(tuple(self.shape))


def _is_contiguous(self: Tensor, memory_format: Any = formats.contiguous_format) -> bool:
    """Whether the storage holds the elements densely in ``memory_format``'s order (row-major by
    default), by PyTorch's rule on the strides the tensor has.

    >>> import tidu
    >>> x = tidu.zeros(2, 3, 4, 5)
    >>> x.is_contiguous(), x.is_contiguous(memory_format=tidu.channels_last)
    (True, False)
    >>> x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2).is_contiguous(memory_format=tidu.channels_last)
    True
    """
    fmt = formats.as_memory_format(memory_format, "is_contiguous")
    if fmt in (formats.contiguous_format, formats.preserve_format):
        return bool(self._data.flags.c_contiguous)
    return formats.is_contiguous_as(tuple(self.shape), metadata._stride(self), fmt)


def _data_get(self: Tensor) -> Tensor:
    """The storage without autograd: unlike ``detach()``, writes through it are not seen by the
    version counter (PyTorch's ``.data``)."""
    return Tensor(self._data, self._dtype, device=self._device)


def _data_set(self: Tensor, value: Tensor) -> None:
    self._data = value._data
    self._dtype = value._dtype
    self._device = value._device


def _var_detach(self: Var) -> Var:
    """``detach`` of a batched value inside ``vmap``: the batch, detached (the AD transforms run
    on it once lowered to a tensor)."""
    wrap = getattr(self.tracer, "wrap", None)  # a vmap level's (func.batching.BatchTrace)
    if wrap is None:
        raise RuntimeError("detach() of a value inside a JVP or transpose rule: a rule's values are not on the tape")
    return wrap(self.value.detach())


_LEGACY_TYPES = dtypes.LEGACY_TYPES


def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """Without ``dtype``, PyTorch's legacy type name (``'torch.FloatTensor'``, ``'torch.cuda.FloatTensor'``:
    the strings scripts compare with); with one (a dtype or such a name), ``to(dtype)``.

    >>> import tidu
    >>> tidu.zeros(2).type()
    'torch.FloatTensor'
    >>> tidu.zeros(2).type(tidu.int64).dtype, tidu.zeros(2).type(tidu.LongTensor).dtype
    (tidu.int64, tidu.int64)
    """
    place = "torch.cuda." if self._device.type == "cuda" else "torch."
    if isinstance(dtype, LegacyType):  # tidu.FloatTensor, tidu.cuda.LongTensor, ...
        return _to(convert(self, dtype.dtype), "cuda" if dtype.is_cuda else "cpu")
    if dtype is None:
        return place + _LEGACY_TYPES[self.dtype.name]
    if isinstance(dtype, str):
        names = {v: k for k, v in _LEGACY_TYPES.items()}
        name = dtype.removeprefix("torch.").removeprefix("cuda.")
        if name not in names:
            raise ValueError(f"invalid type: '{dtype}'")
        out = convert(self, dtypes.as_dtype(names[name]))
        return _to(out, "cuda" if dtype.startswith("torch.cuda.") else "cpu")
    return convert(self, dtypes.as_dtype(dtype))


def _method_of(module: str, name: str) -> Any:
    """``tensor.<method>(*args)`` as ``<module>.<name>(tensor, *args)``, the module imported at the
    first call (modules built on the ops, which this one cannot import while they load)."""

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module, "tidu"), name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``tidu{module}.{name}(self, ...)``."
    return method


TENSOR_ONLY = {
    "type": _type,
    "resize_": _resize_,
    "resize_as_": _resize_as_,
    "geqrf": _method_of("._householder", "geqrf"),
    "orgqr": _method_of("._householder", "householder_product"),
    "ormqr": _method_of("._householder", "ormqr"),
    "triangular_solve": _method_of("._linalg_ex", "triangular_solve"),
    "untyped_storage": _method_of(".storage", "untyped_storage"),
    "storage": _method_of(".storage", "typed_storage"),
    "hardshrink": _method_of(".nn.functional", "hardshrink"),
    "prelu": _method_of(".nn.functional", "prelu"),
    "new": tensor_new,
    "pin_memory": lambda self, device=None: self,
    "is_pinned": lambda self, device=None: False,
    "share_memory_": lambda self: self,
    "is_shared": lambda self: False,
    **metadata.TENSOR_METHODS,
    **complex.TENSOR_METHODS,
    **creation.RANDOM_METHODS,
    "backward": _backward,
    **INPLACE,
    "contiguous": _contiguous,
    "is_contiguous": _is_contiguous,
    "layout": property(lambda self: formats.strided),
    "cpu": _cpu,
    "cuda": _cuda,
    "data": property(_data_get, _data_set),
}
# on a ``Var`` too (inside ``vmap``, as on torch.func's batched tensors), each its own way
VAR_ONLY = {
    "detach": _var_detach,
    "contiguous": lambda self, memory_format=formats.contiguous_format: self,
    "numel": lambda self: math_prod(self.aval.shape),
    "is_cuda": property(lambda self: self.aval.device == "cuda"),
    **{name: _var_inplace(name) for name in INPLACE},
}
BOTH = {"clone": shape.clone, **creation.TENSOR_METHODS}


def install() -> None:
    for name, fn in {**COMMON, **BOTH}.items():
        setattr(Tensor, name, fn)
        setattr(Var, name, fn)
    for name, fn in TENSOR_ONLY.items():
        setattr(Tensor, name, fn)
    for name, fn in VAR_ONLY.items():
        setattr(Var, name, fn)
    Tensor.__hash__ = lambda self: id(self)  # type: ignore[method-assign]
    Var.__hash__ = lambda self: id(self)  # type: ignore[method-assign]
