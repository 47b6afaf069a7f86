"""Compiled backward steps (tidu/autograd/compiled.py): the same gradients as the general walk,
served from the cache by structure only, never stale, and the general path where they must not run."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tidu.autograd import compiled
from tidu.backends.cpu import fusion
from tidu.core import deferred, dispatch, programs

from .test_program_fuzz import cube

F = tidu.nn.functional


def _run(fn: Callable[..., Any], arrays: list[np.ndarray], enabled: bool, monkeypatch: Any) -> list[Any]:
    monkeypatch.setattr(programs, "ENABLED", enabled)
    leaves = [tidu.tensor(a, requires_grad=True) for a in arrays]
    fn(*leaves)
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


def check_same(fn: Callable[..., Any], *arrays: np.ndarray, monkeypatch: Any) -> None:
    """``fn(*leaves)`` runs a backward: a built step and the reused step agree exactly, and both
    agree with the general walk up to rounding. Not exactly: the step's passes may reorder a float
    sum (``_transposed_products`` makes ``b @ a`` where the walk views ``(a @ b).T``, and a BLAS need
    not sum those in one order: OpenBLAS on AMD EPYC does not)."""
    expected = _run(fn, list(arrays), False, monkeypatch)
    before = dict(compiled.STATS)
    first = _run(fn, list(arrays), True, monkeypatch)
    second = _run(fn, list(arrays), True, monkeypatch)
    assert compiled.STATS["reused"] > before["reused"], "the repeated step was not served from the cache"
    for i, (g, h, e) in enumerate(zip(first, second, expected)):
        assert (g is None) == (h is None) == (e is None), f"leaf {i}"
        if g is not None:
            np.testing.assert_array_equal(h, g, err_msg=f"grad of leaf {i}: reused step against built step")
            scale = float(np.abs(e).max())
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6 * scale, err_msg=f"grad of leaf {i}")


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def test_mlp_step(monkeypatch: Any) -> None:
    x, labels = tidu.tensor(_rand(8, 6)), tidu.tensor(np.arange(8) % 3)

    def step(w1: Any, b1: Any, w2: Any, b2: Any) -> None:
        h = F.relu(x @ w1.t() + b1)
        F.cross_entropy(h @ w2.t() + b2, labels).backward()

    check_same(step, _rand(5, 6), _rand(5), _rand(3, 5), _rand(3), monkeypatch=monkeypatch)


def test_transformer_block(monkeypatch: Any) -> None:
    batch, seq, d, heads = 2, 5, 8, 2
    x = tidu.tensor(_rand(batch, seq, d))
    mask = tidu.triu(tidu.ones(seq, seq, dtype=tidu.bool), diagonal=1)

    def step(wqkv: Any, wo: Any, w1: Any, w2: Any, g: Any) -> None:
        h = F.layer_norm(x, (d,), weight=g)
        q, k, v = (h @ wqkv.t()).split(d, dim=-1)
        q, k, v = (t.reshape(batch, seq, heads, d // heads).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
        att = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        y = x + att.transpose(1, 2).reshape(batch, seq, d) @ wo.t()
        (y + F.gelu(y @ w1.t()) @ w2.t()).pow(2).mean().backward()

    check_same(step, _rand(3 * d, d), _rand(d, d), _rand(2 * d, d), _rand(d, 2 * d), _rand(d),
               monkeypatch=monkeypatch)


def test_a_weight_read_transposed_by_every_step_is_transposed_once(monkeypatch: Any) -> None:
    """An RNN's ``dh = g @ Wh.T`` at every step reads one contiguous ``Wh.T``, made once. The
    loop's calls form one group, which saves ``Wh`` once (grouping on even in a ``TIDU_CACHE=0``
    run; one node per call would gather ``Wh`` into a slot of its own)."""
    monkeypatch.setattr(deferred, "ENABLED", True)
    monkeypatch.setattr(dispatch, "GROUPED", True)
    x = tidu.tensor(_rand(5, 3, 4))

    def step(wx: Any, wh: Any) -> None:
        h = tidu.zeros(3, 4)
        for t in range(5):
            h = tidu.tanh(x[t] @ wx + h @ wh)
        h.sum().backward()

    compiled.clear()
    check_same(step, _rand(4, 4), _rand(4, 4, seed=1), monkeypatch=monkeypatch)
    (built,) = compiled._steps.values()
    copies = [i for i in built.program if i.app is not None and i.app.prim.name == "transpose"]
    assert len(copies) == 1 and copies[0].fn is compiled._transposed_copy
    products = [i for i in built.program if i.app is not None and i.app.prim.name == "dot_general"]
    readers = [i for i in products if copies[0].outs[0] in i.ins]
    assert len(readers) == 4  # dh of steps 5..2 (step 1's h is zeros, a constant)
    assert all(dict(i.app.params)["dimension_numbers"] == (((1,), (0,)), ((), ())) for i in readers)
    assert not any(compiled._reads_right_transposed(i.app) for i in products)
    leaves = [torch.tensor(a, requires_grad=True) for a in (_rand(4, 4), _rand(4, 4, seed=1))]
    h = torch.zeros(3, 4)
    for t in range(5):
        h = torch.tanh(torch.tensor(x.numpy()[t]) @ leaves[0] + h @ leaves[1])
    h.sum().backward()
    got = _run(step, [_rand(4, 4), _rand(4, 4, seed=1)], True, monkeypatch)
    for g, w in zip(got, leaves):
        np.testing.assert_allclose(g, w.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_reused_step_plans_its_products_once(monkeypatch: Any) -> None:
    """A built step's host products are planned for their shapes when it is built
    (``dot_kernel``): running it again plans nothing, with the same gradients as PyTorch's."""
    from tidu.primitives import linalg

    monkeypatch.setattr(programs, "ENABLED", True)
    planned = []
    real_plan = linalg._dot_plan
    monkeypatch.setattr(linalg, "_dot_plan", lambda *args: planned.append(args) or real_plan(*args))
    x, w1, w2 = _rand(4, 3), _rand(3, 5, seed=1), _rand(5, 2, seed=2)
    compiled.clear()
    for _ in range(2):
        leaves = [tidu.tensor(a, requires_grad=True) for a in (w1, w2)]
        planned.clear()
        (tidu.tanh(tidu.tensor(x) @ leaves[0]) @ leaves[1]).sum().backward()
    assert compiled.STATS["reused"] and not planned  # neither the forward's nor the step's products
    refs = [torch.tensor(a, requires_grad=True) for a in (w1, w2)]
    (torch.tanh(torch.tensor(x) @ refs[0]) @ refs[1]).sum().backward()
    for got, ref in zip(leaves, refs):
        np.testing.assert_allclose(got.grad.numpy(), ref.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_shared_inputs_and_fan_out(monkeypatch: Any) -> None:
    def step(a: Any, b: Any) -> None:
        h = a * a + tidu.sin(a) * b
        (h * h + h.exp() - b / (a * a + 1)).sum().backward()

    check_same(step, _rand(4), _rand(4), monkeypatch=monkeypatch)


def test_views_and_inplace(monkeypatch: Any) -> None:
    def step(a: Any, b: Any) -> None:
        h = a * 2
        h[1:3] += b[:2] * b[:2]  # in-place write through a view of a non-leaf
        v = h.view(2, 3).t()
        v.mul_(v.sigmoid())
        (v.reshape(-1)[::2] * 3).sum().backward()

    check_same(step, _rand(6), _rand(3), monkeypatch=monkeypatch)


def _raises_after_inplace(run: Callable[[Any, Any], Any]) -> None:
    """``run(z, x)`` differentiates ``z`` after a value its graph saved was written in place: it
    raises, on a built step and on a reused one (both check the saved versions)."""
    for _ in range(2):
        x = tidu.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = (y * y).sum()
        y.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            run(z, x)


@pytest.mark.parametrize("name,prim", [("tanh", "tanh"), ("exp", "exp"), ("sigmoid", "logistic")])
def test_a_written_saved_output_is_named_by_the_call_that_made_it(name: str, prim: str) -> None:
    """An op's output, saved by its own backward and written in place before the backward: the
    error names that op, as PyTorch's does ("output 0 of Tanh"), not the first op of its rule."""
    for lib in (torch, tidu):
        x = lib.tensor([0.5, -0.25], requires_grad=True)
        y = getattr(lib, name)(x)
        y += 1.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as raised:
            (y * y).sum().backward()
        if lib is tidu:
            assert f"which is output of {prim}," in str(raised.value)


def test_inplace_modified_saved_value_still_raises(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    _raises_after_inplace(lambda z, x: z.backward())


def test_multiple_outputs_inputs_and_grad(monkeypatch: Any) -> None:
    def step(a: Any, b: Any) -> None:
        u, v = a * b, tidu.tanh(a - b)
        tidu.autograd.backward([u.sum(), v], [None, tidu.ones(3)])

    check_same(step, _rand(3), _rand(3, seed=1), monkeypatch=monkeypatch)

    def only_b(a: Any, b: Any) -> None:
        (a * b).sum().backward(inputs=[b])

    check_same(only_b, _rand(3), _rand(3, seed=1), monkeypatch=monkeypatch)

    def via_grad(a: Any, b: Any) -> None:
        ga, gb = tidu.autograd.grad((a.exp() * b).sum(), [a, b])
        a.grad, b.grad = ga, gb

    check_same(via_grad, _rand(3), _rand(3, seed=1), monkeypatch=monkeypatch)


def test_grad_accumulates_and_retain_graph(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    x = tidu.tensor([1.0, -2.0], requires_grad=True)
    y = (x * x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 3 * np.array([1.0, 4.0]))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_grad_and_hooks(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])
    x.grad = None
    h = x * 3
    h.register_hook(lambda g: g * 10)  # a non-leaf hook: the general walk runs it
    x.register_hook(lambda g: g + 1)  # a leaf hook runs after either path
    (h * h).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [181.0, 361.0])


def test_autograd_function_falls_back(monkeypatch: Any) -> None:
    class Double(tidu.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    monkeypatch.setattr(programs, "ENABLED", True)
    before = compiled.STATS["general"]
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    (Double.apply(x.sin()) * 3).sum().backward()
    assert compiled.STATS["general"] == before + 1
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.cos([1.0, 2.0]), rtol=1e-6)


def _step_count(fn: Callable[[], Any]) -> int:
    before = compiled.size()
    fn()
    return compiled.size() - before


def test_changed_structure_gets_its_own_program(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    a0, b0 = np.array([0.5, 1.5, -1.0], np.float32), np.array([2.0, -0.5, 0.25], np.float32)

    def grads(expr: Callable[[Any, Any], Any], rg: tuple[bool, bool] = (True, True), inputs: Any = None,
              n: int = 3) -> tuple[Any, Any, int]:
        a, b = tidu.tensor(a0[:n], requires_grad=rg[0]), tidu.tensor(b0[:n], requires_grad=rg[1])
        wanted = None if inputs is None else [(a, b)[i] for i in inputs]
        built = _step_count(lambda: expr(a, b).sum().backward(inputs=wanted))
        return (None if a.grad is None else a.grad.numpy()), (None if b.grad is None else b.grad.numpy()), built

    ga, gb, built = grads(lambda a, b: a * b)
    assert built == 1 and np.allclose(ga, b0) and np.allclose(gb, a0)
    assert grads(lambda a, b: a * b)[2] == 0  # the same structure: reused
    ga, gb, built = grads(lambda a, b: a * b, n=2)  # a changed shape
    assert built == 1 and np.allclose(ga, b0[:2]) and np.allclose(gb, a0[:2])
    ga, gb, built = grads(lambda a, b: a + b)  # another primitive
    assert built == 1 and np.allclose(ga, 1) and np.allclose(gb, 1)
    ga, gb, built = grads(lambda a, b: a * a)  # other wiring, same applications
    assert built == 1 and np.allclose(ga, 2 * a0) and gb is None
    ga, gb, built = grads(lambda a, b: a * b, rg=(True, False))  # another requires-grad set
    assert built == 1 and np.allclose(ga, b0) and gb is None
    ga, gb, built = grads(lambda a, b: a * b, inputs=[1])  # another wanted set
    assert built == 1 and ga is None and np.allclose(gb, a0)
    ga, gb, built = grads(lambda a, b: (a * b).double())  # another dtype downstream
    assert built == 1 and np.allclose(ga, b0) and ga.dtype == np.float32


def test_cache_is_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(compiled, "MAX_STEPS", 3)
    compiled.clear()
    for n in range(1, 7):
        x = tidu.tensor(np.ones(n), requires_grad=True)
        (x * x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.ones(n))
    assert compiled.size() == 3


def test_cache_off_serves_nothing(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", False)
    before = dict(compiled.STATS)
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert compiled.STATS == before and x.grad.tolist() == [2.0, 4.0]


def test_slots_are_freed_after_their_last_reader(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    x = tidu.tensor(_rand(4, 4), requires_grad=True)
    (tidu.tanh(x @ x) * x).exp().sum().backward()
    (step,) = compiled._steps.values()
    results = {slot for _, slot, _ in step.results}
    freed = [s for instr in step.program for s in instr.free]
    assert len(freed) == len(set(freed)) and not results & set(freed)
    written = {o for instr in step.program for o in instr.outs}
    read = {i for instr in step.program for i in instr.ins}
    assert (written | read) - results - {0} <= set(freed)  # slot 0: the seed, the caller's
    for n, instr in enumerate(step.program):  # nothing reads a slot after it was freed
        for later in step.program[n + 1:]:
            assert not set(instr.free) & set(later.ins)


def test_residuals_die_during_the_backward(monkeypatch: Any) -> None:
    """Without retain_graph the nodes are released once gathered: each saved array dies after
    its last reader, so the backward's peak stays a few arrays above the forward's residuals."""
    import tracemalloc

    n, k = 50_000, 6
    x = tidu.tensor(np.ones(n, np.float32), requires_grad=True)
    ws = [tidu.tensor(np.full(n, 0.5, np.float32), requires_grad=True) for _ in range(k)]

    def loss() -> Any:
        h = x
        for w in ws:
            h = tidu.sin(h) * w  # saves 2 arrays of n per layer
        return h.sum()

    def peak(enabled: bool) -> float:
        monkeypatch.setattr(programs, "ENABLED", enabled)
        loss().backward()
        tracemalloc.start()
        try:
            out = loss()
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            out.backward()
            top = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return (top - start) / (4 * n)  # in arrays of n, above the forward's residuals

    # one instruction at a time (fusion off): each residual dies right after its last reader
    monkeypatch.setattr(fusion, "ENABLED", False)
    compiled.clear()
    assert peak(True) < 4.5 and peak(True) + 4 < peak(False)
    # fused groups free their inputs once the whole group has run: a little higher, still far
    # below the general walk's
    monkeypatch.setattr(fusion, "ENABLED", True)
    compiled.clear()
    assert peak(True) + 2 < peak(False)


_UNARY = [tidu.sin, tidu.tanh, tidu.exp, lambda t: t * t, lambda t: t - t.sum(0, keepdim=True),
          lambda t: t.t().reshape(t.shape), lambda t: t * t[:, :1], lambda t: t.softmax(-1)]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b * 0.5, lambda a, b: a @ b.t() @ a,
           lambda a, b: tidu.where(a > b, a, b)]


def _random_output(ops: list, leaves: list) -> Any:
    """A random DAG over ``leaves``: each op draws its inputs among the values so far; the
    output weighs every value made."""
    values = list(leaves)
    for binary, f, i, j in ops:
        a, b = values[i % len(values)], values[j % len(values)]
        values.append(_BINARY[f % len(_BINARY)](a, b) if binary else _UNARY[f](a))
    return sum((v * (k + 1)).sum() for k, v in enumerate(values[len(leaves):]))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=12),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_random_graphs_match_the_general_walk(ops: list, requires: list) -> None:
    """Random DAGs over three leaves (some not requiring grad): built and reused steps give the
    general walk's gradients to a few float32 ulps, with the passes that sum in another order
    held off (stacking: a sum of small products as one product; transposed products: ``b @ a``
    for ``(a @ b).T``; shared transposed operands: ``a @ c`` for ``a @ b.T``, ``c`` a copy of
    ``b.T``), then to rounding with them. Not exactly: one full run on an AMD EPYC
    found two elements one ulp apart that the same example, rerun alone, gives equal."""
    arrays = [_rand(3, 3, seed=i) for i in range(3)]

    def grads(enabled: bool) -> list:
        programs.ENABLED = enabled
        leaves = [tidu.tensor(a, requires_grad=r) for a, r in zip(arrays, requires)]
        out = _random_output(ops, leaves)
        if not out.requires_grad:
            return []
        out.backward()
        return [None if t.grad is None else t.grad.numpy() for t in leaves]

    before = dict(compiled.STATS)
    with (mock.patch.object(fusion, "stack_sums", lambda program, keep: list(program)),
          mock.patch.object(compiled, "_transposed_products", lambda program, keep, device: list(program)),
          mock.patch.object(compiled, "_shared_transposed_operands", lambda program: list(program))):
        compared = _compiled_matches_general(grads, tol=1e-6)
    if compared:  # both passes compiled, the second one reused
        assert compiled.STATS["built"] + compiled.STATS["reused"] == before["built"] + before["reused"] + 2
        assert compiled.STATS["reused"] > before["reused"]
    compiled.clear()
    _compiled_matches_general(grads, tol=1e-4)  # with both passes: rounding only


def _compiled_matches_general(grads: Callable[[bool], list], tol: float = 0.0) -> bool:
    """``grads(enabled)`` through a built and then a reused step equals (within ``tol``) its
    value through the general walk; whether there was anything to compare."""
    saved = programs.ENABLED
    try:
        expected = grads(False)
        for _ in range(2):
            got = grads(True)
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                assert (g is None) == (e is None)
                if g is not None:
                    np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    finally:
        programs.ENABLED = saved
    return bool(expected)


def test_every_instruction_carries_consistent_avals(monkeypatch: Any) -> None:
    """Passes (fusion) read shapes and dtypes from ``instr.app``: every instruction has them,
    accumulation adds included, and each input's aval is the one its producer declared."""
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", False)  # the program as passes receive it
    compiled.clear()
    w = tidu.tensor(_rand(4, 4), requires_grad=True)
    x = tidu.tensor(_rand(3, 4))
    h = tidu.tanh(x @ w)
    (h * h + h.exp() @ w.t()).sum().backward()
    (step,) = compiled._steps.values()
    produced = {}
    for instr in step.program:
        assert instr.app.in_avals is not None and len(instr.app.in_avals) == len(instr.ins)
        for slot, aval in zip(instr.ins, instr.app.in_avals):
            assert produced.get(slot, aval) == aval
        produced.update(zip(instr.outs, instr.app.out_avals))
    assert any(instr.app.prim.name == "add" for instr in step.program)  # h's cotangents are summed


@pytest.mark.parametrize("enabled", [True, False])
def test_inplace_check_covers_only_values_a_wanted_gradient_reads(enabled: bool, monkeypatch: Any) -> None:
    """As in PyTorch, a saved value written in place fails the pass only where a wanted gradient
    reads it: the general walk skips nodes on no path to a wanted key, the compiled step gathers
    only what its program reads (a gradient nobody asked for is dead code)."""
    import torch

    monkeypatch.setattr(programs, "ENABLED", enabled)
    for lib in (tidu, torch):
        a, b = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0])
        loss = (a * c).sum() + (b * 2).sum()
        c.add_(1.0)
        loss.backward(inputs=[b], retain_graph=True)  # a * c's backward reads c only for a's gradient
        assert b.grad.tolist() == [2.0, 2.0] and a.grad is None
        assert lib.autograd.grad(loss, b, retain_graph=True)[0].tolist() == [2.0, 2.0]
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward(inputs=[a])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grad_accumulates_like_torch(dtype: str) -> None:
    import torch

    a = np.linspace(-1, 1, 6, dtype=dtype).reshape(2, 3)
    x, xt = tidu.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    for _ in range(3):
        (x.sin() * x).sum().backward()
        (xt.sin() * xt).sum().backward()
    first, first_t = x.grad, xt.grad
    (x * 2).sum().reshape(1, 1).backward()  # an implicit seed of shape (1, 1)
    (xt * 2).sum().reshape(1, 1).backward()
    assert (x.grad is first) == (xt.grad is first_t)  # added in place: the same tensor
    assert str(x.grad.dtype)[5:] == str(xt.grad.dtype)[6:]
    assert x.grad.grad_fn is None and not x.grad.requires_grad
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


# --- create_graph: the step binds on tensors, so its backward is differentiable again ---


def _higher(fn: Callable[..., list], lib: Any, arrays: list[np.ndarray]) -> list[Any]:
    leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
    return [None if t is None else t.detach().numpy().copy() for t in fn(lib, *leaves)]


def check_higher(fn: Callable[..., list], *arrays: np.ndarray, monkeypatch: Any) -> None:
    """``fn(lib, *leaves)`` returns tensors computed through ``create_graph`` passes: the general
    walk, a built and a reused compiled step give the same values, and PyTorch's."""
    import torch

    arrays64 = [a.astype(np.float64) for a in arrays]
    monkeypatch.setattr(programs, "ENABLED", False)
    expected = _higher(fn, tidu, arrays64)
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    before = dict(compiled.STATS)
    got = [_higher(fn, tidu, arrays64) for _ in range(2)]
    assert any(step.on_tensors for step in compiled._steps.values()), "no create_graph step was built"
    assert compiled.STATS["reused"] > before["reused"], "the repeated pass was not served from the cache"
    oracle = _higher(fn, torch, arrays64)
    for values in got:
        assert len(values) == len(expected) == len(oracle)
        for i, (g, e, o) in enumerate(zip(values, expected, oracle)):
            assert (g is None) == (e is None) == (o is None), f"result {i}"
            if g is not None:
                np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"result {i}: general walk")
                np.testing.assert_allclose(g, o, rtol=1e-9, atol=1e-12, err_msg=f"result {i}: PyTorch")


def test_hessian_vector_product(monkeypatch: Any) -> None:
    def hvp(lib: Any, a: Any, x: Any, v: Any) -> list:
        (g,) = lib.autograd.grad(lib.tanh(a @ x).sum(), x, create_graph=True)
        assert g.requires_grad and g.grad_fn is not None
        hv, ha = lib.autograd.grad((g * v).sum(), [x, a])
        return [g, hv, ha]

    check_higher(hvp, _rand(5, 5), _rand(5), _rand(5, seed=1), monkeypatch=monkeypatch)


def test_third_order(monkeypatch: Any) -> None:
    def third(lib: Any, x: Any, y: Any) -> list:
        f = (lib.sin(x) * y * x).sum() + (x.exp() * y).sum()
        g1x, g1y = lib.autograd.grad(f, [x, y], create_graph=True)
        (g2,) = lib.autograd.grad((g1x * g1y).sum(), x, create_graph=True)
        g3 = lib.autograd.grad(g2.sum(), [x, y])
        return [g1x, g1y, g2, *g3]

    check_higher(third, _rand(4), _rand(4, seed=1), monkeypatch=monkeypatch)


def test_several_outputs_and_grad_outputs(monkeypatch: Any) -> None:
    def several(lib: Any, a: Any, b: Any, s: Any) -> list:
        u, w = a * b, lib.tanh(a - b)
        ga, gb = lib.autograd.grad([u.sum(), w], [a, b], grad_outputs=[None, s], create_graph=True)
        return [ga, gb, *lib.autograd.grad((ga * gb).sum(), [a, b, s])]  # s: the seed is on the graph

    check_higher(several, _rand(3), _rand(3, seed=1), _rand(3, seed=2), monkeypatch=monkeypatch)


def test_views_and_leaves_used_twice(monkeypatch: Any) -> None:
    def views(lib: Any, a: Any, b: Any) -> list:
        m = a.reshape(2, 3)
        h = (m @ m.t()).reshape(-1)[1:3] * a[:2] * a[:2] + b[::2].sum() * b
        (g,) = lib.autograd.grad((h.sigmoid() * h).sum(), a, create_graph=True)
        return [g, *lib.autograd.grad((g * g).sum(), [a, b], allow_unused=True)]

    check_higher(views, _rand(6), _rand(2), monkeypatch=monkeypatch)


def test_create_graph_steps_bind_through_the_short_paths(monkeypatch: Any) -> None:
    """A ``create_graph`` step binds its products, elementwise calls and one-operand calls through
    dispatch's short paths (``compiled._short_bind``; ``bind_eager`` is left the constants, which
    have no operands), on a built and on a reused step, with PyTorch's values; an operand of
    another tensor type takes ``bind_eager``."""
    import torch

    monkeypatch.setattr(programs, "ENABLED", True)
    general: list[str] = []
    bind_eager = compiled.bind_eager
    monkeypatch.setattr(compiled, "bind_eager", lambda p, a, k: general.append(p.name) or bind_eager(p, a, k))
    a_np, x_np = _rand(5, 5).astype(np.float64), _rand(5, seed=1).astype(np.float64)
    ta, tx = torch.tensor(a_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.tanh(ta @ tx).sum() + (torch.sin(tx) * tx).sum(), tx, create_graph=True)
    expected = torch.autograd.grad((tg * tg).sum(), [ta, tx])
    compiled.clear()
    for _ in range(2):
        general.clear()
        a, x = tidu.tensor(a_np, requires_grad=True), tidu.tensor(x_np, requires_grad=True)
        (g,) = tidu.autograd.grad(tidu.tanh(a @ x).sum() + (tidu.sin(x) * x).sum(), x, create_graph=True)
        assert any(step.on_tensors for step in compiled._steps.values()), "no create_graph step was built"
        assert set(general) <= {"full"}, general
        np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
        for got, want in zip(tidu.autograd.grad((g * g).sum(), [a, x]), expected):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)

    class Other(tidu.Tensor):
        pass

    general.clear()
    x = Other(x_np, tidu.float64)  # tidu's own (array, dtype) form: Other(x_np) is the legacy constructor
    x.requires_grad_()
    (g,) = tidu.autograd.grad((tidu.sin(x) * x).sum(), x, create_graph=True)
    assert "mul" in general
    np.testing.assert_allclose(g.detach().numpy(), np.cos(x_np) * x_np + np.sin(x_np), rtol=1e-12)


def test_backward_with_create_graph(monkeypatch: Any) -> None:
    def via_backward(lib: Any, x: Any, w: Any) -> list:
        (lib.tanh(x * w) * x).sum().backward(create_graph=True)
        gx, gw = x.grad, w.grad
        x.grad = w.grad = None
        (gx * gw).sum().backward()
        return [gx, gw, x.grad, w.grad]

    check_higher(via_backward, _rand(3), _rand(3, seed=1), monkeypatch=monkeypatch)


def test_create_graph_and_plain_steps_are_cached_apart(monkeypatch: Any) -> None:
    """The same structure with and without create_graph: neither is served the other's step."""
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    x = tidu.tensor([0.5, -1.0], requires_grad=True)
    for create_graph in (False, True, False, True):
        (g,) = tidu.autograd.grad((x * x * x).sum(), x, create_graph=create_graph)
        assert g.requires_grad is create_graph
        np.testing.assert_allclose(g.detach().numpy(), [0.75, 3.0])
    assert sorted(step.on_tensors for step in compiled._steps.values()) == [False, True]
    (g,) = tidu.autograd.grad((x * x * x).sum(), x, create_graph=True)
    (h,) = tidu.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [3.0, -6.0])


def test_create_graph_changed_structure_is_rebuilt(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    x = tidu.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def second(f: Callable[[Any], Any]) -> Any:
        (g,) = tidu.autograd.grad(f(x).sum(), x, create_graph=True)
        return tidu.autograd.grad(g.sum(), x)[0].numpy()

    np.testing.assert_allclose(second(lambda t: t * t * t), 6 * x.detach().numpy())
    built = compiled.STATS["built"]
    np.testing.assert_allclose(second(lambda t: t.sin() * t), 2 * np.cos([0.5, -1.0, 2.0])
                               - np.array([0.5, -1.0, 2.0]) * np.sin([0.5, -1.0, 2.0]), rtol=1e-6)
    assert compiled.STATS["built"] >= built + 1  # a new first-pass step, not the cube's
    np.testing.assert_allclose(second(lambda t: t.exp()), np.exp([0.5, -1.0, 2.0]), rtol=1e-6)


def test_create_graph_inplace_modified_saved_value_raises(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    _raises_after_inplace(lambda z, x: tidu.autograd.grad(z, x, create_graph=True))
    assert any(step.on_tensors for step in compiled._steps.values())
    # a tensor the first pass read is written before the second pass differentiates it (PyTorch raises too)
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (g,) = tidu.autograd.grad((y * y * y).sum(), x, create_graph=True)
    y.mul_(3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tidu.autograd.grad(g.sum(), x)


def test_create_graph_falls_back_for_hooks_and_functions(monkeypatch: Any) -> None:
    Cube = cube(tidu)  # noqa: N806 - an autograd.Function class
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    x = tidu.tensor([1.0, 2.0], requires_grad=True)
    before = compiled.STATS["general"]
    (g,) = tidu.autograd.grad(Cube.apply(x.sin()).sum(), x, create_graph=True)
    assert compiled.STATS["general"] == before + 1 and not compiled._steps
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.sin([1.0, 2.0]) ** 2 * np.cos([1.0, 2.0]), rtol=1e-6)
    h = x * 3
    h.register_hook(lambda grad: grad * 10)  # a non-leaf hook: the general walk runs it
    (g,) = tidu.autograd.grad((h * h).sum(), x, create_graph=True)
    assert not compiled._steps
    np.testing.assert_allclose(g.detach().numpy(), [180.0, 360.0])
    np.testing.assert_allclose(tidu.autograd.grad(g.sum(), x)[0].numpy(), [1800.0, 1800.0])  # as PyTorch


def test_create_graph_retain_graph_false_releases(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    for _ in range(2):
        x = tidu.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        (g,) = tidu.autograd.grad(y, x, create_graph=True, retain_graph=False)
        np.testing.assert_allclose(g.detach().numpy(), np.exp([1.0, 2.0]) * np.array([2.0, 3.0]))
        for again in (y, g.sum()):  # g's graph reaches the released forward nodes too, as in PyTorch
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                tidu.autograd.grad(again, x)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7), st.integers(0, 20), st.integers(0, 20)),
                min_size=1, max_size=8),
       st.lists(st.booleans(), min_size=3, max_size=3))
def test_random_graphs_second_order_match_the_general_walk(ops: list, requires: list) -> None:
    """Random DAGs over three leaves: gradients and gradients of gradients through built and
    reused create_graph steps equal the general walk's."""
    arrays = [_rand(3, 3, seed=i).astype(np.float64) for i in range(3)]

    def grads(enabled: bool) -> list:
        programs.ENABLED = enabled
        leaves = [tidu.tensor(a, requires_grad=r) for a, r in zip(arrays, requires)]
        out = _random_output(ops, leaves)
        wrt = [t for t in leaves if t.requires_grad]
        if not out.requires_grad or not wrt:
            return []
        first = tidu.autograd.grad(out, wrt, create_graph=True, allow_unused=True)
        total = sum((g * g).sum() for g in first if g is not None and g.requires_grad)
        second = [] if isinstance(total, int) else tidu.autograd.grad(total, wrt, allow_unused=True)
        return [None if g is None else g.detach().numpy() for g in (*first, *second)]

    _compiled_matches_general(grads, tol=1e-12)


def test_a_bound_programs_constants_are_made_once(monkeypatch: Any) -> None:
    """With ``create_graph`` the step binds on tensors; a rule's constant (tanh's ``1 - y * y``)
    is made when the step is built, and every pass reuses it, with the same results."""
    from tidu.primitives.creation import full

    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    made = []
    kernel = full.impls["cpu"]
    monkeypatch.setitem(full.impls, "cpu", lambda **params: (made.append(1), kernel(**params))[1])
    values = np.array([0.5, -1.0, 2.0])
    bound = 0  # ``full`` calls of the bound (create_graph) step; with TIDU_FUSION=0 the second
    for _ in range(3):  # backward, an array program, runs its own ``full`` instruction each pass
        x = tidu.tensor(values, requires_grad=True)
        before = len(made)
        (g,) = tidu.autograd.grad(tidu.tanh(x).sum(), x, create_graph=True)
        bound += len(made) - before
        (h,) = tidu.autograd.grad(g.sum(), x)
        t = np.tanh(values)
        np.testing.assert_allclose(g.detach().numpy(), 1 - t * t, rtol=1e-12)
        np.testing.assert_allclose(h.numpy(), -2 * t * (1 - t * t), rtol=1e-12)
    assert compiled.STATS["reused"] > 0
    assert bound == 1


def _prims(step: Any) -> list[str]:
    return [instr.app.prim.name for instr in step.program if instr.app is not None]


@pytest.mark.parametrize("create_graph", [False, True])
def test_an_implicit_seed_is_multiplied_into_nothing(create_graph: bool, monkeypatch: Any) -> None:
    """``grad(tanh(a @ x).sum(), x)`` seeded with the implicit one: its step reads ``1 - t * t``
    where the rules make ``ones * (1 - t * t)`` (``compiled._unit_seed``), a pass that records binds
    no broadcast and no product by ones; an explicit seed of the same structure gets its own step
    (the key says which), scaled as PyTorch's."""
    monkeypatch.setattr(programs, "ENABLED", True)
    compiled.clear()
    a_np, x_np = _rand(4, 4).astype(np.float64), _rand(4).astype(np.float64)
    expected = {}
    for scale in (None, 2.5):
        tx = torch.tensor(x_np, requires_grad=True)
        seed = None if scale is None else torch.tensor(scale, dtype=torch.float64)
        (expected[scale],) = torch.autograd.grad(torch.tanh(torch.tensor(a_np) @ tx).sum(), tx, seed)
    for scale in (None, 2.5, None, 2.5, None):
        x = tidu.tensor(x_np, requires_grad=True)
        seed = None if scale is None else tidu.tensor(scale, dtype=tidu.float64)
        (g,) = tidu.autograd.grad(tidu.tanh(tidu.tensor(a_np) @ x).sum(), x, seed, create_graph=create_graph)
        np.testing.assert_allclose(g.detach().numpy(), expected[scale].numpy(), rtol=1e-12, atol=1e-14)
    unit = [s for key, s in compiled._steps.items() if key[-3] is True]
    given = [s for key, s in compiled._steps.items() if key[-3] is False]
    assert len(unit) == len(given) == 1
    if create_graph:  # the array programs fuse both products into one loop
        assert "broadcast_in_dim" not in _prims(unit[0]) and _prims(unit[0]).count("mul") == 1
        assert "broadcast_in_dim" in _prims(given[0]) and _prims(given[0]).count("mul") == 2


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_gradient_the_seed_multiplies_is_not_a_saved_value(create_graph: bool, monkeypatch: Any) -> None:
    """``(x * w).sum()``'s gradient for ``x`` is ``ones * w``: the product by the implicit one is
    kept where it is a result, so ``x.grad`` never shares ``w``'s storage (writing one would write
    the other)."""
    monkeypatch.setattr(programs, "ENABLED", True)
    w = tidu.tensor([1.0, 2.0, 3.0], requires_grad=True)
    for _ in range(3):
        x = tidu.tensor([4.0, 5.0, 6.0], requires_grad=True)
        (x * w).sum().backward(create_graph=create_graph)
        assert not np.shares_memory(x.grad.detach().numpy(), w.detach().numpy())
        with tidu.no_grad():
            x.grad.zero_()
        np.testing.assert_array_equal(w.detach().numpy(), [1.0, 2.0, 3.0])
        w.grad = None
