"""Order statistics and NaN-aware reductions: ``median``/``nanmedian``, ``quantile``/``nanquantile``,
``kthvalue``, ``mode``, ``aminmax``, ``msort``, ``nansum``/``nanmean``, ``std_mean``/``var_mean``.

Every statistic is composed from ``argsort`` (NaN last, equal values in index order) and a
``gather`` of the chosen positions, so its gradient goes to the element it selected, as in
PyTorch. Of equal values, ``median``, ``nanmedian`` and ``kthvalue`` report the one a stable sort
puts at that rank (PyTorch's ``median`` does too; its ``kthvalue`` may pick another of the equal
values), and ``mode`` the last occurrence of the most frequent value (PyTorch's, on lines of up to
16 elements without NaN).
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.autocast import policy as autocast_policy
from ..core.aval import wrap_dim
from . import creation, indexing, math, reduce, selection, shape
from ._operands import convert, is_value

__all__ = [
    "aminmax", "kthvalue", "median", "mode", "msort", "nanmean", "nanmedian", "nanquantile", "nansum", "quantile",
    "std_mean", "var_mean",
]

# PyTorch's ``torch.return_types``: named tuples with these field names
MedianResult = namedtuple("median", ["values", "indices"])
NanmedianResult = namedtuple("nanmedian", ["values", "indices"])
KthvalueResult = namedtuple("kthvalue", ["values", "indices"])
ModeResult = namedtuple("mode", ["values", "indices"])
AminmaxResult = namedtuple("aminmax", ["min", "max"])

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(input: Any, name: str) -> None:  # noqa: A002
    if not is_value(input):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _no_bool(input: Any, kernel: str) -> None:  # noqa: A002
    if input.dtype is dtypes.bool_:
        raise dtypes.not_implemented(kernel, input.dtype)


def _line(input: Any, dim: int, name: str) -> tuple[Any, int]:  # noqa: A002
    """``input`` with at least one dim and ``dim`` wrapped; a non-empty input needs a non-empty ``dim``."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    d = wrap_dim(dim, input.ndim)
    x = shape.reshape(input, (1,)) if input.ndim == 0 else input
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return x, d


def _nan_count(x: Any, d: int) -> Any:
    """How many NaNs each line along ``d`` holds (int64, ``d`` kept)."""
    return reduce.sum(math.isnan(x), d, keepdim=True)


def _at_rank(x: Any, d: int, rank: Any) -> Any:
    """The index of the element that a stable sort along ``d`` puts at ``rank`` (``d`` kept)."""
    return indexing.gather(reduce.argsort(x, d), d, rank)


def _rank_tensor(x: Any, d: int, rank: int) -> Any:
    return creation.full(tuple(1 if i == d else s for i, s in enumerate(x.shape)), rank, dtype=dtypes.int64,
                         device=x.device)


def _first_nan(x: Any, d: int) -> Any:
    return reduce.argmax(convert(math.isnan(x), dtypes.int32), d, keepdim=True)


def _selected(result: type, input: Any, x: Any, d: int, index: Any, keepdim: bool) -> Any:  # noqa: A002
    """``result(values, indices)`` of the elements at ``index`` (``d`` kept) along ``d``."""
    values = indexing.gather(x, d, index)
    if input.ndim == 0:
        return result(shape.reshape(values, ()), shape.reshape(index, ()))
    if not keepdim:
        values, index = shape.squeeze(values, d), shape.squeeze(index, d)
    return result(values, index)


def _shared(flat: Any, index: Any) -> Any:
    """The element of ``flat`` at ``index``, its gradient shared evenly by the elements equal to it
    (the NaNs, for a NaN), as PyTorch's full reductions do."""
    value = indexing.gather(flat, 0, index).detach()
    ties = math.eq(flat, value)
    if flat.dtype.is_floating_point:
        ties = math.logical_or(ties, math.logical_and(math.isnan(flat), math.isnan(value)))
    return reduce.amax(selection.masked_select(flat, ties))  # equal elements: amax shares the gradient


def _median_index(x: Any, d: int, ignore_nan: bool) -> Any:
    """The index of each line's lower median along ``d`` (``d`` kept): of the non-NaN elements with
    ``ignore_nan`` (the first NaN when all are), else the first NaN where a line has one."""
    n = x.shape[d]
    if not x.dtype.is_floating_point:
        return _at_rank(x, d, _rank_tensor(x, d, (n - 1) // 2))
    nans = _nan_count(x, d)
    if ignore_nan:
        return _at_rank(x, d, math.clamp(math.floor_divide(n - nans - 1, 2), min=0))
    return math.where(nans > 0, _first_nan(x, d), _at_rank(x, d, _rank_tensor(x, d, (n - 1) // 2)))


def _median_all(input: Any, ignore_nan: bool) -> Any:  # noqa: A002
    flat = shape.reshape(input, (-1,))
    if flat.numel() == 0:
        return creation.full((), float("nan"), dtype=input.dtype, device=input.device)
    index = _median_index(flat, 0, ignore_nan)
    if not flat.dtype.is_floating_point:
        return shape.reshape(indexing.gather(flat, 0, index), ())
    return _shared(flat, index)


def _median_dim(result: type, input: Any, dim: int, keepdim: bool, ignore_nan: bool) -> Any:  # noqa: A002
    x, d = _line(input, dim, "median")  # PyTorch's nanmedian names median in its errors
    return _selected(result, input, x, d, _median_index(x, d, ignore_nan), keepdim)


def median(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median: of all elements (NaN if any is NaN; tied elements share the gradient), or
    with ``dim`` the named tuple ``(values, indices)`` along it (the gradient goes to the index).

    >>> import tidu
    >>> tidu.tensor([3.0, 1.0, 4.0, 2.0]).median()
    tensor(2.)
    >>> tidu.tensor([[3.0, 1.0, 2.0], [0.0, float("nan"), 5.0]]).median(dim=1)
    median(values=tensor([2., nan]), indices=tensor([2, 1]))
    """
    _check(input, "median")
    _no_bool(input, "median_cpu")
    if dim is None:
        return _median_all(input, ignore_nan=False)
    return _median_dim(MedianResult, input, dim, keepdim, False)


def nanmedian(input: Any, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """``median`` of the non-NaN elements (NaN where all are NaN).

    >>> import tidu
    >>> tidu.tensor([float("nan"), 3.0, 1.0]).nanmedian()
    tensor(1.)
    >>> tidu.tensor([[float("nan"), 3.0, 1.0, 2.0]]).nanmedian(dim=1)
    nanmedian(values=tensor([2.]), indices=tensor([3]))
    """
    _check(input, "nanmedian")
    _no_bool(input, "nanmedian_cpu")
    if dim is None:
        return _median_all(input, ignore_nan=True)
    return _median_dim(NanmedianResult, input, dim, keepdim, True)


def kthvalue(input: Any, k: int, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The ``k``-th smallest element along ``dim`` (``k`` from 1; NaN counts as the largest) and its
    index: the named tuple ``(values, indices)``.

    >>> import tidu
    >>> tidu.tensor([[3.0, 1.0, 2.0], [0.0, 6.0, 5.0]]).kthvalue(2)
    kthvalue(values=tensor([2., 5.]), indices=tensor([2, 2]))
    """
    _check(input, "kthvalue")
    _no_bool(input, "kthvalue_cpu")
    d = wrap_dim(dim, input.ndim)
    x = shape.reshape(input, (1,)) if input.ndim == 0 else input
    if x.shape[d] == 0:
        raise IndexError(f"kthvalue(): Expected reduction dim {d} to have non-zero size.")
    if not isinstance(k, int) or not 1 <= k <= x.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _selected(KthvalueResult, input, x, d, _at_rank(x, d, _rank_tensor(x, d, k - 1)), keepdim)


def _libstdcxx_order(keys: list) -> list:
    """The permutation of ``keys`` that libstdc++'s ``std::sort`` with ``a < b`` makes: an introsort
    (median-of-3 quicksort to runs of 16, heapsort past a depth of ``2 log2 n``, then insertion
    sort). PyTorch's CPU ``mode`` sorts so; with NaN, which breaks the ordering, its result is this
    algorithm's, step for step."""
    items = list(zip(keys, range(len(keys))))

    def linear_insert(i: int) -> None:  # __unguarded_linear_insert
        val = items[i]
        while i > 0 and val[0] < items[i - 1][0]:
            items[i] = items[i - 1]
            i -= 1
        items[i] = val

    def insertion_sort(lo: int, hi: int) -> None:
        for i in range(lo + 1, hi):
            if items[i][0] < items[lo][0]:
                items[lo:i + 1] = [items[i]] + items[lo:i]
            else:
                linear_insert(i)

    def sift(lo: int, hole: int, n: int, val: tuple) -> None:  # __adjust_heap, then __push_heap
        top = child = hole
        while child < (n - 1) // 2:
            child = 2 * (child + 1)
            if items[lo + child][0] < items[lo + child - 1][0]:
                child -= 1
            items[lo + hole] = items[lo + child]
            hole = child
        if n % 2 == 0 and child == (n - 2) // 2:
            child = 2 * (child + 1)
            items[lo + hole] = items[lo + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and items[lo + parent][0] < val[0]:
            items[lo + hole] = items[lo + parent]
            hole, parent = parent, (parent - 1) // 2
        items[lo + hole] = val

    def heap_sort(lo: int, hi: int) -> None:  # __partial_sort(first, last, last)
        for parent in range((hi - lo - 2) // 2, -1, -1):
            sift(lo, parent, hi - lo, items[lo + parent])
        for end in range(hi - 1, lo, -1):
            val, items[end] = items[end], items[lo]
            sift(lo, 0, end - lo, val)

    def swap(i: int, j: int) -> None:
        items[i], items[j] = items[j], items[i]

    def partition(lo: int, hi: int) -> int:  # __unguarded_partition_pivot
        a, b, c = lo + 1, lo + (hi - lo) // 2, hi - 1
        if items[a][0] < items[b][0]:
            swap(lo, b if items[b][0] < items[c][0] else c if items[a][0] < items[c][0] else a)
        else:
            swap(lo, a if items[a][0] < items[c][0] else c if items[b][0] < items[c][0] else b)
        pivot, first, last = items[lo][0], lo + 1, hi
        while True:
            while items[first][0] < pivot:
                first += 1
            last -= 1
            while pivot < items[last][0]:
                last -= 1
            if first >= last:
                return first
            swap(first, last)
            first += 1

    def introsort(lo: int, hi: int, depth: int) -> None:
        while hi - lo > 16:
            if depth == 0:
                heap_sort(lo, hi)
                return
            depth -= 1
            cut = partition(lo, hi)
            introsort(cut, hi, depth)
            hi = cut

    n = len(items)
    if n:
        introsort(0, n, 2 * (n.bit_length() - 1))
        insertion_sort(0, min(n, 16))
        for i in range(16, n):
            linear_insert(i)
    return [i for _, i in items]


def _mode_index(values: np.ndarray) -> np.ndarray:
    """For each row of ``values`` (2-D), PyTorch's mode: in the sorted row, the last position of the
    first of the longest runs of equal values (each NaN a run of its own). A row with NaN is sorted
    as PyTorch's ``std::sort`` leaves it; the others stably (the same on up to 16 elements)."""
    rows, n = values.shape
    order = np.argsort(values, axis=1, kind="stable")
    for r in np.flatnonzero(np.isnan(values).any(axis=1)):
        order[r] = _libstdcxx_order(values[r].tolist())
    ordered = np.take_along_axis(values, order, 1)
    start = np.ones((rows, n), bool)
    start[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    end = np.roll(start, -1, axis=1)
    end[:, -1] = True
    span = np.arange(n)
    first = np.maximum.accumulate(np.where(start, span, 0), axis=1)
    last = np.minimum.accumulate(np.where(end, span, n)[:, ::-1], axis=1)[:, ::-1]
    best = np.argmax(last - first, axis=1)
    return order[np.arange(rows), last[np.arange(rows), best]]


def mode(input: Any, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the index
    of its last occurrence, as the named tuple ``(values, indices)``. Each NaN counts once, and a line
    with NaN is ordered as PyTorch's C++ sort leaves it (so ``mode([nan, nan, 1.0])`` is NaN). The
    counting runs on the host.

    >>> import tidu
    >>> tidu.tensor([[2, 1, 2, 1, 3], [4, 4, 0, 0, 0]]).mode()
    mode(values=tensor([1, 0]), indices=tensor([3, 4]))
    """
    _check(input, "mode")
    x, d = _line(input, dim, "mode")
    host = np.moveaxis(x._values(), d, -1)
    lead = host.shape[:-1]
    index = _mode_index(host.reshape(-1, host.shape[-1])).reshape(lead) if host.size else np.zeros(lead, np.int64)
    kept = creation.tensor(np.expand_dims(index.astype(np.int64), d), dtype=dtypes.int64, device=x.device)
    return _selected(ModeResult, input, x, d, kept, keepdim)


def aminmax(input: Any, *, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """``(amin, amax)`` over ``dim`` (or all elements) as the named tuple ``(min, max)``; tied
    elements share the gradient, as in ``amax``.

    >>> import tidu
    >>> tidu.tensor([[1.0, 5.0], [7.0, 2.0]]).aminmax(dim=1)
    aminmax(min=tensor([1., 2.]), max=tensor([5., 7.]))
    """
    _check(input, "aminmax")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims: Any = ()
    else:
        dims = wrap_dim(dim, input.ndim)
        if input.ndim and input.shape[dims] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims} to have non-zero size.")
    low, high = reduce.amin(input, dims, keepdim), reduce.amax(input, dims, keepdim)
    if dim is None and keepdim:
        low, high = (shape.reshape(t, (1,) * input.ndim) for t in (low, high))
    return AminmaxResult(low, high)


def msort(input: Any) -> Any:  # noqa: A002
    """``input`` sorted along dim 0 (``sort(input, dim=0).values``).

    >>> import tidu
    >>> tidu.msort(tidu.tensor([[3, 1], [2, 4]]))
    tensor([[2, 1],
            [3, 4]])
    """
    _check(input, "msort")
    return reduce.sort(input, 0).values


def _q_tensor(q: Any, like: Any) -> tuple[Any, bool]:
    """``q`` as a 1-D tensor of ``like``'s dtype and device, and whether it was a scalar."""
    if is_value(q):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not like.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        values = q._values().reshape(-1)
        if ((values < 0) | (values > 1)).any():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return shape.reshape(q, (-1,)), q.ndim == 0
    if isinstance(q, bool) or not isinstance(q, int | float):
        raise TypeError(f"quantile(): argument 'q' must be float or Tensor, not {type(q).__name__}")
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return creation.full((1,), q, dtype=like.dtype, device=like.device), True


def _quantile(input: Any, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Any:  # noqa: A002
    _check(input, "quantile")
    if not input.dtype.is_floating_point:
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    qs, scalar = _q_tensor(q, input)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is None:
        x, d = shape.reshape(input, (-1,)), 0
    else:
        d = wrap_dim(dim, input.ndim)
        x = shape.reshape(input, (1,)) if input.ndim == 0 else input
    x = shape.movedim(x, d, -1)
    n = x.shape[-1]
    ordered = reduce.sort(x, -1).values  # NaN last
    nans = _nan_count(x, -1)
    if ignore_nan:
        ranks = qs * convert(math.clamp(n - 1 - nans, min=0), x.dtype)
    else:  # a line with a NaN takes its last sorted element, a NaN
        ranks = math.where(nans > 0, float(n - 1), qs * float(n - 1))
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": math.floor, "higher": math.ceil, "nearest": math.round}[interpolation]
        out = indexing.gather(ordered, -1, convert(pick(ranks), dtypes.int64))
    else:
        below = math.floor(ranks)
        weight = ranks - below if interpolation == "linear" else 0.5
        low = indexing.gather(ordered, -1, convert(below, dtypes.int64))
        high = indexing.gather(ordered, -1, convert(math.ceil(ranks), dtypes.int64))
        out = math.lerp(low, high, weight)
    out = shape.movedim(out, -1, 0)  # q's dim first
    if keepdim:
        kept = (1,) * input.ndim if dim is None else tuple(1 if i == d else s for i, s in enumerate(input.shape))
        out = shape.reshape(out, (out.shape[0], *kept))
    return shape.reshape(out, tuple(out.shape[1:])) if scalar else out


@autocast_policy("fp32")
def quantile(input: Any, q: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Any:
    """The ``q``-th quantiles (``q`` a float or a 0-d/1-D tensor in [0, 1]; a 1-D ``q`` adds a
    leading dim) along ``dim`` (all elements when ``None``), between sorted neighbours by
    ``interpolation``: ``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'`` or ``'nearest'``.
    A line with a NaN gives NaN. The gradient goes to the neighbours, weighted as in ``lerp``.

    >>> import tidu
    >>> x = tidu.tensor([[0.0, 1.0, 2.0, 3.0], [4.0, 0.0, 2.0, 2.0]])
    >>> tidu.quantile(x, 0.25, dim=1)
    tensor([0.7500, 1.5000])
    >>> x.quantile(tidu.tensor([0.5, 1.0]), interpolation="lower")
    tensor([2., 4.])
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=False)


@autocast_policy("fp32")
def nanquantile(input: Any, q: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear") -> Any:
    """``quantile`` of the non-NaN elements (NaN where all are NaN).

    >>> import tidu
    >>> tidu.tensor([1.0, float("nan"), 3.0, 4.0]).nanquantile(0.5)
    tensor(3.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, ignore_nan=True)


def nansum(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """``sum`` with NaNs counted as zero (they get no gradient).

    >>> import tidu
    >>> tidu.tensor([[1.0, float("nan")], [2.0, 3.0]]).nansum(dim=1)
    tensor([1., 5.])
    """
    _check(input, "nansum")
    kept = math.where(math.isnan(input), 0, input) if input.dtype.is_floating_point else input
    return reduce.sum(kept, dim, keepdim, dtype=dtype)


def nanmean(input: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """The mean of the non-NaN elements over ``dim`` (NaN where there are none).

    >>> import tidu
    >>> tidu.tensor([[1.0, float("nan")], [2.0, 3.0]]).nanmean(dim=1)
    tensor([1.0000, 2.5000])
    """
    _check(input, "nanmean")
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]}")
    x = input if dtype is None else convert(input, dtypes.as_dtype(dtype))
    count = reduce.sum(math.logical_not(math.isnan(x)), dim, keepdim)
    return nansum(x, dim, keepdim) / convert(count, x.dtype)


def _with_mean(spread: Any, input: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any,  # noqa: A002
               name: str) -> tuple[Any, Any]:
    _check(input, name)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dim, unbiased = reduce.legacy_unbiased(dim, unbiased, name)
    mean_dim = () if dim is None else dim
    return (spread(input, dim, unbiased, keepdim, correction=correction),
            reduce.mean(input, mean_dim, keepdim))


def var_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Any, Any]:
    """``(var(...), mean(...))`` over ``dim`` with ``var``'s arguments, as a tuple.

    >>> import tidu
    >>> tidu.var_mean(tidu.tensor([[1.0, 2.0], [3.0, 5.0]]), 1, correction=0)
    (tensor([0.2500, 1.0000]), tensor([1.5000, 4.0000]))
    """
    return _with_mean(reduce.var, input, dim, unbiased, keepdim, correction, "var_mean")


def std_mean(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Any, Any]:
    """``(std(...), mean(...))`` over ``dim`` with ``std``'s arguments, as a tuple.

    >>> import tidu
    >>> tidu.std_mean(tidu.tensor([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), unbiased=False)
    (tensor(2.), tensor(5.))
    """
    return _with_mean(reduce.std, input, dim, unbiased, keepdim, correction, "std_mean")


METHODS = {
    "median": median, "nanmedian": nanmedian, "kthvalue": kthvalue, "mode": mode, "aminmax": aminmax,
    "msort": msort, "quantile": quantile, "nanquantile": nanquantile, "nansum": nansum, "nanmean": nanmean,
}
