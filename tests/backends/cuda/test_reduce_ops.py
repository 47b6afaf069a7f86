"""Public reductions, scans and softmax on ``device='cuda'`` against the same calls on the CPU:
values, dtypes, shapes and (floats) gradients. The kernels themselves are checked edge case by
edge case in test_reduce_kernels.py; this is the path through the ops layer and autograd.
"""

from __future__ import annotations

import numpy as np
import pytest

import tidu

RNG = np.random.default_rng(7)


def _data(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if dtype.startswith("int"):
        return RNG.integers(-4, 5, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def _same(gpu, cpu) -> None:  # noqa: ANN001
    if isinstance(cpu, tuple):
        for g, c in zip(gpu, cpu):
            _same(g, c)
        return
    assert gpu.device.type == "cuda" and gpu.dtype is cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    tol = 1e-5 if cpu.dtype is tidu.float32 else 1e-12
    np.testing.assert_allclose(gpu.detach().cpu().numpy(), cpu.detach().numpy(), rtol=tol, atol=tol)


OPS = {
    "sum": lambda t: t.sum(),
    "sum_dim": lambda t: t.sum(dim=1, keepdim=True),
    "sum_dims": lambda t: t.sum(dim=(0, 2)),
    "mean": lambda t: t.mean(dim=-1),
    "amax": lambda t: t.amax(dim=(1, 2)),
    "amin": lambda t: t.amin(dim=0),
    "max_dim": lambda t: tuple(t.max(dim=1)),
    "min_dim": lambda t: tuple(t.min(dim=-1, keepdim=True)),
    "max": lambda t: t.max(),
    "argmax": lambda t: t.argmax(dim=2),
    "argmin": lambda t: t.argmin(),
    "prod": lambda t: t.prod(dim=1),
    "cumsum": lambda t: t.cumsum(dim=1),
    "cumsum_last": lambda t: t.cumsum(dim=-1),
    "logsumexp": lambda t: t.logsumexp(dim=-1),
    "softmax": lambda t: t.softmax(dim=-1),
    "log_softmax": lambda t: t.log_softmax(dim=1),
    "var": lambda t: t.var(dim=-1),
}
FLOAT_ONLY = {"mean", "logsumexp", "softmax", "log_softmax", "var"}
NOT_BOOL = FLOAT_ONLY | {"prod", "cumsum", "cumsum_last", "argmax", "argmin"}  # as PyTorch
CASES = [(name, dtype) for name in OPS for dtype in ("float32", "float64", "int64", "bool")
         if not (name in FLOAT_ONLY and dtype == "int64" or name in NOT_BOOL and dtype == "bool")]


@pytest.mark.parametrize(("name", "dtype"), CASES)
def test_op_matches_cpu(name: str, dtype: str) -> None:
    a = _data((3, 40, 2), dtype)
    _same(OPS[name](tidu.tensor(a, device="cuda")), OPS[name](tidu.tensor(a)))


@pytest.mark.parametrize("name", [n for n in OPS if n not in ("argmax", "argmin")])
def test_gradient_matches_cpu(name: str) -> None:
    a = _data((3, 40, 2), "float32")
    grads = []
    for device in ("cuda", "cpu"):
        x = tidu.tensor(a, device=device, requires_grad=True)
        out = OPS[name](x)
        out = out[0] if isinstance(out, tuple) else out
        (out * out).sum().backward()
        grads.append(x.grad)
    _same(*grads)


def test_cross_entropy_trains_the_same_on_both_devices() -> None:
    logits, target = _data((8, 50), "float32"), RNG.integers(0, 50, 8)
    losses = []
    for device in ("cuda", "cpu"):
        x = tidu.tensor(logits, device=device, requires_grad=True)
        loss = tidu.nn.functional.cross_entropy(x, tidu.tensor(target, device=device))
        loss.backward()
        losses.append((loss, x.grad))
    _same(losses[0], losses[1])
