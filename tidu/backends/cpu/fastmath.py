"""Transcendentals that vectorize, for float32 kernels.

Numba calls the C library one element at a time (no SVML in PyPI's llvmlite): ``tanhf``
costs about 15 ns an element, ``expf`` about 2. These functions are branch-free arithmetic
that LLVM vectorizes, computed in float64 and rounded once to float32 by the kernel's store:

- ``exp_core(y) = 2^n * Q(r)`` with ``n = round(y / ln 2)``, ``r = y - n ln 2`` (Cody-Waite, so
  ``|r| <= ln2 / 2``), ``Q`` a degree-6 fit of ``exp`` (relative error 6e-9) and ``2^n`` read
  from a table; ``y`` is clamped to the range where float32 ``exp`` is neither 0 nor inf.
- ``tanh_f32``: ``|x| < 0.625``: ``x * P(x^2)``, a degree-6 fit of ``tanh(x) / x`` (relative
  error 5e-10); otherwise ``1 - 2 / (exp(2|x|) + 1)`` with the sign of ``x``, ``|x|`` clamped
  to 10, where ``tanh`` is 1 in float32.
- ``exp_f32`` and ``logistic_f32`` (``1 / (1 + exp(-x))``, never overflowing) on ``exp_core``.

Each is within 1 ULP of float64 numpy rounded to float32 over the whole float32 range, NaN,
infinities, signed zeros and subnormal results included (tests/backends/test_fastmath.py).
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

POW2_BIAS = 160
POW2 = np.array([2.0**k for k in range(-POW2_BIAS, 129)])  # 2^n for exp_core's n

LOG2E = 1.4426950408889634
LN2_HI = 0.6931471803691238  # ln 2 split so that n * LN2_HI is exact for |n| < 2^10
LN2_LO = 1.9082149292705877e-10


@register_jitable
def exp_core(y):  # noqa: ANN001, ANN201
    """``exp(y)`` in float64, exact to 6e-9 where float32 has a finite nonzero ``exp``."""
    y = y if y == y else 0.0  # a NaN must never reach the table index (callers pick NaN out)
    y = min(max(y, -110.0), 89.0)
    n = np.floor(y * LOG2E + 0.5)
    r = (y - n * LN2_HI) - n * LN2_LO
    q = 0.9999999999718431 + r * (1.0000000281365038 + r * (0.5000000084378842 + r * (
        0.16666455914266934 + r * (0.041666280410334114 + r * (0.008371908718561473
                                                              + r * 0.0013944595670664073)))))
    return q * POW2[int(n) + POW2_BIAS]


def exp_f32(x):  # noqa: ANN001, ANN201
    e = exp_core(x)
    return e if x == x else x


def logistic_f32(x):  # noqa: ANN001, ANN201
    e = exp_core(-abs(x))
    r = 1.0 / (1.0 + e)
    out = r if x >= 0 else e * r
    return out if x == x else x


def tanh_f32(x):  # noqa: ANN001, ANN201
    a = abs(x)
    t = a * a
    small = x * (0.9999999998993987 + t * (-0.33333330598533567 + t * (0.1333321250107318 + t * (
        -0.053948240049826963 + t * (0.021710729139313184 + t * (-0.00820527257495574
                                                                 + t * 0.002170494928365341))))))
    large = 1.0 - 2.0 / (exp_core(2.0 * min(a, 10.0)) + 1.0)
    large = large if x >= 0 else -large
    large = large if x == x else x
    return small if a < 0.625 else large
