"""Random pure programs through tidu.func against torch.func.

Each program is a seeded chain of the random-program ops (``tests/test_program_fuzz.py``'s
tables, less those that write in place) over two square inputs; every transform of it (``grad``,
``jacrev``, ``jacfwd``, ``hessian``, ``jvp``, ``vjp``, ``vmap``, ``vmap`` of ``grad``, ``jvp`` of
``grad``) must give torch.func's values, in float64. A transform PyTorch refuses is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.func

import tidu

from ..test_program_fuzz import BINARY, UNARY, N

PURE_UNARY = sorted(UNARY)
PURE_BINARY = sorted(set(BINARY) - {"setitem", "scatter_add"})  # a write in place inside


def make(seed: int) -> tuple[list, np.ndarray, list]:
    """Instructions, data (two inputs and three weights) and the registers the output sums."""
    rng = np.random.default_rng(seed)
    count, instrs = 2, []
    for _ in range(int(rng.integers(3, 9))):
        if rng.integers(2):
            instrs.append((UNARY[str(rng.choice(PURE_UNARY))], int(rng.integers(count))))
        else:
            instrs.append((BINARY[str(rng.choice(PURE_BINARY))], int(rng.integers(count)), int(rng.integers(count))))
        count += 1
    return instrs, rng.uniform(-1, 1, (5, N, N)), [int(i) for i in rng.choice(count, size=3, replace=False)]


def functions(lib: Any, instrs: list, w: list, outs: list) -> tuple[Callable, Callable]:
    """The program as a scalar function and as a matrix one of its two inputs."""

    def registers(a: Any, b: Any) -> list:
        regs = [a, b]
        for op, *args in instrs:
            regs.append(op(lib, *[regs[i] for i in args]))
        return regs

    def scalar(a: Any, b: Any) -> Any:
        regs = registers(a, b)
        return sum((regs[i] * w[k]).sum() for k, i in enumerate(outs))

    def matrix(a: Any, b: Any) -> Any:
        return registers(a, b)[outs[0]] * w[0]

    return scalar, matrix


def transform(lib: Any, seed: int, name: str) -> Any:
    instrs, data, outs = make(seed)
    a, b, *w = (lib.tensor(d, dtype=lib.float64) for d in data)
    f, g = functions(lib, instrs, w, outs)
    fx = lib.func
    batch = lib.tensor(np.stack([data[0], data[1], data[2]]), dtype=lib.float64)
    if name == "grad":
        return fx.grad(f, argnums=(0, 1))(a, b)
    if name == "jacrev":
        return fx.jacrev(g, argnums=(0, 1))(a, b)
    if name == "jacfwd":
        return fx.jacfwd(g, argnums=(0, 1))(a, b)
    if name == "hessian":
        return fx.hessian(f)(a, b)
    if name == "jvp":
        return fx.jvp(g, (a, b), (w[1], w[2]))
    if name == "vjp":
        out, back = fx.vjp(g, a, b)
        return (out, *back(w[1]))
    if name == "vmap":
        return fx.vmap(f, in_dims=(0, None))(batch, b)
    if name == "vmap_grad":
        return fx.vmap(fx.grad(f), in_dims=(0, None))(batch, b)
    return fx.jvp(lambda x: fx.grad(f)(x, b), (a,), (w[1],))  # jvp_grad


def leaves(x: Any) -> list:
    if isinstance(x, tuple | list):
        return [y for item in x for y in leaves(item)]
    return [x]


TRANSFORMS = ["grad", "jacrev", "jacfwd", "hessian", "jvp", "vjp", "vmap", "vmap_grad", "jvp_grad"]


@pytest.mark.parametrize("seed", range(12))
def test_random_program_transforms_match_torch_func(seed: int) -> None:
    for name in TRANSFORMS:
        try:
            want = transform(torch, seed, name)
        except Exception:  # noqa: BLE001 - PyTorch refuses (a rule it lacks): nothing to compare
            continue
        got, want = leaves(transform(tidu, seed, name)), leaves(want)
        assert len(got) == len(want), name
        for x, y in zip(got, want):
            np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-8, atol=1e-10,
                                       err_msg=f"program {seed}, {name}: {make(seed)[0]}")
