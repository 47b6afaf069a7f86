"""Map-style and iterable datasets: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``random_split``."""

from __future__ import annotations

import bisect
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
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - int(start)]


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
