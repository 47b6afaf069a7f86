"""Window functions for spectral analysis, by PyTorch's names: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``.

Each is computed in float64 on the host from its formula and cast to ``dtype`` (default: the default
float dtype). ``periodic=True`` (PyTorch's default) gives the first ``N`` points of the symmetric
window of length ``N + 1``, for use with an FFT.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..tensor import Tensor
from .creation import _make

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def _window(name: str, window_length: int, periodic: bool, dtype: Any, layout: Any, device: Any,
            requires_grad: bool, formula: Any) -> Tensor:
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={dt.name})")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        values = formula(np.arange(n) / (n - 1))[:window_length]  # the formula of x = i / (n - 1) in [0, 1]
    return _make(dtypes.cast(values, dt), dt, device, requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 cos(2 pi x)``, the Hann window.

    >>> import tidu
    >>> tidu.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda x: 0.5 - 0.5 * np.cos(2 * np.pi * x))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi x)``, the (generalised) Hamming window.

    >>> import tidu
    >>> tidu.hamming_window(4, periodic=False)
    tensor([0.0800, 0.7700, 0.7700, 0.0800])
    """
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda x: alpha - beta * np.cos(2 * np.pi * x))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi x) + 0.08 cos(4 pi x)``, the Blackman window.

    >>> import tidu
    >>> tidu.blackman_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda x: 0.42 - 0.5 * np.cos(2 * np.pi * x) + 0.08 * np.cos(4 * np.pi * x))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """``1 - |2 x - 1|``, the triangular Bartlett window.

    >>> import tidu
    >>> tidu.bartlett_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda x: 1 - np.abs(2 * x - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None,
                  layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """``I0(beta sqrt(1 - (2 x - 1)^2)) / I0(beta)``, the Kaiser window (``I0`` the modified Bessel
    function of order 0).

    >>> import tidu
    >>> tidu.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda x: np.i0(beta * np.sqrt(np.clip(1 - (2 * x - 1) ** 2, 0, None))) / np.i0(beta))
