"""The table of functions every transform is checked on, written once for tidu and torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tidu


def lib(x: Any) -> Any:
    return torch if isinstance(x, torch.Tensor) else tidu


def gelu(x: Any) -> Any:
    return torch.nn.functional.gelu(x) if isinstance(x, torch.Tensor) else tidu.gelu(x)


def softmax(x: Any) -> Any:
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def mlp(x: Any, w1: Any, w2: Any) -> Any:
    return lib(x).tanh(x @ w1) @ w2


# name: (function, argument shapes); every function maps float64 tensors to one tensor
FUNCS: dict[str, tuple[Callable, list[tuple]]] = {
    "elementwise": (lambda x: (x.sin() * x.exp() + x * x).tanh(), [(2, 3)]),
    "two-inputs": (lambda x, y: x * y - y / (x * x + 1), [(2, 3), (3,)]),
    "reductions": (lambda x: x.sum(dim=1) * x.mean() + x.amax(dim=0).sum(), [(3, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3), (3, 4)]),
    "slices": (lambda x: x[1:, ::2] * x[:2, 1::2] + x[0, ::2], [(3, 4)]),
    "softmax": (softmax, [(2, 5)]),
    "mlp": (mlp, [(4, 3), (3, 5), (5, 2)]),
    "gelu-scalar": (lambda x: gelu(x).sum() * x.mean(), [(4,)]),
}


def arrays(shapes: list[tuple], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.2, 1.2, size=s) for s in shapes]


def both(values: list[np.ndarray]) -> tuple[tuple, tuple]:
    return tuple(tidu.tensor(v) for v in values), tuple(torch.tensor(v) for v in values)


def close(a: Any, b: Any, tol: float = 1e-10) -> None:
    """tidu result(s) ``a`` equal torch result(s) ``b``: structure, shapes, dtypes, values."""
    if isinstance(b, tuple | list):
        assert isinstance(a, tuple | list) and len(a) == len(b), (type(a), len(b))
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            close(a[k], b[k], tol)
        return
    assert isinstance(a, tidu.Tensor), type(a)
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def fd_jacobian(fn: Callable, values: list[np.ndarray], argnum: int, eps: float = 1e-6) -> np.ndarray:
    """Central differences of ``fn`` (on tidu tensors) with respect to ``values[argnum]``:
    shape ``out.shape + in.shape``."""

    def at(vals: list[np.ndarray]) -> np.ndarray:
        with tidu.no_grad():
            return fn(*(tidu.tensor(v) for v in vals)).numpy()

    base = values[argnum]
    cols = []
    for i in range(base.size):
        plus = [v.copy() for v in values]
        minus = [v.copy() for v in values]
        plus[argnum].reshape(-1)[i] += eps
        minus[argnum].reshape(-1)[i] -= eps
        cols.append((at(plus) - at(minus)) / (2 * eps))
    out = np.stack(cols, axis=-1)
    return out.reshape(out.shape[:-1] + base.shape)
