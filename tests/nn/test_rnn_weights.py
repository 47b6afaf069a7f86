"""Recurrent layers whose weights are parametrized, normed or pruned, PyTorch's weight lists and
checks (``flatten_parameters``, ``all_weights``, ``check_forward_args``...), and their errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401 - torch.nn.utils.prune is not imported by torch.nn

import tidu
from tests.test_torch_oracle import assert_same_error


def _wrap_cases() -> dict[str, Callable[[Any, Any], None]]:
    return {
        "parametrized-weight-norm": lambda L, m: L.nn.utils.parametrizations.weight_norm(m, "weight_hh_l0"),
        "old-weight-norm": lambda L, m: L.nn.utils.weight_norm(m, "weight_ih_l1_reverse"),
        "old-spectral-norm": lambda L, m: L.nn.utils.spectral_norm(m, "weight_hh_l1"),
        "pruned": lambda L, m: L.nn.utils.prune.l1_unstructured(m, "weight_ih_l0", amount=0.4),
        "weight-norm-on-a-bias": lambda L, m: L.nn.utils.parametrizations.weight_norm(m, "bias_hh_l0", dim=None),
    }


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("case", list(_wrap_cases()))
def test_wrapped_recurrent_weights_match_torch(kind: str, case: str) -> None:
    torch.manual_seed(0)
    ref = getattr(torch.nn, kind)(3, 4, num_layers=2, bidirectional=True).double()
    ours = getattr(tidu.nn, kind)(3, 4, num_layers=2, bidirectional=True).double()
    ours.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    results = []
    for L, m in ((torch, ref), (tidu, ours)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            _wrap_cases()[case](L, m)
        if case == "old-spectral-norm":  # the power-iteration vectors: PyTorch's
            m.weight_hh_l1_u.copy_(L.tensor(ref.weight_hh_l1_u.detach().numpy()))
            m.weight_hh_l1_v.copy_(L.tensor(ref.weight_hh_l1_v.detach().numpy()))
        m.eval()
        xt = L.tensor(x, requires_grad=True)
        out, _ = m(xt)
        (out * L.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        grads = {n: p.grad.numpy() for n, p in m.named_parameters()}
        results.append((out.detach().numpy(), xt.grad.numpy(), grads, len(m.all_weights[0])))
    (out_ref, gx_ref, grads_ref, n_ref), (out, gx, grads, n) = results
    np.testing.assert_allclose(out, out_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-10, atol=1e-12)
    assert grads.keys() == grads_ref.keys() and n == n_ref
    for name, g in grads_ref.items():
        np.testing.assert_allclose(grads[name], g, rtol=1e-9, atol=1e-12, err_msg=name)


def _introspect(L: Any) -> list:
    lstm = L.nn.LSTM(3, 4, num_layers=2, proj_size=2, bidirectional=True, batch_first=True)
    lstm.flatten_parameters()
    x = L.zeros(5, 6, 3)
    lstm.check_forward_args(x, (L.zeros(4, 5, 2), L.zeros(4, 5, 4)), None)
    gru = L.nn.GRU(3, 4, bias=False)
    perm = L.tensor([2, 0, 1])
    return [lstm._flat_weights_names, lstm._all_weights, [[tuple(w.shape) for w in ws] for ws in lstm.all_weights],
            [tuple(w.shape) for w in lstm._flat_weights], lstm.get_expected_hidden_size(x, None),
            lstm.get_expected_cell_size(x, None), gru.get_expected_hidden_size(L.zeros(2, 7, 3), None),
            gru.get_expected_hidden_size(L.zeros(6, 3), L.tensor([3, 2, 1])),
            gru.permute_hidden(L.arange(3.0).reshape(1, 3, 1), perm).flatten().tolist(),
            [t.flatten().tolist() for t in lstm.permute_hidden((L.arange(3.0).reshape(1, 3, 1),) * 2, perm)],
            gru._flat_weights_names]


def test_weight_lists_and_checks_match_torch() -> None:
    assert _introspect(tidu) == _introspect(torch)


def test_flat_weights_follow_assignment_and_conversion() -> None:
    for L in (tidu, torch):
        rnn = L.nn.RNN(2, 3)
        new = L.nn.Parameter(L.zeros(3, 3))
        rnn.weight_hh_l0 = new
        assert rnn._flat_weights[1] is new and rnn.all_weights[0][1] is new
        rnn.double()
        assert rnn._flat_weights[0].dtype == L.float64


@pytest.mark.parametrize("call", [
    "nn.RNN(4, 3.0)", "nn.LSTM(4.0, 3)", "nn.GRU(0, 3)", "nn.GRU(2, 3, bias=1)", "nn.GRU(2, 3, batch_first=None)",
    "nn.LSTM(2, 3)(L.zeros(0, 1, 2))", "nn.GRU(2, 3, batch_first=True)(L.zeros(1, 0, 2))",
    "nn.RNN(2, 3)(L.zeros(1, 2), L.zeros(1, 1, 3))", "nn.LSTM(2, 3)(L.zeros(4, 1, 2), (L.zeros(1, 3),) * 2)",
    "nn.LSTM(2, 3)(L.zeros(4, 2, 2), (L.zeros(1, 2, 3), L.zeros(2, 2, 3)))",
    "nn.LSTM(2, 3)(L.zeros(4, 2), (L.zeros(1, 1, 3), L.zeros(1, 1, 3)))",
    "nn.RNN(2, 3)(L.zeros(1, 1, 1, 2))", "nn.LSTM(2, 3)(L.zeros(2))",
    "nn.GRU(2, 3)(L.zeros(4, 2, 2), L.zeros(1, 3, 3))",
])
def test_recurrent_argument_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"nn": L.nn})


def test_input_dtype_error_matches_torch() -> None:
    messages = []
    for L in (torch, tidu):
        with pytest.raises(ValueError, match="RNN input dtype") as info:
            L.nn.GRU(2, 3)(L.zeros(4, 1, 2, dtype=L.float64))
        messages.append(str(info.value).replace(L.__name__ + ".", ""))
    assert messages[0] == messages[1]


def test_packed_input_with_states_matches_torch() -> None:
    torch.manual_seed(0)
    ref = torch.nn.LSTM(2, 3).double()
    ours = tidu.nn.LSTM(2, 3).double()
    ours.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((4, 3, 2))
    h = np.random.default_rng(2).standard_normal((1, 3, 3))
    results = []
    for L, m in ((torch, ref), (tidu, ours)):
        packed = L.nn.utils.rnn.pack_padded_sequence(L.tensor(x), L.tensor([2, 4, 3]), enforce_sorted=False)
        out, (hn, cn) = m(packed, (L.tensor(h), L.tensor(-h)))
        padded, _ = L.nn.utils.rnn.pad_packed_sequence(out)
        results.append([padded.detach().numpy(), hn.detach().numpy(), cn.detach().numpy()])
    for a, b in zip(results[1], results[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
