"""Creating tensors: ``tensor``, ``zeros``, ``full``, ``arange``, ``linspace``, ``eye``, random draws.

dtype inference follows PyTorch: Python bools give ``bool``, ints ``int64``, floats the
default dtype; numpy arrays, numpy scalars and tensors keep their own dtype; a nested list
takes the promotion of everything in it.
"""

from __future__ import annotations

import copy
import math
import warnings
from builtins import range as _range  # (``range`` is PyTorch's here)
from typing import Any

import numpy as np
from numba import njit

from ..backends.cpu.fastmath import fma_exact
from ..core import deferred, dtypes, formats
from ..core.device import CPU, as_device, factory_device
from ..core.imports import module
from ..core.printing import set_printoptions
from ..tensor import Tensor, placed

__all__ = [
    "arange", "asarray", "range", "scalar_tensor", "as_tensor", "empty", "empty_like", "empty_strided", "eye",
    "from_numpy", "full",
    "full_like", "linspace", "Generator", "bernoulli", "binomial", "default_generator", "frombuffer", "initial_seed",
    "manual_seed", "multinomial", "ones", "ones_like", "poisson", "rand", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "randperm", "seed", "normal", "logspace",
    "set_printoptions", "tensor", "zeros", "zeros_like",
]


def _infer_dtype(data: Any) -> dtypes.dtype:
    """The dtype ``tensor(data)`` gets: the promotion of every element's own dtype."""
    found: dtypes.dtype | None = None

    first = data
    while isinstance(first, list | tuple) and first:
        first = first[0]
        if isinstance(first, str | bytes):  # PyTorch reads the shape from first elements: a str is a sequence
            raise ValueError(f"too many dimensions '{type(first).__name__}'")

    def walk(x: Any) -> None:
        nonlocal found
        if isinstance(x, Tensor | np.ndarray | np.generic):
            d = x.dtype if isinstance(x, Tensor) else dtypes.from_numpy_dtype(x.dtype)
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v)
            return
        elif isinstance(x, bool | int | float):
            d = dtypes.scalar_dtype(x)
        elif isinstance(x, str | bytes):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        found = d if found is None else dtypes.promote_types(found, d)

    walk(data)
    return found if found is not None else dtypes.get_default_dtype()


def _shape_of(data: Any, dim: int = 0) -> tuple[int, ...]:
    """The shape of nested sequences, with PyTorch's errors for ragged ones."""
    if isinstance(data, Tensor | np.ndarray):
        return tuple(data.shape)
    if not isinstance(data, list | tuple):
        return ()
    if not data:
        return (0,)
    inner = [_shape_of(v, dim + 1) for v in data]
    for v, s in zip(data, inner):
        if s != inner[0]:
            if not isinstance(v, list | tuple | Tensor | np.ndarray):
                raise TypeError("not a sequence")
            got = s[0] if s else 0
            raise ValueError(f"expected sequence of length {inner[0][0]} at dim {dim + 1} (got {got})")
    return (len(data), *inner[0])


def _plain(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._values()
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data


def _check_grad_dtype(dt: dtypes.dtype, requires_grad: bool) -> None:
    if requires_grad and not dt.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor copied from ``data`` (nested lists, numbers, numpy arrays or tensors).

    Python floats give the default dtype (float32), ints int64, bools bool;
    numpy arrays and scalars keep their dtype; mixed lists promote.

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    >>> tidu.tensor([[1, 2]]).dtype, tidu.tensor([1, 2.5]).dtype, tidu.tensor([True, 1]).dtype
    (tidu.int64, tidu.float32, tidu.int64)
    """
    factory_device(device)
    if isinstance(data, _range) or isinstance(data, list | tuple) and data and isinstance(data[0], _range):
        data = list(data) if isinstance(data, _range) else [list(r) if isinstance(r, _range) else r for r in data]
    inferred = _infer_dtype(data)
    dt = dtypes.as_dtype(dtype) if dtype is not None else inferred
    _check_grad_dtype(dt, requires_grad)
    try:
        return _make(_tensor_array(data, dt, inferred), dt, device, requires_grad)
    except OverflowError:  # an int beyond int64
        raise ValueError("Overflow when unpacking long long") from None


def _tensor_array(data: Any, dt: dtypes.dtype, inferred: dtypes.dtype) -> np.ndarray:
    """``tensor(data)``'s array, storing ``dt``."""
    if isinstance(data, np.ndarray | np.generic | Tensor):
        return dtypes.cast(data._values() if isinstance(data, Tensor) else data, dt) if dt.is_half else np.array(
            data._values() if isinstance(data, Tensor) else data, dtype=dt.np, copy=True)
    if dt in dtypes.INTEGERS and inferred is not dt:
        _check_numbers(data, dt)  # then cast, wrapping: uint8 takes -1 as 255, as PyTorch's does
        exact = np.float64 if inferred.is_floating_point else inferred.np
        return dtypes.cast(np.array(_plain(data), dtype=exact).reshape(_shape_of(data)), dt)
    shape = _shape_of(data)
    with np.errstate(over="ignore"):  # 1e39 in float32 is inf, as in PyTorch
        array = np.array(_plain(data), dtype=np.float64 if dt.is_half else dt.np).reshape(shape)
    return dtypes.cast(array, dt) if dt.is_half else array


def _check_numbers(data: Any, dt: dtypes.dtype) -> None:
    """PyTorch's overflow error for a Python number in ``data`` that ``dt`` cannot hold."""
    if isinstance(data, list | tuple):
        for v in data:
            _check_numbers(v, dt)
    elif isinstance(data, int | float):
        dtypes.check_fits(data, dt, dt.name)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor``, but shares memory with a tensor or numpy array when no conversion is needed.

    >>> import tidu, numpy as np
    >>> a = np.zeros(2)
    >>> t = tidu.as_tensor(a); a[0] = 1.0
    >>> t
    tensor([1., 0.], dtype=tidu.float64)
    """
    where = factory_device(device)
    if isinstance(data, Tensor):
        if device is not None and data.device != where:
            data = data.to(where)
        return data if dtype is None or dtypes.as_dtype(dtype) is data.dtype else data.to(dtypes.as_dtype(dtype))
    if hasattr(data, "__cuda_array_interface__") and not isinstance(data, Tensor):
        from ..backends.cuda.memory import CudaArray

        array = CudaArray.from_interface(data)
        deferred.expose(array)
        out = Tensor(array, dtypes.from_numpy_dtype(array.dtype), device=as_device("cuda"))
        if device is not None and where is CPU:
            out = out.cpu()
        return out if dtype is None else out.to(dtypes.as_dtype(dtype))
    if (isinstance(data, np.ndarray) and where is CPU
            and (dtype is None or dtypes.as_dtype(dtype).np == data.dtype and dtypes.as_dtype(dtype) is not dtypes.bfloat16)):
        return from_numpy(data)
    return tensor(data, dtype, device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray``.

    >>> import tidu, numpy as np
    >>> a = np.zeros(2)
    >>> t = tidu.from_numpy(a)
    >>> a[0] = 5
    >>> t
    tensor([5., 0.], dtype=tidu.float64)
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    deferred.expose(ndarray)  # the caller may write it at any time
    return Tensor(ndarray, dtypes.from_numpy_dtype(ndarray.dtype))


def _size(size: tuple, name: str) -> tuple[int, ...]:
    """The dims of a ``*size`` argument (ints, or one list or tuple of them: ``()`` for 0-d); none
    given is an error, as in PyTorch, not a 0-d tensor."""
    if not size:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = tuple(size[0])
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and s.ndim == 0 and not s.dtype.is_floating_point:
            continue
        if not isinstance(s, int | np.integer) or isinstance(s, bool):
            raise TypeError(
                f"{name}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                f'"type must be tuple of ints,but got {type(s).__name__}"'
            )
    dims = tuple(int(s) for s in size)
    negative = [s for s in dims if s < 0]
    if negative and name == "zeros":
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: {list(dims)}")
    return dims


def _dtype(dtype: Any, default: dtypes.dtype | None = None) -> dtypes.dtype:
    return dtypes.as_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())


def _make(array: np.ndarray, dt: dtypes.dtype, device: Any, requires_grad: bool) -> Tensor:
    """A tensor on ``device`` (``None``: the default device) with the values of the host ``array``."""
    where = factory_device(device)
    _check_grad_dtype(dt, requires_grad)
    return placed(array, dt, where).requires_grad_(requires_grad)


def _filled(shape: tuple[int, ...], value: Any, dt: dtypes.dtype, device: Any, requires_grad: bool) -> Tensor:
    """``value`` everywhere; on the GPU by a fill kernel, not a host copy."""
    where = factory_device(device)
    value = dtypes.wrap(value, dt)
    if where is CPU:
        return _make(np.full(shape, value, dt.np) if not dt.is_half else dtypes.cast(np.full(shape, value), dt), dt,
                     where, requires_grad)
    _check_grad_dtype(dt, requires_grad)
    if dt.is_half:
        return placed(dtypes.cast(np.full(shape, value), dt), dt, where).requires_grad_(requires_grad)
    fill = module("tidu.backends.cuda.elementwise").fill
    return Tensor(fill(shape=shape, value=value, dtype=dt), dt, requires_grad=requires_grad, device=where)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          layout: Any = None) -> Tensor:
    """A tensor of zeros.

    >>> import tidu
    >>> tidu.zeros(2, 2)
    tensor([[0., 0.],
            [0., 0.]])
    """
    formats.check_layout(layout, "zeros")
    dt = _dtype(dtype)
    return _filled(_size(size, "zeros"), 0, dt, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         layout: Any = None) -> Tensor:
    """A tensor of ones.

    >>> import tidu
    >>> tidu.ones(3, dtype=tidu.int64)
    tensor([1, 1, 1])
    """
    formats.check_layout(layout, "ones")
    dt = _dtype(dtype)
    return _filled(_size(size, "ones"), 1, dt, device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          layout: Any = None) -> Tensor:
    """An uninitialized tensor (tidu fills it with zeros).

    >>> import tidu
    >>> tidu.empty(2, 0).shape
    tidu.Size([2, 0])
    """
    formats.check_layout(layout, "empty")
    dt = _dtype(dtype)
    return _filled(_size(size, "empty"), 0, dt, device, requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
                  layout: Any = None, pin_memory: bool = False) -> Tensor:
    """``empty(size)``: tidu's storage is row-major, so ``stride`` is checked and then not kept
    (as ``Tensor.new_empty_strided``; docs/guides/pytorch-differences.md).

    >>> import tidu
    >>> tidu.empty_strided((2, 3), (1, 2)).shape
    tidu.Size([2, 3])
    """
    if len(tuple(stride)) != len(tuple(size)):
        raise RuntimeError(f"dimensionality of sizes ({len(tuple(size))}) must match dimensionality of strides "
                           f"({len(tuple(stride))})")
    return empty(*tuple(size), dtype=dtype, device=device, requires_grad=requires_grad, layout=layout)


def _like_options(input: Any, layout: Any, memory_format: Any, op: str) -> None:  # noqa: A002
    """PyTorch's checks of a ``*_like`` factory's ``layout`` and ``memory_format``; the result is
    row-major whichever format is asked for (tidu/core/formats.py)."""
    formats.check_layout(layout, op)
    formats.check_memory_format(memory_format, input.ndim, op)


def _fill_dtype(fill_value: Any) -> dtypes.dtype:
    if isinstance(fill_value, Tensor):
        return fill_value.dtype
    return dtypes.scalar_dtype(fill_value)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         layout: Any = None) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype comes from the value (bool, int64, default float).

    >>> import tidu
    >>> tidu.full((2,), 7), tidu.full((1,), True), tidu.full((1,), 0.5)
    (tensor([7, 7]), tensor([True]), tensor([0.5000]))
    """
    formats.check_layout(layout, "full")
    dt = _dtype(dtype, _fill_dtype(fill_value))
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    dtypes.check_fits(value, dt)
    dims = _size((size,) if isinstance(size, int | np.integer) else (tuple(size),), "full")
    return _filled(dims, value, dt, device, requires_grad)


def zeros_like(input: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
               layout: Any = None, memory_format: Any = None) -> Tensor:
    """Zeros of ``input``'s shape and dtype.

    >>> import tidu
    >>> tidu.zeros_like(tidu.tensor([1, 2]))
    tensor([0, 0])
    """
    _like_options(input, layout, memory_format, "zeros_like")
    dt = _dtype(dtype, input.dtype)
    return _filled(tuple(input.shape), 0, dt, input.device if device is None else device, requires_grad)


def ones_like(input: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
              layout: Any = None, memory_format: Any = None) -> Tensor:
    """Ones of ``input``'s shape and dtype.

    >>> import tidu
    >>> tidu.ones_like(tidu.zeros(2, dtype=tidu.float64))
    tensor([1., 1.], dtype=tidu.float64)
    """
    _like_options(input, layout, memory_format, "ones_like")
    dt = _dtype(dtype, input.dtype)
    return _filled(tuple(input.shape), 1, dt, input.device if device is None else device, requires_grad)


def empty_like(input: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
               layout: Any = None, memory_format: Any = None) -> Tensor:
    """An uninitialized tensor of ``input``'s shape and dtype (tidu fills it with zeros).

    >>> import tidu
    >>> tidu.empty_like(tidu.ones(2, 3)).shape
    tidu.Size([2, 3])
    """
    _like_options(input, layout, memory_format, "empty_like")
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False,
              layout: Any = None, memory_format: Any = None) -> Tensor:
    """``fill_value`` in ``input``'s shape and dtype (the value is cast to it).

    >>> import tidu
    >>> tidu.full_like(tidu.tensor([1, 2]), 2.7)
    tensor([2, 2])
    """
    _like_options(input, layout, memory_format, "full_like")
    dt = _dtype(dtype, input.dtype)
    value = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    dtypes.check_fits(value, dt)
    return _filled(tuple(input.shape), value, dt, input.device if device is None else device, requires_grad)


def _is_float(x: Any) -> bool:
    if isinstance(x, Tensor):
        return x.dtype.is_floating_point
    return isinstance(x, float | np.floating)


def _number(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``: int64 unless an argument is a float.

    >>> import tidu
    >>> tidu.arange(3), tidu.arange(0, 1, 0.25)
    (tensor([0, 1, 2]), tensor([0.0000, 0.2500, 0.5000, 0.7500]))
    """
    if end is None:
        start, end = 0, start
    floating = any(_is_float(v) for v in (start, end, step))
    dt = _dtype(dtype, dtypes.get_default_dtype() if floating else dtypes.int64)
    start, end, step = _number(start), _number(end), _number(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = max(0, math.ceil((end - start) / step))
    if floating or dt.is_floating_point:
        values = start + np.arange(n, dtype=np.float64) * step
    else:
        values = start + np.arange(n, dtype=np.int64) * step
    return _make(dtypes.cast(values, dt), dt, device, requires_grad)


# shadows the builtin in this module from here on (nothing below uses it)
def range(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,  # noqa: A001
          requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` *inclusive* by ``step``, in the default float dtype unless
    ``dtype`` is given. Deprecated in PyTorch, which warns (as tidu does) and points to ``arange``.

    >>> import tidu, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.range(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    dt = _dtype(dtype)
    start, end, step = _number(start), _number(end), _number(step)
    if not dt.is_floating_point:
        start, end, step = int(start), int(end), int(step)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    values = start + np.arange(n, dtype=np.float64 if dt.is_floating_point else np.int64) * step
    return _make(dtypes.cast(values, dt), dt, device, requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the number ``s``, in the default float dtype unless ``dtype`` is given.

    >>> import tidu
    >>> tidu.scalar_tensor(3), tidu.scalar_tensor(3, dtype=tidu.int64)
    (tensor(3.), tensor(3))
    """
    dt = _dtype(dtype)
    return _make(dtypes.cast(np.array(_number(s)), dt), dt, device, requires_grad)


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    """``obj`` as a tensor, sharing its memory where it can (a tensor, a numpy array, an object
    with ``__cuda_array_interface__``) unless ``copy=True``; ``copy=False`` raises where it can't.
    A tensor that needs no conversion comes back itself.

    >>> import tidu, numpy as np
    >>> a = np.zeros(2)
    >>> t = tidu.asarray(a); a[0] = 1.0
    >>> t, tidu.asarray([1, 2]), tidu.asarray(a, copy=True) is t
    (tensor([1., 0.], dtype=tidu.float64), tensor([1, 2]), False)
    """
    if copy:
        out = tensor(obj, dtype, device)
    else:
        out = as_tensor(obj, dtype, device)
        shares = isinstance(obj, Tensor | np.ndarray) or hasattr(obj, "__cuda_array_interface__")
        if copy is False and not (shares and (out is obj or _address(out) == _address(obj))):
            raise ValueError("can't alias the given data: a copy is needed (the dtype, the device or the type "
                             "differs); pass copy=None or copy=True")
    if requires_grad:
        out.requires_grad_(True)
    return out


def _address(x: Any) -> int | None:
    data = x._buf if isinstance(x, Tensor) else x
    return data.ctypes.data if isinstance(data, np.ndarray) else getattr(data, "ptr", None)


def linspace(start: Any, end: Any, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (default float dtype).

    >>> import tidu
    >>> tidu.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    if not isinstance(steps, int | np.integer) or isinstance(steps, bool):
        raise TypeError(f"linspace(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dtype(dtype)
    start, end = _number(start), _number(end)
    if dt in dtypes.INTEGERS:  # PyTorch casts the ends to the dtype first (uint8 takes -1 as 255)
        for bound in (start, end):
            dtypes.check_fits(bound, dt)
        start, end = (dtypes.cast(np.array(dtypes.wrap(v, dt)), dt).item() for v in (start, end))
    start, end = float(start), float(end)
    if dt in (dtypes.float32, dtypes.float64) and steps > 1:
        return _make(fused_linspace(start, end, steps, dt.np), dt, device, requires_grad)
    i = np.arange(steps, dtype=np.float64)
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    half = steps // 2
    if dt.is_half:  # PyTorch's half linspace computes in the dtype: each product and sum rounded to it

        def rounded(v: Any) -> Any:
            return dtypes.to_float32(dtypes.cast(v, dt), dt)

        step = rounded(np.float32(step))
        first = rounded(np.float32(start) + rounded(i.astype(np.float32) * step))
        second = rounded(np.float32(end) - rounded((steps - 1 - i).astype(np.float32) * step))
        values = np.where((i < half) | (steps == 1), first, second)
    else:
        values = np.where((i < half) | (steps == 1), start + i * step, end - (steps - 1 - i) * step)
    return _make(dtypes.cast(values, dt), dt, device, requires_grad)


def fused_linspace(start: float, end: float, steps: int, dt: np.dtype) -> np.ndarray:
    """``steps`` (> 1) values from ``start`` to ``end`` in the float dtype ``dt``, each rounded
    once, as PyTorch's ``linspace`` makes them: ``start + i * step`` up to half way, ``end - (n-1-i)
    * step`` after, each a fused multiply-add (its x86 build contracts them) in ``dt``.

    >>> fused_linspace(0.0, 1.0, 5, np.dtype(np.float32)).tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    f = dt.type
    first, last = f(start), f(end)
    out = np.empty(steps, dt)
    _fused_linspace(first, last, (last - first) / f(steps - 1), out)
    return out


@njit(cache=True)
def _fused_linspace(start, end, step, out):  # noqa: ANN001, ANN202
    """PyTorch's ``linspace`` into ``out``: ``start + i * step`` up to half way, ``end - (n-1-i) * step``
    after, each one fused multiply-add (its x86 build contracts them), in the operands' float type."""
    n = out.size
    for i in _range(n):  # (``range`` is PyTorch's in this module)
        if i < n // 2:
            out[i] = fma_exact(step, type(step)(i), start)
        else:
            out[i] = fma_exact(-step, type(step)(n - 1 - i), end)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The ``n`` x ``m`` identity matrix (``m`` defaults to ``n``).

    >>> import tidu
    >>> tidu.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    m = n if m is None else m
    for name, v in (("n", n), ("m", m)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _dtype(dtype)
    return _make(dtypes.cast(np.eye(n, m), dt), dt, device, requires_grad)


# --- random numbers --------------------------------------------------------------------------
class Generator:
    """A stream of random numbers (numpy's PCG64) that the random functions take as
    ``generator=``: seeded apart from tidu's default stream, so drawing from one leaves the other
    where it was. Reproducible within tidu, not PyTorch's stream. ``get_state``/``set_state`` take
    numpy's state of the stream (a dict).

    >>> import tidu
    >>> g = tidu.Generator().manual_seed(7)
    >>> a = tidu.rand(3, generator=g)
    >>> bool((tidu.rand(3, generator=g.manual_seed(7)) == a).all()), g.initial_seed()
    (True, 7)
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = as_device(device)
        self.manual_seed(67280421310721)  # PyTorch's default initial seed

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seed from fresh entropy; the seed it took."""
        seed = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return copy.deepcopy(self.rng.bit_generator.state)

    def set_state(self, state: dict) -> Generator:
        self.rng.bit_generator.state = copy.deepcopy(state)
        return self

    def __repr__(self) -> str:
        return f"<tidu.Generator seed={self._seed}>"


default_generator = Generator().manual_seed(0)


def _check_vmap_randomness(modes: list[str]) -> None:
    """A random op inside ``vmap``: PyTorch's error under ``randomness='error'`` (the default);
    under ``'same'`` the draw is one for every example, which is what tidu's random ops make
    (they are not batched), so ``'different'``, which would need a draw per example, is refused."""
    if "error" in modes:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation "
                           "out of vmap")
    if "different" in modes:
        raise NotImplementedError("vmap(randomness='different'): tidu's random ops draw one value shared by every "
                                  "example; use randomness='same', or draw the batch's values outside vmap")


def generator() -> np.random.Generator:
    """The numpy stream of tidu's default generator (seeded by ``manual_seed``)."""
    return default_generator.rng


def _stream(generator: Any) -> np.random.Generator:
    """The numpy stream to draw from: the default generator's (``None``), a ``Generator``'s, or a
    numpy ``Generator`` itself. Inside ``vmap`` a draw follows its ``randomness``
    (``_check_vmap_randomness``)."""
    modes = module("tidu.func.batching").RANDOMNESS
    if modes:
        _check_vmap_randomness(modes)
    if generator is None:
        return default_generator.rng
    if isinstance(generator, Generator):
        return generator.rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a tidu.Generator or a numpy.random.Generator (or None for tidu's), "
                    f"not {type(generator).__name__}")


def manual_seed(seed: int) -> Generator:
    """Seed tidu's default generator (reproducible within tidu, not PyTorch's stream); returns it.

    >>> import tidu
    >>> _ = tidu.manual_seed(0); a = tidu.randn(3)
    >>> _ = tidu.manual_seed(0); bool((tidu.randn(3) == a).sum() == 3)
    True
    """
    return default_generator.manual_seed(seed)


def initial_seed() -> int:
    """The seed of tidu's default generator.

    >>> import tidu
    >>> _ = tidu.manual_seed(3); tidu.initial_seed()
    3
    """
    return default_generator.initial_seed()


def seed() -> int:
    """Seed tidu's default generator from fresh entropy; the seed it took."""
    return default_generator.seed()


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:  # noqa: A002
    """0 or 1 for each entry, 1 with the entry's probability (or ``p`` for every entry), in
    ``input``'s floating-point dtype and on its device; not differentiable.

    >>> import tidu
    >>> tidu.bernoulli(tidu.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
    probs = np.full(tuple(input.shape), float(p)) if p is not None else input._values()
    if not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    draws = _stream(generator).random(probs.shape) < probs
    return _make(dtypes.cast(draws, input.dtype), input.dtype, input.device, False)


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """A Poisson draw for each rate in ``input``, in its dtype and on its device. As in PyTorch,
    the result is differentiable in the rates with a zero gradient.

    >>> import tidu
    >>> tidu.poisson(tidu.tensor([0.0, 0.0]))
    tensor([0., 0.])
    """
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented("poisson_cpu", input.dtype)
    rates = input._values()
    if not (rates >= 0).all():  # NaN too
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    try:
        draws = _stream(generator).poisson(rates)
    except ValueError as exc:  # numpy's limit on the rate
        raise RuntimeError(f"invalid Poisson rate: {exc}") from None
    out = _make(dtypes.cast(draws, input.dtype), input.dtype, input.device, False)
    return out + input * 0.0 if input.requires_grad else out


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """The number of successes in ``count`` trials of probability ``prob`` (broadcast together), in
    ``count``'s floating-point dtype; counts below 0 give 0 and probabilities are clipped to
    [0, 1], as PyTorch's kernel does. Not differentiable.

    >>> import tidu
    >>> tidu.binomial(tidu.tensor([3.0, 5.0]), tidu.tensor([1.0, 0.0]))
    tensor([3., 0.])
    """
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{dtypes.TORCH_NAMES[count.dtype.name]}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {dtypes.TORCH_NAMES[prob.dtype.name]} but expected "
                           f"{dtypes.TORCH_NAMES[count.dtype.name]}")
    n, p = np.broadcast_arrays(count._values(), prob._values())
    draws = _stream(generator).binomial(np.maximum(np.nan_to_num(n), 0).astype(np.int64), np.clip(p, 0.0, 1.0))
    return _make(dtypes.cast(draws, count.dtype), count.dtype, count.device, False)


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0, requires_grad: bool = False) -> Tensor:
    """A 1-D tensor sharing memory with a Python buffer (``bytearray``, ``array.array``, ``mmap``...),
    ``count`` items of ``dtype`` from byte ``offset`` (all that fit by default).

    >>> import array, tidu
    >>> tidu.frombuffer(array.array("i", [1, 2, 3]), dtype=tidu.int32)
    tensor([1, 2, 3], dtype=tidu.int32)
    """
    dt = dtypes.as_dtype(dtype)
    nbytes, size = memoryview(buffer).nbytes, dt.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({nbytes} bytes) minus 1")
    if count < 0 and (nbytes - offset) % size:
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
                         f"multiple of element size ({size})")
    if count > 0 and offset + count * size > nbytes:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({nbytes} bytes)")
    array = np.frombuffer(buffer, dt.np, count if count > 0 else -1, offset)
    if not array.flags.writeable:
        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. "
                      "This means you can write to the underlying (supposedly non-writable) buffer using the "
                      "tensor.", UserWarning, stacklevel=2)
    deferred.expose(array)  # the buffer's owner may write it at any time
    out = Tensor(array, dt)
    return out.requires_grad_(requires_grad) if requires_grad else out


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator: Any = None) -> Tensor:
    """Indices drawn from the categorical distribution each row of ``input`` weights (1-D or 2-D,
    non-negative, not necessarily normalized): ``num_samples`` a row, with or without
    replacement; int64, not differentiable.

    >>> import tidu
    >>> tidu.multinomial(tidu.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
    tensor([1, 1])
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]}")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    weights = input._values().astype(np.float64).reshape(-1, input.shape[-1])
    if not replacement and num_samples > weights.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not np.isfinite(weights).all() or (weights < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(axis=1)
    if (totals <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    stream = _stream(generator)
    rows = [stream.choice(weights.shape[1], num_samples, replace=replacement, p=row / total)
            for row, total in zip(weights, totals)]
    out = np.stack(rows).astype(np.int64).reshape((*input.shape[:-1], num_samples))
    return _make(out, dtypes.int64, input.device, False)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1`` (int64 by default).

    >>> import tidu
    >>> sorted(tidu.randperm(4).tolist())
    [0, 1, 2, 3]
    """
    if not isinstance(n, int | np.integer) or n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    dt = _dtype(dtype, dtypes.int64)
    return _make(dtypes.cast(_stream(generator).permutation(int(n)), dt), dt, device, requires_grad)


def _float_dtype(dtype: Any, kernel: str) -> dtypes.dtype:
    dt = _dtype(dtype)
    if not dt.is_floating_point:
        raise dtypes.not_implemented(kernel, dt)
    return dt


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Samples of the standard normal distribution.

    >>> import tidu
    >>> tidu.randn(2, 3).shape
    tidu.Size([2, 3])
    """
    dt = _float_dtype(dtype, "normal_kernel_cpu")
    return _make(dtypes.cast(_stream(generator).standard_normal(_size(size, "randn")), dt), dt, device, requires_grad)


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Samples of the uniform distribution on [0, 1).

    >>> import tidu
    >>> u = tidu.rand(100).numpy()
    >>> bool(u.min() >= 0 and u.max() < 1)
    True
    """
    dt = _float_dtype(dtype, "check_uniform_bounds")
    return _make(dtypes.cast(_stream(generator).random(_size(size, "rand")), dt), dt, device, requires_grad)


def randn_like(input: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
               layout: Any = None, memory_format: Any = None) -> Tensor:
    """Standard normal samples of ``input``'s shape and dtype.

    >>> import tidu
    >>> tidu.randn_like(tidu.zeros(2, dtype=tidu.float64)).dtype
    tidu.float64
    """
    _like_options(input, layout, memory_format, "randn_like")
    return randn(tuple(input.shape), dtype=dtype or input.dtype, device=input.device if device is None else device,
                 requires_grad=requires_grad)


def rand_like(input: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,  # noqa: A002
              layout: Any = None, memory_format: Any = None) -> Tensor:
    """Uniform [0, 1) samples of ``input``'s shape and dtype.

    >>> import tidu
    >>> tidu.rand_like(tidu.zeros(3)).shape
    tidu.Size([3])
    """
    _like_options(input, layout, memory_format, "rand_like")
    return rand(tuple(input.shape), dtype=dtype or input.dtype, device=input.device if device is None else device,
                requires_grad=requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Any = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Random integers in ``[low, high)`` (``randint(high, size)`` starts at 0); int64 by default.

    >>> import tidu
    >>> x = tidu.randint(2, 5, (100,))
    >>> x.dtype, sorted(set(x.tolist()))
    (tidu.int64, [2, 3, 4])
    """
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = _dtype(dtype, dtypes.int64)
    if dt in dtypes.INTEGERS:
        info = np.iinfo(dt.np)
        c_type = dtypes.C_TYPES[dt.name]
        if low < info.min:
            raise RuntimeError(f"from is out of bounds for {c_type}")
        if high - 1 > info.max:
            raise RuntimeError(f"to - 1 is out of bounds for {c_type}")
    shape = _size((size,) if isinstance(size, int) else (tuple(size),), "randint")
    draws = _stream(generator).integers(low, high, size=shape)
    return _make(dtypes.cast(draws, dt), dt, device, requires_grad)



def randint_like(input: Any, low: int = 0, high: Any = None, *, dtype: Any = None, device: Any = None,  # noqa: A002
                 requires_grad: bool = False,
                 layout: Any = None, memory_format: Any = None) -> Tensor:
    """``randint`` of ``input``'s shape and dtype (``randint_like(x, high)`` starts at 0).

    >>> import tidu
    >>> tidu.randint_like(tidu.zeros(3), 5).dtype
    tidu.float32
    """
    _like_options(input, layout, memory_format, "randint_like")
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=input.device if device is None else device, requires_grad=requires_grad)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Normal samples of the given ``mean`` and ``std`` (tensors, broadcast, or numbers with a
    ``size``). As in PyTorch, the result of tensor arguments is in their graph with a zero gradient.

    >>> import tidu
    >>> tidu.normal(2.0, 3.0, size=(2, 3)).shape
    tidu.Size([2, 3])
    >>> tidu.normal(tidu.zeros(4), 1.0).shape
    tidu.Size([4])
    """
    from . import math
    from ._operands import broadcast_shapes

    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected a Tensor mean or std, or a size")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        dt = _float_dtype(dtype, "normal_kernel_cpu")
        draws = _stream(generator).normal(mean, std, _size((size,) if isinstance(size, int) else (tuple(size),),
                                                             "normal"))
        return _make(dtypes.cast(draws, dt), dt, device, requires_grad)
    like = tensors[0]
    if not all(t.dtype.is_floating_point for t in tensors):
        raise dtypes.not_implemented("normal_kernel_cpu", next(t.dtype for t in tensors if not t.dtype.is_floating_point))
    sd = std._values() if isinstance(std, Tensor) else np.asarray(std)
    if (sd < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")
    mu = mean._values() if isinstance(mean, Tensor) else np.asarray(mean)
    shape = tuple(broadcast_shapes(mu.shape, sd.shape, op="normal"))
    dt = dtypes.result_type(*tensors)
    draws = _stream(generator).standard_normal(shape) * sd + mu
    value = placed(dtypes.cast(draws, dt), dt, like.device)
    if not any(t.requires_grad for t in tensors):
        return value
    # in the graph with a zero gradient, as PyTorch's: a ``where`` that never takes the inputs
    inputs = tensors[0] if len(tensors) == 1 else math.add(math.mul(mean, 0.0), math.mul(std, 0.0))
    never = full(tuple(value.shape), False, dtype=dtypes.bool_, device=like.device)
    return math.where(never, inputs, value)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``.

    >>> import tidu
    >>> tidu.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    dt = _dtype(dtype)
    exponents = linspace(start, end, steps, dtype=dtypes.float64)._host()
    return _make(dtypes.cast(np.power(float(base), exponents), dt), dt, device, requires_grad)


def _new(fill: Any, name: str) -> Any:
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        dt = _dtype(dtype, self.dtype)
        return _filled(_size(size, name), fill, dt, self.device if device is None else device, requires_grad)

    method.__name__ = method.__qualname__ = name
    return method


def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=dtype or self.dtype, device=self.device if device is None else device,
                requires_grad=requires_grad)


def _new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
                requires_grad: bool = False) -> Tensor:
    """``tensor(data)``, with this tensor's dtype unless ``dtype`` is given."""
    return tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else device,
                  requires_grad=requires_grad)


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                       requires_grad: bool = False) -> Tensor:
    """``new_empty(size)``: tidu's storage is row-major, so ``stride`` is checked, not kept."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    return _new(0, "new_empty_strided")(self, size, dtype=dtype, device=device, requires_grad=requires_grad)


METHODS: dict = {}
# methods of tensors and of ``Var`` s (inside ``vmap``: per-example shape, unbatched, as torch.func)
TENSOR_METHODS = {
    "zeros_like": zeros_like,
    "new_zeros": _new(0, "new_zeros"), "new_ones": _new(1, "new_ones"), "new_empty": _new(0, "new_empty"), "new_full": _new_full,
    "new_tensor": _new_tensor, "new_empty_strided": _new_empty_strided,
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "element_size": lambda self: self.dtype.itemsize,
}
# methods that draw from a tensor's values (not a ``Var``'s, inside ``vmap``)
RANDOM_METHODS = {"bernoulli": bernoulli, "multinomial": multinomial}
