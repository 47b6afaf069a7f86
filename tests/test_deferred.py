"""Deferred elementwise work (tidu/core/deferred.py): results never depend on when the queue runs."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import tidu
from tidu.backends.cpu import fusion
from tidu.core import deferred, dispatch


@pytest.fixture(autouse=True)
def _deferral_on(monkeypatch):
    """These tests are about deferral: on even in a ``TIDU_FUSION=0`` run."""
    monkeypatch.setattr(deferred, "ENABLED", True)

DEVICES = ["cpu", "cuda"]


def _chain(lib, x, w):
    a = x * w + 0.5
    return lib.tanh(a) * w + x * x, a


def _inputs(device: str, n: int = 37, requires_grad: bool = False):
    rng = np.random.default_rng(0)
    xs, ws = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    x = tidu.tensor(xs, device=device, requires_grad=requires_grad)
    w = tidu.tensor(ws, device=device)
    return x, w, xs, ws


def _simulated() -> bool:
    from tidu.backends.cuda.runtime import runtime

    return runtime().simulated


@pytest.mark.parametrize("device", DEVICES)
def test_fused_runs_equal_the_op_by_op_run_bit_for_bit(device):
    x, w, xs, ws = _inputs(device)
    runs = []
    for _ in range(deferred.FUSE_AFTER + 2):  # the first runs go op by op, the later ones fused
        y, a = _chain(tidu, x, w)
        runs.append((y.cpu().numpy().copy(), a.cpu().numpy().copy()))
    # on a GPU, NVVM contracts a multiply and the add after it into one FMA (numba-cuda's
    # default), rounding once where two kernels round twice: the last bit may differ there
    ulps = 0 if device == "cpu" or tidu.cuda.is_available() and _simulated() else 4
    eps = np.finfo(np.float64).eps
    for y, a in runs[1:]:
        for got, ref in ((y, runs[0][0]), (a, runs[0][1])):
            np.testing.assert_allclose(got, ref, rtol=0, atol=ulps * eps * np.abs(ref).max())
    np.testing.assert_allclose(runs[0][0], np.tanh(xs * ws + 0.5) * ws + xs * xs, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_the_queue_holds_work_until_a_value_is_read(device):
    x, w, xs, ws = _inputs(device)
    deferred.flush()
    y, _ = _chain(tidu, x, w)
    assert len(deferred.PENDING) == 6
    assert float(y.sum()) == pytest.approx(float((np.tanh(xs * ws + 0.5) * ws + xs * xs).sum()))
    assert not deferred.PENDING


def test_a_repeated_structure_gets_a_plan_and_a_changed_one_does_not_reuse_it():
    deferred._plans.clear()
    x, w, xs, ws = _inputs("cpu")
    for _ in range(deferred.FUSE_AFTER):
        y, a = _chain(tidu, x, w)
        y.numpy()
    assert len(deferred._plans) == 1
    # another shape, another held set, another wiring: each is a new structure, with right values
    x2, w2, xs2, ws2 = _inputs("cpu", n=5)
    for _ in range(deferred.FUSE_AFTER):
        y2, _ = _chain(tidu, x2, w2)  # the intermediate ``a`` is dropped: not stored
        np.testing.assert_allclose(y2.numpy(), np.tanh(xs2 * ws2 + 0.5) * ws2 + xs2 * xs2, rtol=1e-12)
    for _ in range(deferred.FUSE_AFTER):
        y3, _ = _chain(tidu, x, x)  # one array read as both operands: other wiring
        np.testing.assert_allclose(y3.numpy(), np.tanh(xs * xs + 0.5) * xs + xs * xs, rtol=1e-12)
    assert len(deferred._plans) == 3
    np.testing.assert_allclose(a.numpy(), xs * ws + 0.5, rtol=1e-12)


def test_groups_of_different_shapes_in_one_queue():
    for _ in range(deferred.FUSE_AFTER + 1):
        u = tidu.tensor([1.0, 2.0, 3.0])
        v = tidu.tensor([[0.5, -1.0], [2.0, 4.0]])
        p, q = (u * 2).exp(), (v + 1) * v
        np.testing.assert_allclose(p.numpy(), np.exp(np.array([2.0, 4.0, 6.0])))
        np.testing.assert_allclose(q.numpy(), [[0.75, 0.0], [6.0, 20.0]])


def test_writes_after_queueing_do_not_reach_queued_work():
    x = tidu.tensor([1.0, 2.0, 3.0])
    y = x * 2
    x.add_(1)  # an in-place write runs the queue first
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0])
    z = x * 10
    x.data[0] = 0.0  # not an op: ``data`` shares the storage, the write goes through ``_data``
    assert z.tolist() == [20.0, 30.0, 40.0]


def test_arrays_the_user_holds_are_never_read_late():
    held = np.array([1.0, 2.0, 3.0])
    t = tidu.from_numpy(held)
    y = t * 2
    held[0] = 100.0  # numpy writes are invisible to tidu: work on this storage is not deferred
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0])
    s = tidu.tensor([1.0, 2.0])
    view = s.numpy()
    y = s + 1
    view[1] = -5.0
    np.testing.assert_array_equal(y.numpy(), [2.0, 3.0])


def test_zero_stride_operands_are_read_in_place():
    for _ in range(deferred.FUSE_AFTER + 1):
        x = tidu.arange(12.0, dtype=tidu.float64).reshape(3, 4)
        row = tidu.tensor([1.0, 2.0, 3.0, 4.0], dtype=tidu.float64)
        one = tidu.tensor(3.0, dtype=tidu.float64)
        y = (x * one.expand(3, 4) + row.expand(3, 4)).sin()
        expected = np.sin(np.arange(12.0).reshape(3, 4) * 3.0 + np.array([1.0, 2.0, 3.0, 4.0]))
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_through_deferred_work_match_pytorch(device):
    x, w, xs, ws = _inputs(device, requires_grad=True)
    tx = torch.tensor(xs, requires_grad=True)
    y, _ = _chain(torch, tx, torch.tensor(ws))
    y.sum().backward()
    for _ in range(deferred.FUSE_AFTER + 1):
        x.grad = None
        y, _ = _chain(tidu, x, w)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)


def test_another_thread_reading_a_queued_value_gets_it():
    x = tidu.tensor([1.0, 2.0, 3.0])
    y = (x * 3).exp()
    seen = []
    thread = threading.Thread(target=lambda: seen.append(y.tolist()))
    thread.start()
    thread.join()
    np.testing.assert_allclose(seen[0], np.exp([3.0, 6.0, 9.0]))


def test_switched_off_nothing_waits(monkeypatch):
    monkeypatch.setattr(deferred, "ENABLED", False)
    x = tidu.tensor([1.0, 2.0])
    y = (x * 2).exp()
    assert not deferred.PENDING
    np.testing.assert_allclose(y.numpy(), np.exp([2.0, 4.0]))


def test_float32_chain_matches_pytorch_after_fusing():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((4, 5)).astype(np.float32)
    expected = (torch.sigmoid(torch.tensor(xs) * 1.5) - torch.tensor(xs).abs()).numpy()
    for _ in range(deferred.FUSE_AFTER + 1):
        x = tidu.tensor(xs)
        y = tidu.sigmoid(x * 1.5) - x.abs()
        assert y.dtype is tidu.float32
        np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_select_and_float_conversions_defer_and_match_pytorch(device):
    rng = np.random.default_rng(2)
    xs = rng.standard_normal(40)
    tx = torch.tensor(xs, requires_grad=True)
    ty = torch.where(tx > 0.5, torch.relu(tx * 2), tx).to(torch.float32) * 3
    ty.sum().backward()
    for _ in range(deferred.FUSE_AFTER + 1):
        x = tidu.tensor(xs, device=device, requires_grad=True)
        deferred.flush()
        y = tidu.where(x > 0.5, tidu.relu(x * 2), x).to(tidu.float32) * 3
        assert [e[0].prim.name for e in deferred.PENDING] == [
            "gt", "mul", "relu", "select", "convert_element_type", "mul"]
        y.sum().backward()
        assert y.dtype is tidu.float32
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-12)


def _random_program(seed: int):
    """A random mix of deferred elementwise work, other primitives, views, in-place writes and
    reads, as a list of steps over a pool of tensors (run the same way with deferral on and off)."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(40):
        steps.append((rng.integers(12), int(rng.integers(1 << 30))))
    return steps


def _run_program(steps, base: np.ndarray, extra: np.ndarray):
    x = tidu.tensor(base, requires_grad=True)
    held = tidu.from_numpy(extra.copy())
    pool = [x * 1.0, tidu.tensor(base[::-1].copy())]
    reads = []
    for kind, r in steps:
        a, b = pool[r % len(pool)], pool[(r // 7) % len(pool)]
        if kind == 0:
            pool.append(a * b + 0.25)
        elif kind == 1:
            pool.append(tidu.tanh(a) - b.exp() * 0.1)
        elif kind == 2:
            pool.append(tidu.where(a > b, a, b * 0.5))
        elif kind == 3:
            pool.append(a.sum(dim=-1, keepdim=True) * b)  # a reduction reads pending work
        elif kind == 4:
            pool.append(a.t() * 2.0)  # a view of pending work, then more work on it
        elif kind == 5:
            pool.append(a[1:, :2].sin().sum() + b)
        elif kind == 6:
            c = b.detach().clone()
            pending = c * 3.0
            c.mul_(0.5)  # in place on a tensor that pending work reads
            pool.append(pending + c)
        elif kind == 7:
            reads.append(a.detach().numpy().copy())
        elif kind == 8:
            pool.append(a + held)  # exposed storage, then written by numpy
            extra[...] = extra * 0.5
            held.numpy()[...] = extra
        elif kind == 9:
            pool.append(a.to(tidu.float32).to(tidu.float64) * b)
        elif kind == 10:
            pool.append(tidu.sigmoid(a) @ b.t() if a.shape[-1] == b.shape[-1] else a.relu())
        else:
            pool.append(tidu.sqrt(a * a + 1.0))
        if len(pool) > 8:
            del pool[2]  # intermediates die: their outputs need not be stored
    loss = sum(p.sum() for p in pool if p.requires_grad) + x.sum()
    loss.backward()
    return [*reads, *(p.detach().numpy() for p in pool), x.grad.numpy()]


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_match_with_deferral_off_bit_for_bit(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    base, extra = rng.uniform(-1, 1, (4, 4)), rng.uniform(-1, 1, (4, 4))
    steps = _random_program(seed)
    monkeypatch.setattr(deferred, "ENABLED", False)
    expected = _run_program(steps, base, extra.copy())
    monkeypatch.setattr(deferred, "ENABLED", True)
    for _ in range(deferred.FUSE_AFTER + 1):  # op by op first, then fused plans
        got = _run_program(steps, base, extra.copy())
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("device", DEVICES)
def test_rows_and_columns_broadcast_are_read_in_place(device, monkeypatch):
    rng = np.random.default_rng(3)
    xs, ws, bs = rng.standard_normal((2, 3, 5)), rng.standard_normal(5), rng.standard_normal(5)

    def norm(lib, x, w, b):
        centred = x - x.mean(-1, keepdim=True)  # a column: one value per row
        return lib.tanh(centred * w + b) * 2.0  # w and b: one row repeated

    tx = torch.tensor(xs, requires_grad=True)
    ty = norm(torch, tx, torch.tensor(ws), torch.tensor(bs))
    ty.sum().backward()
    seen = []
    layout = fusion.layout_of
    monkeypatch.setattr(fusion, "layout_of", lambda a: seen.append(layout(a)) or layout(a))
    # plans are built once per structure: one an earlier test built would be reused unseen
    monkeypatch.setattr(deferred, "_plans", {})
    monkeypatch.setattr(deferred, "_seen", {})
    for _ in range(deferred.FUSE_AFTER + 1):
        x = tidu.tensor(xs, device=device, requires_grad=True)
        y = norm(tidu, x, tidu.tensor(ws, device=device), tidu.tensor(bs, device=device))
        y.sum().backward()
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert {fusion.ROW, fusion.COL} <= set(seen)


_SHORT = {  # ops.math's short path (dispatch.bind_same): operands of one aval, or a Python number
    "mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "div": lambda a, b: a / b, "rsub-float": lambda a, b: 1.5 - a * b, "rdiv-int": lambda a, b: 3 / (b + 2) + a,
    "mul-int": lambda a, b: a * 2 + b, "scalar-first": lambda a, b: 0.25 * a + b,
    "unary": lambda a, b: (a.tanh() + b.exp()).sin(),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(_SHORT))
def test_the_short_path_gives_pytorchs_values_gradients_and_dtypes(name, dtype, monkeypatch):
    fn = _SHORT[name]
    rng = np.random.default_rng(3)
    xs, ys = rng.uniform(0.5, 1.5, (2, 5)).astype(dtype), rng.uniform(0.5, 1.5, (2, 5)).astype(dtype)
    tx, ty = torch.tensor(xs, requires_grad=True), torch.tensor(ys, requires_grad=True)
    expected = fn(tx, ty)
    expected.sum().backward()
    for enabled in (True, False):  # deferred, then the general bind of the same calls
        monkeypatch.setattr(deferred, "ENABLED", enabled)
        x, y = tidu.tensor(xs, requires_grad=True), tidu.tensor(ys, requires_grad=True)
        out = fn(x, y)
        out.sum().backward()
        assert out.dtype.name == str(expected.dtype).removeprefix("torch.")
        tol = 1e-6 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=tol)
        for leaf, reference in ((x, tx), (y, ty)):
            assert (leaf.grad is None) == (reference.grad is None)
            if leaf.grad is not None:
                np.testing.assert_allclose(leaf.grad.numpy(), reference.grad.numpy(), rtol=tol)


def test_the_short_path_leaves_other_operands_to_the_general_path(monkeypatch):
    """A subclass other than ``nn.Parameter``, a stale view, an array the user holds and mixed
    dtypes take the general path, with its checks and conversions; the results are PyTorch's.
    A ``Parameter`` takes the short path."""
    from tidu.core import dispatch
    from tidu.ops import math as ops_math

    class Mine(tidu.Tensor):
        __slots__ = ()

    short = []
    monkeypatch.setattr(ops_math, "bind_same", lambda prim, args: short.append(1) or dispatch.bind_same(prim, args))
    w = tidu.nn.Parameter(tidu.tensor([1.0, 2.0]))
    assert ((w * w).sum().backward(), w.grad.tolist())[1] == [2.0, 4.0] and short == [1]
    mine = Mine(np.array([1.0, 2.0]), tidu.float64, requires_grad=True)
    assert ((mine * mine).sum().backward(), mine.grad.tolist())[1] == [2.0, 4.0] and short == [1]
    leaf = tidu.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    view = base[1:]
    base.mul_(2)  # the view's place in the graph is stale: the bind takes its new one
    (view * view).sum().backward()
    tleaf = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    tbase = tleaf * 1
    tview = tbase[1:]
    tbase.mul_(2)
    (tview * tview).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), tleaf.grad.numpy())
    held = np.array([1.0, 2.0])
    t = tidu.from_numpy(held)
    y = t * t
    held[0] = 10.0
    assert y.tolist() == [1.0, 4.0]
    mixed = tidu.tensor([1.0, 2.0], dtype=tidu.float32) * tidu.tensor([2.0, 3.0], dtype=tidu.float64)
    assert mixed.dtype is tidu.float64 and mixed.tolist() == [2.0, 6.0]


@pytest.mark.parametrize("device", DEVICES)
def test_broadcasts_of_queued_work_of_views_and_of_leaves_match_pytorch(device):
    """The broadcast short path (``dispatch.bind_broadcast``): a queued column, a transposed
    view and a leaf row broadcast into one chain, repeated until it fuses; values and gradients
    are PyTorch's, and a write through the base reaches a later broadcast of its view."""
    rng = np.random.default_rng(5)
    xs, ms, bs = rng.standard_normal((3, 4)), rng.standard_normal((4, 3)), rng.standard_normal(4)

    def chain(lib, x, m, b):
        col = (x * 2.0).sum(-1, keepdim=True) * 0.5  # queued work, broadcast over rows
        return lib.tanh(x + col + m.t() + b) * b  # a transposed view, and a leaf row twice

    tx, tm, tb = (torch.tensor(a, requires_grad=True) for a in (xs, ms, bs))
    expected = chain(torch, tx, tm, tb)
    expected.sum().backward()
    for _ in range(deferred.FUSE_AFTER + 1):
        x, m, b = (tidu.tensor(a, device=device, requires_grad=True) for a in (xs, ms, bs))
        out = chain(tidu, x, m, b)
        out.sum().backward()
        np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-12)
        for leaf, ref in ((x, tx), (m, tm), (b, tb)):
            np.testing.assert_allclose(leaf.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-10, atol=1e-12)
    base = tidu.zeros(2, 3, device=device)
    row = base[0]
    before = row + tidu.ones(4, 3, device=device)
    base.add_(1.0)
    after = row + tidu.ones(4, 3, device=device)
    assert before.cpu().numpy().tolist() == [[1.0] * 3] * 4
    assert after.cpu().numpy().tolist() == [[2.0] * 3] * 4


def test_a_broadcast_of_a_stale_view_takes_its_new_place_in_the_graph():
    """A view whose base was written since it was made is broadcast from its new graph position
    (``bind_broadcast`` refreshes it, as the general bind does)."""
    grads = []
    for lib in (tidu, torch):
        leaf = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        base = leaf * 1
        row = base[0]
        base.mul_(2.0)
        (row + lib.ones(4, 3)).sum().backward()
        grads.append(leaf.grad.tolist())
    assert grads[0] == grads[1] == [[8.0, 8.0, 8.0], [0.0, 0.0, 0.0]]


def test_a_broadcast_leaf_written_in_place_fails_the_backward_as_in_pytorch():
    """The host fast path of ``bind_broadcast`` makes its view directly: read-only, sharing the
    leaf's storage and version, so a write to the leaf before the backward that reads the
    broadcast raises PyTorch's error, and a write after it is seen by the next broadcast."""
    for lib in (tidu, torch):
        y = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = lib.tensor([10.0, 20.0], requires_grad=True)
        z = y * b  # mul saves the broadcast of b
        with lib.no_grad():
            b.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
    b = tidu.tensor([10.0, 20.0], requires_grad=True)
    wide = dispatch.bind_broadcast(b, (3, 2))
    assert not wide._buf.flags.writeable and np.shares_memory(wide._buf, b._buf)
    assert wide._version is b._version and wide.requires_grad
    with tidu.no_grad():
        b.mul_(2.0)
    assert (b + tidu.zeros(3, 2)).tolist() == [[20.0, 40.0]] * 3


def _summed(x, w, keep: bool):
    y = tidu.tanh(x * w + 0.5) * w + x * x
    return y.sum(), (y if keep else None)


@pytest.mark.parametrize("keep", [False, True])
def test_a_gpu_sum_of_queued_work_runs_in_its_loops_launch(keep, monkeypatch):
    """A full sum of a queued value on the GPU is queued too and runs in its input's fused launch
    (``fused_into(total=...)``), summing in the unqueued sum kernel's order; the input is stored
    only where something holds it. Its value and gradients are the unqueued run's."""
    from tidu.backends.cuda import fusion as cuda_fusion

    totals = []
    real = cuda_fusion.fused_into
    monkeypatch.setattr(cuda_fusion, "fused_into",
                        lambda *a, **k: totals.append(k.get("total")) or real(*a, **k))
    x, w, xs, ws = _inputs("cuda", n=100, requires_grad=True)
    runs = []
    for _ in range(deferred.FUSE_AFTER + 2):
        x.grad = None
        s, y = _summed(x, w, keep)
        assert deferred._sums and deferred.PENDING[-1][0].prim.name == "reduce_sum"
        s.backward()
        runs.append((s.item(), x.grad.cpu().numpy().copy(), None if y is None else y.detach().cpu().numpy().copy()))
    assert any(t is not None for t in totals)  # a plan with the sum in its launch was built
    monkeypatch.setattr(deferred, "ENABLED", False)
    x.grad = None
    s, y = _summed(x, w, keep)
    s.backward()
    ref = (s.item(), x.grad.cpu().numpy(), None if y is None else y.detach().cpu().numpy())
    # the elementwise values may differ in the last bit on a GPU (an FMA: see the first test)
    exact = _simulated()
    for value, grad, kept in runs:
        assert value == ref[0] if exact else value == pytest.approx(ref[0], rel=1e-12)
        np.testing.assert_allclose(grad, ref[1], rtol=0 if exact else 1e-12)
        if keep:
            np.testing.assert_allclose(kept, ref[2], rtol=0 if exact else 1e-12)
    tx = torch.tensor(xs, requires_grad=True)
    (torch.tanh(tx * torch.tensor(ws) + 0.5) * torch.tensor(ws) + tx * tx).sum().backward()
    np.testing.assert_allclose(ref[1], tx.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["sum_then_scalar", "scalar_queued_first"])
def test_work_reading_a_queued_sum_gets_its_value_once_fused(device, case):
    """A queued sum (the GPU's, ``sum_deferrable``) read only by later queued work of another
    shape: nothing outside the queue holds it, yet the fused plan must compute it, and compute
    it before the loop that reads it, also where that loop's group was queued first.
    ``clip_grad_norm_`` on the GPU gave a wrong norm from its third call on: the plan dropped the
    sum and the 0-d work read a stale buffer."""
    rng = np.random.default_rng(3)
    z = tidu.tensor(3.0, dtype=tidu.float64, device=device)
    for _ in range(deferred.FUSE_AFTER + 2):
        ts = rng.standard_normal(144)
        t = tidu.tensor(ts, device=device)
        with tidu.no_grad():
            if case == "sum_then_scalar":
                got = ((t * t).sum() + 1.0) * 2.0
                want = ((ts * ts).sum() + 1.0) * 2.0
            else:
                c = z * 2.0  # a 0-d loop queued before the sum's
                got = c + (tidu.abs(t) ** 2.0).sum()
                want = 6.0 + (ts * ts).sum()
        assert got.item() == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_grad_norm_is_right_at_every_step(device):
    """The gradient norms of several parameters, clipped at each of a few steps (PyTorch's values)."""
    rng = np.random.default_rng(4)
    shapes = [(4, 2, 1, 1), (4,), (3, 4, 3, 3), (3, 48), (3,)]
    for _ in range(deferred.FUSE_AFTER + 2):
        grads = [rng.standard_normal(shape) for shape in shapes]
        ours = [tidu.zeros(shape, dtype=tidu.float64, device=device, requires_grad=True) for shape in shapes]
        theirs = [torch.zeros(shape, dtype=torch.float64, requires_grad=True) for shape in shapes]
        for p, q, g in zip(ours, theirs, grads):
            p.grad, q.grad = tidu.tensor(g, device=device), torch.tensor(g)
        norm = tidu.nn.utils.clip_grad_norm_(ours, 0.5)
        assert norm.item() == pytest.approx(torch.nn.utils.clip_grad_norm_(theirs, 0.5).item(), rel=1e-12)
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_a_one_loop_backward_step_joins_the_queued_work_it_reads(device, monkeypatch):
    """A built backward step that is one fused loop, reading queued work, is queued behind it
    (``queue_loop``) instead of flushing it: the next flush runs forward and backward in one
    loop, and the gradient is a queued output until then. Values and gradients are the run's
    without deferral, and PyTorch's."""
    from tidu.core import programs

    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", True)
    x, w, xs, ws = _inputs(device, n=100, requires_grad=True)
    vs = np.linspace(-1, 1, 100)
    v = tidu.tensor(vs, device=device)

    def grads():
        y = tidu.tanh(x * w + 0.5) * w
        (g,) = tidu.autograd.grad(y, [x], grad_outputs=[v])
        return y, g

    runs = []
    for n in range(deferred.FUSE_AFTER + 2):
        y, g = grads()
        if n:  # built by the first pass
            assert id(g._buf) in deferred._pending_ids
            assert [e[0].prim.name for e in deferred.PENDING] == ["mul", "add", "tanh", "mul", "backward_loop"]
        runs.append((y.detach().cpu().numpy(), g.cpu().numpy()))
        assert not deferred.PENDING
    monkeypatch.setattr(deferred, "ENABLED", False)
    y, g = grads()
    exact = device == "cpu" or _simulated()  # a GPU's fused loop may use an FMA (see the first test)
    for value, grad in runs:
        np.testing.assert_allclose(value, y.detach().cpu().numpy(), rtol=0 if exact else 1e-12)
        np.testing.assert_allclose(grad, g.cpu().numpy(), rtol=0 if exact else 1e-12)
    tx = torch.tensor(xs, requires_grad=True)
    ty = torch.tanh(tx * torch.tensor(ws) + 0.5) * torch.tensor(ws)
    (tg,) = torch.autograd.grad(ty, [tx], grad_outputs=[torch.tensor(vs)])
    np.testing.assert_allclose(runs[-1][1], tg.numpy(), rtol=1e-12)


def test_a_queued_step_never_reads_a_view_of_queued_work(monkeypatch):
    """Making a view runs the queue, so a step meets no view of queued work; given one,
    ``queue_loop`` refuses it (read in place, it would race with the loop that writes it) and
    the queue is left as it was. Given the queued array itself, it queues the step behind it."""
    from tidu.autograd import compiled
    from tidu.core import programs

    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", True)
    x = tidu.tensor(np.linspace(-1, 1, 24).reshape(4, 6), requires_grad=True)
    v = tidu.ones(4, 6, dtype=tidu.float64)
    compiled.clear()
    for _ in range(2):
        tidu.autograd.grad(tidu.tanh(x * 2.0), [x], grad_outputs=[v])
    (step,) = compiled._steps.values()
    count = 1 + max(step.queued.at)
    queued = tidu.tanh(x.detach() * 3.0)
    before = list(deferred.PENDING)
    view = queued._buf[:]
    assert view.base is queued._buf and deferred.reads_pending([view])
    assert deferred.queue_loop(step.queued, [v._buf] + [view] * (count - 1)) is None
    assert deferred.PENDING == before
    result = deferred.queue_loop(step.queued, [v._buf] + [queued._buf] * (count - 1))
    assert id(result) in deferred._pending_ids and len(deferred.PENDING) == len(before) + 1
    deferred.flush()
    (expected,) = step.fn([v._buf] + [queued._buf] * (count - 1))  # the step run on the same arrays
    np.testing.assert_array_equal(result, expected)


def test_only_a_gpu_full_sum_of_one_queued_value_is_queued():
    """The host's sums, partial sums, sums of fewer than ``SUM_MIN`` elements, of a view of a
    queued value, and a second sum while one is queued all run at once (flushing the queue)."""
    def queued(make) -> bool:
        deferred.flush()
        make()
        answer = bool(deferred._sums)
        deferred.flush()
        return answer

    cx, cw, _, _ = _inputs("cpu", n=100)
    gx, gw, _, _ = _inputs("cuda", n=100)
    sx, sw, _, _ = _inputs("cuda", n=20)
    mx = tidu.tensor(np.ones((10, 10)), device="cuda")
    assert queued(lambda: (gx * gw).sum())
    assert not queued(lambda: (cx * cw).sum())
    assert not queued(lambda: (sx * sw).sum())
    assert not queued(lambda: (mx * mx).sum(dim=0))
    assert not queued(lambda: (mx * mx)[2:].sum())
    assert not queued(lambda: gx.sum())  # nothing queued to read
    deferred.flush()
    a = (gx * gw).sum()
    b = (gx * gx).sum()  # the first sum is queued; this one flushes the queue and runs
    assert not deferred.PENDING and float(a) == pytest.approx(float((gx * gw).sum()))
    assert float(b) == pytest.approx(float(np.sum(gx.cpu().numpy() ** 2)))


def _hessian_vector_product(lib, a, x, v):
    (g,) = lib.autograd.grad(lib.tanh(a @ x).sum(), x, create_graph=True)
    (hv,) = lib.autograd.grad((g * v).sum(), x)
    return g, hv


def _hvp_case():
    rng = np.random.default_rng(5)
    a_np, x_np, v_np = rng.standard_normal((6, 6)), rng.standard_normal(6), rng.standard_normal(6)
    tx = torch.tensor(x_np, requires_grad=True)
    g, hv = _hessian_vector_product(torch, torch.tensor(a_np), tx, torch.tensor(v_np))
    return a_np, x_np, v_np, g.detach().numpy(), hv.numpy()


@pytest.fixture
def _products(monkeypatch):
    """Every host product run from now on, counted (built steps dropped: theirs bound the kernel)."""
    from tidu.autograd import compiled
    from tidu.core import programs
    from tidu.primitives.linalg import dot_general

    monkeypatch.setattr(programs, "ENABLED", True)  # the laziness is the compiled step's
    compiled.clear()
    runs = []
    real = dot_general.impls["cpu"]
    monkeypatch.setitem(dot_general.impls, "cpu", lambda a, b, **p: runs.append(a.shape) or real(a, b, **p))
    yield runs
    compiled.clear()


def test_a_gradient_nobody_reads_is_never_computed(_products):
    """``grad(..., create_graph=True)`` returns a host product queued (``deferred.lazy_product``),
    and a sum of it is queued too: a Hessian-vector product that only differentiates ``g`` runs
    three products a step (the forward's, the second pass's two), not four, and its result is
    PyTorch's."""
    a_np, x_np, v_np, _, hv_ref = _hvp_case()
    a, v = tidu.tensor(a_np), tidu.tensor(v_np)

    def step():
        x = tidu.tensor(x_np, requires_grad=True)
        return _hessian_vector_product(tidu, a, x, v)[1]

    for _ in range(deferred.FUSE_AFTER + 2):
        before = len(_products)
        hv = step()
        np.testing.assert_allclose(hv.numpy(), hv_ref, rtol=1e-12)
        deferred.flush()  # the unread gradient, dead now, is dropped here
        assert len(_products) - before == 3


def test_a_lazy_gradient_read_later_is_pytorchs(_products):
    """The queued gradient is computed when read: after the second pass, after an in-place write
    to an operand of its product (the write runs the queue first, so ``g`` is the value before it,
    as in PyTorch), and it is never computed twice."""
    a_np, x_np, v_np, g_ref, hv_ref = _hvp_case()
    for write in (False, True):
        a, v, x = tidu.tensor(a_np), tidu.tensor(v_np), tidu.tensor(x_np, requires_grad=True)
        before = len(_products)
        g, hv = _hessian_vector_product(tidu, a, x, v)
        assert deferred._lazy and any(e[0].prim.name == "dot_general" for e in deferred.PENDING)
        if write:
            with tidu.no_grad():
                a.mul_(3.0)
        np.testing.assert_allclose(g.detach().numpy(), g_ref, rtol=1e-12)
        np.testing.assert_allclose(hv.numpy(), hv_ref, rtol=1e-12)
        assert len(_products) - before == 4
        np.testing.assert_allclose((g * 2).detach().numpy(), 2 * g_ref, rtol=1e-12)
        assert len(_products) - before == 4


def test_a_product_of_an_array_the_user_holds_is_not_lazy(_products):
    """An operand the user may write (``from_numpy``) keeps the product eager, as any queued work."""
    a_np, x_np, v_np, _, hv_ref = _hvp_case()
    a, v = tidu.from_numpy(a_np.copy()), tidu.tensor(v_np)
    x = tidu.tensor(x_np, requires_grad=True)
    before = len(_products)
    (g,) = tidu.autograd.grad(tidu.tanh(a @ x).sum(), x, create_graph=True)
    assert not deferred._lazy and len(_products) - before == 2
    (hv,) = tidu.autograd.grad((g * v).sum(), x)
    np.testing.assert_allclose(hv.numpy(), hv_ref, rtol=1e-12)


def test_only_sums_made_from_a_lazy_gradient_wait_with_it(_products, monkeypatch):
    """While a lazy gradient is queued, a host sum of queued work made from it is queued too; a
    sum of other queued work runs at once (running the queue, the gradient with it). The next
    flush leaves a dead gradient out of its fused loop (``deferred._build``), so the forward
    after a Hessian-vector product still fuses."""
    built = []
    real = deferred._build
    monkeypatch.setattr(deferred, "_build", lambda entries, held: built.append((list(entries), real(entries, held))) or built[-1][1])
    monkeypatch.setattr(deferred, "_plans", {})  # an earlier test's plans would be reused unseen
    monkeypatch.setattr(deferred, "_seen", {})
    a_np, x_np, v_np, g_ref, hv_ref = _hvp_case()
    a, v = tidu.tensor(a_np), tidu.tensor(v_np)
    for _ in range(deferred.FUSE_AFTER + 2):
        x = tidu.tensor(x_np, requires_grad=True)
        (g,) = tidu.autograd.grad(tidu.tanh(a @ x).sum(), x, create_graph=True)
        s = (g * v).sum()  # made from g: waits with it
        assert deferred._lazy and deferred._sums and deferred.PENDING[-1][0].prim.name == "reduce_sum"
        (hv,) = tidu.autograd.grad(s, x)
        del g, s  # (reading hv with g alive would run the queue, g with it)
        np.testing.assert_allclose(hv.numpy(), hv_ref, rtol=1e-12)
    assert any(plan is not None and any(e[0].prim.name == "dot_general" for e in entries) for entries, plan in built)
    x = tidu.tensor(x_np, requires_grad=True)
    (g,) = tidu.autograd.grad(tidu.tanh(a @ x).sum(), x, create_graph=True)
    other = (v * 2.0 + 0.0 * v).sum()  # not made from g: runs now, and the queue with it
    assert not deferred.PENDING and not deferred._sums
    assert float(other) == pytest.approx(2 * v_np.sum())
    np.testing.assert_allclose(g.detach().numpy(), g_ref, rtol=1e-12)
