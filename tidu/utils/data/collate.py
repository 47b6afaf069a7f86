"""``default_collate``: a list of samples -> one batch, with PyTorch's rules."""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

from ...core import dtypes
from ...tensor import Tensor, of_array


def _stack(arrays: list[np.ndarray], dtype: dtypes.dtype) -> Tensor:
    first = arrays[0].shape
    for i, a in enumerate(arrays):
        if a.shape != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(a.shape)} at entry {i}"
            )
    return Tensor(np.stack(arrays), dtype)


def _numpy_ok(a: np.ndarray) -> bool:
    return a.dtype.kind not in "USO"


def default_collate(batch: list[Any]) -> Any:
    """Merge a list of samples into a batch, as ``torch.utils.data.default_collate``:

    - tensors and numpy arrays are stacked along a new first dimension (a tensor);
    - Python floats give a float64 tensor, ints an int64 tensor, bools a bool tensor;
    - strings and bytes stay a list;
    - dicts are collated key by key, namedtuples field by field, and other sequences
      (tuples, lists) position by position into a list.

    >>> import tidu
    >>> from tidu.utils.data import default_collate
    >>> default_collate([(tidu.tensor([1.0, 2.0]), 0), (tidu.tensor([3.0, 4.0]), 1)])
    [tensor([[1., 2.],
            [3., 4.]]), tensor([0, 1])]
    >>> default_collate([{"x": 1.5}, {"x": 2.5}])
    {'x': tensor([1.5000, 2.5000], dtype=tidu.float64)}
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack([t._data for t in batch], elem.dtype)
    if isinstance(elem, np.ndarray | np.generic) and _numpy_ok(np.asarray(elem)):
        arrays = [np.asarray(a) for a in batch]
        return _stack(arrays, dtypes.from_numpy_dtype(arrays[0].dtype))
    if isinstance(elem, bool):
        return Tensor(np.array(batch, dtype=np.bool_), dtypes.bool_)
    if isinstance(elem, int):
        return Tensor(np.array(batch, dtype=np.int64), dtypes.int64)
    if isinstance(elem, float):
        return Tensor(np.array(batch, dtype=np.float64), dtypes.float64)
    if isinstance(elem, str | bytes):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch, strict=True)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch, strict=True)]
    raise TypeError(
        "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        f"found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    """Convert numpy arrays (also inside dicts and sequences) to tensors; leave the rest.

    The loader uses it on each sample when ``batch_size=None``.

    >>> import numpy as np
    >>> from tidu.utils.data import default_convert
    >>> default_convert((np.array([1.0, 2.0]), "a"))
    [tensor([1., 2.], dtype=tidu.float64), 'a']
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray | np.generic) and _numpy_ok(np.asarray(data)):
        return of_array(np.array(data))
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple | list):  # tuples become lists, as in PyTorch
        return [default_convert(d) for d in data]
    return data
