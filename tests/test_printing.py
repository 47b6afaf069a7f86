"""Tensor repr against PyTorch's (with "torch" read as "tidu"), and ``set_printoptions``."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu

EXPRS = [
    "L.arange(1001)",
    "L.arange(1000)",
    "L.arange(5000.0).reshape(50, 100)",
    "L.arange(2 * 3 * 400.0).reshape(2, 3, 400) / 7",
    "L.arange(1200).reshape(400, 3) > 600",
    "L.linspace(-1, 1, 1500) * 1e-5",
    "L.ones(10, 10, 20)",
    "L.tensor([float('nan'), 1.0])",
    "L.tensor([float('inf'), 1.5])",
    "L.tensor([float('nan'), float('inf')])",
    "L.tensor([0.0, 0.0])",
    "L.tensor([1e-4, 1.0])",
    "L.tensor([9.99e-5, 1.0])",
    "L.tensor([1e8, 1.0])",
    "L.tensor([1e9, 1.0])",
    "L.tensor([1234.5, 0.5])",
    "L.tensor([-1.0e-10])",
    "L.tensor([[1e-10, 2.0], [3.0, 4.0]], dtype=L.float64)",
    "L.tensor([[-1, 200], [3, -4000]], dtype=L.int32)",
    "L.tensor([[[True, False]], [[False, True]]])",
    "L.zeros(0, 3, dtype=L.int64)",
    "L.zeros(2, 0, 3)",
    "L.zeros(0, dtype=L.float64)",
    "L.tensor(-0.0)",
    "L.tensor(1e-20, dtype=L.float64)",
    "L.tensor(12345678.0)",
    "L.arange(40.0) / 3",
    "L.arange(30).reshape(2, 15) * 1000",
    "L.tensor([1.0, 2.0], requires_grad=True) * 2",
    "L.arange(100.0).reshape(10, 10).requires_grad_()",
    "L.arange(24.0, dtype=L.float64).reshape(6, 4).requires_grad_()",
    "L.tensor([1.5] * 17, dtype=L.float64, requires_grad=True)",
]


def _pair(expr: str) -> tuple[str, str]:
    ours = repr(eval(expr, {"L": tidu}))
    theirs = repr(eval(expr, {"L": torch})).replace("torch.", "tidu.")
    return ours, theirs


def _strip_grad_fn(text: str) -> str:
    return text.split(", grad_fn=")[0].split(",\n       grad_fn=")[0]


@pytest.mark.parametrize("expr", EXPRS)
def test_repr_matches_torch(expr: str) -> None:
    ours, theirs = _pair(expr)
    if "grad_fn" in theirs:  # tidu names nodes after primitives: compare everything else
        assert "grad_fn=<" in ours
        ours, theirs = _strip_grad_fn(ours), _strip_grad_fn(theirs)
    assert ours == theirs


@pytest.fixture
def options() -> Iterator[None]:
    try:
        yield
    finally:
        tidu.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


OPTIONS = [
    {"precision": 2},
    {"precision": 6},
    {"threshold": 5},
    {"threshold": 5, "edgeitems": 1},
    {"threshold": 5, "edgeitems": 0},
    {"linewidth": 40},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
]


@pytest.mark.parametrize("opts", OPTIONS, ids=str)
@pytest.mark.parametrize("expr", ["L.arange(12.0).reshape(3, 4) / 3", "L.tensor([1e-5, 3.0, 1e3])",
                                  "L.arange(2000)", "L.arange(30.0)"])
def test_set_printoptions_matches_torch(opts: dict, expr: str, options: None) -> None:
    tidu.set_printoptions(**opts)
    torch.set_printoptions(**opts)
    ours, theirs = _pair(expr)
    assert ours == theirs


_values = st.one_of(st.floats(-1e3, 1e3, allow_nan=False, width=32), st.sampled_from([0.0, -0.0, 1e-6, 1e9, 0.5]))


@settings(max_examples=30, deadline=None)
@given(st.lists(_values, min_size=1, max_size=12), st.sampled_from(["float32", "float64", "int64", "int32"]),
       st.booleans(), st.booleans(), st.integers(1, 120))
def test_fuzz_repr(values: list, dtype: str, two_d: bool, grad: bool, repeat: int) -> None:
    data = np.tile(np.array(values, dtype=np.float64), repeat).astype(dtype)
    if two_d and data.size % 2 == 0:
        data = data.reshape(2, -1)
    grad = grad and dtype.startswith("float")
    ours = repr(tidu.tensor(data, requires_grad=grad))
    theirs = repr(torch.tensor(data, requires_grad=grad)).replace("torch.", "tidu.")
    assert ours == theirs
