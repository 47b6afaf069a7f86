"""Map-style and iterable datasets: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``random_split``."""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ...tensor import Tensor
from .sampler import permutation


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__``.

    >>> from tidu.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> [Squares()[i] for i in range(4)]
    [0, 1, 4, 9]
    """

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``.

    >>> from tidu.utils.data import DataLoader, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __iter__(self):
    ...         return iter(range(5))
    >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other: Dataset) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Several ``IterableDataset`` streams, one after the other (computed as it is read).

    >>> from tidu.utils.data import ChainDataset, IterableDataset
    >>> class Count(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n))
    ...     def __len__(self):
    ...         return self.n
    >>> chain = ChainDataset([Count(2), Count(3)])
    >>> list(chain), len(chain), list(Count(1) + Count(2))
    ([0, 1, 0, 1, 2], 5, [0, 0, 1])
    """

    def __init__(self, datasets: Any) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class StackDataset(Dataset):
    """Datasets of one length read together: ``StackDataset(a, b)[i]`` is ``(a[i], b[i])``, and
    ``StackDataset(x=a, y=b)[i]`` is ``{"x": a[i], "y": b[i]}``.

    >>> import tidu
    >>> from tidu.utils.data import DataLoader, StackDataset
    >>> ds = StackDataset(image=tidu.arange(4.0), label=[0, 1, 0, 1])
    >>> ds[1], len(ds)
    ({'image': tensor(1.), 'label': 1}, 4)
    >>> next(iter(DataLoader(ds, batch_size=2)))
    {'image': tensor([0., 1.]), 'label': tensor([0, 1])}
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                                 "input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(dataset) for dataset in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets: Any = args
        elif kwargs:
            values = list(kwargs.values())
            self._length = len(values[0])
            if any(self._length != len(dataset) for dataset in values):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index: Any) -> Any:
        if isinstance(self.datasets, dict):
            return {k: dataset[index] for k, dataset in self.datasets.items()}
        return tuple(dataset[index] for dataset in self.datasets)

    def __getitems__(self, indices: list) -> list:
        """One sample per index, each dataset read with its own ``__getitems__`` where it has one."""
        columns = self.datasets.values() if isinstance(self.datasets, dict) else self.datasets
        read = []
        for dataset in columns:
            getitems = getattr(dataset, "__getitems__", None)
            items = getitems(indices) if callable(getitems) else [dataset[i] for i in indices]
            if len(items) != len(indices):
                raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
            read.append(items)
        if isinstance(self.datasets, dict):
            return [dict(zip(self.datasets, sample, strict=True)) for sample in zip(*read, strict=True)]
        return [list(sample) for sample in zip(*read, strict=True)]

    def __len__(self) -> int:
        return self._length


class TensorDataset(Dataset):
    """Samples are the rows of tensors that share their first dimension.

    >>> import tidu
    >>> from tidu.utils.data import TensorDataset
    >>> ds = TensorDataset(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]), tidu.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([3., 4.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects tensors, got {type(t).__name__}")
            if t.ndim == 0 or t.shape[0] != tensors[0].shape[0]:
                raise AssertionError(
                    "Size mismatch between tensors: first dimensions "
                    f"{[tuple(x.shape)[:1] for x in tensors]}"
                )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0] if self.tensors else 0

    def _rows(self, indices: Sequence[int]) -> list[Tensor] | None:
        """The batch ``default_collate`` would make of these rows, by one gather per tensor
        (``None`` where a tensor requires grad: then the per-sample path records it)."""
        if any(t.requires_grad for t in self.tensors):
            return None
        idx = np.asarray(indices, dtype=np.intp)
        return [Tensor(t._data[idx], t.dtype) for t in self.tensors]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``.

    >>> from tidu.utils.data import Subset
    >>> Subset(list("abcde"), [4, 0])[0]
    'e'
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after another.

    >>> from tidu.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1]
    (5, 3, 5)
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))  # ints, as PyTorch's

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None) -> list[Subset]:
    """Split ``dataset`` into random non-overlapping subsets of the given lengths (or fractions
    summing to 1, the remainder spread one by one from the first subset, as PyTorch does).

    >>> import numpy as np
    >>> from tidu.utils.data import random_split
    >>> train, test = random_split(range(10), [0.8, 0.2], generator=np.random.default_rng(0))
    >>> len(train), len(test), sorted(list(train) + list(test)) == list(range(10))
    (8, 2, True)
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = permutation(n, generator).tolist()
    subsets, offset = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[offset : offset + int(length)]))
        offset += int(length)
    return subsets
