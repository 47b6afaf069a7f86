"""tidu.utils.data against torch.utils.data: batches, collation, lengths, shuffling and errors."""

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tdata
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
import tidu.utils.data as data

Point = collections.namedtuple("Point", "x y")


def same(ours, theirs):
    """Same structure, container types, dtypes and values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tidu.Tensor), type(ours)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), (ours.dtype, theirs.dtype)
        np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys()
        for k in theirs:
            same(ours[k], theirs[k])
    elif isinstance(theirs, list | tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), (type(ours), type(theirs))
        for a, b in zip(ours, theirs):
            same(a, b)
    else:
        assert ours == theirs


def tensors(lib, n=7):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    return lib.tensor(x), lib.tensor(np.arange(n))


class Samples:
    """A map-style dataset with mixed sample types (shared by both libraries)."""

    def __init__(self, n=5):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {
            "image": np.full((2, 2), i, dtype=np.float32),
            "label": i,
            "weight": 0.5 * i,
            "flag": i % 2 == 0,
            "name": f"s{i}",
            "pair": (np.float64(i), [i, -i]),
            "point": Point(i, float(i)),
        }


@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches_as_torch(batch_size, drop_last):
    ours = data.DataLoader(data.TensorDataset(*tensors(tidu)), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(*tensors(torch)), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    batches = list(ours)
    assert len(batches) == len(list(theirs))
    for a, b in zip(batches, theirs):
        same(a, b)


def test_tensor_dataset_that_requires_grad_collates_by_stacking():
    x = tidu.ones(4, 2, requires_grad=True)
    (xb, yb), = data.DataLoader(data.TensorDataset(x, tidu.arange(4)), batch_size=4)
    assert xb.shape == (4, 2) and yb.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("batch_size", [2, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_mixed_samples_collate_as_torch(batch_size, drop_last):
    ours = data.DataLoader(Samples(), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(Samples(), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        same(a, b)


def test_no_batching_converts_each_sample_as_torch():
    for a, b in zip(data.DataLoader(Samples(3), batch_size=None), tdata.DataLoader(Samples(3), batch_size=None),
                    strict=True):
        same(a, b)


@pytest.mark.parametrize("batch", [
    [1, 2, 3],
    [1.5, 2.5],
    [True, False],
    [np.int32(1), np.int32(2)],
    ["a", "b"],
    [(1, 2.0), (3, 4.0)],
    [[1, 2], [3, 4]],
    [Point(1, 2), Point(3, 4)],
    [{"a": np.ones(2), "b": [1, 2]}, {"a": np.zeros(2), "b": [3, 4]}],
])
def test_default_collate_as_torch(batch):
    same(data.default_collate(batch), tdata.default_collate(batch))


def test_default_collate_of_tensors_keeps_the_dtype():
    same(data.default_collate([tidu.tensor([1, 2]), tidu.tensor([3, 4])]),
         tdata.default_collate([torch.tensor([1, 2]), torch.tensor([3, 4])]))


def test_iterable_dataset_batches_as_torch():
    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    class TStream(tdata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for drop_last in (False, True):
        ours = data.DataLoader(Stream(), batch_size=3, drop_last=drop_last)
        theirs = tdata.DataLoader(TStream(), batch_size=3, drop_last=drop_last)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            same(a, b)


def test_shuffle_visits_every_sample_once_and_is_seeded():
    loader = data.DataLoader(data.TensorDataset(tidu.arange(20)), batch_size=6, shuffle=True)

    def epoch():
        return [int(v) for (b,) in loader for v in b.tolist()]

    tidu.manual_seed(0)
    first, second = epoch(), epoch()
    assert sorted(first) == list(range(20)) and sorted(second) == list(range(20))
    assert first != second and first != list(range(20))
    tidu.manual_seed(0)
    assert epoch() == first
    generated = data.DataLoader(data.TensorDataset(tidu.arange(20)), batch_size=6, shuffle=True,
                                generator=np.random.default_rng(5))
    assert [v for (b,) in generated for v in b.tolist()] == np.random.default_rng(5).permutation(20).tolist()


def test_samplers_and_datasets():
    assert list(data.BatchSampler(range(5), 2, False)) == list(tdata.BatchSampler(range(5), 2, False))
    assert len(data.BatchSampler(range(5), 2, True)) == len(tdata.BatchSampler(range(5), 2, True)) == 2
    assert sorted(data.RandomSampler(range(6), replacement=True, num_samples=4)) != []
    assert len(data.RandomSampler(range(3), num_samples=7)) == 7
    assert sorted(data.RandomSampler(range(3), num_samples=6)) == [0, 0, 1, 1, 2, 2]
    concat = data.ConcatDataset([[1, 2], [3]]) + data.Subset([9, 8, 7], [2])
    assert [concat[i] for i in range(len(concat))] == [1, 2, 3, 7]
    sizes = data.ConcatDataset([[1, 2], [3]]).cumulative_sizes  # Python ints, as PyTorch's
    assert sizes == tdata.ConcatDataset([[1, 2], [3]]).cumulative_sizes and {type(s) for s in sizes} == {int}
    parts = data.random_split(range(10), [3, 7], generator=np.random.default_rng(1))
    assert [len(p) for p in parts] == [3, 7]
    assert [len(p) for p in data.random_split(range(5), [0.5, 0.5])] == [3, 2]
    batch_loader = data.DataLoader(Samples(4), batch_sampler=[[3, 1], [0]])
    assert [b["label"].tolist() for b in batch_loader] == [[3, 1], [0]] and len(batch_loader) == 2


def _raises_like_torch(make, cls, match):
    with pytest.raises(cls, match=match):
        make(data, tidu)
    with pytest.raises(cls):
        make(tdata, torch)


@pytest.mark.parametrize("make,cls,match", [
    (lambda d, lib: d.DataLoader(Samples(), sampler=[0, 1], shuffle=True), ValueError, "mutually exclusive"),
    (lambda d, lib: d.DataLoader(Samples(), batch_size=None, drop_last=True), ValueError, "drop_last"),
    (lambda d, lib: d.DataLoader(Samples(), batch_sampler=[[0]], batch_size=2), ValueError, "batch_sampler"),
    (lambda d, lib: d.DataLoader(Samples(), batch_size=0), ValueError, "positive integer"),
    (lambda d, lib: d.DataLoader(Samples(), num_workers=-1), ValueError, "non-negative"),
    (lambda d, lib: d.DataLoader(type("S", (d.IterableDataset,), {"__iter__": lambda s: iter([])})(), shuffle=True),
     ValueError, "expected unspecified shuffle option"),
    (lambda d, lib: d.TensorDataset(lib.ones(3), lib.ones(4)), AssertionError, "Size mismatch between tensors"),
    (lambda d, lib: d.default_collate([object()]), TypeError, "default_collate: batch must contain"),
    (lambda d, lib: d.default_collate([[1, 2], [3]]), RuntimeError, "equal size"),
    (lambda d, lib: d.default_collate([lib.ones(2), lib.ones(3)]), RuntimeError, "stack expects each tensor"),
    (lambda d, lib: d.random_split(range(5), [2, 2]), ValueError, "Sum of input lengths"),
])
def test_bad_input_raises_torchs_error(make, cls, match):
    _raises_like_torch(make, cls, match)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 30), batch_size=st.integers(1, 12), drop_last=st.booleans(), width=st.integers(0, 3))
def test_fuzz_batches_as_torch(n, batch_size, drop_last, width):
    x = np.arange(n * width, dtype=np.float64).reshape(n, width)
    ours = data.DataLoader(data.TensorDataset(tidu.tensor(x), tidu.arange(n)), batch_size=batch_size,
                           drop_last=drop_last)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.arange(n)), batch_size=batch_size,
                              drop_last=drop_last)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        same(a, b)
