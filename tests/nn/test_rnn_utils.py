"""``tidu.nn.utils.rnn`` against PyTorch: packing, padding and unpadding (values, layouts,
gradients, errors), and the recurrent layers on packed batches."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _same(ours: Any, ref: Any) -> None:
    """Equal values, shapes and dtypes (``None`` for ``None``)."""
    if ref is None:
        assert ours is None
        return
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=1e-12, atol=1e-12)
    assert _np(ours).shape == _np(ref).shape


def _packed_same(ours: Any, ref: Any) -> None:
    assert type(ours).__name__ == "PackedSequence" and isinstance(ours, tuple)
    for a, b in zip(ours, ref, strict=True):
        _same(a, b)


def _weighted_sum(lib: Any, out: Any) -> Any:
    return (out * (lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape) % 5 - 2)).sum()


PADDED = np.random.default_rng(0).standard_normal((5, 4, 3))


@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 5], (4, 4, 4, 4)])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_then_pad_round_trip_matches_torch(lengths: list[int], batch_first: bool, as_tensor: bool) -> None:
    sorted_ = list(lengths) == sorted(lengths, reverse=True)
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(PADDED.transpose(1, 0, 2) if batch_first else PADDED, requires_grad=True)
        lens = lib.tensor(lengths) if as_tensor else lengths
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=batch_first, enforce_sorted=sorted_)
        padded, out_lengths = lib.nn.utils.rnn.pad_packed_sequence(packed, batch_first=batch_first,
                                                                   padding_value=-1.5, total_length=7)
        (_weighted_sum(lib, packed.data) + _weighted_sum(lib, padded)).backward()
        results.append((packed, padded, out_lengths, x.grad))
    (packed, padded, out_lengths, grad), (ref_packed, ref_padded, ref_lengths, ref_grad) = results
    _packed_same(packed, ref_packed)
    for a, b in ((padded, ref_padded), (out_lengths, ref_lengths), (grad, ref_grad)):
        _same(a, b)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first: bool, padding_side: str) -> None:
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, 2, 3)) for n in (2, 4, 0, 3)]
    results = []
    for lib in (torch, tidu):
        seqs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=7.0,
                                            padding_side=padding_side)
        _weighted_sum(lib, out).backward()
        results.append([out, *(s.grad for s in seqs)])
    for a, b in zip(*results, strict=True):
        _same(a, b)


def test_pad_sequence_of_integers_and_of_a_tensor_matches_torch() -> None:
    for lib_args in ([[1, 2, 3], [4]], [[5], [6, 7]]):
        ours = tidu.nn.utils.rnn.pad_sequence([tidu.tensor(a) for a in lib_args], padding_value=-1)
        _same(ours, torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in lib_args], padding_value=-1))
    _same(tidu.nn.utils.rnn.pad_sequence(tidu.tensor(PADDED)), torch.nn.utils.rnn.pad_sequence(torch.tensor(PADDED)))


@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_sequence_and_unpacking_match_torch(enforce_sorted: bool) -> None:
    rng = np.random.default_rng(2)
    lengths = [4, 3, 3, 1] if enforce_sorted else [1, 4, 3, 4]
    arrays = [rng.standard_normal((n, 2)) for n in lengths]
    results = []
    for lib in (torch, tidu):
        seqs = [lib.tensor(a, requires_grad=True) for a in arrays]
        packed = lib.nn.utils.rnn.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        unpacked = lib.nn.utils.rnn.unpack_sequence(packed)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(packed)
        unpadded = lib.nn.utils.rnn.unpad_sequence(padded, lens)
        sum(_weighted_sum(lib, s) for s in [*unpacked, *unpadded]).backward()
        results.append((packed, [*unpacked, *unpadded, *(s.grad for s in seqs)]))
    _packed_same(results[1][0], results[0][0])
    for a, b in zip(results[1][1], results[0][1], strict=True):
        _same(a, b)


def test_packed_sequence_construction_and_conversion_match_torch() -> None:
    ours = tidu.nn.utils.rnn.PackedSequence(tidu.ones(3), tidu.tensor([2, 1]), tidu.tensor([1, 0]))
    ref = torch.nn.utils.rnn.PackedSequence(torch.ones(3), torch.tensor([2, 1]), torch.tensor([1, 0]))
    _packed_same(ours, ref)
    _packed_same(ours.double(), ref.double())
    _packed_same(ours.to(tidu.float64), ref.to(torch.float64))
    assert ours.is_cuda is ref.is_cuda
    assert repr(ours) == repr(ref).replace("torch.", "tidu.")
    _same(tidu.nn.utils.rnn.invert_permutation(tidu.tensor([2, 0, 3, 1])),
          torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 3, 1])))
    assert tidu.nn.utils.rnn.invert_permutation(None) is None


ERRORS: dict[str, Callable[[Any], Any]] = {
    "unsorted": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 3), [2, 4, 1]),
    "zero-length": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 3), [4, 0, 0]),
    "lengths-count": lambda L: L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 3), [4, 2]),
    "padding-side": lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2)], padding_side="up"),
    "empty": lambda L: L.nn.utils.rnn.pad_sequence([]),
    "trailing-shape": lambda L: L.nn.utils.rnn.pad_sequence([L.ones(2, 3), L.ones(3, 2)]),
    "total-length": lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_padded_sequence(L.ones(4, 3), [4, 2, 1]), total_length=2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    with pytest.raises(Exception) as ref:
        ERRORS[name](torch)
    with pytest.raises(type(ref.value)) as ours:
        ERRORS[name](tidu)
    assert str(ours.value) == str(ref.value)


RECURRENT = {
    "lstm-sorted": (lambda L: L.nn.LSTM(3, 4), [5, 3, 3, 1], False, None),
    "lstm-unsorted-2-layers-bidirectional-batch-first": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), [2, 5, 1, 4], True, None),
    "lstm-proj-unsorted-states": (
        lambda L: L.nn.LSTM(3, 4, proj_size=2, bidirectional=True), [3, 5, 1, 5], False,
        lambda L: (L.linspace(-1, 1, 16, dtype=L.float64).reshape(2, 4, 2),
                   L.linspace(1, -1, 32, dtype=L.float64).reshape(2, 4, 4))),
    "gru-unsorted-state-2-layers": (lambda L: L.nn.GRU(3, 4, num_layers=2), [1, 3, 5, 2], False,
                                    lambda L: L.linspace(-1, 1, 32, dtype=L.float64).reshape(2, 4, 4)),
    "gru-sorted-bidirectional-batch-first": (lambda L: L.nn.GRU(3, 4, bidirectional=True, batch_first=True),
                                             [5, 5, 2, 2], True, None),
    "rnn-relu-unsorted-3-layers-bidirectional": (
        lambda L: L.nn.RNN(3, 4, nonlinearity="relu", num_layers=3, bidirectional=True), [4, 1, 5, 4], False, None),
    "rnn-tanh-state": (lambda L: L.nn.RNN(3, 4), [5, 4, 2, 1], False,
                       lambda L: L.linspace(-1, 1, 16, dtype=L.float64).reshape(1, 4, 4)),
}


def _flat(out: Any) -> list[Any]:
    if isinstance(out, torch.nn.utils.rnn.PackedSequence | tidu.nn.utils.rnn.PackedSequence):
        return [out.data]
    if isinstance(out, tuple):
        return [t for item in out for t in _flat(item)]
    return [out]


@pytest.mark.parametrize("name", list(RECURRENT))
def test_recurrent_layers_on_packed_batches_match_torch(name: str) -> None:
    make, lengths, batch_first, hx = RECURRENT[name]
    torch.manual_seed(0)
    ref = make(torch).double()
    ours = make(tidu).double()
    ours.load_state_dict({k: tidu.tensor(_np(v)) for k, v in ref.state_dict().items()})
    x = PADDED.transpose(1, 0, 2) if batch_first else PADDED
    sorted_ = lengths == sorted(lengths, reverse=True)
    results = []
    for lib, module in ((torch, ref), (tidu, ours)):
        xt = lib.tensor(x, requires_grad=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(xt, lengths, batch_first=batch_first, enforce_sorted=sorted_)
        states = None if hx is None else hx(lib)
        if states is not None:
            for s in states if isinstance(states, tuple) else (states,):
                s.requires_grad_()
        output, final = module(packed, states)
        padded, _ = lib.nn.utils.rnn.pad_packed_sequence(output, batch_first=batch_first)
        outs = [padded, *_flat(final)]
        sum(_weighted_sum(lib, o) for o in outs).backward()
        state_grads = [] if states is None else [s.grad for s in _flat(states)]
        results.append((output, [*outs, xt.grad, *state_grads, *(p.grad for p in module.parameters())]))
    ours_out, ref_out = results[1][0], results[0][0]
    for a, b in zip(ours_out[1:], ref_out[1:], strict=True):
        _same(a, b)
    for a, b in zip(results[1][1] + [ours_out.data], results[0][1] + [ref_out.data], strict=True):
        assert _np(a).shape == _np(b).shape
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
