"""``DistributedSampler``: each of ``num_replicas`` processes reads its own share of a dataset."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .sampler import Sampler

_NO_PROCESS_GROUP = ("Default process group has not been initialized, please make sure to call init_process_group.")


class DistributedSampler(Sampler):
    """The indices of replica ``rank`` of ``num_replicas``: every ``num_replicas``-th index of the
    (shuffled) index list from ``rank``. Without ``drop_last`` the list is padded with its own first
    indices to a multiple of ``num_replicas``; with it, the tail is cut. The shuffle draws
    ``randperm`` from a generator seeded with ``seed + epoch`` (call ``set_epoch`` each epoch), so
    every replica shuffles alike. tidu has no process group: give ``num_replicas`` and ``rank``
    (without them it raises PyTorch's error).

    tidu's generator is not PyTorch's, so a shuffled order differs from PyTorch's for the same
    seed; the unshuffled lists, the partition and the padding are PyTorch's.

    >>> from tidu.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False)) for r in (0, 1)]
    [[0, 2, 4], [1, 3, 0]]
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False, drop_last=True))
    [1, 3]
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None, shuffle: bool = True,
                 seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            raise ValueError(_NO_PROCESS_GROUP)
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas, self.rank = num_replicas, rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle, self.seed = shuffle, seed

    def __iter__(self) -> Iterator[int]:
        if self.shuffle:
            from ... import ops

            g = ops.creation.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ops.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size ({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(
                f"Number of subsampled indices ({len(indices)}) does not match num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch, which seeds the next shuffle (``seed + epoch``)."""
        self.epoch = epoch
