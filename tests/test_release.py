"""Release after a backward without ``retain_graph`` (Note [release] in tidu/core/tape.py): a
second backward runs where PyTorch's does (its program reads no freed value) and raises
PyTorch's message where PyTorch's raises, with the same ``.grad``; on the compiled backward
over groups or nodes, and on the general walk (``TIDU_CACHE=0``) over nodes or split groups."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.autograd.compiled import walk_nodes
from tidu.core import deferred, dispatch, programs
from tidu.core.groups import GroupTrace, raw_node
from tidu.core.tape import FREED, Freed
from tidu.eager import FREED_MESSAGE, Trace

# (programs.ENABLED, dispatch.GROUPED): the compiled backward over groups (the default) or one
# node per call; the general walk over one node per call (TIDU_CACHE=0) or over split groups
MODES = {"compiled-groups": (True, True), "compiled-nodes": (True, False),
         "general-nodes": (False, False), "general-groups": (False, True)}


@pytest.fixture(params=list(MODES))
def mode(request: Any, monkeypatch: Any) -> str:
    enabled, grouped = MODES[request.param]
    monkeypatch.setattr(programs, "ENABLED", enabled)
    monkeypatch.setattr(dispatch, "GROUPED", grouped)
    monkeypatch.setattr(deferred, "ENABLED", True)
    return request.param


X = [1.0, -2.0, 0.5]
Y = [4.0, 5.0, -6.0]

# name -> fn(lib, x, y): x requires grad, y does not
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add_number": lambda lib, x, y: (x + 1).sum(),  # add saves nothing
    "mul_number": lambda lib, x, y: (x * 2).sum(),  # PyTorch saves the 2 as a tensor
    "div_number": lambda lib, x, y: (x / 2).sum(),
    "mul_self": lambda lib, x, y: (x * x).sum(),  # mul saves its inputs
    "mul_tensor": lambda lib, x, y: (x * y).sum(),  # y is saved for x's gradient
    "exp": lambda lib, x, y: x.exp().sum(),  # exp saves its result
    "add_tensor": lambda lib, x, y: (x + y).sum(),
    "chain_without_reads": lambda lib, x, y: ((x - 1) + (x + y) - x.flip(0)).sum(),
    "reads_x_once": lambda lib, x, y: (x * x + x).sum(),
    "mean": lambda lib, x, y: x.mean(),  # PyTorch keeps the count as a number
    "mean_dim": lambda lib, x, y: (x + y).reshape(3, 1).expand(3, 2).mean(dim=1).sum(),
    "add_alpha": lambda lib, x, y: lib.add(y, x, alpha=3).sum(),  # alpha: a number too
    "sub_alpha": lambda lib, x, y: lib.sub(x, y, alpha=0.5).sum(),
    "view_ops": lambda lib, x, y: x[1:].reshape(2, 1).t().sum(),
    "leaf_weight": lambda lib, x, y: (y.reshape(1, 3) @ x.reshape(3, 1)).sum(),  # mm saves y
    "relu": lambda lib, x, y: lib.relu(x).sum(),
    "tril": lambda lib, x, y: x.expand(3, 3).tril().sum(),  # PyTorch keeps the diagonal as a number
    "triu": lambda lib, x, y: x.expand(3, 3).triu(1).sum(),
    "index_select": lambda lib, x, y: x.index_select(0, lib.tensor([2, 0])).sum(),  # the index is saved
    "sort": lambda lib, x, y: (x.sort().values * y).sum(),
    "interpolate_nearest": lambda lib, x, y: lib.nn.functional.interpolate(x.reshape(1, 1, 3), size=5).sum(),
    "interpolate_linear": lambda lib, x, y: lib.nn.functional.interpolate(x.reshape(1, 1, 3), scale_factor=2.5,
                                                                           mode="linear").sum(),
    "interpolate_bilinear": lambda lib, x, y: lib.nn.functional.interpolate(
        x.expand(3, 3).reshape(1, 1, 3, 3), size=(4, 5), mode="bilinear", align_corners=True).sum(),
}


def _twice(lib: Any, fn: Callable[[Any, Any, Any], Any]) -> tuple[list, str | None, list]:
    """``.grad`` after one backward, the second backward's error (or None), ``.grad`` after it."""
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(Y, dtype=lib.float64)
    out = fn(lib, x, y)
    out.backward()
    first = x.grad.tolist()
    try:
        out.backward()
    except RuntimeError as e:
        return first, str(e), x.grad.tolist()
    return first, None, x.grad.tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_a_second_backward_matches_pytorch(case: str, mode: str) -> None:
    fn = CASES[case]
    want_first, want_error, want_after = _twice(torch, fn)
    first, error, after = _twice(tidu, fn)
    np.testing.assert_allclose(first, want_first, rtol=1e-12)
    assert error == want_error  # PyTorch's message, exactly
    np.testing.assert_allclose(after, want_after, rtol=1e-12)


@pytest.mark.smoke
def test_the_example_cases() -> None:
    """The cases that motivated release as PyTorch's, on the default (compiled, grouped) path."""
    ok, raises = ["add_number", "add_tensor", "mean"], ["mul_number", "mul_self", "mul_tensor", "exp"]
    for case in ok:
        first, error, after = _twice(tidu, CASES[case])
        assert error is None and np.allclose(after, 2 * np.array(first)), case
    for case in raises:
        first, error, after = _twice(tidu, CASES[case])
        assert error == FREED_MESSAGE and after == first, case


def _three_times(lib: Any, fn: Callable[[Any, Any, Any], Any]) -> list:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    out = fn(lib, x, lib.tensor(Y, dtype=lib.float64))
    out.backward(retain_graph=True)
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
    return x.grad.tolist()


def test_retain_graph_keeps_every_saved_value(mode: str) -> None:
    for case in ("mul_self", "exp", "mul_number", "leaf_weight"):
        np.testing.assert_allclose(_three_times(tidu, CASES[case]), _three_times(torch, CASES[case]), rtol=1e-12)


def _grad_twice(lib: Any) -> list:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
    out = (x + w).sum() - x.mean()
    first = lib.autograd.grad(out, [x, w])
    second = lib.autograd.grad(out, [x, w])
    return [g.tolist() for g in (*first, *second)]


def test_autograd_grad_twice(mode: str) -> None:
    np.testing.assert_allclose(_grad_twice(tidu), _grad_twice(torch), rtol=1e-12)


def _hook_after_release(lib: Any) -> tuple[list, list]:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    h = x - 1
    out = (h + 2).sum()
    out.backward()
    seen = []
    h.register_hook(lambda g: seen.append(g.tolist()))  # a non-leaf hook: the general walk
    out.backward()
    return x.grad.tolist(), seen


def test_a_hook_added_after_release_runs_on_the_general_walk(mode: str) -> None:
    assert _hook_after_release(tidu) == _hook_after_release(torch)


def _through_released_part(lib: Any) -> list:
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    h = x + 1
    h.sum().backward()
    (h * 3).sum().backward()  # a new graph on h, whose released node reads nothing
    return x.grad.tolist()


def test_a_new_graph_through_a_released_node(mode: str) -> None:
    np.testing.assert_allclose(_through_released_part(tidu), _through_released_part(torch), rtol=1e-12)


def test_create_graph_through_a_released_graph(mode: str) -> None:
    x = tidu.tensor(X, dtype=tidu.float64, requires_grad=True)
    out = (x + 1).sum()
    out.backward()
    (g,) = tidu.autograd.grad(out, x, create_graph=True)  # add reads nothing: as PyTorch, it runs
    assert g.tolist() == [1.0, 1.0, 1.0]
    exp = x.exp().sum()
    exp.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        tidu.autograd.grad(exp, x, create_graph=True)


def test_release_frees_intermediates_and_keeps_the_leaves(mode: str) -> None:
    x = tidu.tensor(np.linspace(-1, 1, 64), requires_grad=True)
    y = tidu.tensor(np.linspace(0, 2, 64))
    h = x.exp()
    residual = weakref.ref(h._buf)
    out = (h * y * x).sum()
    del h
    out.backward()
    gc.collect()
    assert residual() is None, "a saved intermediate must die on release"
    nodes = walk_nodes(raw_node(out._trace))  # a group the general walk split: its calls' nodes
    values = [v for node in nodes if node.saved_data is not None for v in node.saved_data.values()]
    assert values and all(v is FREED or (type(v) is Freed and v.tensor is x) for v in values)
    assert any(type(v) is Freed for v in values), "the leaf stays, to receive .grad"
    assert out.grad_fn.is_released()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.grad_fn.saved_values()


def test_a_released_group_splits_into_released_nodes(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(dispatch, "GROUPED", True)
    monkeypatch.setattr(deferred, "ENABLED", True)
    x = tidu.tensor(X, requires_grad=True)
    h = (x + 1) * 2
    out = (h - 3).sum()
    assert type(h.grad_fn) is GroupTrace
    before = compiled.STATS["general"]
    out.backward()
    assert compiled.STATS["general"] == before  # released whole, by the compiled backward
    nodes = h.grad_fn.group.split()  # what the general walk reads
    assert all(Trace(n).is_released() for n in nodes)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()  # mul reads its 2, a Python number operand: freed, as in PyTorch


# --- a pass frees only what it ran -------------------------------------------------------------
def _losses_apart(lib: Any) -> list:
    """Two losses of one forward, their graphs apart but for the leaf (one group here, unless
    grouping is off), each run backward once: the first frees only its own calls."""
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    a = lib.tanh(x * 2)
    b = lib.sin(x) * x
    a.sum().backward()
    first = x.grad.tolist()
    b.sum().backward()
    return [first, x.grad.tolist()]


def _one_input_at_a_time(lib: Any) -> list:
    """``grad`` for one input runs (and frees) only the calls on its path: the other input's
    pass still runs, and a second pass for the first raises."""
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(Y, dtype=lib.float64, requires_grad=True)
    loss = (lib.tanh(x * 2) + lib.sin(y) * y).sum()
    gx, gy = lib.autograd.grad(loss, x)[0].tolist(), lib.autograd.grad(loss, y)[0].tolist()
    try:
        lib.autograd.grad(loss, x)
    except RuntimeError as e:
        return [gx, gy, str(e)]
    return [gx, gy, None]


@pytest.mark.parametrize("case", [_losses_apart, _one_input_at_a_time], ids=lambda f: f.__name__)
def test_a_pass_frees_only_the_calls_it_ran(case: Callable, mode: str) -> None:
    got, want = case(tidu), case(torch)
    for a, b in zip(got, want, strict=True):
        if isinstance(b, list):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        else:
            assert a == b


@pytest.mark.parametrize("kept_first", [False, True])
def test_a_kept_constant_never_marks_the_plain_one_kept(kept_first: bool) -> None:
    """``kept_constant`` (a number PyTorch's backward holds as a number: kept on release) and
    ``constant`` (an operand PyTorch saves as a tensor: freed) share their cache's key, so a kept
    constant of a value copies the plain one of that value instead of marking it kept: then
    ``(x * v).sum()`` still cannot run backward twice, in either order of first use."""
    from tidu.core.tape import KEPT
    from tidu.ops._operands import constant, kept_constant

    value = 7.25 + kept_first  # a value no other test makes
    like = tidu.tensor(X, dtype=tidu.float64)
    if kept_first:
        kept = kept_constant(value, tidu.float64, like, (3,))
        plain = constant(value, tidu.float64, like, (3,))
    else:
        plain = constant(value, tidu.float64, like, (3,))
        kept = kept_constant(value, tidu.float64, like, (3,))
    assert kept is not plain and KEPT.get(id(kept)) is kept and KEPT.get(id(plain)) is not plain
    x = tidu.tensor(X, dtype=tidu.float64, requires_grad=True)
    out = (x * value).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.backward()
