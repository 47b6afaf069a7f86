"""Reductions with ``dim`` and ``keepdim``, and ``cumsum``: PyTorch's names and edge cases.

Composed from ``reduce_sum``, ``reduce_max``, ``reduce_prod``, ``argmax``/``argmin``,
``cumsum`` and ``argsort`` (``sort`` and ``topk``: a gather by its indices); ``dim`` is an int or a tuple (negative counts from the end, ``None`` or ``()``
reduces every dim).
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections import namedtuple
from math import prod as _size
from typing import Any

from ..core import dtypes
from ..core.autocast import policy as autocast_policy
from ..core.aval import wrap_dim
from ..core.dispatch import bind_one
from ..core.half import computed_in_float32
from ..core.primitive import bind
from ..primitives import reduce as rp
from ..primitives.structural import reshape as reshape_p
from ..tensor import SHORT_PATH_TYPES, Tensor
from ._operands import convert, is_value, kept_constant, wrap_dims

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "argsort", "cumsum", "logsumexp", "max", "mean", "min", "norm",
    "prod", "sort", "std", "sum", "topk", "var", "corrcoef", "cov",
]

# ``torch.return_types.max``/``min``: a named tuple of ``values`` and ``indices``.
MaxResult = namedtuple("max", ["values", "indices"])
MinResult = namedtuple("min", ["values", "indices"])


def _every(dim: Any) -> bool:
    return dim is None or (isinstance(dim, tuple | list) and not dim)


def _dims(dim: Any, ndim: int) -> tuple[int, ...]:
    return wrap_dims(None if _every(dim) else dim, ndim)


def _keep(out: Any, x: Any, dims: tuple[int, ...]) -> Any:
    shape = tuple(1 if d in dims else s for d, s in enumerate(x.shape))
    return bind_one(reshape_p, out, {"new_sizes": shape})


def _finish(out: Any, x: Any, dims: tuple[int, ...], keepdim: bool) -> Any:
    return _keep(out, x, dims) if keepdim and x.ndim else out


def _check(x: Any, name: str) -> None:
    if not is_value(x):
        raise TypeError(f"{name}(): argument 'input' must be Tensor, not {type(x).__name__}")


def _int_dim(dim: Any, name: str) -> None:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")


def _float_input(x: Any, name: str, dtype: Any = None) -> Any:
    if dtype is not None:
        return convert(x, dtypes.as_dtype(dtype))
    return x if x.dtype.is_floating_point else convert(x, dtypes.get_default_dtype())


_EVERY_AXIS = tuple({"axes": tuple(range(n))} for n in range(9))  # ``reduce_sum``'s params of a full sum, by rank


def sum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A001, A002
    """Sum over ``dim`` (all dims by default); bool and integer inputs sum to int64.

    The gradient is the output cotangent broadcast back (``reduce_sum`` is linear).

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tidu.sum(x)
    tensor(10.)
    >>> x.sum(dim=0, keepdim=True)
    tensor([[4., 6.]])
    >>> tidu.tensor([True, True, False]).sum()
    tensor(2)
    """
    if dim is None and dtype is None and not keepdim and type(input) in SHORT_PATH_TYPES and input._dtype.is_floating_point:
        ndim = input._buf.ndim  # the loss's full sum, its params made once per rank
        if ndim < len(_EVERY_AXIS):
            return bind_one(rp.reduce_sum, input, _EVERY_AXIS[ndim])
    _check(input, "sum")
    x = input
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    dims = _dims(dim, x.ndim)
    return _finish(bind_one(rp.reduce_sum, x, {"axes": dims}), x, dims, keepdim)


@computed_in_float32
def mean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """Arithmetic mean over ``dim`` (floating-point inputs, or give ``dtype``); empty -> nan.

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0, 6.0]).mean()
    tensor(3.)
    >>> tidu.tensor([[1, 2], [3, 5]]).mean(dim=1, dtype=tidu.float64)
    tensor([1.5000, 4.0000], dtype=tidu.float64)
    """
    _check(input, "mean")
    x = input if dtype is None else convert(input, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {dtypes.TORCH_NAMES[x.dtype.name]}"
        )
    dims = _dims(dim, x.ndim)
    count = _size(x.shape[d] for d in dims)
    total = sum(x, dims, keepdim)
    if not count:
        return total * float("nan")
    # the count is a number to PyTorch's backward, not a saved tensor: kept on release
    return total / kept_constant(count, total.dtype, total, tuple(total.shape))


@autocast_policy("fp32")
def prod(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """Product over one ``dim`` (or all elements); integers and bool multiply in int64.

    The gradient (``reduce_prod``) is exact with zeros in the input: with one zero only that
    entry gets a gradient (the product of the others), with two or more none does.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0], [0.0, 4.0]], requires_grad=True)
    >>> x.prod(dim=1)
    tensor([2., 0.], grad_fn=<reduce_prod>)
    >>> x.prod().backward()
    >>> x.grad
    tensor([[0., 0.],
            [8., 0.]])
    """
    _check(input, "prod")
    x = input
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    if dim is not None:
        _int_dim(dim, "prod")
    dims = _dims(dim, x.ndim)
    return _finish(bind(rp.reduce_prod, x, axes=dims), x, dims, keepdim)


def _empty_full(x: Any, name: str) -> None:
    if _size(x.shape) == 0:
        exc = IndexError if name.startswith("arg") else RuntimeError
        raise exc(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction "
            "dim with the 'dim' argument."
        )


def _empty_dims(x: Any, dims: tuple[int, ...], name: str) -> None:
    for d in dims:
        if x.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def amax(input: Any, dim: Any = (), keepdim: bool = False) -> Any:  # noqa: A002
    """Maximum over ``dim`` (all dims when empty); ties share the gradient evenly.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> tidu.amax(x, dim=1)
    tensor([5., 7.])
    >>> x = tidu.tensor([3.0, 1.0, 3.0], requires_grad=True)
    >>> x.amax().backward()
    >>> x.grad
    tensor([0.5000, 0.0000, 0.5000])
    """
    dims = _extremum_dims(input, dim, "amax")
    if input.dtype is dtypes.bool_:
        return convert(amax(convert(input, dtypes.int32), dim, keepdim), dtypes.bool_)
    return _finish(bind_one(rp.reduce_max, input, {"axes": dims}), input, dims, keepdim)


def amin(input: Any, dim: Any = (), keepdim: bool = False) -> Any:  # noqa: A002
    """Minimum over ``dim`` (all dims when empty); ties share the gradient evenly.

    >>> import tidu
    >>> tidu.amin(tidu.tensor([[1.0, 5.0], [7.0, 2.0]]), dim=0)
    tensor([1., 2.])
    """
    dims = _extremum_dims(input, dim, "amin")
    if input.dtype is dtypes.bool_:
        return convert(amin(convert(input, dtypes.int32), dim, keepdim), dtypes.bool_)
    if not input.dtype.is_floating_point:  # ~x reverses the order of integers without overflow (-x wraps)
        return ~_finish(bind(rp.reduce_max, ~input, axes=dims), input, dims, keepdim)
    return -_finish(bind(rp.reduce_max, -input, axes=dims), input, dims, keepdim)


def _extremum_dims(input: Any, dim: Any, name: str) -> tuple[int, ...]:  # noqa: A002
    """``amax``'s and ``amin``'s reduced dims, after PyTorch's checks: a tensor, and no empty
    reduction (of the whole tensor, or along an empty dim)."""
    _check(input, name)
    dims = _dims(dim, input.ndim)
    if _every(dim):
        _empty_full(input, name)
    _empty_dims(input, dims, name)
    return dims


def _arg(prim: Any, x: Any, dim: Any, keepdim: bool, name: str) -> Any:
    _check(x, name)
    if x.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        _empty_full(x, name)
        out = bind(prim, bind(reshape_p, x, new_sizes=(_size(x.shape),)), axis=0)
        return bind(reshape_p, out, new_sizes=(1,) * x.ndim) if keepdim else out
    _int_dim(dim, name)
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return bind(reshape_p, bind(prim, bind(reshape_p, x, new_sizes=(1,)), axis=0), new_sizes=())
    out = bind(prim, x, axis=d)
    return _finish(out, x, (d,), keepdim)


def argmax(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """Index (int64) of the first maximum along ``dim``, or in the flattened input; a NaN counts
    as the maximum. Not differentiable.

    >>> import tidu
    >>> tidu.argmax(tidu.tensor([[1.0, 9.0, 9.0], [4.0, 2.0, 0.0]]), dim=1)
    tensor([1, 0])
    >>> tidu.tensor([[1.0, 9.0], [4.0, 2.0]]).argmax()
    tensor(1)
    """
    return _arg(rp.argmax, input, dim, keepdim, "argmax")


def argmin(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """Index (int64) of the first minimum along ``dim``, or in the flattened input. Not
    differentiable.

    >>> import tidu
    >>> tidu.argmin(tidu.tensor([[1.0, 0.0], [4.0, 2.0]]), dim=0, keepdim=True)
    tensor([[0, 0]])
    """
    return _arg(rp.argmin, input, dim, keepdim, "argmin")


def _at_index(x: Any, index: Any, d: int) -> Any:
    """``x`` at ``index`` along dim ``d`` (index keeps ``d`` as size 1); the gradient goes to
    that one entry."""
    from .creation import arange
    from .math import where

    iota = bind(reshape_p, arange(x.shape[d], device=x.device), new_sizes=tuple(s if i == d else 1 for i, s in enumerate(x.shape)))
    hit = iota == index
    return bind(rp.reduce_sum, where(hit, x, 0), axes=(d,))


def _max_min(x: Any, dim: Any, other: Any, keepdim: bool, name: str) -> Any:
    _check(x, name)
    if dim is None and other is None:
        return amax(x) if name == "max" else amin(x)
    if is_value(dim) or is_value(other):
        from . import math as m

        rhs = other if other is not None else dim
        return m.maximum(x, rhs) if name == "max" else m.minimum(x, rhs)
    _int_dim(dim, name)
    d = wrap_dim(dim, x.ndim)
    result = MaxResult if name == "max" else MinResult
    if x.ndim == 0:
        return result(x, bind(reshape_p, bind(rp.argmax, bind(reshape_p, x, new_sizes=(1,)), axis=0), new_sizes=()))
    _empty_dims(x, (d,), name)
    arg = rp.argmax if name == "max" else rp.argmin
    index = bind(arg, x if x.dtype is not dtypes.bool_ else convert(x, dtypes.int32), axis=d)
    kept = _keep(index, x, (d,))
    if x.dtype.is_floating_point:
        values = _at_index(x, kept, d)
    else:
        values = amax(x, d) if name == "max" else amin(x, d)
    return result(_finish(values, x, (d,), keepdim), kept if keepdim else index)


def max(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001, A002
    """The maximum of all elements (ties share the gradient evenly), or with ``dim`` the named
    tuple ``(values, indices)`` (the whole gradient goes to the returned index), or with a
    tensor as second argument the elementwise ``maximum``.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.max()
    tensor(7.)
    >>> values, indices = x.max(dim=1)
    >>> values, indices
    (tensor([5., 7.]), tensor([1, 0]))
    >>> tidu.max(x, tidu.tensor([3.0, 3.0]))
    tensor([[3., 5.],
            [7., 3.]])
    """
    return _max_min(input, dim, other, keepdim, "max")


def min(input: Any, dim: Any = None, keepdim: bool = False, *, other: Any = None) -> Any:  # noqa: A001, A002
    """The minimum of all elements, or with ``dim`` the named tuple ``(values, indices)``, or
    with a tensor as second argument the elementwise minimum (as ``max``).

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.min(dim=0).indices
    tensor([0, 1])
    >>> tidu.min(x)
    tensor(1.)
    """
    return _max_min(input, dim, other, keepdim, "min")


def _correction(unbiased: Any, correction: Any, name: str) -> float:
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass either 'unbiased' or 'correction', not both")
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@computed_in_float32
def var(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Any:
    """Variance over ``dim``: ``sum((x - mean)**2) / (N - correction)``; ``correction`` defaults to
    1 (``unbiased=True``). With ``N - correction <= 0`` the result is inf or nan, with a warning.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]])
    >>> x.var(dim=1)
    tensor([ 1., 13.])
    >>> x.var(dim=1, correction=0, keepdim=True)
    tensor([[0.6667],
            [8.6667]])
    """
    return _var(input, dim, unbiased, keepdim, correction, "var")


def legacy_unbiased(dim: Any, unbiased: Any, name: str) -> tuple[Any, Any]:
    """``(dim, unbiased)`` of a ``var``/``std`` call: a bool in ``dim``'s place is PyTorch's older
    ``var(input, unbiased)``."""
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, bool, bool)")
        return None, dim
    return dim, unbiased


def _var(input: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any, name: str) -> Any:  # noqa: A002
    _check(input, name)
    dim, unbiased = legacy_unbiased(dim, unbiased, name)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"std and var only support floating point and complex dtypes, got {input.dtype.name}")
    corr = _correction(unbiased, correction, name)
    dims = _dims(dim, input.ndim)
    n = _size(input.shape[d] for d in dims)
    dof = n - corr
    if dof <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
            "(input numel divided by output numel).", UserWarning, stacklevel=3,
        )
    dev = input - mean(input, dims, keepdim=True)
    total = sum(dev * dev, dims, keepdim)
    return total / dof if dof > 0 else total / 0.0


@computed_in_float32
def std(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Any:
    """Standard deviation, ``sqrt(var(...))`` with the same arguments.

    >>> import tidu
    >>> tidu.tensor([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).std(correction=0)
    tensor(2.)
    """
    from .math import sqrt, where

    v = _var(input, dim, unbiased, keepdim, correction, "std")
    zero = v == 0  # PyTorch's derivative there is 0 (sqrt's, at 0, times the variance's 0, is NaN)
    return where(zero, 0.0, sqrt(where(zero, 1.0, v)))


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Any:  # noqa: A002
    """``log(sum(exp(input), dim))`` computed stably (the max is subtracted first); a row of
    ``-inf`` (or an empty one) gives ``-inf``; integer inputs give floats.

    >>> import tidu
    >>> tidu.logsumexp(tidu.tensor([[0.0, 0.0], [10.0, 10.0]]), dim=1)
    tensor([ 0.6931, 10.6931])
    """
    from .math import exp, log, where

    _check(input, "logsumexp")
    x = _float_input(input, "logsumexp")
    dims = _dims(dim, x.ndim)
    if _size(x.shape[d] for d in dims) == 0:
        return log(sum(x, dims, keepdim))
    m = amax(x, dims, keepdim=True)
    m = m.detach() if isinstance(m, Tensor) else m
    m = where(m - m == 0, m, 0.0)  # only a finite max is subtracted
    out = log(sum(exp(x - m), dims, keepdim=True)) + m
    return out if keepdim or not x.ndim else bind(reshape_p, out, new_sizes=tuple(
        s for d, s in enumerate(x.shape) if d not in dims))



@computed_in_float32
def norm(input: Any, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:  # noqa: A002
    """Vector p-norm over ``dim`` (all elements by default): ``p`` = ``'fro'`` or 2, 1,
    ``inf`` (max of ``|x|``), ``-inf``, 0 (count of non-zeros) or any other float.
    At a zero vector the gradient is zero, as in PyTorch.

    >>> import tidu
    >>> x = tidu.tensor([[3.0, -4.0], [0.0, 1.0]])
    >>> x.norm()
    tensor(5.0990)
    >>> tidu.norm(x, p=1, dim=1)
    tensor([7., 1.])
    >>> tidu.norm(x, p=float("inf"), dim=0, keepdim=True)
    tensor([[3., 4.]])
    """
    from .math import abs, pow, sqrt, where

    _check(input, "norm")
    x = input if dtype is None else convert(input, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{dtypes.TORCH_NAMES[x.dtype.name]}"
        )
    if isinstance(p, str):
        if p != "fro":
            raise RuntimeError(f"norm: order {p!r} is not supported (tidu has 'fro' and vector p-norms)")
        if isinstance(dim, tuple | list) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
        p = 2
    dims = _dims(dim, x.ndim)
    if p == math.inf or p == -math.inf:
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {p} norm on the dimension {d} because this dimension "
                    "is empty and the operation does not have an identity"
                )
        a = abs(x)
        return amax(a, dims, keepdim) if p > 0 else amin(a, dims, keepdim)
    if p == 0:
        return sum(convert(x != 0, x.dtype), dims, keepdim)
    if p == 1:
        return sum(abs(x), dims, keepdim)
    a = abs(x)
    if p == 2:
        s = sum(x * x, dims, keepdim)
    else:
        zero = a == 0
        s = sum(where(zero, 0.0 if p > 0 else math.inf, pow(where(zero, 1.0, a), float(p))), dims, keepdim)
    flat = s == 0  # d sqrt(s) at s = 0 would be inf; PyTorch's gradient there is 0
    safe = where(flat, 1.0, s)
    root = sqrt(safe) if p == 2 else pow(safe, 1.0 / p)
    return where(flat, 0.0, root)


def cumsum(input: Any, dim: int, *, dtype: Any = None) -> Any:  # noqa: A002
    """Running sum along ``dim``; bool and integer inputs give int64. The transpose of the
    ``cumsum`` primitive is the reverse running sum.

    >>> import tidu
    >>> tidu.cumsum(tidu.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), dim=1)
    tensor([[ 1.,  3.,  6.],
            [ 4.,  9., 15.]])
    >>> tidu.tensor([True, False, True]).cumsum(0)
    tensor([1, 1, 2])
    """
    _check(input, "cumsum")
    x = input
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    elif not x.dtype.is_floating_point:
        x = convert(x, dtypes.int64)
    _int_dim(dim, "cumsum")
    d = wrap_dim(dim, x.ndim)
    return bind(rp.cumsum, x, axis=d, reverse=False)


def _truth(x: Any) -> Any:
    return x if x.dtype is dtypes.bool_ else x != 0


def all(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """True where every element along ``dim`` is non-zero (bool output; empty -> True).

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 0.0], [2.0, 3.0]])
    >>> x.all(dim=1)
    tensor([False,  True])
    >>> tidu.all(x)
    tensor(False)
    """
    _check(input, "all")
    dims = _dims(dim, input.ndim)
    falses = bind(rp.reduce_sum, convert(_truth(input) == False, dtypes.int64), axes=dims)  # noqa: E712
    return _truth_dtype(_finish(falses == 0, input, dims, keepdim), input)


def any(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001, A002
    """True where some element along ``dim`` is non-zero (bool output; empty -> False).

    >>> import tidu
    >>> tidu.tensor([[0, 0], [0, 5]]).any(dim=0, keepdim=True)
    tensor([[False,  True]])
    """
    _check(input, "any")
    dims = _dims(dim, input.ndim)
    trues = bind(rp.reduce_sum, convert(_truth(input), dtypes.int64), axes=dims)
    return _truth_dtype(_finish(trues > 0, input, dims, keepdim), input)


def _truth_dtype(out: Any, input: Any) -> Any:  # noqa: A002
    """``all``/``any`` of a uint8 tensor are uint8, as in PyTorch (a legacy of byte masks)."""
    return convert(out, dtypes.uint8) if input.dtype is dtypes.uint8 else out


SortResult = namedtuple("sort", ["values", "indices"])
TopkResult = namedtuple("topk", ["values", "indices"])


def argsort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:  # noqa: A002
    """The indices that sort ``input`` along ``dim`` (primitive ``argsort``): NaN last (first when
    ``descending``), ties in index order whether or not ``stable`` is asked for.

    >>> import tidu
    >>> tidu.tensor([3.0, 1.0, 2.0]).argsort(descending=True)
    tensor([0, 2, 1])
    """
    _check(input, "argsort")
    _int_dim(dim, "argsort")
    d = wrap_dim(dim, input.ndim)
    if input.ndim == 0:
        return bind(rp.argsort, input.reshape(1), axis=0, descending=bool(descending)).reshape(())
    return bind(rp.argsort, input, axis=d, descending=bool(descending))


def sort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:  # noqa: A002
    """``(values, indices)`` of ``input`` sorted along ``dim`` (``argsort``'s order); the values are
    gathered by the indices, so their gradient goes back to where each value came from.

    >>> import tidu
    >>> tidu.tensor([3.0, 1.0, 2.0]).sort()
    sort(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
    """
    indices = argsort(input, dim, descending, stable)
    if input.ndim == 0:
        return SortResult(input, indices)
    from .indexing import gather

    return SortResult(gather(input, dim, indices), indices)


def topk(input: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) entries along ``dim`` and their indices, in
    sorted order (``sorted=False`` gives the same order).

    >>> import tidu
    >>> tidu.tensor([3.0, 1.0, 2.0]).topk(2)
    topk(values=tensor([3., 2.]), indices=tensor([0, 2]))
    """
    _check(input, "topk")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if not isinstance(k, int) or not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    indices = argsort(input, dim, descending=largest)
    if input.ndim == 0:
        return TopkResult(input, indices)
    indices = indices.narrow(d, 0, k)
    from .indexing import gather

    return TopkResult(gather(input, d, indices), indices)


def _sum_to_size(self: Any, *size: Any) -> Any:
    """The sum of ``self`` down to ``size``, a shape ``self``'s expands from: the leading dims are
    summed away, and those where ``size`` has 1 are summed, kept (the gradient of a broadcast).

    >>> import tidu
    >>> tidu.ones(2, 3).sum_to_size(1, 3)
    tensor([[2., 2., 2.]])
    """
    target = tuple(size[0]) if len(size) == 1 and isinstance(size[0], list | tuple) else tuple(size)
    have = tuple(self.shape)
    lead = len(have) - len(target)
    if lead < 0 or builtins.any(t not in (1, h) for t, h in zip(target, have[lead:])):
        raise RuntimeError(f"size {{{list(target)}}} is not expandable to size {{{list(have)}}}.")
    kept = tuple(lead + i for i, (t, h) in enumerate(zip(target, have[lead:])) if t == 1 and h != 1)
    out = sum(self, kept, keepdim=True) if kept else self
    return sum(out, tuple(range(lead))) if lead else out


def cov(input: Any, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:  # noqa: A002
    """The covariance matrix of the variables in the rows of ``input`` (one variable: a 0-d result), observations in the columns, optionally weighted by integer frequencies
    ``fweights`` and observation weights ``aweights``; ``correction=1`` is Bessel's.

    >>> import tidu
    >>> tidu.cov(tidu.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]))
    tensor([[ 2.3333, -2.1667],
            [-2.1667,  2.3333]])
    """
    from .linalg import matmul

    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input if input.dtype.is_floating_point else convert(input, dtypes.get_default_dtype())
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    weights = None
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        if w.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                               f"{w.ndim} dimensions")
        if w.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the "
                               f"input but got {w.numel()} != {n}")
        if (name == "fweights") == w.dtype.is_floating_point:
            kind = "integral" if name == "fweights" else "floating point"
            raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                               f"{dtypes.TORCH_NAMES[w.dtype.name]} dtype")
        if bool(any(w < 0)):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        weights = w if weights is None else weights * w
    if weights is None:
        average, total = mean(x, 1, keepdim=True), n
        scale = n - correction
    else:
        weights = convert(weights, x.dtype)
        total = sum(weights)
        average = sum(x * weights, 1, keepdim=True) / total
        if correction == 0:
            scale = total
        elif aweights is None:
            scale = total - correction
        else:
            scale = total - correction * sum(weights * convert(aweights, x.dtype)) / total
    if float(scale) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        scale = scale * 0 if is_value(scale) else 0
    centred = x - average
    product = matmul(centred if weights is None else centred * weights, centred.t())
    out = product / scale
    return out.squeeze()  # PyTorch's: one variable gives a 0-d result


def corrcoef(input: Any) -> Any:  # noqa: A002
    """Pearson's correlation coefficients of the rows of ``input`` (``cov`` normalised by the
    standard deviations, clipped to ``[-1, 1]``).

    >>> import tidu
    >>> tidu.corrcoef(tidu.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]))
    tensor([[ 1.0000, -0.9286],
            [-0.9286,  1.0000]])
    """
    from .diagonals import diagonal

    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = diagonal(c).sqrt()
    c = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return c.clamp(-1, 1)


METHODS = {
    "sum_to_size": _sum_to_size, "cov": cov, "corrcoef": corrcoef,
    "sort": sort, "argsort": argsort, "topk": topk,
    "sum": sum, "mean": mean, "prod": prod, "amax": amax, "amin": amin, "argmax": argmax, "argmin": argmin,
    "max": max, "min": min, "var": var, "std": std, "logsumexp": logsumexp, "norm": norm, "cumsum": cumsum,
    "all": all, "any": any,
}
