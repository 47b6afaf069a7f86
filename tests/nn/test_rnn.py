"""``RNN``, ``LSTM``, ``GRU`` and their cells against PyTorch: outputs, final states and every
gradient from PyTorch's own parameters, reprs, parameter names and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _flat(out: Any) -> list[Any]:
    if isinstance(out, tuple):
        return [t for item in out for t in _flat(item)]
    return [out]


def _run(make: Callable, x: np.ndarray, hx: Callable | None, device: str = "cpu") -> list[list[np.ndarray]]:
    torch.manual_seed(0)
    ref = make(torch).double()
    ours = make(tidu).double().to(device)
    assert repr(ours) == repr(ref)
    assert list(ours.state_dict()) == list(ref.state_dict())
    ours.load_state_dict({k: tidu.tensor(v.detach().numpy(), device=device) for k, v in ref.state_dict().items()})
    results = []
    for lib, module, where in ((torch, ref, "cpu"), (tidu, ours, device)):
        xt = lib.tensor(x, dtype=lib.float64, device=where, requires_grad=True)
        args = [xt] if hx is None else [xt, hx(lib, where)]
        outs = _flat(module(*args))
        loss = sum((o * (lib.arange(o.numel(), dtype=lib.float64, device=where).reshape(o.shape) % 7 - 3)).sum()
                   for o in outs)
        loss.backward()
        results.append([t.detach().cpu().numpy() for t in [*outs, xt.grad, *[p.grad for p in module.parameters()]]])
    return results


def _state(shape: tuple, value: float) -> Callable:
    return lambda lib, where: lib.full(shape, value, dtype=lib.float64, device=where)


CASES = {
    "lstm": (lambda L: L.nn.LSTM(3, 4), (5, 2, 3), None),
    "lstm-2-layers-bidirectional-batch-first": (
        lambda L: L.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), (2, 5, 3), None),
    "lstm-proj": (lambda L: L.nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True), (5, 2, 3), None),
    "lstm-states": (lambda L: L.nn.LSTM(3, 4, num_layers=2), (5, 2, 3),
                    lambda L, w: (_state((2, 2, 4), 0.5)(L, w), _state((2, 2, 4), -0.3)(L, w))),
    "lstm-unbatched": (lambda L: L.nn.LSTM(3, 4, bidirectional=True), (5, 3), None),
    "gru-2-layers-no-bias": (lambda L: L.nn.GRU(3, 4, num_layers=2, bias=False), (5, 2, 3), None),
    "gru-unbatched-bidirectional": (lambda L: L.nn.GRU(3, 4, bidirectional=True), (5, 3), None),
    "gru-state": (lambda L: L.nn.GRU(3, 4, batch_first=True), (2, 5, 3), lambda L, w: _state((1, 2, 4), 0.2)(L, w)),
    "rnn-relu-3-layers": (lambda L: L.nn.RNN(3, 4, nonlinearity="relu", num_layers=3), (5, 2, 3), None),
    "rnn-state": (lambda L: L.nn.RNN(3, 4, batch_first=True), (2, 5, 3), lambda L, w: _state((1, 2, 4), 0.5)(L, w)),
    "lstm-cell": (lambda L: L.nn.LSTMCell(3, 4), (2, 3), None),
    "lstm-cell-state": (lambda L: L.nn.LSTMCell(3, 4), (2, 3),
                        lambda L, w: (_state((2, 4), 1.0)(L, w), _state((2, 4), -1.0)(L, w))),
    "gru-cell-unbatched": (lambda L: L.nn.GRUCell(3, 4), (3,), None),
    "rnn-cell-relu-no-bias": (lambda L: L.nn.RNNCell(3, 4, nonlinearity="relu", bias=False), (2, 3),
                              lambda L, w: _state((2, 4), 1.0)(L, w)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_recurrent_layers_match_torch(name: str) -> None:
    make, shape, hx = CASES[name]
    ref, ours = _run(make, np.random.default_rng(0).standard_normal(shape), hx)
    for a, b in zip(ours, ref, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["lstm-2-layers-bidirectional-batch-first", "gru-state", "lstm-cell-state"])
def test_recurrent_layers_on_cuda_match_torch(name: str) -> None:
    make, shape, hx = CASES[name]
    ref, ours = _run(make, np.random.default_rng(1).standard_normal(shape), hx, device="cuda")
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    "nn.RNN(3, 4, nonlinearity='gelu')", "nn.LSTM(3, 4)(L.ones(2, 5, 2))", "nn.GRU(3, 4)(L.ones(2, 2, 3), L.ones(2, 2, 4))",
    "nn.LSTM(3, 4, proj_size=4)", "nn.GRU(3, 4)(L.ones(2, 2, 2, 3))", "nn.LSTMCell(3, 4)(L.ones(2, 5))",
    "nn.RNN(3, 4, dropout=1.5)", "nn.GRU(3, 4, proj_size=2)",
])
def test_recurrent_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"nn": L.nn})


def test_dropout_between_layers_and_its_warning() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        tidu.nn.LSTM(3, 4, dropout=0.5)
    tidu.manual_seed(0)
    lstm = tidu.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = tidu.ones(5, 2, 3)
    lstm.eval()
    first, second = lstm(x)[0], lstm(x)[0]
    np.testing.assert_array_equal(first.detach().numpy(), second.detach().numpy())  # no dropout in eval()
    lstm.train()
    assert not np.array_equal(lstm(x)[0].detach().numpy(), first.detach().numpy())
