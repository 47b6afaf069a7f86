"""Cached backward programs: reused by nodes of the same form, never served stale."""

import numpy as np

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
