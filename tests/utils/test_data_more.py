"""StackDataset, ChainDataset and DistributedSampler against PyTorch."""

import itertools

import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _count(lib, n):
    class Count(lib.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n

    return Count()


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value.tolist() if hasattr(value, "tolist") else value


def test_stack_dataset_as_torch():
    results = []
    for lib in (tidu, torch):
        data = lib.utils.data
        base = data.TensorDataset(lib.arange(6.0).reshape(3, 2))
        by_pos, by_name = data.StackDataset(base, [10, 11, 12]), data.StackDataset(x=lib.arange(3), y=base)
        loaded = [_plain(b) for ds in (by_pos, by_name) for b in data.DataLoader(ds, batch_size=2)]
        results.append([_plain(by_pos[2]), _plain(by_name[0]), len(by_pos), loaded,
                        _plain(by_pos.__getitems__([0, 2])), _plain(by_name.__getitems__([1]))])
    assert results[0] == results[1]
    assert_same_error(lambda L: L.utils.data.StackDataset([1], x=[1]))
    assert_same_error(lambda L: L.utils.data.StackDataset([1], [1, 2]))
    assert_same_error(lambda L: L.utils.data.StackDataset(x=[1], y=[1, 2]))
    assert_same_error(lambda L: L.utils.data.StackDataset())


def test_chain_dataset_as_torch():
    results = []
    for lib in (tidu, torch):
        chain = lib.utils.data.ChainDataset([_count(lib, 2), _count(lib, 3)])
        added = _count(lib, 1) + _count(lib, 2)
        results.append([list(chain), len(chain), list(added), type(added).__name__,
                        [_plain(b) for b in lib.utils.data.DataLoader(chain, batch_size=2)]])
    assert results[0] == results[1]
    assert_same_error(lambda L: list(L.utils.data.ChainDataset([[1, 2]])))
    assert_same_error(lambda L: len(L.utils.data.ChainDataset([[1, 2]])))


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False), (12, 4, True),
                                                  (7, 7, False), (1, 3, False)])
def test_distributed_sampler_unshuffled_lists_are_torchs(n, replicas, drop_last):
    for rank in range(replicas):
        ours = tidu.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        ref = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(ref) and len(ours) == len(ref)
        assert (ours.num_samples, ours.total_size) == (ref.num_samples, ref.total_size)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False), (16, 4, False)])
def test_distributed_sampler_shuffle_partitions_pads_and_repeats_per_epoch(n, replicas, drop_last):
    def lists(epoch, seed=0):
        out = []
        for rank in range(replicas):
            sampler = tidu.utils.data.DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            sampler.set_epoch(epoch)
            out.append(list(sampler))
        return out

    first = lists(0)
    ref_sizes = [len(torch.utils.data.DistributedSampler(range(n), replicas, r, drop_last=drop_last))
                 for r in range(replicas)]
    assert [len(x) for x in first] == ref_sizes
    flat = list(itertools.chain(*first))
    if drop_last:  # disjoint
        assert len(set(flat)) == len(flat)
    else:  # every index, the padding repeats the first ones of the shuffled list
        assert set(flat) == set(range(n))
        order = [first[i % replicas][i // replicas] for i in range(len(flat))]
        assert order[n:] == (order[:n] * len(order))[:len(order) - n]
    assert lists(0) == first  # the same epoch, the same lists
    assert lists(3) != first or n <= 2  # another epoch reshuffles
    assert lists(3) == lists(3) and lists(0, seed=1) != first or n <= 2


def test_distributed_sampler_errors_as_torch():
    assert_same_error(lambda L: L.utils.data.DistributedSampler(range(4)))
    assert_same_error(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2))
    assert_same_error(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=2))
    assert_same_error(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=-1))
    sampler = tidu.utils.data.DistributedSampler(tidu.utils.data.TensorDataset(tidu.arange(6)), 2, 1)
    assert [b[0].tolist() for b in tidu.utils.data.DataLoader(sampler.dataset, batch_size=3, sampler=sampler)]
