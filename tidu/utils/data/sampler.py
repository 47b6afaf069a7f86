"""Samplers: which dataset indices a loader visits, and in which batches."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np


def stream(generator: Any) -> np.random.Generator:
    """The numpy stream of ``generator`` (``tidu.ops.creation._stream``)."""
    from ...ops.creation import _stream

    return _stream(generator)


def permutation(n: int, generator: Any = None) -> np.ndarray:
    """A random permutation of ``range(n)`` from ``generator`` (see ``stream``)."""
    return stream(generator).permutation(n)


class Sampler:
    """Base class: an iterable of indices (or of index lists, for batch samplers).

    >>> from tidu.utils.data import DataLoader, Sampler
    >>> class Reversed(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> [b.tolist() for b in DataLoader(list(range(5)), batch_size=2, sampler=Reversed(5))]
    [[4, 3], [2, 1], [0]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``.

    >>> from tidu.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh random order on each pass (``tidu.manual_seed`` or ``generator`` make it repeatable).

    >>> import numpy as np
    >>> from tidu.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(4), generator=np.random.default_rng(0)))
    [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            return iter(stream(self.generator).integers(0, n, size=self.num_samples).tolist())
        reps = -(-self.num_samples // n) if n else 0
        order = np.concatenate([permutation(n, self.generator) for _ in range(reps)] or [np.empty(0, np.int64)])
        return iter(order[: self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    >>> from tidu.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class SubsetRandomSampler(Sampler):
    """The given indices in a fresh random order on each pass.

    >>> import numpy as np
    >>> from tidu.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([3, 5, 7], generator=np.random.default_rng(0)))
    [3, 5, 7]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices[i] for i in permutation(len(self.indices), self.generator).tolist())

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with
    replacement by default; without, each index at most once), as ``tidu.multinomial`` draws them.

    >>> import tidu
    >>> from tidu.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
    [1, 1, 1]
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True, generator: Any = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        from ...ops.creation import tensor

        weights_tensor = tensor(weights, dtype="float64") if not hasattr(weights, "dtype") else weights.double()
        if weights_tensor.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        from ...ops.creation import multinomial

        draws = multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        return iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


def get_worker_info() -> None:
    """``None``: tidu's ``DataLoader`` loads in the calling process (PyTorch's answer there).

    >>> from tidu.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return None
