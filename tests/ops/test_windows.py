"""The window functions against PyTorch: values and dtypes, periodic and symmetric, the short
lengths, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

_WINDOWS = {"hann_window": {}, "hamming_window": {"alpha": 0.5, "beta": 0.4}, "blackman_window": {},
            "bartlett_window": {}, "kaiser_window": {"beta": 5.0}}


@pytest.mark.parametrize("name", list(_WINDOWS))
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_torch(name: str, length: int, periodic: bool) -> None:
    for dtype in ("float32", "float64"):
        out = getattr(tidu, name)(length, periodic, dtype=getattr(tidu, dtype))
        ref = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
        assert out.dtype is getattr(tidu, dtype) and tuple(out.shape) == tuple(ref.shape)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-6 if dtype == "float32" else 1e-12)
    extra = _WINDOWS[name]
    np.testing.assert_allclose(getattr(tidu, name)(9, False, **extra).numpy(),
                               getattr(torch, name)(9, False, **extra).numpy(), atol=1e-6)
    assert getattr(tidu, name)(3, requires_grad=True).requires_grad


@pytest.mark.parametrize("name", list(_WINDOWS))
def test_window_errors_match_torch(name: str) -> None:
    for lib in (torch, tidu):
        with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes"):
            getattr(lib, name)(3, dtype=lib.int64)
        with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
            getattr(lib, name)(-1)
