"""meganeura's array ``DataLoader``: fixed-size batches over flat sample and label arrays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_LCG_MUL = 6364136223846793005
_LCG_INC = 1442695040888963407
_MASK = (1 << 64) - 1


@dataclass
class Batch:
    """One batch: ``data`` is ``(batch_size, sample_size)``, ``labels`` ``(batch_size, label_size)``
    (float32 numpy arrays; meganeura's are the same values, flat).

    >>> from tidu.train import DataLoader
    >>> batch = DataLoader([1, 2, 3, 4], [0, 1], sample_size=2, label_size=1, batch_size=2).next_batch()
    >>> batch.data.shape, batch.labels.shape
    ((2, 2), (2, 1))
    """

    data: np.ndarray
    labels: np.ndarray


class DataLoader:
    """Batches over flat arrays of samples and labels (meganeura's loader).

    Args:
        data: all samples, flat (or any shape) with ``sample_size`` values per sample.
        labels: all labels, ``label_size`` values per sample (one-hot rows, targets...).
        sample_size, label_size: values per sample and per label.
        batch_size: samples per batch; the last partial batch is dropped.

    ``shuffle(seed)`` permutes the current order (Fisher-Yates driven by a 64-bit LCG, so the
    order depends only on the seeds); ``reset()`` rewinds; ``next_batch()`` returns the next
    ``Batch`` or ``None`` at the end.

    >>> from tidu.train import DataLoader
    >>> loader = DataLoader(list(range(10)), [0.0] * 5, sample_size=2, label_size=1, batch_size=2)
    >>> len(loader), loader.num_batches()
    (5, 2)
    >>> loader.next_batch().data
    array([[0., 1.],
           [2., 3.]], dtype=float32)
    >>> _ = loader.next_batch(); loader.next_batch() is None
    True
    """

    def __init__(self, data: Any, labels: Any, sample_size: int, label_size: int, batch_size: int) -> None:
        data = np.asarray(data, dtype=np.float32).reshape(-1)
        labels = np.asarray(labels, dtype=np.float32).reshape(-1)
        if sample_size <= 0 or label_size <= 0 or batch_size <= 0:
            raise ValueError(
                f"sample_size, label_size and batch_size must be positive, got {sample_size}, {label_size}, {batch_size}"
            )
        if data.size % sample_size != 0:
            raise ValueError(f"data length not divisible by sample_size ({data.size} values, sample_size {sample_size})")
        if labels.size % label_size != 0:
            raise ValueError(f"labels length not divisible by label_size ({labels.size} values, label_size {label_size})")
        n = data.size // sample_size
        if labels.size // label_size != n:
            raise ValueError(f"data has {n} samples but labels has {labels.size // label_size}")
        if n < batch_size:
            raise ValueError(f"dataset ({n} samples) smaller than batch_size ({batch_size})")
        self.data = data.reshape(n, sample_size)
        self.labels = labels.reshape(n, label_size)
        self.sample_size = sample_size
        self.label_size = label_size
        self.batch_size = batch_size
        self.indices = np.arange(n)
        self.position = 0

    def __len__(self) -> int:
        return self.data.shape[0]

    def is_empty(self) -> bool:
        return len(self) == 0

    def num_batches(self) -> int:
        """Full batches per pass (the last partial batch is dropped)."""
        return len(self) // self.batch_size

    def shuffle(self, seed: int) -> None:
        """Permute the current order, deterministically for a given seed (cumulative over calls)."""
        state = (int(seed) * _LCG_MUL + _LCG_INC) & _MASK
        order = self.indices.tolist()
        for i in range(len(order) - 1, 0, -1):
            state = (state * _LCG_MUL + _LCG_INC) & _MASK
            j = (state >> 33) % (i + 1)
            order[i], order[j] = order[j], order[i]
        self.indices = np.asarray(order)

    def reset(self) -> None:
        """Start the next pass from the first batch."""
        self.position = 0

    def next_batch(self) -> Batch | None:
        """The next full batch, or ``None`` when fewer than ``batch_size`` samples remain."""
        end = self.position + self.batch_size
        if end > len(self):
            return None
        idx = self.indices[self.position : end]
        self.position = end
        return Batch(self.data[idx], self.labels[idx])

    def __iter__(self) -> Any:
        """One pass from the current position: ``(data, labels)`` pairs."""
        while (batch := self.next_batch()) is not None:
            yield batch.data, batch.labels
