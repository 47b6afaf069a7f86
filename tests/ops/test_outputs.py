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
    ("L.take(m, L.tensor([0, 3]), out=c2)", "c2"), ("L.tensordot(m, m, 1, out=o)", "o"), ("L.diff(a, out=c2)", "c2"),
    ("L.index_add(m, 0, L.tensor([1, 0]), m, out=o)", "o"), ("L.index_copy(m, 0, L.tensor([1, 0]), m, out=o)", "o"),
    ("L.scatter(m, 0, L.tensor([[1, 0]]), m, out=o)", "o"), ("L.scatter_add(m, 0, L.tensor([[1, 0]]), m, out=o)", "o"),
    ("L.scatter_reduce(m, 0, L.tensor([[1, 0]]), m, 'prod', out=o)", "o"), ("L.msort(m, out=o)", "o"),
    ("L.renorm(m, 2, 0, 1.0, out=o)", "o"), ("L.copysign(a, -1.0, out=c)", "c"), ("L.chain_matmul(m, m, m, out=o)", "o"),
    ("L.narrow_copy(m, 1, 0, 1, out=g)", "g"), ("L.clamp_min(a, 0.5, out=c)", "c"), ("L.clamp_max(a, 0.5, out=c)", "c"),
    ("L.histogram(a, 2, out=(e2, c))", "e2"),
]


def _run(L: Any, call: str, name: str) -> Any:
    env = {"L": L, "a": L.tensor([1.0, -2.0, 3.0]), "b": L.ones(3), "c": L.empty(3), "c2": L.empty(2), "d": L.empty(6),
           "e": L.empty(2, 3), "m": L.tensor([[1.0, 2.0], [3.0, -4.0]]), "o": L.empty(2, 2), "g": L.empty(2, 1),
           "v": L.empty(2), "i": L.empty(2, dtype=L.int64), "i3": L.empty(3, dtype=L.int64), "n": L.tensor([4, 5, 6]),
           "n0": L.empty(3, dtype=L.int64), "empty": L.empty(0), "e2": L.empty(2)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        returned = eval(call, env)  # noqa: S307 - the table above
    out = env[name]
    first = returned[0] if isinstance(returned, tuple) else returned
    same = first is env[name] if name in ("v", "e2") else (returned[1] is out if name == "i3" else returned is out)
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
    called = {call.split("(")[0][2:] for call, _ in CALLS}  # (their docstrings do not all say so)
    undocumented = [n for n in OUT_NAMES - called if "out" not in (getattr(torch, n).__doc__ or "")]
    assert not undocumented, undocumented
    assert np.all([callable(getattr(tidu, n)) for n in OUT_NAMES])


def test_keyword_forms_and_names_pytorch_has() -> None:
    """``tensor_split``'s keyword overloads, ``swapdims``'s own argument names, ``empty_strided``,
    ``hardshrink`` at the top level."""
    for L in (tidu, torch):
        x = L.arange(6)
        got = [[t.tolist() for t in L.tensor_split(x, sections=3)], [t.tolist() for t in L.tensor_split(x, indices=[1, 4])],
               [t.tolist() for t in L.tensor_split(x, tensor_indices_or_sections=L.tensor(2))],
               tuple(L.swapdims(L.ones(2, 3), dim0=0, dim1=1).shape), tuple(L.ones(2, 3).swapdims(dim0=0, dim1=1).shape),
               tuple(L.swapaxes(L.ones(2, 3), axis0=0, axis1=1).shape), tuple(L.empty_strided((2, 3), (1, 2)).shape),
               L.hardshrink(L.tensor([0.2, 1.0]), 0.5).tolist()]
        if L is tidu:
            ours = got
        else:
            assert ours == got
        with pytest.raises(RuntimeError, match=r"dimensionality of sizes \(2\) must match dimensionality of strides \(1\)"):
            L.empty_strided((2, 3), (1,))
