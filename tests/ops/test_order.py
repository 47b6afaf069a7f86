"""Order statistics and NaN-aware reductions against PyTorch: ``median``, ``nanmedian``, ``quantile``,
``nanquantile``, ``kthvalue``, ``mode``, ``aminmax``, ``msort``, ``nansum``, ``nanmean``,
``var_mean``, ``std_mean``: values, indices with ties and NaNs, dtypes, named tuples, gradients
(to second order) and PyTorch's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import Arg, T, assert_same_error, run_both

_Q = [0.0, 0.3, 0.5, 0.75, 1.0]


def _sum_of(out: Any) -> Any:
    """One tensor of a tuple result, weighting its parts apart (indices left out)."""
    if isinstance(out, tuple) and hasattr(out, "values"):
        return out.values
    return out[0] + 3 * out[1] if isinstance(out, tuple) else out


# name -> (lib -> fn of float operands, operand shapes per case)
CASES: dict[str, tuple[Callable, list]] = {
    "median": (lambda L: lambda x: x.median(), [[(7,)], [(2, 4)], [T(3, 2)], [()]]),
    "median-dim": (lambda L: lambda x: L.median(x, 1), [[(3, 4)], [T(4, 3)], [(2, 5, 3)]]),
    "median-keepdim": (lambda L: lambda x: x.median(dim=-1, keepdim=True), [[(3, 4)], [()]]),
    "nanmedian": (lambda L: lambda x: L.nanmedian(x), [[(6,)], [(3, 3)]]),
    "nanmedian-dim": (lambda L: lambda x: x.nanmedian(0, keepdim=True), [[(4, 3)], [T(2, 3)]]),
    "kthvalue": (lambda L: lambda x: L.kthvalue(x, 2), [[(3, 4)], [T(4, 3)], [(5,)]]),
    "kthvalue-dim": (lambda L: lambda x: x.kthvalue(3, dim=0, keepdim=True), [[(3, 4)]]),
    "mode": (lambda L: lambda x: L.mode(x), [[(3, 4)], [()], [(5,)]]),
    "aminmax": (lambda L: lambda x: L.aminmax(x), [[(3, 4)], [()], [T(4, 3)]]),
    "aminmax-dim": (lambda L: lambda x: x.aminmax(dim=0, keepdim=True), [[(3, 4)], [(5,)]]),
    "msort": (lambda L: lambda x: L.msort(x), [[(3, 4)], [T(4, 2)], [(5,)]]),
    "quantile": (lambda L: lambda x: L.quantile(x, 0.3), [[(7,)], [(3, 4)], [()]]),
    "quantile-dim": (lambda L: lambda x: x.quantile(L.tensor(_Q, dtype=x.dtype), dim=1, keepdim=True),
                     [[(3, 5)], [T(4, 3)], [(2, 3, 4)]]),
    "quantile-keepdim-all": (lambda L: lambda x: L.quantile(x, L.tensor([0.2, 0.9], dtype=x.dtype), keepdim=True),
                             [[(3, 4)]]),
    "quantile-0d-q": (lambda L: lambda x: L.quantile(x, L.tensor(0.4, dtype=x.dtype), dim=0), [[(6, 2)]]),
    "nanquantile": (lambda L: lambda x: L.nanquantile(x, L.tensor(_Q, dtype=x.dtype), dim=-1), [[(3, 6)]]),
    "nansum": (lambda L: lambda x: L.nansum(x / (x > -1.5)), [[(3, 4)], [(5,)]]),  # 0/0 makes NaNs
    "nansum-dim": (lambda L: lambda x: (x / (x > -1.5)).nansum(dim=1, keepdim=True), [[(3, 4)], [T(4, 3)]]),
    "nanmean": (lambda L: lambda x: L.nanmean(x / (x > -1.5)), [[(3, 4)]]),
    "nanmean-dim": (lambda L: lambda x: (x / (x > -1.5)).nanmean(dim=(0, 1)), [[(3, 4, 2)]]),
    "var_mean": (lambda L: lambda x: L.var_mean(x, 1), [[(3, 4)], [T(4, 3)]]),
    "var_mean-correction": (lambda L: lambda x: L.var_mean(x, dim=0, correction=0, keepdim=True), [[(3, 4)]]),
    "std_mean": (lambda L: lambda x: L.std_mean(x), [[(3, 4)], [(5,)]]),
    "std_mean-unbiased": (lambda L: lambda x: L.std_mean(x, (0, 1), False), [[(2, 3, 4)]]),
}
for _how in ("lower", "higher", "midpoint", "nearest"):
    CASES[f"quantile-{_how}"] = (lambda L, how=_how: lambda x: L.quantile(x, L.tensor(_Q, dtype=x.dtype), dim=0,
                                                                        interpolation=how), [[(6, 3)], [(5,)]])
    CASES[f"nanquantile-{_how}"] = (lambda L, how=_how: lambda x: L.nanquantile(x, 0.4, interpolation=how),
                                    [[(6, 3)]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,shapes", [pytest.param(n, s, id=f"{n}-{i}") for n, (_, cases) in CASES.items()
                                         for i, s in enumerate(cases)])
def test_values_and_gradients_match_torch(name: str, shapes: list, dtype: str) -> None:
    make = CASES[name][0]
    ours, theirs = make(tidu), make(torch)
    run_both(lambda *a: _sum_of(ours(*a)), lambda *a: _sum_of(theirs(*a)),
             [s if isinstance(s, Arg) else Arg(s) for s in shapes], dtype)


_NAN = float("nan")
_INF = float("inf")
# ties, NaNs, integers and bool: values, indices, dtypes and the named tuple compared exactly
_TIES = [[2.0, 1.0, 2.0, 1.0, 2.0, 1.0], [3.0, 3.0, 0.0, 3.0, 0.0, 5.0], [1.0, _NAN, 0.0, _NAN, 2.0, 1.0]]


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.tensor(_TIES).median(dim=1),
    lambda L: L.tensor(_TIES).median(dim=0, keepdim=True),
    lambda L: L.tensor(_TIES).median(),
    lambda L: L.tensor(_TIES[:2]).median(),
    lambda L: L.tensor(_TIES).nanmedian(dim=1),
    lambda L: L.tensor([[_NAN, _NAN], [1.0, _NAN]]).nanmedian(1),
    lambda L: L.tensor(_TIES).nanmedian(),
    lambda L: L.tensor([_NAN, _NAN]).nanmedian(),
    lambda L: L.tensor([], dtype=L.float64).median(),
    lambda L: L.tensor([_INF, 1.0, _INF]).median(),
    lambda L: L.tensor([-_INF, 1.0, -_INF]).nanmedian(),
    lambda L: L.zeros(0, 3).median(1),
    lambda L: L.tensor(2.5).median(0),
    lambda L: L.tensor([[1, 2, 2, 1, 2, 1, 7]]).median(1),
    lambda L: L.tensor([4, 1, 3, 3], dtype=L.int32).median(),
    lambda L: L.tensor(_TIES[2:]).kthvalue(6, dim=1),
    lambda L: L.tensor([[3.0, 1.0, 2.0], [0.0, 2.0, 1.0]]).kthvalue(2, 0),
    lambda L: L.tensor([[1, 5, 3]], dtype=L.int32).kthvalue(3, 1, True),
    lambda L: L.tensor(_TIES[:2]).mode(),
    lambda L: L.tensor(_TIES[:2]).mode(0),
    lambda L: L.tensor([[1, 2, 2], [3, 3, 1]]).mode(1),
    lambda L: L.tensor([True, False, True]).mode(),
    lambda L: L.tensor(7.0).mode(),
    lambda L: L.tensor(_TIES).aminmax(),
    lambda L: L.tensor(_TIES).aminmax(dim=1),
    lambda L: L.tensor([[1, 2], [3, 0]]).aminmax(dim=0, keepdim=True),
    lambda L: L.tensor([True, False]).aminmax(),
    lambda L: L.ones(2, 3).aminmax(keepdim=True),
    lambda L: L.zeros(2, 0).aminmax(dim=0),
    lambda L: L.tensor([[3, 1], [2, 4]], dtype=L.int32).msort(),
    lambda L: L.tensor(_TIES).msort(),
    lambda L: L.tensor(_TIES).quantile(L.tensor([0.1, 0.5, 0.9]), dim=1),
    lambda L: L.tensor(_TIES).nanquantile(L.tensor([0.1, 0.5, 0.9]), dim=1),
    lambda L: L.tensor([[_NAN, _NAN], [1.0, 2.0]]).nanquantile(0.3, dim=1, interpolation="midpoint"),
    lambda L: L.tensor(_TIES, dtype=L.float64).quantile(0.5),
    lambda L: L.tensor(3.0).quantile(0.5, dim=0),
    lambda L: L.arange(6.0).quantile(L.tensor([0.1, 0.3, 0.5, 0.7, 0.9]), interpolation="nearest"),
    lambda L: L.tensor([1, 2, _NAN]).nansum(),
    lambda L: L.tensor([[1, 2], [3, 4]]).nansum(1),
    lambda L: L.tensor([True, True]).nansum(),
    lambda L: L.tensor([1.0, _NAN]).nansum(dtype=L.float64),
    lambda L: L.tensor([[_NAN, _NAN], [1.0, _NAN]]).nanmean(1),
    lambda L: L.tensor([1.0, 2.0]).nanmean(dtype=L.float64),
])
def test_ties_nans_integers_and_bool_match_torch(lib_fn: Callable) -> None:
    _assert_same(lib_fn(tidu), lib_fn(torch))


def _assert_same(ours: Any, ref: Any) -> None:
    if isinstance(ref, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(ref)
        if type(ref) is not tuple:  # a torch.return_types: same name, same fields
            assert type(ours).__name__ == type(ref).__name__
            for field in ours._fields:
                _assert_same(getattr(ours, field), getattr(ref, field))
        for a, b in zip(ours, ref):
            _assert_same(a, b)
        return
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(ref.shape)
    np.testing.assert_allclose(ours.detach().numpy(), ref.detach().numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_tied_ranks_choose_torchs_index(seed: int) -> None:
    """Small integers as floats, with NaNs: ``median``/``nanmedian`` report PyTorch's index (the
    stable sort's), ``kthvalue`` and ``mode`` its value at an index holding that value (PyTorch's
    choice among equal values there depends on its selection algorithm)."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 4, size=(6, 23)).astype(np.float64)
    data[rng.random(data.shape) < 0.15 * (seed % 2)] = np.nan
    for fn in (lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1)):
        _assert_same(fn(tidu, tidu.tensor(data)), fn(torch, torch.tensor(data)))
    for fn in (lambda L, x: L.kthvalue(x, 9, 1), lambda L, x: L.mode(x, 1)):
        if seed % 2 and fn(torch, torch.tensor(data)).__class__.__name__ == "mode":
            continue  # with NaNs PyTorch's mode depends on its sort's order for incomparable values
        ours, ref = fn(tidu, tidu.tensor(data)), fn(torch, torch.tensor(data))
        np.testing.assert_array_equal(ours.values.numpy(), ref.values.numpy())
        picked = np.take_along_axis(data, ours.indices.numpy()[:, None], 1)[:, 0]
        np.testing.assert_array_equal(picked, ref.values.numpy())


@pytest.mark.parametrize("lib_fn", [
    lambda L, x: L.median(x),
    lambda L, x: L.nanmedian(x),
    lambda L, x: L.median(x, 1).values,
    lambda L, x: L.nanmedian(x, 0).values,
    lambda L, x: L.kthvalue(x, 2, 1).values,
    lambda L, x: L.quantile(x, L.tensor([0.2, 0.5], dtype=L.float64), dim=1),
    lambda L, x: L.nanquantile(x, 0.7),
    lambda L, x: L.aminmax(x).min * 2 + L.aminmax(x).max,
    lambda L, x: L.aminmax(x, dim=1).max,
    lambda L, x: L.mode(x, 1).values,
])
def test_gradients_with_ties_and_nans_to_second_order(lib_fn: Callable) -> None:
    """Ties share ``median()``'s and ``aminmax``'s gradient, a NaN takes it, the ``dim`` forms send
    it to the reported index; the second derivative of ``f(x)**3`` checks the rules compose."""
    data = np.array([[2.0, 1.0, 2.0, _NAN], [1.0, 1.0, 3.0, 0.5], [2.0, 1.0, 0.0, 4.0]])
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        for values in (np.nan_to_num(data, nan=1.0), data):
            x = L.tensor(values, requires_grad=True)
            out = lib_fn(L, x)
            (g,) = L.autograd.grad((out**3).sum(), x, create_graph=True)
            (h,) = L.autograd.grad((g * L.arange(12.0, dtype=L.float64).reshape(3, 4)).sum(), x)
            grads.append((g.detach().numpy(), h.numpy()))
    for (g_ref, h_ref), (g, h) in zip(grads[:2], grads[2:]):
        np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("call", [
    "L.median(x.bool())", "L.median(x, 5)", "L.median(L.zeros(0, 3), 0)", "L.nanmedian(L.zeros(2, 0), 1)",
    "L.kthvalue(x, 5)", "L.kthvalue(x, 0, 0)", "L.kthvalue(x.bool(), 1)", "L.mode(L.zeros(0))",
    "L.aminmax(L.zeros(0))", "L.aminmax(L.zeros(2, 0), dim=1)",
    "L.quantile(x, 1.5)", "L.quantile(x, -0.5)", "L.quantile(x, L.tensor([0.5, 1.5]))",
    "L.quantile(x, L.tensor([[0.5]]))", "L.quantile(x.long(), 0.5)", "L.quantile(x, L.tensor([0.5], dtype=L.float64))",
    "L.quantile(x, 0.5, interpolation='foo')", "L.quantile(L.zeros(0), 0.5)", "L.nanquantile(L.zeros(2, 0), 0.5, 0)",
    "L.nanmean(x.long())", "L.nanmean(x.long(), dtype=L.float32)", "L.var_mean(x.long())", "L.std_mean(x.int(), 0)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"x": L.ones(3, 4)}, same_message=call not in _MESSAGE_DIFFERS)


# PyTorch's message names its argument parser's overloads or dims counted differently; the class is compared
_MESSAGE_DIFFERS = {"L.median(x, 5)"}


@pytest.mark.skipif(not tidu.cuda.is_available(), reason="needs a GPU or the CUDA simulator")
@pytest.mark.parametrize("lib_fn", [
    lambda L, x: L.median(x, 1).values,
    lambda L, x: L.nanmedian(x),
    lambda L, x: L.quantile(x, L.tensor([0.25, 0.5], dtype=L.float64, device=x.device), dim=0),
    lambda L, x: L.kthvalue(x, 2).values,
    lambda L, x: L.mode(x).values,
    lambda L, x: L.aminmax(x[1:], dim=0).max,  # a NaN takes amax's gradient (PyTorch: NaN everywhere)
    lambda L, x: L.nanmean(x, 1),
])
def test_on_cuda_matches_torch(lib_fn: Callable) -> None:
    data = np.array([[2.0, 1.0, 2.0, _NAN], [1.0, 1.0, 3.0, 0.5], [2.0, 1.0, 0.0, 4.0]])
    results = []
    for L, where in ((torch, "cpu"), (tidu, "cuda")):  # noqa: N806 - the library
        x = L.tensor(data, device=where, requires_grad=True)
        out = lib_fn(L, x)
        (out * L.arange(out.numel(), dtype=L.float64, device=where).reshape(out.shape)).sum().backward()
        assert out.device.type == where and x.grad.device.type == where
        results.append((out.detach().cpu().numpy(), x.grad.cpu().numpy()))
    for ours, ref in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("data", [[_INF, 1.0, _INF], [-_INF, 1.0, -_INF, 2.0], [_NAN, 1.0, _NAN]])
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_full_median_shares_gradient_among_equal_infinities_and_nans(data: list, name: str) -> None:
    grads = []
    for L in (torch, tidu):  # noqa: N806 - the library
        x = L.tensor(data, requires_grad=True)
        getattr(L, name)(x).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])



def test_kthvalue_over_an_empty_dim_raises_pytorchs_index_error() -> None:
    assert_same_error("L.zeros(0, 3).kthvalue(1, 0)")
