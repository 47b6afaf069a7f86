"""``trapezoid``, ``trapz``, ``cumulative_trapezoid`` and ``gradient`` against PyTorch (values,
dtypes, gradients in samples and sample points, errors) and numpy, and their gradients against
finite differences to second order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, assert_same_error, run_both

POINTS = Arg((5,), low=0.0, high=4.0)  # sample points (their order does not matter to the rules)

CASES: dict[str, tuple[Callable, list]] = {
    "trapezoid": (lambda L: lambda y: L.trapezoid(y), [[(5,)], [(3, 4)], [(2, 1)]]),
    "trapezoid-dx-dim": (lambda L: lambda y: L.trapezoid(y, dx=0.5, dim=0), [[(4, 3)]]),
    "trapezoid-x": (lambda L: lambda y, x: L.trapezoid(y, x), [[(5,), POINTS], [(2, 5), POINTS]]),
    "trapezoid-x-nd": (lambda L: lambda y, x: L.trapezoid(y, x, dim=0), [[(3, 2), (3, 2)], [(3, 2), (3, 1)]]),
    "trapz": (lambda L: lambda y, x: L.trapz(y, x), [[(2, 5), POINTS]]),
    "trapz-dx": (lambda L: lambda y: L.trapz(y, dx=2.0), [[(3, 4)]]),
    "cumulative_trapezoid": (lambda L: lambda y: L.cumulative_trapezoid(y), [[(5,)], [(3, 4)]]),
    "cumulative_trapezoid-x": (lambda L: lambda y, x: L.cumulative_trapezoid(y, x, dim=-1), [[(2, 5), POINTS]]),
    "cumulative_trapezoid-dx": (lambda L: lambda y: L.cumulative_trapezoid(y, dx=3.0, dim=0), [[(4, 2)]]),
    "gradient": (lambda L: lambda f: L.cat([g.reshape(-1) for g in L.gradient(f)]), [[(5,)], [(3, 4)]]),
    "gradient-order2": (lambda L: lambda f: L.gradient(f, spacing=0.5, edge_order=2)[0], [[(6,)]]),
    "gradient-dim": (lambda L: lambda f: L.gradient(f, spacing=[2.0], dim=[1])[0], [[(3, 4)]]),
    "gradient-coords": (lambda L: lambda f, x: L.gradient(f, spacing=(x,))[0], [[(5,), POINTS]]),
    "gradient-coords-order2": (lambda L: lambda f, x: L.gradient(f, spacing=(x,), dim=1, edge_order=2)[0],
                               [[(2, 5), POINTS]]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shapes", [pytest.param(n, s, id=f"{n}-{i}")
                                         for n, (_, cases) in CASES.items() for i, s in enumerate(cases)])
def test_calculus_matches_torch(name: str, shapes: list, dtype: str) -> None:
    make = CASES[name][0]
    args = [a if isinstance(a, Arg) else Arg(a) for a in shapes]

    def spread(L: Any) -> Callable:  # noqa: N803 - the library
        """Sample points drawn at random may nearly coincide: made increasing, at least 0.5 apart."""
        fn = make(L)
        return lambda *xs: fn(*[L.cumsum(x.abs() + 0.5, 0) if a is POINTS else x for x, a in zip(xs, args)])

    tol = {"rtol": 2e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    run_both(spread(tidu), spread(torch), args, dtype, tol=tol)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.trapezoid(L.tensor([1, 2, 3])),
    lambda L: L.trapezoid(L.tensor([[1, 2, 3]], dtype=L.int32), dx=2),
    lambda L: L.cumulative_trapezoid(L.tensor([1, 2, 3])),
    lambda L: L.trapezoid(L.ones(2, 0)),
    lambda L: L.cumulative_trapezoid(L.ones(2, 0)),
    lambda L: L.gradient(L.tensor([1, 2, 4, 8]))[0],
    lambda L: L.gradient(L.tensor([[1, 2, 4], [8, 16, 32]]), spacing=2)[1],
    lambda L: L.gradient(L.tensor([1.0, 2.0, 4.0, 8.0]), spacing=(L.tensor([0, 1, 3, 4]),))[0],
])
def test_integer_samples_and_empty_dims(lib_fn: Callable) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


def test_gradient_matches_numpy_on_uneven_points() -> None:
    rng = np.random.default_rng(3)
    f = rng.standard_normal((4, 7))
    x = np.cumsum(rng.uniform(0.2, 1.0, 7))
    for order in (1, 2):
        ours = tidu.gradient(tidu.tensor(f), spacing=(tidu.tensor(x),), dim=1, edge_order=order)[0]
        np.testing.assert_allclose(ours.numpy(), np.gradient(f, x, axis=1, edge_order=order), rtol=1e-12)
        ours = tidu.gradient(tidu.tensor(f), spacing=0.3, edge_order=order)
        for got, want in zip(ours, np.gradient(f, 0.3, edge_order=order)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda y, x: tidu.trapezoid(y * y, x.cumsum(0)),
    lambda y, x: tidu.cumulative_trapezoid(y.sin(), x.cumsum(0)).sum(),
    lambda y, x: tidu.gradient(y * y, spacing=(x.cumsum(0),), edge_order=2)[0],
])
def test_gradients_match_finite_differences_to_second_order(fn: Callable) -> None:
    rng = np.random.default_rng(4)
    y = tidu.tensor(rng.standard_normal(5), requires_grad=True)
    x = tidu.tensor(rng.uniform(0.5, 1.0, 5), requires_grad=True)
    assert tidu.autograd.gradcheck(fn, (y, x))
    assert tidu.autograd.gradgradcheck(fn, (y, x))


@pytest.mark.parametrize("call", [
    "L.trapezoid(L.ones(3), L.ones(2))",
    "L.trapezoid(L.tensor([True, False]))",
    "L.cumulative_trapezoid(L.ones(3), L.ones(4))",
    "L.gradient(L.ones(1))",
    "L.gradient(L.ones(2), edge_order=2)",
    "L.gradient(L.ones(3), edge_order=3)",
    "L.gradient(L.ones(3, 3), spacing=[1.0, 2.0, 3.0])",
    "L.gradient(L.ones(3, 3), spacing=[1.0, 2.0], dim=0)",
    "L.trapezoid(L.ones(3), dim=1)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_trapezoid_with_both_x_and_dx_raises_type_error_as_torch() -> None:
    assert_same_error("L.trapezoid(L.ones(3), L.ones(3), dx=1)", same_message=False)  # PyTorch's names its overloads


def test_gradient_coordinates_of_the_wrong_length_raise() -> None:
    # PyTorch does not check this (it reads past the coordinates); tidu says what is wrong
    with pytest.raises(RuntimeError, match="1-D tensor of 3 values"):
        tidu.gradient(tidu.ones(3), spacing=(tidu.ones(2),))
