"""Half-precision inputs through the functions that build arrays on the host (averaging matrices,
interpolation weights, one-hot bases, random integers): tidu stores bfloat16 as its uint16 bits,
so such arrays must be cast to the dtype, never built in its storage type. Each result is
PyTorch's, bit for bit where PyTorch computes in float32 and rounds once."""

import numpy as np
import pytest
import torch

import tidu

HALF = ["bfloat16", "float16"]


def both(make, dtype):
    """``make(lib, dt)`` in tidu and in PyTorch, as float64 arrays (and the dtypes' names)."""
    out = []
    for lib in (tidu, torch):
        r = make(lib, getattr(lib, dtype))
        r = r[0] if isinstance(r, tuple) else r
        out.append((str(r.dtype).split(".")[-1], r.detach().double().numpy()))
    (ta, a), (tb, b) = out
    assert ta == tb
    return a, b


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("make", [
    lambda L, dt: L.nn.functional.adaptive_avg_pool1d(L.tensor([[[0.5, 1.5, -2.0, 3.0, 1.0]]], dtype=dt), 3),
    lambda L, dt: L.nn.functional.adaptive_avg_pool2d(L.arange(25.0).reshape(1, 1, 5, 5).to(dt), (3, 2)),
    lambda L, dt: L.nn.functional.interpolate(L.tensor([[[0.5, 1.5, -2.0, 3.0, 1.0]]], dtype=dt), scale_factor=2,
                                              mode="linear"),
    lambda L, dt: L.nn.functional.interpolate(L.arange(9.0).reshape(1, 1, 3, 3).to(dt), size=(4, 5), mode="bilinear"),
    lambda L, dt: L.nn.functional.interpolate(L.arange(9.0).reshape(1, 1, 3, 3).to(dt), size=(4, 5), mode="bilinear",
                                              align_corners=True),
    lambda L, dt: L.nn.functional.interpolate(L.arange(9.0).reshape(1, 1, 3, 3).to(dt), scale_factor=1.7),
    lambda L, dt: L.nn.functional.interpolate(L.arange(9.0).reshape(1, 1, 3, 3).to(dt), scale_factor=1.7,
                                              mode="nearest-exact"),
    lambda L, dt: L.nn.functional.interpolate(L.arange(16.0).reshape(1, 1, 4, 4).to(dt), size=(3, 3), mode="area"),
    lambda L, dt: L.nn.functional.embedding_bag(L.tensor([0, 1, 2, 3]), L.arange(12.0).reshape(4, 3).to(dt),
                                                L.tensor([0, 3]), mode="mean"),
    lambda L, dt: L.nn.init.dirac_(L.empty(2, 2, 3, dtype=dt)),
    lambda L, dt: L.nn.functional.rms_norm(L.tensor([[0.5, 1.5, -2.0, 3.0, 1.0]], dtype=dt), (5,)),
    lambda L, dt: L.nn.functional.rms_norm(L.tensor(np.random.default_rng(0).standard_normal((64, 16))).to(dt), (16,), L.tensor(np.random.default_rng(1).standard_normal(16)).to(dt)),
    lambda L, dt: L.nn.functional.rms_norm(L.tensor(np.random.default_rng(0).standard_normal((64, 16))).to(dt), (16,)),
    lambda L, dt: L.func.jacrev(lambda t: t * t)(L.tensor([1.5, 2.0], dtype=dt)),
    lambda L, dt: L.func.jacfwd(lambda t: t * t)(L.tensor([1.5, 2.0], dtype=dt)),
    lambda L, dt: L.func.hessian(lambda t: (t ** 3).sum())(L.tensor([1.5, 2.0], dtype=dt)),
    lambda L, dt: L.nextafter(L.tensor([1.0, -1.0, 0.0, -3.0, float("inf"), 2.0, 1e-40], dtype=dt),
                              L.tensor([2.0, -2.0, -1.0, 5.0, 0.0, 2.0, 0.0], dtype=dt)),
], ids=["adaptive_avg_pool1d", "adaptive_avg_pool2d", "linear", "bilinear", "bilinear_corners", "nearest",
        "nearest_exact", "area", "embedding_bag_mean", "dirac", "rms_norm", "rms_norm_weight", "rms_norm_many", "jacrev", "jacfwd",
        "hessian", "nextafter"])
def test_half_results_are_pytorchs(make, dtype):
    a, b = both(make, dtype)
    np.testing.assert_array_equal(a, b)


def test_bfloat16_bicubic_is_within_one_step_of_pytorchs():
    """(PyTorch's bfloat16 bicubic kernel rounds between its passes; tidu rounds once.)"""
    a, b = both(lambda L, dt: L.nn.functional.interpolate(L.arange(9.0).reshape(1, 1, 3, 3).to(dt), size=(4, 5),
                                                          mode="bicubic"), "bfloat16")
    np.testing.assert_allclose(a, b, rtol=2**-7, atol=2**-7)


@pytest.mark.parametrize("dtype", HALF)
def test_random_integers_and_errors_of_half_tensors_match_pytorch(dtype):
    for lib in (tidu, torch):
        dt = getattr(lib, dtype)
        lib.manual_seed(0)
        x = lib.empty(2000, dtype=dt).random_()
        exact = 2 ** (8 if dtype == "bfloat16" else 11)
        assert x.dtype is dt and 0 <= float(x.min()) and float(x.max()) <= exact and len(x.unique()) > 50
        y = lib.empty(200, dtype=dt).random_(3, 7)
        assert sorted(set(y.float().tolist())) == [3.0, 4.0, 5.0, 6.0]
        with pytest.warns(UserWarning, match=r"from is out of bounds \[-\(2\^(8|11)\), 2\^(8|11)\]"):
            lib.empty(2, dtype=dt).random_(exact + 1, exact + 8)
        with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, "):
            lib.nn.functional.softshrink(lib.ones(2, dtype=dt), -1.0)
        with pytest.raises(NotImplementedError, match="_sobol_engine_draw"):
            lib.quasirandom.SobolEngine(2).draw(3, dtype=dt)


def test_bfloat16_parameters_through_adafactor_and_draws_like_pytorch():
    steps = []
    for lib in (tidu, torch):
        p = lib.nn.Parameter(lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.bfloat16))
        opt = lib.optim.Adafactor([p], lr=0.1)
        p.grad = lib.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=lib.bfloat16)
        opt.step()
        steps.append(p.detach().float().numpy())
    np.testing.assert_allclose(steps[0], steps[1], rtol=2**-7)
    tidu.manual_seed(0)
    draws = tidu.distributions.Poisson(tidu.tensor([3.0], dtype=tidu.bfloat16)).sample((400,))
    assert draws.dtype is tidu.bfloat16 and 2.5 < float(draws.float().mean()) < 3.5
