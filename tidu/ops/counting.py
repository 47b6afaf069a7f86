"""Counting and searching sorted values: ``unique``, ``unique_consecutive``, ``searchsorted``,
``bucketize``, ``bincount`` and ``histc``.

Their result sizes (or, for the searches, every result) depend on the values, so they are found
on the host, as ``nonzero`` is, and returned on the input's device. None is differentiable in
PyTorch except ``bincount``'s ``weights``, which are summed by a ``scatter_add`` here.
"""

from __future__ import annotations

from builtins import range as builtins_range
from collections import namedtuple
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.aval import wrap_dim
from ..tensor import Tensor
from . import creation, indexing
from ._operands import convert, is_value

__all__ = ["bincount", "bucketize", "histc", "histogram", "histogramdd", "searchsorted", "unique",
           "unique_consecutive"]

# ``torch.return_types.histogram``
HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def _on(array: np.ndarray, like: Any, dtype: dtypes.dtype = dtypes.int64) -> Tensor:
    return creation.tensor(np.array(array, order="C"), dtype=dtype, device=like.device)  # values: tensor() casts them


def _runs(input: Any, dim: Any, ordered: bool, return_inverse: bool, return_counts: bool) -> Any:  # noqa: A002
    """The runs of equal elements (or slices along ``dim``) of ``input``, sorted first when
    ``ordered``: the first of each run, and on request each element's run and each run's length.
    NaNs are never equal."""
    data = input._values()
    d = None if dim is None else wrap_dim(dim, input.ndim)
    if d is not None and any(s == 0 for i, s in enumerate(data.shape) if i != d):
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    # each slice along ``d`` one row (its size given: ``-1`` cannot be inferred with no slices)
    keys = data.reshape(-1, 1) if d is None else np.moveaxis(data, d, 0).reshape(
        data.shape[d], int(np.prod(data.shape[:d] + data.shape[d + 1:])))
    n = keys.shape[0]
    order = np.lexsort(keys.T[::-1]) if ordered and keys.shape[1] else np.arange(n)
    keys = keys[order]
    start = np.ones(n, bool)
    start[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    firsts = order[start]
    values = data.reshape(-1)[firsts] if d is None else np.take(data, firsts, axis=d)
    out = [_on(values, input, input.dtype)]
    if return_inverse:
        run = np.empty(n, np.int64)
        run[order] = np.cumsum(start) - 1
        out.append(_on(run.reshape(data.shape if d is None else (n,)), input))
    if return_counts:
        out.append(_on(np.diff(np.append(np.flatnonzero(start), n)), input))
    return out[0] if len(out) == 1 else tuple(out)


def unique(input: Any, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: Any = None) -> Any:
    """The distinct elements of ``input`` (with ``dim``: the distinct slices along it), sorted
    (PyTorch sorts for ``sorted=False`` too; each NaN is distinct), and on request the index of each
    element's value in them (``return_inverse``, ``input``'s shape) and how often each occurs.

    >>> import tidu
    >>> tidu.tensor([3, 1, 3, 2]).unique(return_inverse=True, return_counts=True)
    (tensor([1, 2, 3]), tensor([2, 0, 2, 1]), tensor([1, 1, 2]))
    >>> tidu.unique(tidu.tensor([[1, 2], [0, 5], [1, 2]]), dim=0)
    tensor([[0, 5],
            [1, 2]])
    """
    return _runs(input, dim, True, return_inverse, return_counts)


def unique_consecutive(input: Any, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: Any = None) -> Any:
    """``input`` with each run of equal consecutive elements (slices along ``dim``) kept once; on
    request each element's run and each run's length.

    >>> import tidu
    >>> tidu.unique_consecutive(tidu.tensor([1, 1, 2, 1]), return_counts=True)
    (tensor([1, 2, 1]), tensor([2, 1, 1]))
    """
    return _runs(input, dim, False, return_inverse, return_counts)


def _side(right: bool, side: str | None) -> bool:
    if side is None:
        return bool(right)
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left while "
                           "right was True")
    return side == "right"


def _bisect(rows: np.ndarray, values: np.ndarray, after: bool) -> np.ndarray:
    """PyTorch's binary search of each row of ``values`` in the same row of ``rows``: it moves right
    past an entry unless ``entry >= value`` (``after``: ``entry > value``) holds, so a NaN entry or
    value is passed as a smaller one would be, and with NaN the answer is PyTorch's too."""
    n = rows.shape[-1]
    low, high = np.zeros(values.shape, np.int64), np.full(values.shape, n, np.int64)
    while (active := low < high).any():
        mid = low + (high - low) // 2
        entry = np.take_along_axis(rows, np.minimum(mid, n - 1), -1)
        stop = entry > values if after else entry >= values
        low = np.where(active & ~stop, mid + 1, low)
        high = np.where(active & stop, mid, high)
    return low


def searchsorted(sorted_sequence: Any, input: Any, *, out_int32: bool = False, right: bool = False,  # noqa: A002
                 side: str | None = None, sorter: Any = None) -> Any:
    """Where each of ``input`` would go in ``sorted_sequence`` (sorted along its last dim, or by
    ``sorter``) to keep it sorted: before equal entries, or after them with ``right=True`` /
    ``side='right'``. A 1-D sequence serves every value; otherwise the leading dims match the
    values'. int64 indices (int32 with ``out_int32``); a number gives a 0-d result. The search is
    PyTorch's bisection, so a NaN in the sequence (sorted last, as ``sort`` puts it) gives its answers.

    >>> import tidu
    >>> tidu.searchsorted(tidu.tensor([1, 3, 3, 7]), tidu.tensor([3, 8]))
    tensor([1, 4])
    >>> tidu.searchsorted(tidu.tensor([[1, 3], [2, 4]]), tidu.tensor([[3], [3]]), right=True)
    tensor([[2],
            [1]])
    """
    after = _side(right, side)
    bounds = tuple(sorted_sequence.shape)
    if sorter is not None:
        if tuple(sorter.shape) != bounds:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(bounds)}and got sorter tensor {list(sorter.shape)}")
        if sorter.dtype is not dtypes.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{dtypes.TORCH_NAMES[sorter.dtype.name]}")
        order = sorter._host()
        if order.size and (order.min() < 0 or order.max() >= bounds[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    value_shape = tuple(input.shape) if is_value(input) else ()
    if not value_shape and len(bounds) != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({len(bounds)}) and input value's dim(0) numel(1)")
    if not bounds:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if len(bounds) > 1 and (len(bounds) != len(value_shape) or bounds[:-1] != value_shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(bounds)} and input "
            f"value tensor {list(value_shape)}")
    common = dtypes.result_type(sorted_sequence, input)
    if common is dtypes.bool_:
        raise dtypes.not_implemented("searchsorted_out_cpu", common)
    values = (convert(input, common) if is_value(input) else creation.tensor(input, dtype=common))._values()
    sequence = convert(sorted_sequence, common)._values()
    if sorter is not None:
        sequence = np.take_along_axis(sequence, order.astype(np.int64), -1)
    rows = sequence.reshape(int(np.prod(bounds[:-1])), bounds[-1])
    if len(bounds) == 1 and (rows[0, 1:] >= rows[0, :-1]).all():  # sorted, no NaN: every bisection agrees
        found = np.searchsorted(rows[0], values, side="right" if after else "left")
    else:
        per_row = values.size if len(bounds) == 1 else value_shape[-1]
        found = _bisect(rows, values.reshape(len(rows), per_row), after).reshape(values.shape)
    return _on(found, sorted_sequence, dtypes.int32 if out_int32 else dtypes.int64)


def bucketize(input: Any, boundaries: Any, *, out_int32: bool = False, right: bool = False) -> Any:  # noqa: A002
    """The bucket of each element of ``input`` given 1-D sorted ``boundaries``: ``i`` with
    ``boundaries[i-1] < x <= boundaries[i]`` (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``),
    which is ``searchsorted(boundaries, input, right=right)``.

    >>> import tidu
    >>> tidu.bucketize(tidu.tensor([1, 5, 9]), tidu.tensor([1, 3, 5, 7]))
    tensor([0, 2, 4])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input: Any, weights: Any = None, minlength: int = 0) -> Any:  # noqa: A002
    """How often each value ``0..max(input)`` (at least ``minlength`` of them) occurs in the 1-D
    non-negative integer ``input`` (int64), or the sum of the ``weights`` at its occurrences
    (float32 weights stay float32, others give float64; differentiable, a ``scatter_add``).

    >>> import tidu
    >>> tidu.bincount(tidu.tensor([1, 1, 3]))
    tensor([0, 2, 0, 1])
    >>> tidu.tensor([1, 1, 3]).bincount(tidu.tensor([0.5, 1.0, 2.0]), minlength=5)
    tensor([0.0000, 1.5000, 0.0000, 2.0000, 0.0000])
    """
    if input.dtype.is_floating_point or input.dtype is dtypes.bool_:
        raise dtypes.not_implemented("bincount_cpu", input.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    values = input._host()
    if values.ndim != 1 or (values < 0).any():
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != values.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    size = max(minlength, int(values.max()) + 1 if values.size else 0)
    if weights is None:
        return _on(np.bincount(values, minlength=size), input)
    kind = weights.dtype if weights.dtype in (dtypes.float32, dtypes.float64) else dtypes.float64
    return indexing.scatter_add(creation.zeros(size, dtype=kind, device=input.device), 0, convert(input, dtypes.int64),
                                convert(weights, kind))


def histc(input: Any, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # noqa: A001, A002
    """A histogram of ``input``'s elements in ``bins`` equal bins over ``[min, max]`` (the data's
    range when ``min == max``); elements outside are left out. The result has ``input``'s dtype.

    >>> import tidu
    >>> tidu.histc(tidu.tensor([1.0, 2.0, 1.0, 4.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented("histogram_cpu", input.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    data = input._values().reshape(-1)
    low, high = data.dtype.type(min), data.dtype.type(max)
    if low == high and data.size:
        low, high = data.min(), data.max()
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low:g}, {high:g}] is not finite")
    if low == high:
        low, high = low - 1, high + 1
    inside = data[(data >= low) & (data <= high)]
    position = ((inside - low) * data.dtype.type(bins) / (high - low)).astype(np.int64)
    counts = np.bincount(np.minimum(position, bins - 1), minlength=bins)
    return _on(counts, input, input.dtype)


def _outer_edges(points: np.ndarray, range: Any) -> list[tuple[float, float]]:  # noqa: A002
    """Each dim's first and last edge: ``range``'s pairs, else the data's extremes, else (0, 1); an
    empty range widened by 0.5 each way. ``points`` is (N, D)."""
    d = points.shape[1]
    if range is not None:
        if len(range) != 2 * d:
            raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} "
                               f"elements, but got {len(range)}")
        outer = [(float(range[2 * i]), float(range[2 * i + 1])) for i in builtins_range(d)]
    elif points.size:
        outer = list(zip(points.min(axis=0).tolist(), points.max(axis=0).tolist()))
    else:
        outer = [(0.0, 1.0)] * d
    for i, (low, high) in enumerate(outer):
        if not (np.isfinite(low) and np.isfinite(high)):
            raise RuntimeError(f"torch.histogramdd: dimension {i}'s range [{low:g}, {high:g}] is not finite")
        if low > high:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {low:g} max {high:g} "
                               f"for dimension {i}")
        if low == high:
            outer[i] = (low - 0.5, high + 0.5)
    return outer


def _check_edges(input: Any, edges: list, d: int) -> None:  # noqa: A002
    """PyTorch's checks of ``d`` tensors of bin edges."""
    if len(edges) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for a {d}-dimensional histogram "
                           f"but got {len(edges)}")
    for i, e in enumerate(edges):
        if e.dtype is not input.dtype:
            raise RuntimeError("torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {dtypes.C_TYPES[input.dtype.name]} and bins for dimension {i} with "
                               f"dtype {dtypes.C_TYPES[e.dtype.name]}")
        if e.ndim != 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension, but got "
                               f"{e.ndim} dimensions in the bins tensor for dimension {i}")
        if e.numel() == 0:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in "
                               f"the bins tensor for dimension {i}")


def _check_weight(input: Any, weight: Any, shape: tuple) -> None:  # noqa: A002
    """PyTorch's checks of the weights of points of ``shape`` (N, D)."""
    if weight is None:
        return
    if weight.dtype is not input.dtype:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have "
                           f"the same dtype, but got input({dtypes.C_TYPES[input.dtype.name]}), and weight("
                           f"{dtypes.C_TYPES[weight.dtype.name]})")
    if tuple(weight.shape or (1,)) != shape[:-1]:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
                           f"tensor excluding its innermost dimension, but got input with shape {list(shape)} and "
                           f"weight with shape {list(weight.shape or (1,))}")


def _check_counts(counts: list) -> None:
    """PyTorch's error for a dim with no bins."""
    for i, n in enumerate(counts):
        if n <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {n} for dimension {i}")


def _histogram(points: np.ndarray, edges: list[np.ndarray], weights: Any, density: bool) -> np.ndarray:
    """The counts (or summed ``weights``) of the (N, D) ``points`` in the cells between ``edges``, as
    PyTorch's kernel finds them: a point outside the outer edges (or NaN) is left out, and each
    coordinate's bin is the last edge not above it (``upper_bound``), the last bin closed."""
    kept = np.ones(len(points), bool)
    cells = []
    for x, e in zip(points.T, edges):
        kept &= (x >= e[0]) & (x <= e[-1])
        sorted_edges = (e[1:] >= e[:-1]).all()  # then numpy's search is PyTorch's ``upper_bound``
        bin_of = (np.searchsorted(e, x, "right") if sorted_edges else _bisect(e[None], x[None], after=True)[0]) - 1
        cells.append(np.minimum(bin_of, len(e) - 2))
    kept &= np.logical_and.reduce([c >= 0 for c in cells])  # only unsorted edges send a point below bin 0
    shape = tuple(len(e) - 1 for e in edges)
    flat = np.ravel_multi_index(tuple(c[kept] for c in cells), shape)
    chosen = None if weights is None else weights[kept]
    hist = np.bincount(flat, chosen, minlength=int(np.prod(shape))).reshape(shape).astype(points.dtype)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum(dtype=points.dtype)
            for i, e in enumerate(edges):
                hist = hist / np.diff(e).reshape(tuple(-1 if j == i else 1 for j in builtins_range(len(edges))))
    return hist


def _float_kernel(input: Any, kernel: str) -> None:  # noqa: A002
    """PyTorch's error from ``kernel``, which has float32 and float64 versions only."""
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise dtypes.not_implemented(kernel, input.dtype)


def histogram(input: Any, bins: Any, *, range: Any = None, weight: Any = None, density: bool = False) -> Any:  # noqa: A002
    """``(hist, bin_edges)``: a histogram of ``input``'s elements in ``bins`` equal bins over
    ``range`` (the data's by default) or between the edges of a 1-D tensor ``bins``; the last bin
    includes its right edge. ``weight`` weighs each element; ``density`` normalises to a density.
    The edges and the bin of each element are PyTorch's (its ``linspace``, then ``upper_bound``).
    The counts are values only (no gradient, as in PyTorch).

    >>> import tidu
    >>> tidu.histogram(tidu.tensor([1.0, 2.0, 1.0, 4.0]), bins=3, range=(0.0, 3.0))
    histogram(hist=tensor([0., 2., 1.]), bin_edges=tensor([0., 1., 2., 3.]))
    """
    data = input._values().reshape(-1, 1)
    flat_weight = None if weight is None else weight.reshape(-1)
    if is_value(bins):
        _check_edges(input, [bins], 1)
        _check_weight(input, flat_weight, data.shape)
        _check_counts([bins.numel() - 1])
        _float_kernel(input, "histogram_cpu")
        edges = bins._values()
    else:
        _check_counts([int(bins)])
        if range is None and data.size:  # PyTorch's extremes kernel has float versions only
            _float_kernel(input, "histogramdd")
        (low, high), = _outer_edges(data, range)
        _check_weight(input, flat_weight, data.shape)
        _float_kernel(input, "histogramdd")
        edges = creation.fused_linspace(low, high, int(bins) + 1, data.dtype)
    weights = None if weight is None else weight._values().reshape(-1)
    hist = _histogram(data, [edges], weights, density)
    return HistogramResult(_on(hist, input, input.dtype), _on(edges, input, input.dtype))


HistogramddResult = namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input: Any, bins: Any, *, range: Any = None, weight: Any = None, density: bool = False) -> Any:  # noqa: A002
    """``(hist, bin_edges)``: the D-dimensional histogram of the points in ``input``'s last dim
    (shape (..., D)); ``bins`` is one count for every dim, a count per dim or a 1-D tensor of
    edges per dim; ``range`` is ``[lo_0, hi_0, lo_1, hi_1, ...]`` (the data's by default). Each
    last bin includes its right edge; edges and bins are PyTorch's, as in ``histogram``. Values
    only (no gradient, as in PyTorch).

    >>> import tidu
    >>> h = tidu.histogramdd(tidu.tensor([[0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]), bins=[2, 1])
    >>> h.hist, h.bin_edges[0]
    (tensor([[1.],
            [2.]]), tensor([0.0000, 0.5000, 1.0000]))
    """
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    d = input.shape[-1]
    points = input._values().reshape(-1, d)
    if isinstance(bins, int | np.integer) or not all(is_value(b) for b in bins):
        counts = [int(bins)] * d if isinstance(bins, int | np.integer) else [int(b) for b in bins]
        if range is None and points.size:
            _float_kernel(input, "histogramdd")
        outer = _outer_edges(points, range)
        if len(counts) != d:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        _check_weight(input, weight, points.shape)
        _check_counts(counts)
        _float_kernel(input, "histogramdd")
        edges = [creation.fused_linspace(low, high, n + 1, points.dtype) for (low, high), n in zip(outer, counts)]
    else:
        _check_edges(input, list(bins), d)
        _check_weight(input, weight, points.shape)
        _check_counts([b.numel() - 1 for b in bins])
        _float_kernel(input, "histogram_cpu")
        edges = [b._values() for b in bins]
    weights = None if weight is None else weight._values().reshape(-1)
    hist = _histogram(points, edges, weights, density)
    return HistogramddResult(_on(hist, input, input.dtype), tuple(_on(e, input, input.dtype) for e in edges))


METHODS = {
    "histogram": histogram,
    "unique": unique, "unique_consecutive": unique_consecutive, "bincount": bincount, "histc": histc,
}
