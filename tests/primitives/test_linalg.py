"""``dot_general``'s transpose rule (tidu/primitives/linalg.py): each cotangent is one product
laid out like its operand (the values are checked over OP_DB in test_rules.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu.autograd import compiled
from tidu.backends.cpu import fusion
from tidu.core import programs


@pytest.mark.parametrize("shapes", [((32, 16), (16, 8)), ((3, 5, 4), (4, 6)), ((2, 5, 4), (2, 4, 3))])
def test_matmul_cotangents_are_products_without_transposes(shapes: tuple, monkeypatch: Any) -> None:
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", False)
    compiled.clear()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    a, b = (tidu.tensor(x, requires_grad=True) for x in arrays)
    (a @ b).tanh().sum().backward()
    (step,) = compiled._steps.values()
    names = [instr.app.prim.name for instr in step.program]
    assert names.count("dot_general") == 2
    assert "transpose" not in names
    ta, tb = (torch.tensor(x, requires_grad=True) for x in arrays)
    (ta @ tb).tanh().sum().backward()
    for got, want in ((a.grad, ta.grad), (b.grad, tb.grad)):
        assert got.numpy().flags.c_contiguous
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_linear_weight_cotangent_is_one_product_in_the_weights_layout(monkeypatch: Any) -> None:
    """``F.linear`` contracts the weight's last dim in one product, so the weight's cotangent is
    ``ct.T @ x``: laid out like the weight, no transpose, a fresh array for ``.grad``."""
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", False)
    compiled.clear()
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    x, w = tidu.tensor(xs, requires_grad=True), tidu.tensor(ws, requires_grad=True)
    tidu.nn.functional.linear(x, w).tanh().sum().backward()
    (step,) = compiled._steps.values()
    names = [instr.app.prim.name for instr in step.program]
    assert names.count("dot_general") == 2 and "transpose" not in names
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    torch.nn.functional.linear(tx, tw).tanh().sum().backward()
    for got, want in ((x.grad, tx.grad), (w.grad, tw.grad)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("x_shape", [(6, 4), (2, 5, 4)])
def test_the_gradient_of_a_transposed_weight_is_one_product_in_its_layout(x_shape: tuple, device: str,
                                                                         monkeypatch: Any) -> None:
    """``x @ w.t()``: the compiled backward makes ``w``'s cotangent as ``ct.T @ x`` (the swapped
    product) instead of transposing ``x.T @ ct``, whose view ``.grad`` would copy."""
    monkeypatch.setattr(programs, "ENABLED", True)
    monkeypatch.setattr(fusion, "ENABLED", False)
    compiled.clear()
    rng = np.random.default_rng(2)
    xs, ws = rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    x, w = (tidu.tensor(a, requires_grad=True, device=device) for a in (xs, ws))
    (x @ w.t()).tanh().sum().backward()
    (step,) = compiled._steps.values()
    names = [instr.app.prim.name for instr in step.program]
    assert names.count("dot_general") == 2 and "transpose" not in names
    tx, tw = torch.tensor(xs, requires_grad=True), torch.tensor(ws, requires_grad=True)
    (tx @ tw.t()).tanh().sum().backward()
    for got, want in ((x.grad, tx.grad), (w.grad, tw.grad)):
        assert got.is_contiguous()
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, out_features", [(8, 70), (100, 70), (8, 10)])
def test_linear_product_values_and_layout(dtype: Any, rows: int, out_features: int) -> None:
    """``x @ w.T`` (a transposed operand, read in place by the BLAS): numpy's values, a
    contiguous result, for fewer and for more rows than output features."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((rows, 20)).astype(dtype), rng.standard_normal((out_features, 20)).astype(dtype)
    out = tidu.nn.functional.linear(tidu.tensor(x), tidu.tensor(w))
    assert out.is_contiguous() and out.numpy().flags.c_contiguous
    assert out.dtype == (tidu.float32 if dtype == np.float32 else tidu.float64)
    np.testing.assert_allclose(out.numpy(), x @ w.T, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
