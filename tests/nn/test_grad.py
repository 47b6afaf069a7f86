"""torch.nn.grad's convolution gradients against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

CASES = {1: ((2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
         2: ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": (2, 1), "padding": 1, "dilation": (1, 2)}),
         3: ((1, 2, 5, 6, 4), (3, 2, 2, 3, 2), {"padding": 1})}


@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_input_and_weight_gradients_match_torch(n: int) -> None:
    x_shape, w_shape, kwargs = CASES[n]
    rng = np.random.default_rng(n)
    x, w = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    out = getattr(torch.nn.functional, f"conv{n}d")(torch.tensor(x), torch.tensor(w), **kwargs)
    g = rng.standard_normal(out.shape)
    ours = getattr(tidu.nn.grad, f"conv{n}d_input")(x_shape, tidu.tensor(w), tidu.tensor(g), **kwargs)
    theirs = getattr(torch.nn.grad, f"conv{n}d_input")(x_shape, torch.tensor(w), torch.tensor(g), **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    ours = getattr(tidu.nn.grad, f"conv{n}d_weight")(tidu.tensor(x), w_shape, tidu.tensor(g), **kwargs)
    theirs = getattr(torch.nn.grad, f"conv{n}d_weight")(torch.tensor(x), w_shape, torch.tensor(g), **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-12)
    assert ours.dtype is tidu.float64 and not ours.requires_grad
    assert tidu.nn.functional.grad is tidu.nn.grad
