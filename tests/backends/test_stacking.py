"""Stacked sums (tidu/backends/stacking.py): a sum of small like products, or of small like
reductions, runs as one over concatenated operands; the gradients stay PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.backends import stacking
from tidu.backends.cpu import fusion, threads
from tidu.core import programs
from tidu.core.aval import ShapeDtype
from tidu.core.dtypes import float64
from tidu.core.instructions import impl_instr, run
from tidu.core.primitive import Application
from tidu.primitives import elementwise as ew
from tidu.primitives import linalg

DIMS = (("dimension_numbers", (((0,), (0,)), ((), ()))),)


@pytest.fixture
def compiled_steps(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", True)
    compiled.clear()


def _rnn(lib: Any, xs: np.ndarray, weights: list[np.ndarray]) -> list[Any]:
    wx, wh, b = (lib.tensor(w, requires_grad=True) for w in weights)
    x = lib.tensor(xs)
    h = lib.zeros(xs.shape[1], wx.shape[1], dtype=lib.float64)
    for t in range(xs.shape[0]):
        h = lib.tanh(x[t] @ wx + h @ wh + b)
    h.sum().backward()
    return [wx.grad, wh.grad, b.grad]


def test_rnn_weight_gradients_are_one_product_each(compiled_steps: None) -> None:
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((6, 4, 5))
    weights = [rng.standard_normal((5, 3)) * 0.5, rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)]
    got = _rnn(tidu, xs, weights)
    (step,) = compiled._steps.values()
    names = [instr.app.prim.name for instr in step.program if instr.app is not None]
    # per step only dh = g @ Wh.T (5 of them); dWx, dWh one product each; db one reduction
    assert names.count("dot_general") == 5 + 2
    assert names.count("reduce_sum") == 1
    assert names.count("concatenate") == 3  # x, h and g: g's stack serves dWx, dWh and db
    for g, w in zip(got, _rnn(torch, xs, weights)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


def test_switched_off_with_fusion(compiled_steps: None, monkeypatch: Any) -> None:
    monkeypatch.setattr(fusion, "ENABLED", False)
    rng = np.random.default_rng(1)
    _rnn(tidu, rng.standard_normal((4, 2, 3)), [np.eye(3), np.eye(3), np.zeros(3)])
    (step,) = compiled._steps.values()
    assert not any(instr.app.prim.name == "concatenate" for instr in step.program)


def _products(n: int, shape: tuple[int, int], *, extra_reader: bool = False) -> tuple[list, list[np.ndarray]]:
    """``sum_i a_i.T @ b_i`` as an instruction program over the inputs 0..2n-1; the sum in slot 4n-1."""
    v = ShapeDtype(shape, float64)
    m = ShapeDtype((shape[1], shape[1]), float64)
    dot = Application(linalg.dot_general, DIMS, (v, v))
    add = Application(ew.add, (), (m, m))
    program = [impl_instr(dot, [2 * i, 2 * i + 1], [2 * n + i]) for i in range(n)]
    total = 2 * n
    for i in range(1, n):
        program.append(impl_instr(add, [total, 2 * n + i], [3 * n + i]))
        total = 3 * n + i
    if extra_reader:  # the first product is read outside the sum too
        program.append(impl_instr(Application(ew.neg, (), (m,)), [2 * n], [4 * n]))
    rng = np.random.default_rng(n)
    return program, [rng.standard_normal(shape) for _ in range(2 * n)]


def _run(program: list, inputs: list[np.ndarray]) -> list:
    slots = list(inputs) + [None] * (3 * len(inputs))
    run(program, slots)
    return slots


def test_sum_of_products_matches_term_by_term() -> None:
    program, inputs = _products(5, (4, 3))
    stacked = stacking.stack_sums(program, keep={19})
    assert [instr.app.prim.name for instr in stacked] == ["concatenate", "concatenate", "dot_general"]
    np.testing.assert_allclose(_run(stacked, inputs)[19], _run(program, inputs)[19], rtol=1e-12)


def test_a_product_read_elsewhere_stays_a_term() -> None:
    program, inputs = _products(4, (4, 3), extra_reader=True)
    stacked = stacking.stack_sums(program, keep={15, 16})
    names = [instr.app.prim.name for instr in stacked]
    assert names.count("dot_general") == 2  # the shared one, and the other three stacked
    got, want = _run(stacked, inputs), _run(program, inputs)
    for slot in (15, 16):
        np.testing.assert_allclose(got[slot], want[slot], rtol=1e-12)


def test_large_products_are_left_alone() -> None:
    k = threads.BLAS_PARALLEL_MIN // 64 + 1  # (k, 8).T @ (k, 8): 64 k multiply-adds
    program, _ = _products(3, (k, 8))
    assert stacking.stack_sums(program, keep={11}) == program


def test_an_rnn_stacks_its_inputs_and_cotangents_without_copies(compiled_steps: None, monkeypatch: Any) -> None:
    """Of an RNN's three stacks, the inputs ``x[0], x[1], ...`` are stacked in the loop's order
    as a view of ``x`` (``stacked_rows``), and the cotangents ``g_t`` are written into their
    stack by the loops that make them (``stacks_in_place``: the stack's instruction returns
    it); the states are copied. The gradients are PyTorch's."""
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((6, 4, 5))
    weights = [rng.standard_normal((5, 3)) * 0.5, rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)]
    _rnn(tidu, xs, weights)  # builds the step
    (step,) = compiled._steps.values()
    into = [instr for instr in step.program if instr.app is None and not instr.parts]  # the stack's allocation
    assert len(into) == 1
    readers = [instr for instr in step.program if into[0].outs[0] in instr.ins]
    assert len(readers) == 6 + 1 and readers[-1].fn is stacking._written_stack  # the 6 loops, then the stack
    stacks = []

    def spy(*parts: np.ndarray) -> np.ndarray:
        out = stacking.stacked_rows(*parts)
        stacks.append((out, parts))
        return out

    def written(*args: np.ndarray) -> np.ndarray:
        out = stacking._written_stack(*args)
        stacks.append((out, args[:-1]))
        return out

    for name, fn in list(step.fn.__globals__.items()):
        if fn is stacking.stacked_rows:
            monkeypatch.setitem(step.fn.__globals__, name, spy)
        elif fn is stacking._written_stack:
            monkeypatch.setitem(step.fn.__globals__, name, written)
    got = _rnn(tidu, xs, weights)
    assert len(stacks) == 3
    for out, parts in stacks:
        np.testing.assert_array_equal(out, np.concatenate(parts))
        assert out.shape == (24, out.shape[1])
    (view,) = [out for out, _ in stacks if out.base is not None]  # the inputs'
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, xs.reshape(24, 5))
    assert sum(all(np.shares_memory(part, out) for part in parts) for out, parts in stacks) == 2
    for g, w in zip(got, _rnn(torch, xs, weights)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["rows", "reversed", "gap", "two bases", "read-only", "strided", "one row each",
                                  "owners"])
def test_stacked_rows_is_a_view_only_of_consecutive_rows(case: str) -> None:
    """``stacked_rows`` equals ``np.concatenate`` always; it is a view (sharing the parts'
    memory) only where the parts lie one after the other in one base."""
    x = np.arange(5 * 3 * 4, dtype=np.float32).reshape(5, 3, 4)
    y = x.copy()
    parts = {"rows": list(x), "reversed": list(x[::-1]), "gap": [x[0], x[2], x[3]],
             "two bases": [x[0], y[1]], "read-only": list(np.broadcast_to(x[0], (3, 3, 4))),
             "strided": list(x[:, :, ::2]), "one row each": list(x[:, :1, :]),
             "owners": [x[0].copy(), x[1].copy()]}[case]
    out = stacking.stacked_rows(*parts)
    np.testing.assert_array_equal(out, np.concatenate(parts))
    viewed = case == "rows"
    assert np.shares_memory(out, x) == viewed
    if viewed:
        assert not out.flags.writeable


def test_a_stack_of_parts_of_other_sizes_is_left_to_its_concatenation() -> None:
    """``stacks_in_place`` writes only stacks of like parts (rows of one size): a concatenation
    of parts of other sizes (``pad_sums``' tiles) is left as it was, and computes the same."""
    first, second = ShapeDtype((2, 3), float64), ShapeDtype((4, 3), float64)
    program = [impl_instr(Application(ew.tanh, (), (a,)), [i], [i + 2]) for i, a in enumerate((first, second))]
    program += [impl_instr(Application(ew.mul, (), (a, a)), [i + 2, i], [i + 4]) for i, a in enumerate((first, second))]
    program.append(stacking.concat_instr([4, 5], 0, (first, second), [6]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fusion, "ENABLED", True)
        fused = fusion.fuse(program, keep={6})
    assert stacking.stacks_in_place(fused, keep={6}) == fused
    rng = np.random.default_rng(4)
    x = [rng.standard_normal((2, 3)), rng.standard_normal((4, 3))]
    np.testing.assert_allclose(_run(fused, x)[6], np.concatenate([np.tanh(a) * a for a in x]), rtol=1e-12)
