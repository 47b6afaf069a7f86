"""``DataLoader``: batches of a dataset, in order or shuffled, with a collate function."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Iterate over ``dataset`` in batches, as ``torch.utils.data.DataLoader``.

    Args:
        dataset: a map-style dataset (``__getitem__`` + ``__len__``) or an ``IterableDataset``.
        batch_size: samples per batch (``None``: no batching, each sample is converted alone).
        shuffle: a new random order each epoch (``tidu.manual_seed``, or ``generator``).
        sampler, batch_sampler: custom index orders (exclusive with ``shuffle`` and batching
            options, as in PyTorch).
        collate_fn: merges a list of samples (default ``default_collate``).
        drop_last: drop the last batch when it is smaller than ``batch_size``.
        generator: a ``tidu.Generator`` (or ``numpy.random.Generator``) for the shuffled order.
        num_workers: accepted for compatibility; loading always runs in this process.

    A ``TensorDataset`` with the default collate is batched by one gather per tensor, not
    sample by sample (same batches, much faster).

    >>> import tidu
    >>> from tidu.utils.data import DataLoader, TensorDataset
    >>> x = tidu.arange(10.0).reshape(5, 2)
    >>> loader = DataLoader(TensorDataset(x, tidu.arange(5)), batch_size=2, drop_last=True)
    >>> len(loader)
    2
    >>> for xb, yb in loader:
    ...     print(xb.shape, yb)
    tidu.Size([2, 2]) tensor([0, 1])
    tidu.Size([2, 2]) tensor([2, 3])
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[Any] | None = None,
        batch_sampler: Iterable[list[Any]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[Any], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Any = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
    ) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if isinstance(dataset, IterableDataset):
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} option, but got {name}={value}"
                    )
        elif sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )
        self.dataset = dataset
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.generator = generator
        self._iterable = isinstance(dataset, IterableDataset)
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.batch_size = batch_size
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            return self._iter_stream()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)  # type: ignore[union-attr]
        return (self._fetch(indices) for indices in self.batch_sampler)

    def _fetch(self, indices: list[Any]) -> Any:
        rows = getattr(self.dataset, "_rows", None)
        if rows is not None and self.collate_fn is default_collate:
            batch = rows(indices)
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(indices) if getitems is not None else [self.dataset[i] for i in indices]
        return self.collate_fn(samples)

    def _iter_stream(self) -> Iterator[Any]:
        if self.batch_size is None:
            yield from (self.collate_fn(sample) for sample in self.dataset)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]
