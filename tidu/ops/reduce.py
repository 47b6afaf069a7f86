"""Reductions with ``dim`` and ``keepdim``."""

from __future__ import annotations

from math import prod
from typing import Any

from ..core import dtypes
from ..core.primitive import bind
from ..primitives.reduce import reduce_max, reduce_sum
from ..primitives.structural import reshape as reshape_p
from ._operands import convert, wrap_dims

__all__ = ['amax', 'mean', 'sum']

def _keep(out: Any, x: Any, dims: tuple[int, ...]) -> Any:
    shape = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
    return bind(reshape_p, out, new_sizes=shape)


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A001, A002
    """Sum over ``dim`` (all dims by default); bool and integer inputs sum to int64.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tidu.sum(x)
    tensor(10.)
    >>> x.sum(dim=0, keepdim=True)
    tensor([[4., 6.]])
    """
    x = input
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    dims = wrap_dims(dim, x.ndim)
    out = bind(reduce_sum, x, axes=dims)
    return _keep(out, x, dims) if keepdim and x.ndim else out


def mean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """Arithmetic mean over ``dim`` (floating-point inputs).

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0, 6.0]).mean()
    tensor(3.)
    """
    x = input if dtype is None else convert(input, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {x.dtype.name}"
        )
    dims = wrap_dims(dim, x.ndim)
    count = prod(x.shape[d] for d in dims) if x.ndim else 1
    total = sum(x, dim, keepdim)
    return total / count if count else total * float("nan")


def amax(input: Any, dim: Any = (), keepdim: bool = False) -> Any:  # noqa: A002
    """Maximum over ``dim`` (all dims when empty); ties share the gradient evenly.

    >>> import tidu
    >>> tidu.amax(tidu.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=1)
    tensor([5., 7.])
    """
    dims = wrap_dims(None if dim == () else dim, input.ndim)
    out = bind(reduce_max, input, axes=dims)
    return _keep(out, input, dims) if keepdim and input.ndim else out


METHODS = {"sum": sum, "mean": mean, "amax": amax}
