"""Cached backward programs: reused by nodes of the same form, never served stale."""

import numpy as np
import pytest

import tidu
from tidu.core import programs


def test_a_repeated_step_reuses_programs(monkeypatch):
    monkeypatch.setattr(programs, "ENABLED", True)  # this test is about the cache: on even under TIDU_CACHE=0
    programs.clear()
    w = tidu.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    x = tidu.tensor([[1.0, 2.0]])
    tidu.tanh(x @ w).sum().backward()
    built = programs.size()
    assert built > 0
    tidu.tanh(x @ w).sum().backward()
    assert programs.size() == built


def test_changed_shape_gets_its_own_program():
    for n in (2, 3, 5):
        x = tidu.tensor(np.arange(1.0, n + 1), requires_grad=True)
        (x * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.arange(1.0, n + 1))


def test_same_operation_with_shared_or_distinct_inputs():
    x = tidu.tensor([3.0], requires_grad=True)
    y = tidu.tensor([4.0], requires_grad=True)
    (x * x).sum().backward()  # one tensor twice: d/dx = 2x
    assert x.grad.tolist() == [6.0]
    x.grad = None
    (x * y).sum().backward()  # same application, two tensors
    assert x.grad.tolist() == [4.0] and y.grad.tolist() == [3.0]


def test_which_inputs_require_grad_is_part_of_the_key():
    a = tidu.tensor([2.0], requires_grad=True)
    b = tidu.tensor([5.0])
    (a * b).sum().backward()
    assert a.grad.tolist() == [5.0]
    a2 = tidu.tensor([2.0])
    b2 = tidu.tensor([5.0], requires_grad=True)
    (a2 * b2).sum().backward()
    assert b2.grad.tolist() == [2.0] and a2.grad is None


def _saved(t):
    """What the node that made ``t`` saved: ("in", position) or ("out", slot) per saved value."""
    node = t.grad_fn.node
    ins = [k for _, k, _ in node.input_edges]
    outs = node.computation.output_keys()
    return sorted(("in", ins.index(k)) if k in ins else ("out", outs.index(k)) for k in node.saved_data)


def test_saving_plans_follow_the_input_pattern_of_each_call():
    """One signature (mul of two float32[2]) called with every input pattern in turn: each call
    saves what its own backward reads and gets its own gradient (no plan served stale)."""
    x = tidu.tensor([3.0, -1.0], requires_grad=True)
    y = tidu.tensor([4.0, 2.0], requires_grad=True)
    c = tidu.tensor([5.0, 7.0])
    h = x * 1.0  # a non-leaf: saved only when its consumer's backward reads it
    cases = [  # (inputs, saved by the node, expected gradient of sum(a * b) for x and y)
        ((x, y), [("in", 0), ("in", 1)], ([4.0, 2.0], [3.0, -1.0])),
        ((x, c), [("in", 0), ("in", 1)], ([5.0, 7.0], None)),  # x: a leaf, saved to get .grad
        ((c, y), [("in", 0), ("in", 1)], (None, [5.0, 7.0])),
        ((x, x), [("in", 0)], ([6.0, -2.0], None)),
        ((h, c), [("in", 1)], ([5.0, 7.0], None)),
        ((h, h), [("in", 0)], ([6.0, -2.0], None)),
        ((x, y), [("in", 0), ("in", 1)], ([4.0, 2.0], [3.0, -1.0])),
    ]
    for (a, b), saved, (gx, gy) in cases:
        x.grad = y.grad = None
        out = a * b
        assert _saved(out) == saved, (a, b)
        out.sum().backward(retain_graph=True)
        assert (None if x.grad is None else x.grad.tolist()) == gx
        assert (None if y.grad is None else y.grad.tolist()) == gy


def test_a_leaf_input_is_saved_only_when_it_requires_grad():
    x = tidu.tensor([0.5, 1.0], requires_grad=True)
    assert _saved(tidu.tanh(x)) == [("in", 0), ("out", 0)]  # the leaf, for .grad; tanh reads its output
    assert _saved(tidu.tanh(x * 2.0)) == [("out", 0)]
    assert _saved(tidu.sin(x * 2.0)) == [("in", 0)]


def test_a_saved_output_is_version_checked_after_a_cached_plan():
    x = tidu.tensor([0.5, 1.0], dtype=tidu.float64, requires_grad=True)
    tidu.tanh(x * 2.0).sum().backward()  # the plan for tanh of a non-leaf is now cached
    y = tidu.tanh(x * 2.0)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    x.grad = None
    z = tidu.tanh(x * 2.0)
    (g,) = tidu.autograd.grad(z.sum(), x, create_graph=True)  # the saved output keeps its graph
    (gg,) = tidu.autograd.grad(g.sum(), x)
    t = np.tanh(2.0 * np.array([0.5, 1.0]))
    np.testing.assert_allclose(gg.numpy(), -8.0 * t * (1.0 - t * t), rtol=1e-12)


def test_the_recorder_lists_live_nodes_of_both_kinds_in_recording_order():
    class Double(tidu.autograd.Function):  # recorded through Recorder.record_graph
        @staticmethod
        def forward(ctx, t):
            return t * 2.0

        @staticmethod
        def backward(ctx, g):
            return g * 2.0

    recorder = tidu.autograd.current_recorder()
    x = tidu.tensor([1.0], requires_grad=True)
    a = tidu.sin(x)
    b = Double.apply(a)
    c = tidu.exp(b)
    mine = [n for n in recorder.live_nodes() if n in (a.grad_fn.node, b.grad_fn.node, c.grad_fn.node)]
    assert mine == [a.grad_fn.node, b.grad_fn.node, c.grad_fn.node]
    lines = str(recorder).splitlines()
    assert f"%{a._key.key} = sin %{x._key.key}" in lines and f"%{c._key.key} = exp %{b._key.key}" in lines
    del a, b, c, mine
    assert not [n for n in recorder.live_nodes() if x._key in [k for _, k, _ in n.input_edges]]
