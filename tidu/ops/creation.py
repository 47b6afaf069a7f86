"""Creating tensors: ``tensor``, ``zeros``, ``ones``, ``randn``, ``arange``, ``from_numpy``."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.device import as_device
from ..tensor import Tensor

__all__ = ['arange', 'as_tensor', 'empty', 'from_numpy', 'full', 'manual_seed', 'ones', 'ones_like', 'rand', 'randn', 'tensor', 'zeros', 'zeros_like']

def _infer_dtype(data: Any) -> dtypes.dtype:
    """PyTorch's inference: Python floats give the default dtype, ints int64, bools bool;
    numpy scalars and tensors inside the data keep their own dtype."""
    found: list[dtypes.dtype] = []

    def walk(x: Any) -> None:
        if isinstance(x, Tensor):
            found.append(x.dtype)
        elif isinstance(x, list | tuple):
            for v in x:
                walk(v)
        elif isinstance(x, np.generic):
            found.append(dtypes.from_numpy_dtype(x.dtype))
        elif isinstance(x, bool | int | float):
            found.append(dtypes.scalar_dtype(x))
        else:
            if isinstance(x, str | bytes):
                raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")

    walk(data)
    if not found:
        return dtypes.get_default_dtype()
    out = found[0]
    for d in found[1:]:
        out = dtypes.promote_types(out, d)
    return out


def _plain(data: Any) -> Any:
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor copied from ``data`` (nested lists, numbers, numpy arrays or tensors).

    Python floats give the default dtype (float32), ints int64, bools bool;
    numpy arrays keep their dtype.

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    >>> tidu.tensor([[1, 2]]).dtype
    tidu.int64
    """
    as_device(device)
    if isinstance(data, np.ndarray):
        inferred = dtypes.from_numpy_dtype(data.dtype)
    elif isinstance(data, Tensor):
        inferred = data.dtype
    else:
        inferred = _infer_dtype(data)
    dt = dtypes.as_dtype(dtype) if dtype is not None else inferred
    try:
        array = np.array(_plain(data), dtype=dt.np, copy=True)
    except ValueError as err:
        raise ValueError(f"tensor(): {err}") from None
    return Tensor(array, dt, requires_grad=requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor``, but shares memory with a tensor or numpy array when it can."""
    if isinstance(data, Tensor) and (dtype is None or dtypes.as_dtype(dtype) is data.dtype):
        return data
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.as_dtype(dtype).np == data.dtype):
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
    return Tensor(ndarray, dtypes.from_numpy_dtype(ndarray.dtype))


def _size(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], list | tuple):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, int | np.integer) or isinstance(s, bool):
            raise TypeError(f"size must be a sequence of ints, got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    return tuple(int(s) for s in size)


def _make(fill: Any, size: tuple, dtype: Any, device: Any, requires_grad: bool, default: Any = None) -> Tensor:
    as_device(device)
    dt = dtypes.as_dtype(dtype) if dtype is not None else (default or dtypes.get_default_dtype())
    return Tensor(np.full(_size(size), fill, dt.np), dt, requires_grad=requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros.

    >>> import tidu
    >>> tidu.zeros(2, 2)
    tensor([[0., 0.],
            [0., 0.]])
    """
    return _make(0, size, dtype, device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones.

    >>> import tidu
    >>> tidu.ones(3, dtype=tidu.int64)
    tensor([1, 1, 1])
    """
    return _make(1, size, dtype, device, requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (its dtype inferred from the value).

    >>> import tidu
    >>> tidu.full((2,), 7)
    tensor([7, 7])
    """
    default = dtypes.scalar_dtype(fill_value)
    return _make(fill_value, (tuple(size),), dtype, device, requires_grad, default)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialized tensor (tidu fills it with zeros)."""
    return _make(0, size, dtype, device, requires_grad)


def zeros_like(input: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    return _make(0, (tuple(input.shape),), dtype or input.dtype, None, requires_grad)


def ones_like(input: Any, *, dtype: Any = None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    return _make(1, (tuple(input.shape),), dtype or input.dtype, None, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``.

    >>> import tidu
    >>> tidu.arange(3)
    tensor([0, 1, 2])
    """
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = dtypes.result_type(start, end, step)
    dt = dtypes.as_dtype(dtype)
    return Tensor(np.arange(start, end, step).astype(dt.np), dt, requires_grad=requires_grad)


class _Generator(threading.local):
    rng: np.random.Generator = np.random.default_rng(0)


_gen = _Generator()


def manual_seed(seed: int) -> None:
    """Seed tidu's random number generator (reproducible within tidu, not PyTorch's stream).

    >>> import tidu
    >>> tidu.manual_seed(0); a = tidu.randn(3)
    >>> tidu.manual_seed(0); bool((tidu.randn(3) == a).sum() == 3)
    True
    """
    _gen.rng = np.random.default_rng(int(seed))


def randn(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples of the standard normal distribution."""
    as_device(device)
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for {dt.name!r}')
    return Tensor(_gen.rng.standard_normal(_size(size), dtype=dt.np), dt, requires_grad=requires_grad)


def rand(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples of the uniform distribution on [0, 1)."""
    as_device(device)
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    return Tensor(_gen.rng.random(_size(size), dtype=dt.np), dt, requires_grad=requires_grad)


METHODS: dict = {}
# Tensor-only methods (not on ``Var`` inside AD rules).
TENSOR_METHODS = {"zeros_like": zeros_like}
