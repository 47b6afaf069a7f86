"""Grouped recording (tidu/core/groups.py): deferred calls recorded as one node give the same
gradients, bit for bit, as one node per call, and split into those nodes wherever a walk
needs them (hooks, create_graph, printing, in-place bookkeeping)."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.core import deferred, dispatch, groups, programs
from tidu.core.groups import GroupTrace
from tidu.core.primitive import Application


@pytest.fixture(autouse=True)
def _grouping_on(monkeypatch):
    """These tests are about groups: on even in a ``TIDU_FUSION=0`` or ``TIDU_CACHE=0`` run."""
    monkeypatch.setattr(deferred, "ENABLED", True)
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(dispatch, "GROUPED", True)


def _rand(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, n)


def _chain(lib: Any, x: Any, y: Any) -> Any:
    h = lib.tanh(x * 0.5 + y) * y
    h = lib.exp(lib.sin(h)) + 1.0
    return lib.tanh(h * y) + x


def _grads(lib: Any, fn: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    fn(lib, *leaves).sum().backward()
    return [t.grad.numpy().copy() for t in leaves]


@pytest.mark.smoke
def test_a_chain_is_one_node_with_each_calls_grad_fn():
    x, y = tidu.tensor(_rand(6), requires_grad=True), tidu.tensor(_rand(6, 1))
    out = _chain(tidu, x, y)
    assert type(out.grad_fn) is GroupTrace
    group = out.grad_fn.group
    assert [r[0].name for r in group.records] == ["mul", "add", "tanh", "mul", "sin", "exp", "add", "mul", "tanh", "add"]
    assert repr(out).endswith("grad_fn=<add>)")
    assert (x * 3).grad_fn.name() == "mul"
    before = dict(compiled.STATS)
    out.sum().backward()
    assert compiled.STATS["general"] == before["general"], "a group must not need the general walk"
    assert group.split_nodes is None


def _simulated() -> bool:
    from tidu.backends.cuda.runtime import runtime

    return runtime().simulated


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_match_pytorch_and_ungrouped_recording_bit_for_bit(dtype, device, monkeypatch):
    arrays = [_rand(16).astype(dtype), _rand(16, 1).astype(dtype)]

    def grads() -> list[np.ndarray]:
        leaves = [tidu.tensor(a, requires_grad=True, device=device) for a in arrays]
        _chain(tidu, *leaves).sum().backward()
        return [t.grad.cpu().numpy().copy() for t in leaves]

    grouped = [grads() for _ in range(deferred.FUSE_AFTER + 1)]  # op by op, then fused
    monkeypatch.setattr(dispatch, "GROUPED", False)
    single = grads()
    reference = _grads(torch, _chain, *arrays)
    # a real GPU's fused kernels contract multiply-adds (tests/test_deferred.py): a few ulps there
    ulps = 0 if device == "cpu" or _simulated() else 4
    for got in grouped:
        for g, s, r in zip(got, single, reference):
            np.testing.assert_allclose(g, s, rtol=ulps * np.finfo(dtype).eps, atol=0)
            np.testing.assert_allclose(g, r, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_groups_between_other_nodes_never_form_a_cycle():
    """A node reading a group's value closes the group: later calls start another."""
    def fn(lib, x, y):
        a = x * y + 1.0
        s = a.sum()  # not grouped
        return (a * s).sin() * a

    for got, ref in zip(_grads(tidu, fn, _rand(5), _rand(5, 1)), _grads(torch, fn, _rand(5), _rand(5, 1))):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    x = tidu.tensor(_rand(5), requires_grad=True)
    a = x * 2.0
    s = a.sum()  # grouped (one floating output): it joins a's group, whose values it reads
    b = a * s
    assert a.grad_fn.group is b.grad_fn.group
    m = tidu.linalg.slogdet(a[:1].reshape(1, 1)).logabsdet  # a node of its own (two outputs): the group closes
    c = a * m
    assert a.grad_fn.group is not c.grad_fn.group


def test_retained_and_hooked_values_inside_a_group(monkeypatch):
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).exp().sum().backward()
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * 3
    ty.retain_grad()
    (ty * ty).exp().sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)

    x.grad = None
    y = x * 3
    z = y * y
    y.register_hook(lambda g: g * 10)  # on a non-leaf: the general walk, which splits the group
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [180.0, 360.0])
    assert y.grad_fn.group.split_nodes is not None


def test_higher_order_gradients_through_a_group():
    def f(lib, x):
        (g,) = lib.autograd.grad((lib.sin(x * x) * x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        return lib.autograd.grad(h.sum(), x)[0]

    got = f(tidu, tidu.tensor(_rand(4), requires_grad=True))
    ref = f(torch, torch.tensor(_rand(4), requires_grad=True))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-10)


def test_an_in_place_write_to_a_saved_value_raises_pytorchs_error():
    x = tidu.tensor(_rand(3), requires_grad=True)
    y = x.exp()  # exp's backward reads its output
    z = y * 2
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()
    x = tidu.tensor(_rand(3), requires_grad=True)
    y = x * 2
    z = y * y  # saves y, a value made inside the group
    y.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_an_in_place_op_on_a_grouped_value_keeps_the_gradient():
    def fn(lib, x):
        y = x * 2
        y.mul_(y.sigmoid())  # the value computed for the write is grouped; its input is y
        return y * x

    for got, ref in zip(_grads(tidu, fn, _rand(4)), _grads(torch, fn, _rand(4))):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_the_recorder_lists_each_call_and_a_group_dies_with_its_tensors():
    x = tidu.tensor(_rand(3), requires_grad=True)
    out = (x * 2).tanh()
    group = weakref.ref(out.grad_fn.group)
    listing = str(tidu.autograd.current_recorder())
    assert "mul" in listing and "tanh" in listing
    del out
    assert group() is None, "a group (split or not) is freed by reference counting alone"
    out = (x * 2).tanh()
    group = weakref.ref(out.grad_fn.group)
    del out
    assert group() is None
    gc.collect()


def test_a_changed_structure_is_not_served_a_stale_step():
    x, y = _rand(8), _rand(8, 1)

    def one(lib, a, b):
        return lib.tanh(a * b) + a

    def other(lib, a, b):
        return lib.tanh(a + b) * a  # the same primitives in another wiring

    for fn in (one, other, one, other):
        for got, ref in zip(_grads(tidu, fn, x, y), _grads(torch, fn, x, y)):
            np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_a_long_chain_closes_groups_at_their_limit(monkeypatch):
    monkeypatch.setattr(groups, "MAX_CALLS", 5)
    monkeypatch.setattr(deferred, "MAX_QUEUE", 1000)

    def fn(lib, x):
        for _ in range(12):
            x = x * 0.9 + 0.1
        return x

    out = fn(tidu, tidu.tensor(_rand(4), requires_grad=True))
    assert len(out.grad_fn.group.records) == 4  # 24 calls: groups of 5, 5, 5, 5, 4
    for got, ref in zip(_grads(tidu, fn, _rand(4)), _grads(torch, fn, _rand(4))):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_a_released_group_refuses_a_second_backward():
    x = tidu.tensor(_rand(3), requires_grad=True)
    out = (x.sin() * x).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()


def _mixed(lib: Any, x: Any, w: Any) -> Any:
    """Products, views and reductions between elementwise calls: every call has one float output."""
    h = (x @ w).tanh() * 0.5
    h = h.t().reshape(2, 6) + x.reshape(2, 6)
    return (h.sum(0, keepdim=True) * h).exp() - h.mean()


def _recorded(out: Any) -> tuple[list[str], int]:
    """The primitive names of the grouped calls ``out`` depends on, and the count of other nodes."""
    names, others, seen, stack = [], 0, set(), [out.grad_fn]
    while stack:
        trace = stack.pop()
        if trace is None:
            continue
        node = trace.group if type(trace) is GroupTrace else trace.node
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(trace) is GroupTrace:
            names += [r[0].prim.name for r in node.records]
        else:
            others += 1
        stack += [t for t, _, _ in node.input_edges]
    return names, others


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_calls_that_are_not_deferred_join_groups_with_the_same_gradients(dtype, monkeypatch):
    arrays = [_rand(12, 2).reshape(4, 3).astype(dtype), _rand(9, 3).reshape(3, 3).astype(dtype)]

    def grads() -> tuple[tuple[list[str], int], list[np.ndarray]]:
        leaves = [tidu.tensor(a, requires_grad=True) for a in arrays]
        out = _mixed(tidu, *leaves)
        recorded = _recorded(out)
        out.sum().backward()
        return recorded, [t.grad.numpy().copy() for t in leaves]

    (names, others), grouped = grads()
    assert others == 0 and {"dot_general", "transpose", "reshape", "reduce_sum"} <= set(names), names
    monkeypatch.setattr(dispatch, "GROUPED", False)
    _, single = grads()
    reference = _grads(torch, _mixed, *arrays)
    for g, s, r in zip(grouped, single, reference):
        np.testing.assert_array_equal(g, s)
        np.testing.assert_allclose(g, r, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_a_device_move_is_a_node_and_closes_the_group():
    x = tidu.tensor(_rand(6), requires_grad=True)
    a = x * 2.0
    moved = a.to("cuda")
    assert type(moved.grad_fn) is not GroupTrace
    b = moved * moved
    assert type(b.grad_fn) is GroupTrace and b.grad_fn.group is not a.grad_fn.group
    b.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 8 * _rand(6), rtol=1e-12)


def test_a_group_key_tells_calls_apart_by_their_inputs():
    """A group's structure is one tuple per call (its application's uid, then its input codes):
    uids and codes are both ints, so a flat tuple could read two wirings the same way."""
    groups.close()
    x = tidu.tensor(_rand(4), requires_grad=True)
    out = (x * x).sin() + x
    structure = out.grad_fn.group.parts
    assert all(type(part) is tuple for part in structure)
    assert [len(part) for part in structure] == [3, 2, 3]
    app = out.grad_fn.group.records[0][0]
    same = Application(app.prim, app.params, app.in_avals)
    assert same is not app and same.uid == app.uid
    wider = app.in_avals[0].update(shape=(5,))
    assert Application(app.prim, app.params, (wider, wider), app.out_avals).uid != app.uid


def test_a_kept_second_order_gradient_does_not_chain_the_next_steps_graph():
    """A ``create_graph`` pass closes the group its recorded calls opened: a gradient kept into the
    next step (``g`` below, alive until reassigned) must not pull that step's forward into its
    group, or each step's graph would reach every earlier one (a step rebuilt every time, a
    walk and the memory it holds growing without bound). The step's program is reused, its
    walk keeps its size, and the earlier steps' groups die with their tensors."""
    rng = np.random.default_rng(3)
    a = tidu.tensor(rng.standard_normal((6, 6)))
    x = tidu.tensor(rng.standard_normal(6), requires_grad=True)
    a_ref, x_ref = torch.tensor(a.numpy()), torch.tensor(x.detach().numpy(), requires_grad=True)
    (g_ref,) = torch.autograd.grad(torch.tanh(a_ref @ x_ref).sum(), x_ref, create_graph=True)
    sizes, built, first_group = [], [], None
    walk = compiled.structure
    walks: list[int] = []

    def counted(*args, **kwargs):
        found = walk(*args, **kwargs)
        walks.append(len(found.nodes))
        return found

    compiled.structure = counted
    try:
        for step in range(5):
            loss = tidu.tanh(a @ x).sum()
            (g,) = tidu.autograd.grad(loss, x, create_graph=True)
            np.testing.assert_allclose(g.detach().numpy(), g_ref.detach().numpy(), rtol=1e-12)
            if step == 0:
                first_group = weakref.ref(g.grad_fn.group)
            built.append(compiled.STATS["built"])
            sizes.append(walks[-1])
    finally:
        compiled.structure = walk
    assert len(set(sizes)) == 1, f"the walk grew step by step: {sizes}"
    assert built[1:] == [built[1]] * 4, "a later step built a new program"
    gc.collect()
    assert first_group() is None, "the first step's group outlived its step"


def test_a_kernels_flush_keeps_the_group_and_a_read_closes_it():
    """An op that is not deferred and reads queued work (an RNN's product reading the last
    state) flushes without closing the group, so a recurrent loop's calls join one group; a read
    of a value (``item``, ``numpy``, printing) closes it, so steps that end with one never share
    a group (nor keep each other's saved values alive)."""
    w0, h0 = _rand(16, seed=1).reshape(4, 4) * 0.3, _rand(8, seed=2).reshape(2, 4)
    w = tidu.tensor(w0, requires_grad=True)
    h = tidu.tensor(h0)
    states = []
    for _ in range(5):
        h = tidu.tanh(h @ w + 1.0)
        states.append(h)
    assert len({id(s.grad_fn.group) for s in states}) == 1
    first = (states[-1] * 2.0).sum()
    first.item()
    second = (states[-1] * 3.0).sum()
    assert first.grad_fn.group is not second.grad_fn.group
    second.backward()
    th = torch.tensor(h0)
    tw = torch.tensor(w0, requires_grad=True)
    for _ in range(5):
        th = torch.tanh(th @ tw + 1.0)
    (th * 3.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


def _rnn(lib: Any, x: Any, w: Any, b: Any, steps: int = 6, between: Any = None) -> Any:
    h = x
    for t in range(steps):
        h = lib.tanh(h @ w + b)
        if between is not None:
            between(t)
    return h.sum()


def _broadcasts(out: Any) -> int:
    group = out._trace.group if out._trace.__class__ is GroupTrace else None
    records = [] if group is None else group.records
    return sum(app.prim.name == "broadcast_in_dim" for app, *_ in records)


def test_a_bias_broadcast_is_recorded_once_a_group():
    """``h @ w + b`` at every step of a loop records ``b``'s broadcast once in the group
    (``dispatch.broadcast_operand``): its later uses read the recorded view, and ``b``'s gradient
    is PyTorch's."""
    xs, ws, bs = _rand(12).reshape(3, 4), _rand(16, 1).reshape(4, 4) / 2, _rand(4, 2)
    grads = {}
    for lib in (tidu, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        for _ in range(4):  # the compiled step is built, then served
            for t in (x, w, b):
                t.grad = None
            h = x
            for _ in range(6):
                h = lib.tanh(h @ w + b)
            if lib is tidu:
                assert _broadcasts(h) == 1
            h.sum().backward()
        grads[lib] = [t.grad.numpy() for t in (x, w, b)]
    for got, want in zip(grads[tidu], grads[torch]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_recorded_broadcast_saved_by_a_rule_and_read_twice_a_step():
    """The bias's broadcast is recorded once in the group and its later uses read that view
    (``broadcast_operand``): read twice a step, once as a factor whose rule saves it, the values
    and gradients are PyTorch's, and the bias itself is left as it was."""
    xs, ws, bs = _rand(12).reshape(3, 4), _rand(16, 1).reshape(4, 4) / 2, _rand(4, 2)
    results = {}
    for lib in (tidu, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xs, ws, bs))
        for _ in range(4):
            for t in (x, w, b):
                t.grad = None
            h = x
            for _ in range(5):
                h = lib.tanh((h @ w) * b + b)
            if lib is tidu:
                assert _broadcasts(h) == 1
            h.sum().backward()
        results[lib] = [h.detach().numpy(), b.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    for got, want in zip(results[tidu], results[torch]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_dropped_recurrent_forward_is_freed_without_the_garbage_collector():
    """A forward that broadcasts a bias at every step and is dropped before any backward (its
    group still open) is freed at once by reference counting: nothing the group holds (its
    memo of the bias's recorded broadcast) refers back to it."""
    import gc
    import weakref

    xs, ws, bs = _rand(12).reshape(3, 4), _rand(16, 1).reshape(4, 4) / 2, _rand(4, 2)
    x, w, b = (tidu.tensor(a, requires_grad=True) for a in (xs, ws, bs))
    enabled = gc.isenabled()
    gc.disable()
    try:
        h = x
        for _ in range(6):
            h = tidu.tanh(h @ w + b)
        assert _broadcasts(h) == 1
        group = weakref.ref(h._trace.group)
        del h
        assert group() is None
    finally:
        if enabled:
            gc.enable()


def test_a_bias_written_between_uses_is_broadcast_again(monkeypatch):
    """A write to the bias between uses: the values and gradients are PyTorch's (the uses after it
    read the written bias). Under anomaly mode each use records its own broadcast."""
    xs, ws, bs = _rand(12).reshape(3, 4), _rand(16, 1).reshape(4, 4) / 2, _rand(4, 2)
    grads = {}
    for lib in (tidu, torch):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (xs, ws, bs))

        def nudge(t: int, lib: Any = lib, b: Any = b) -> None:
            if t == 2:
                with lib.no_grad():
                    b.mul_(0.5)

        h = x
        for t in range(6):
            h = lib.tanh(h @ w + b)
            nudge(t)  # the write closes the group (it flushes the queue): the next group broadcasts anew
        h.sum().backward()
        grads[lib] = [h.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    for got, want in zip(grads[tidu], grads[torch]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    x, w, b = (tidu.tensor(a, requires_grad=True) for a in (xs, ws, bs))
    with tidu.autograd.detect_anomaly():
        h = x
        for _ in range(3):
            h = tidu.tanh(h @ w + b)
        assert _broadcasts(h) == 3


def test_a_dual_bias_keeps_its_tangent():
    """Forward AD: a bias with a tangent is broadcast through the dual path, every time."""
    import tidu.autograd.forward_ad as fwAD

    xs, bs, ts = _rand(12).reshape(3, 4), _rand(4, 2), _rand(4, 3)
    with fwAD.dual_level():
        b = fwAD.make_dual(tidu.tensor(bs), tidu.tensor(ts))
        x = tidu.tensor(xs, requires_grad=True)
        y = tidu.tanh(x + b) + b
        tangent = fwAD.unpack_dual(y).tangent.detach().numpy()
    with torch.autograd.forward_ad.dual_level():
        tb = torch.autograd.forward_ad.make_dual(torch.tensor(bs), torch.tensor(ts))
        ty = torch.tanh(torch.tensor(xs) + tb) + tb
        want = torch.autograd.forward_ad.unpack_dual(ty).tangent.numpy()
    np.testing.assert_allclose(tangent, want, rtol=1e-12)


def test_a_value_written_under_no_grad_is_saved_again_by_the_calls_after():
    """A leaf saved by one call of the open group, then scaled in place under ``no_grad`` (an
    update by hand), then read by another call: that call saves the new version (a group keeps
    one saved value per key, so the write closes the open group). It raised "modified by an
    inplace operation", where PyTorch's backward runs. (The leaf's storage is exposed to numpy,
    so the first call is not queued and the write does not flush: the group stays open.)"""
    results = []
    for lib in (tidu, torch):
        x0 = lib.tensor(np.ones((4, 4)), requires_grad=True)
        x1 = lib.tensor(np.full((4, 4), 2.0), requires_grad=True)
        x0.detach().numpy()
        kept = x0 * 1.0
        with lib.no_grad():
            x0.mul_(0.75)
        (x0 * x1).sum().backward()
        results.append((x0.grad.numpy(), x1.grad.numpy(), kept.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_array_equal(ours, theirs)
