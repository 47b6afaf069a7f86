"""Fractional max pooling against PyTorch's, with the same random samples."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF  # noqa: N812

import tidu
import tidu.nn.functional as F  # noqa: N812
from tidu.autograd import gradcheck, gradgradcheck


@pytest.mark.parametrize(("shape", "kernel", "out", "dtype"), [
    ((2, 3, 7, 9), (2, 3), (4, 5), np.float32), ((3, 10, 10), 3, (5, 5), np.float64),
    ((1, 2, 5, 6, 7), 2, (3, 4, 5), np.float64), ((2, 6, 5, 6), (3, 2, 2), (2, 3, 4), np.float32),
    ((1, 1, 4, 4), 2, (3, 1), np.float32)])
def test_values_indices_and_gradients_match_torch(shape: tuple, kernel: object, out: tuple, dtype: type) -> None:
    n = len(out)
    rng = np.random.default_rng(len(shape) * 10 + n)
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[:2] if len(shape) == n + 2 else (1, shape[0])
    samples = rng.uniform(size=(*batch, n)).astype(dtype)
    ours_f, theirs_f = getattr(F, f"fractional_max_pool{n}d"), getattr(TF, f"fractional_max_pool{n}d")
    xt, tx = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out_t, idx = ours_f(xt, kernel, output_size=out, return_indices=True, _random_samples=tidu.tensor(samples))
    tout, tidx = theirs_f(tx, kernel, output_size=out, return_indices=True, _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    np.testing.assert_array_equal(out_t.detach().numpy(), tout.detach().numpy())
    assert out_t.dtype is getattr(tidu, np.dtype(dtype).name) and idx.dtype is tidu.int64
    weights = rng.standard_normal(tout.shape).astype(dtype)
    (out_t * tidu.tensor(weights)).sum().backward()
    (tout * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_gradient_against_finite_differences() -> None:
    x = tidu.tensor(np.random.default_rng(1).permutation(49).reshape(1, 1, 7, 7) / 7.0, requires_grad=True)
    samples = tidu.tensor([[[0.4, 0.7]]], dtype=tidu.float64)
    fn = lambda t: F.fractional_max_pool2d(t, 2, output_size=(3, 4), _random_samples=samples)  # noqa: E731
    assert gradcheck(fn, (x,)) and gradgradcheck(fn, (x,))


def test_modules_ratio_and_random_samples() -> None:
    tidu.manual_seed(0)
    pool = tidu.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    x = tidu.randn(2, 3, 10, 12)
    assert tuple(pool(x).shape) == tuple(torch.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))(
        torch.randn(2, 3, 10, 12)).shape) == (2, 3, 5, 6)
    fixed = tidu.rand(2, 3, 2)
    a = tidu.nn.FractionalMaxPool2d(2, output_size=4, _random_samples=fixed)(x)
    b = F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=fixed)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    value, index = tidu.nn.FractionalMaxPool3d(2, output_size=2, return_indices=True)(tidu.randn(1, 4, 5, 5))
    assert tuple(value.shape) == tuple(index.shape) == (1, 2, 2, 2)
    # every output is the input's maximum over some 2x2 window of the input
    out, idx = F.fractional_max_pool2d_with_indices(x, 2, output_size=(4, 5))
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(x.numpy().reshape(2, 3, -1),
                                                                   idx.numpy().reshape(2, 3, -1), 2).reshape(out.shape))


def test_nan_is_the_maximum_as_in_torch() -> None:
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = np.nan
    samples = np.zeros((1, 1, 2))
    ours = F.fractional_max_pool2d(tidu.tensor(x), 2, output_size=2, return_indices=True,
                                   _random_samples=tidu.tensor(samples))
    theirs = TF.fractional_max_pool2d(torch.tensor(x), 2, output_size=2, return_indices=True,
                                      _random_samples=torch.tensor(samples))
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


def test_errors_match_torch() -> None:
    x = np.ones((2, 1, 7, 9), np.float32)
    for lib, f in ((tidu, F), (torch, TF)):
        with pytest.raises(RuntimeError, match="pool height 2 too large relative to input height 7"):
            f.fractional_max_pool2d(lib.tensor(x), 2, output_size=(7, 5))
        with pytest.raises(ValueError, match="either an output_size or an output_ratio"):
            f.fractional_max_pool2d(lib.tensor(x), 2)
        with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
            lib.nn.FractionalMaxPool2d(3, output_ratio=1.5)
        with pytest.raises(ValueError, match="requires specifying either an output size, or a pooling ratio"):
            lib.nn.FractionalMaxPool2d(3)
