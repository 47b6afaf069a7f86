"""Sums of pads (tidu/backends/pad_sums.py): the backward of ``split`` and ``chunk`` is one
concatenation of the pieces' cotangents, with PyTorch's gradients; other sums stay sums."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.backends import pad_sums
from tidu.backends.cpu import fusion
from tidu.core import programs
from tidu.core.instructions import impl_instr, run
from tidu.core.primitive import Application
from tidu.primitives import elementwise as ew
from tidu.primitives import slicing


@pytest.fixture
def compiled_steps(monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", True)
    compiled.clear()


def _qkv(lib: Any, xs: np.ndarray, chunk: bool) -> Any:
    x = lib.tensor(xs, requires_grad=True)
    q, k, v = x.chunk(3, dim=1) if chunk else x.split(2, dim=-1)
    (q * k + v.tanh() * 2.0).sum().backward()
    return x.grad


@pytest.mark.parametrize("chunk", [False, True])
def test_split_backward_is_one_concatenation(compiled_steps: None, chunk: bool) -> None:
    xs = np.random.default_rng(0).standard_normal((3, 6, 6))
    got = _qkv(tidu, xs, chunk)
    (step,) = compiled._steps.values()
    names = [instr.app.prim.name for instr in step.program if instr.app is not None]
    assert "pad" not in names and names.count("concatenate") == 1
    np.testing.assert_allclose(got.numpy(), _qkv(torch, xs, chunk).numpy(), rtol=1e-14, atol=1e-14)


def _pads(configs: list[tuple[int, int]], width: int) -> tuple[list, int]:
    """Pads of (2, w) pieces to (2, width) along the last axis, summed in order; the sum's slot."""
    n = len(configs)
    whole = tidu.ShapeDtype((2, width), tidu.float64)
    add = Application(ew.add, (), (whole, whole))
    program = []
    for i, (lo, hi) in enumerate(configs):
        piece = tidu.ShapeDtype((2, width - lo - hi), tidu.float64)
        app = Application(slicing.pad, (("padding_config", ((0, 0, 0), (lo, hi, 0))),), (piece,))
        program.append(impl_instr(app, [i], [n + i]))
    total = n
    for i in range(1, n):
        program.append(impl_instr(add, [total, n + i], [2 * n + i]))
        total = 2 * n + i
    return program, total


@pytest.mark.parametrize("configs", [[(0, 3), (2, 0)], [(0, 2), (2, 0)], [(0, 3), (3, 0)]])
def test_gaps_overlaps_and_exact_tilings(configs: list) -> None:
    program, total = _pads(configs, 5)
    rewritten = pad_sums.concat_pads(program, keep={total})
    tiles = configs == [(0, 3), (2, 0)]
    assert [i.app.prim.name for i in rewritten] == (["concatenate"] if tiles else [i.app.prim.name for i in program])
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((2, 5 - lo - hi)) for lo, hi in configs]
    want, got = inputs + [None] * 8, inputs + [None] * 8
    run(program, want)
    run(rewritten, got)
    np.testing.assert_array_equal(got[total], want[total])


def test_a_pad_read_elsewhere_stays() -> None:
    program, total = _pads([(0, 3), (2, 0)], 5)
    rewritten = pad_sums.concat_pads(program, keep={total, 2})  # the first pad is also a result
    assert [i.app.prim.name for i in rewritten] == ["pad", "pad", "add"]
