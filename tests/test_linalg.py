"""``tidu.linalg`` against ``torch.linalg``: norms, ``vecdot``, ``multi_dot``, ``cross`` and
``diagonal``: values, dtypes, gradients (to second order for the norms) and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, run_both

# name -> (lib -> fn, operand shapes)
CASES: dict[str, tuple[Callable, list]] = {
    "vector_norm": (lambda L: lambda x: L.linalg.vector_norm(x), [(3, 4)]),
    "vector_norm-1-dims": (lambda L: lambda x: L.linalg.vector_norm(x, 1, dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    "vector_norm-inf": (lambda L: lambda x: L.linalg.vector_norm(x, math.inf, dim=-1), [(3, 4)]),
    "vector_norm-3.5": (lambda L: lambda x: L.linalg.vector_norm(x, 3.5, dim=1), [T(4, 3)]),
    "matrix_norm": (lambda L: lambda x: L.linalg.matrix_norm(x), [(2, 3, 4)]),
    "matrix_norm-inf": (lambda L: lambda x: L.linalg.matrix_norm(x, math.inf), [(2, 3, 4)]),
    "matrix_norm--1": (lambda L: lambda x: L.linalg.matrix_norm(x, -1, dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    "matrix_norm-1-reversed": (lambda L: lambda x: L.linalg.matrix_norm(x, 1, dim=(2, 0)), [(2, 3, 4)]),
    "matrix_norm--inf": (lambda L: lambda x: L.linalg.matrix_norm(x, -math.inf, dim=(-1, -3)), [(2, 3, 4)]),
    "norm": (lambda L: lambda x: L.linalg.norm(x), [(2, 3, 4)]),
    "norm-matrix-ord": (lambda L: lambda x: L.linalg.norm(x, 1), [(3, 4)]),
    "norm-dim": (lambda L: lambda x: L.linalg.norm(x, dim=1), [(2, 3, 4)]),
    "norm-two-dims": (lambda L: lambda x: L.linalg.norm(x, math.inf, dim=(0, 1)), [(2, 3, 4)]),
    "vecdot": (lambda L: lambda x, y: L.linalg.vecdot(x, y), [(2, 3), (3,)]),
    "vecdot-dim": (lambda L: lambda x, y: L.linalg.vecdot(x, y, dim=0), [(2, 3), (2, 1)]),
    "multi_dot": (lambda L: lambda a, b, c: L.linalg.multi_dot([a, b, c]), [(3,), (3, 4), (4, 2)]),
    "cross": (lambda L: lambda a, b: L.linalg.cross(a, b), [(4, 3), (1, 3)]),
    "cross-dim": (lambda L: lambda a, b: L.cross(a, b, dim=0), [(3, 2), (3, 2)]),
    "cross-method": (lambda L: lambda a, b: a.cross(b, dim=1), [(2, 3), (2, 3)]),
    "diagonal": (lambda L: lambda x: L.linalg.diagonal(x, offset=-1), [(2, 3, 3)]),
    "matmul": (lambda L: lambda a, b: L.linalg.matmul(a, b), [(2, 3), (3,)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CASES))
def test_linalg_matches_torch(name: str, dtype: str) -> None:
    make, shapes = CASES[name]
    run_both(make(tidu), make(torch), [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


def test_cross_without_dim_takes_the_first_dim_of_size_three_and_warns() -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        a, b = L.arange(18.0).reshape(3, 2, 3), L.ones(3, 2, 3)
        with pytest.warns(UserWarning, match="without specifying the dim"):
            out.append(L.cross(a, b).numpy())
    np.testing.assert_array_equal(out[1], out[0])


@pytest.mark.parametrize("fn", [
    lambda L, x: L.linalg.vector_norm(x, 3),
    lambda L, x: L.linalg.matrix_norm(x.reshape(2, 2)),
    lambda L, x: L.linalg.norm(x, 1),
    lambda L, x: L.linalg.cross(x[:3], x[1:]).sum(),
])
def test_second_derivatives_match_torch(fn: Callable) -> None:
    out = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor([0.5, -1.0, 2.0, 0.25], dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(fn(L, x), x, create_graph=True)
        (h,) = L.autograd.grad((g * g).sum(), x, allow_unused=True)
        out.append((g.detach().numpy(), np.zeros(4) if h is None else (L.zeros(4, dtype=L.float64) + h).numpy()))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-10)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("call", [
    "L.linalg.cross(L.ones(2), L.ones(2))", "L.linalg.cross(L.ones(3, 3), L.ones(3))",
    "L.linalg.matrix_norm(L.ones(3))", "L.linalg.matrix_norm(L.ones(2, 2), dim=(0, 0))",
    "L.linalg.matrix_norm(L.ones(2, 2), dim=(0,))",
    "L.linalg.norm(L.ones(2, 2, 2), 2)", "L.linalg.vector_norm(L.ones(2, dtype=L.long))",
    "L.linalg.multi_dot([L.ones(2)])", "L.linalg.multi_dot([L.ones(2), L.ones(2, 2, 2), L.ones(2)])",
])
def test_errors_match_torch(call: str) -> None:
    errors = []
    for L in (torch, tidu):  # noqa: B007, N806 - the library, read by the call
        with warnings.catch_warnings(), pytest.raises(Exception) as info:  # noqa: PT011 - compared with PyTorch's
            warnings.simplefilter("ignore")
            eval(call)  # noqa: S307 - the calls above
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


def test_norms_that_need_singular_values_say_so() -> None:
    with pytest.raises(RuntimeError, match="singular values"):
        tidu.linalg.matrix_norm(tidu.ones(2, 2), "nuc")
