"""Basic indexing: ints, slices (positive steps), ``None`` and ``...`` (views, like PyTorch's).

Advanced indexing (integer tensors, boolean masks) and ``__setitem__`` arrive with the
tensor-API issue; they raise a clear error until then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.primitive import bind
from ..primitives.slicing import slice_p
from ..primitives.structural import reshape as reshape_p

__all__ = []

def getitem(input: Any, index: Any) -> Any:  # noqa: A002
    """``input[index]`` for ints, slices, ``None`` and ``...``; differentiable.

    >>> import tidu
    >>> x = tidu.arange(12).reshape(3, 4)
    >>> x[1]
    tensor([4, 5, 6, 7])
    >>> x[:, ::2]
    tensor([[ 0,  2],
            [ 4,  6],
            [ 8, 10]])
    >>> x[-1, None, 1:3]
    tensor([[ 9, 10]])
    """
    items = list(index) if isinstance(index, tuple) else [index]
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, slice)
                or (isinstance(item, int | np.integer) and not isinstance(item, bool))):
            raise NotImplementedError(
                f"indexing with {type(item).__name__} is not supported yet: tidu indexes with ints, "
                "slices, None and ... (tensor and mask indices come with advanced indexing)"
            )
    if sum(item is Ellipsis for item in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consuming = sum(item is not None and item is not Ellipsis for item in items)
    if consuming > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim}")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = [slice(None)] * (input.ndim - consuming)
    else:
        items += [slice(None)] * (input.ndim - consuming)

    starts, limits, strides, shape = [], [], [], []
    dim = 0
    for item in items:
        if item is None:
            shape.append(1)
            continue
        n = input.shape[dim]
        if isinstance(item, slice):
            if item.step is not None and item.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = item.indices(n)
            stop = max(stop, start)
            starts.append(start), limits.append(stop), strides.append(step)
            shape.append(len(range(start, stop, step)))
        else:
            i = int(item)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {n}")
            i %= n
            starts.append(i), limits.append(i + 1), strides.append(1)
        dim += 1
    out = input
    if (tuple(starts), tuple(limits), tuple(strides)) != ((0,) * input.ndim, tuple(input.shape), (1,) * input.ndim):
        out = bind(slice_p, input, start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))
    if tuple(shape) != tuple(out.shape):
        out = bind(reshape_p, out, new_sizes=tuple(shape))
    return out


METHODS = {"__getitem__": getitem}
