"""``out=`` on the ``tidu.*`` functions (tidu/ops/outputs.py) against PyTorch: the result written
into ``out`` and returned, cast to its dtype, resized (with PyTorch's warning), tuples of outputs,
creation in ``out``'s dtype, and PyTorch's errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error
from tidu.ops.outputs import OUT_NAMES

CALLS = [
    ("L.add(a, b, out=c)", "c"), ("L.sub(a, b, alpha=2, out=c)", "c"), ("L.mul(a, 2, out=c)", "c"),
    ("L.exp(a, out=c)", "c"), ("L.tanh(a, out=c)", "c"), ("L.clamp(a, -1, 1, out=c)", "c"),
    ("L.where(a > 0, a, b, out=c)", "c"), ("L.matmul(m, m, out=o)", "o"), ("L.mm(m, m, out=o)", "o"),
    ("L.sum(m, 0, out=c2)", "c2"), ("L.mean(m, 1, out=c2)", "c2"), ("L.cumsum(a, 0, out=c)", "c"),
    ("L.cat([a, b], out=d)", "d"), ("L.stack([a, b], out=e)", "e"), ("L.gather(m, 1, L.tensor([[1], [0]]), out=g)", "g"),
    ("L.max(m, 1, out=(v, i))", "v"), ("L.sort(a, out=(c, i3))", "i3"), ("L.topk(a, 2, out=(v, i))", "v"),
    ("L.zeros(3, out=c)", "c"), ("L.arange(3, out=n)", "n"), ("L.linspace(0, 1, 3, out=c)", "c"),
    ("L.full((3,), 2, out=n)", "n"), ("L.eye(2, out=o)", "o"),
    ("L.add(a, b, out=n0)", "n0"),  # an integer out cannot take a float result: below
    ("L.add(n, n, out=c)", "c"),  # an integer result into a float out: cast
    ("L.add(a, b, out=empty)", "empty"),  # resized from no elements, silently
    ("L.add(a, b, out=d)", "d"),  # resized from 6 elements: PyTorch's warning
    ("L.add(a, b, out=a)", "a"),  # into an input
]


def _run(L: Any, call: str, name: str) -> Any:
    env = {"L": L, "a": L.tensor([1.0, -2.0, 3.0]), "b": L.ones(3), "c": L.empty(3), "c2": L.empty(2), "d": L.empty(6),
           "e": L.empty(2, 3), "m": L.tensor([[1.0, 2.0], [3.0, -4.0]]), "o": L.empty(2, 2), "g": L.empty(2, 1),
           "v": L.empty(2), "i": L.empty(2, dtype=L.int64), "i3": L.empty(3, dtype=L.int64), "n": L.tensor([4, 5, 6]),
           "n0": L.empty(3, dtype=L.int64), "empty": L.empty(0)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = eval(call, env)  # noqa: S307 - the table above
    out = env[name]
    first = returned[0] if isinstance(returned, tuple) else returned
    same = first is env["v"] if name == "v" else (returned[1] is out if name == "i3" else returned is out)
    return (same, str(out.dtype).split(".")[-1], tuple(out.shape), out.tolist(),
            [str(w.message)[:60] for w in caught if issubclass(w.category, UserWarning)])


@pytest.mark.parametrize("call,name", CALLS)
def test_out_matches_torch(call: str, name: str) -> None:
    try:
        ref = _run(torch, call, name)
    except RuntimeError:
        assert_same_error(lambda L: _run(L, call, name))
        return
    assert _run(tidu, call, name) == ref


@pytest.mark.parametrize("call", [
    "L.add(L.ones(2, requires_grad=True), 1, out=L.empty(2))",  # out= refuses autograd
    "L.add(L.ones(2), 1, out=L.empty(2, dtype=L.int64))",  # float into an integer out
    "L.add(L.ones(2), 1, out=[L.empty(2)])",
    "L.max(L.ones(2, 2), 1, out=L.empty(2))",
])
def test_out_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


def test_out_under_no_grad_and_the_plain_path_are_unchanged() -> None:
    x = tidu.ones(2, requires_grad=True)
    with tidu.no_grad():
        out = tidu.mul(x, 3, out=tidu.empty(2))
    assert out.tolist() == [3.0, 3.0] and not out.requires_grad
    y = tidu.mul(x, 3)  # no out: recorded as always
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert tidu.abs is tidu.absolute  # an alias is the same wrapped function


def test_every_name_given_out_takes_it_in_torch_and_exists_in_tidu() -> None:
    assert all(hasattr(tidu, name) for name in OUT_NAMES)
    undocumented = [n for n in OUT_NAMES if "out" not in (getattr(torch, n).__doc__ or "")]
    assert not undocumented, undocumented
    assert np.all([callable(getattr(tidu, n)) for n in OUT_NAMES])
