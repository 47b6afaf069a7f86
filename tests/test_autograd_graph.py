"""``grad_fn``'s node API (``next_functions``, ``name``, ``metadata``, ``register_hook``,
``register_prehook``), anomaly mode and ``autograd.grad_mode``, against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled


def _shape(fn, seen=None):  # noqa: ANN001, ANN202
    """The graph below ``fn`` as nested lists: ``"leaf"`` (with whether it is the expected leaf),
    ``None``, or a node's children with their output indices."""
    if fn is None:
        return None
    if "AccumulateGrad" in fn.name():
        return ("leaf", fn.variable.shape[0], fn.next_functions)
    return [(_shape(f), i) for f, i in fn.next_functions]


def _program(L):  # noqa: ANN001, ANN202, N803
    a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = L.tensor([0.5, -0.5], requires_grad=True)
    b = a * 2
    c = b.exp() + a
    vals, vecs = L.linalg.eigh(L.outer(w, w) + L.eye(2))
    d = (c * L.tensor([0.5, 0.5, 0.5])).sum() + vecs[0, 1] + vals.sum()
    return a, c, d


def test_next_functions_match_torch() -> None:
    ours, ref = _program(tidu), _program(torch)
    assert _shape(ours[1].grad_fn) == _shape(ref[1].grad_fn)
    acc = ours[1].grad_fn.next_functions[1][0]
    assert acc.variable is ours[0] and acc is ours[1].grad_fn.next_functions[1][0]
    assert acc.name() == ref[1].grad_fn.next_functions[1][0].name()
    assert ours[0].grad_fn is None and ref[0].grad_fn is None


def test_output_indices_of_a_multi_output_node() -> None:
    a = tidu.tensor([[2.0, 1.0], [1.0, 2.0]], requires_grad=True)
    vals, vecs = tidu.linalg.eigh(a)
    s = vals.sum() + vecs.sum()
    (node_v, iv), (node_w, iw) = s.grad_fn.next_functions
    # the two reductions' inputs: eigh's outputs 0 and 1 (PyTorch's LinalgEighBackward0 the same)
    assert [i for _, i in node_v.next_functions] == [0] or iv == 0
    outs = [f.next_functions[0] for f, _ in s.grad_fn.next_functions]
    assert sorted(i for _, i in outs) == [0, 1] and outs[0][0] == outs[1][0]


def test_reading_a_group_does_not_split_it_or_change_caching() -> None:
    def step(read: bool) -> np.ndarray:
        x = tidu.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = ((x * 2).exp() + x).tanh().sum()
        if read:
            stack = [y.grad_fn]
            while stack:
                fn = stack.pop()
                if fn is not None:
                    fn.metadata["seen"] = True
                    stack += [f for f, _ in fn.next_functions]
            group = y.grad_fn.next_functions[0][0]
            if group.__class__.__name__ == "GroupTrace":
                assert group.group.split_nodes is None
        y.backward()
        return x.grad.numpy()

    step(False)
    before = compiled.size()
    np.testing.assert_array_equal(step(True), step(False))
    assert compiled.size() == before


def _node_hooks(L):  # noqa: ANN001, ANN202, N803
    log = []
    x = L.tensor([1.0, 2.0], requires_grad=True)
    b = x * 3
    c = b.sin()
    c.grad_fn.metadata["tag"] = "sin"
    h1 = b.grad_fn.register_prehook(lambda go: log.append(("pre", [g.tolist() for g in go])))
    h2 = b.grad_fn.register_hook(lambda gi, go: (log.append(("post", len(gi), [g.tolist() for g in go])),
                                                  (gi[0] * 2, *gi[1:]))[1])
    c.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    c.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    h1.remove()
    h2.remove()
    x.grad = None
    c.sum().backward()
    return log, first, x.grad.numpy(), c.grad_fn.metadata


def test_node_hooks_match_torch() -> None:
    got, want = _node_hooks(tidu), _node_hooks(torch)
    assert [e[0] for e in got[0]] == [e[0] for e in want[0]]
    np.testing.assert_allclose(got[0][0][1], want[0][0][1], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)
    assert got[3] == want[3] == {"tag": "sin"}


@pytest.mark.parametrize("fused", [True, False])
def test_anomaly_mode_raises_on_nan_gradient(fused: bool) -> None:
    def run(L):  # noqa: ANN001, ANN202, N803
        x = L.tensor([0.0, 1.0], requires_grad=True)
        y = x.sqrt() * 0 if fused else x.sqrt().reshape(1, 2) @ L.zeros(2, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with L.autograd.detect_anomaly():
                y.sum().backward()

    for L in (torch, tidu):
        with pytest.raises(RuntimeError, match=r"returned nan values in its 0th output\.") as info:
            run(L)
        assert info.type is RuntimeError
    assert not tidu.is_anomaly_enabled()


def test_anomaly_mode_without_nan_check_and_off_gives_nan() -> None:
    x = tidu.tensor([0.0], requires_grad=True)
    with tidu.autograd.set_detect_anomaly(True, check_nan=False):
        (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()
    x.grad = None
    (x.sqrt() * 0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_anomaly_flags_are_tied_and_warn_as_torch() -> None:
    for L in (torch, tidu):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ctx = L.autograd.detect_anomaly(check_nan=False)
        assert "Anomaly Detection has been enabled" in str(caught[0].message)
        with ctx:
            assert L.is_anomaly_enabled() and not L.is_anomaly_check_nan_enabled()
        assert not L.is_anomaly_enabled() and L.is_anomaly_check_nan_enabled()
        L.autograd.set_detect_anomaly(True)
        assert L.is_anomaly_enabled()
        L.autograd.set_detect_anomaly(False)
        assert not L.is_anomaly_enabled()


def test_grad_mode_module() -> None:
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode"):
        assert getattr(tidu.autograd.grad_mode, name) is getattr(tidu, name)
        assert hasattr(torch.autograd.grad_mode, name)
    x = tidu.ones(2, requires_grad=True)
    with tidu.autograd.grad_mode.no_grad():
        assert not (x * 2).requires_grad
