"""Scans with PyTorch's names besides ``cumsum``: ``cumprod``, ``cummax``/``cummin`` and
``logcumsumexp`` (primitives of tidu/primitives/scan.py)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.aval import wrap_dim
from ..core.primitive import bind
from ..primitives import scan as sp
from ._operands import convert, is_value

__all__ = ["cummax", "cummin", "cumprod", "logcumsumexp"]

CummaxResult = namedtuple("cummax", ["values", "indices"])
CumminResult = namedtuple("cummin", ["values", "indices"])


def _line(input: Any, dim: Any, name: str) -> tuple[Any, int]:  # noqa: A002
    """``input`` with at least one dim, and ``dim`` wrapped (a 0-d input scans as one element)."""
    if not is_value(input):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not {type(dim).__name__}")
    d = wrap_dim(dim, input.ndim)
    return (input.reshape(1) if input.ndim == 0 else input), d


def _restore(out: Any, input: Any) -> Any:  # noqa: A002
    return out.reshape(()) if input.ndim == 0 else out


def cumprod(input: Any, dim: int, *, dtype: Any = None) -> Any:  # noqa: A002
    """Running product along ``dim``; bool and integer inputs give int64.

    Gradient: exact with zeros, at every order (the product is the recurrence
    ``y[i] = x[i] y[i-1]``, primitive ``linear_recurrence``, whose derivative is another).

    >>> import tidu
    >>> x = tidu.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> tidu.cumprod(x, 0)
    tensor([2., 0., 0.], grad_fn=<linear_recurrence>)
    >>> x.cumprod(0).sum().backward()
    >>> x.grad
    tensor([1., 8., 0.])
    """
    from .creation import tensor
    from .math import where

    x, d = _line(input, dim, "cumprod")
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    if x.numel() == 0:  # nothing to scan; the recurrence's transpose needs a non-empty line
        return _restore(x * 1, input)
    first = tensor((np.arange(x.shape[d]) == 0).reshape([-1 if i == d else 1 for i in range(x.ndim)]),
                   device=x.device)
    # ``a[0]`` multiplies ``y[-1] = 0``: 0, not ``x[0]``, so that an infinite ``x[0]`` is no ``inf * 0``
    return _restore(bind(sp.linear_recurrence, where(first, 0, x), where(first, x, 0), axis=d, reverse=False), input)


def logcumsumexp(input: Any, dim: int) -> Any:  # noqa: A002
    """``log(cumsum(exp(input), dim))`` as a running ``logaddexp``: no overflow, and ``-inf``
    entries are exact. Floating-point inputs only (as PyTorch).

    Gradient: ``d out[i] = sum_{j <= i} exp(x[j] - out[i]) dx[j]``, as a recurrence whose factors
    are at most 1 (primitives ``logcumsumexp`` and ``linear_recurrence``).

    >>> import tidu
    >>> tidu.logcumsumexp(tidu.tensor([0.0, 0.0, 1000.0]), 0)
    tensor([0.0000e+00, 6.9315e-01, 1.0000e+03])
    """
    x, d = _line(input, dim, "logcumsumexp")
    if not x.dtype.is_floating_point:
        raise dtypes.not_implemented("logcumsumexp_out_cpu", x.dtype)
    if x.numel() == 0:  # as in ``cumprod``
        return _restore(x * 1, input)
    return _restore(bind(sp.logcumsumexp, x, axis=d), input)


def _cumulative_extreme(input: Any, dim: int, largest: bool) -> Any:  # noqa: A002
    from .indexing import gather

    name = "cummax" if largest else "cummin"
    x, d = _line(input, dim, name)
    source = convert(x, dtypes.int32) if x.dtype is dtypes.bool_ else x
    indices = bind(sp.cumulative_arg_extreme, source, axis=d, largest=largest)
    values = gather(x, d, indices)
    result = CummaxResult if largest else CumminResult
    return result(_restore(values, input), _restore(indices, input))


def cummax(input: Any, dim: int) -> Any:  # noqa: A002
    """The running maximum along ``dim`` and its index, a named tuple ``(values, indices)``: of
    equal values the last, and from a NaN on the NaN (the last one). The gradient goes to the
    indexed entries (a gather).

    >>> import tidu
    >>> tidu.cummax(tidu.tensor([1.0, 3.0, 2.0, 3.0]), 0)
    cummax(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
    """
    return _cumulative_extreme(input, dim, True)


def cummin(input: Any, dim: int) -> Any:  # noqa: A002
    """The running minimum along ``dim`` and its index (as ``cummax``).

    >>> import tidu
    >>> tidu.cummin(tidu.tensor([2, 1, 3, 1]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return _cumulative_extreme(input, dim, False)


METHODS = {"cumprod": cumprod, "logcumsumexp": logcumsumexp, "cummax": cummax, "cummin": cummin}
