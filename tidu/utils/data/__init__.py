"""Datasets, samplers and the batching ``DataLoader``, as ``torch.utils.data``.

>>> import tidu
>>> from tidu.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tidu.arange(5.0), tidu.arange(5))
>>> [y.tolist() for x, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from . import distributed
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
    get_worker_info,
)

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler", "Sampler",
    "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler", "default_collate",
    "default_convert", "get_worker_info", "random_split", "ChainDataset", "StackDataset", "DistributedSampler",
    "distributed",
]
