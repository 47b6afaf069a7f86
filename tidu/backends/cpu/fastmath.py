"""Transcendentals that vectorize, for float32 kernels.

Numba calls the C library's ``tanhf`` one element at a time (no SVML in PyPI's llvmlite),
about 15 ns an element. ``tanh_f32`` is branch-free arithmetic that LLVM vectorizes, in
float64 internally, rounded once to float32 by the kernel's store:

- ``|x| < 0.625``: ``x * P(x^2)``, a degree-6 polynomial fitted to ``tanh(x) / x``
  (relative error 5e-10 in exact arithmetic);
- otherwise ``1 - 2 / (exp(2|x|) + 1)`` with the sign of ``x``, where
  ``exp(y) = 2^n * Q(r)``, ``n = round(y / ln 2)``, ``r = y - n ln 2`` (``|r| <= ln2 / 2``,
  degree-6 fit, relative error 6e-9) and ``2^n`` read from a table; ``|x|`` is clamped to 10,
  where ``tanh`` is 1 in float32.

Accuracy against float64 ``numpy.tanh`` rounded to float32 is tested over the whole float32
range, with NaN, infinities and signed zeros (tests/backends/test_fastmath.py): at most 1 ULP.
"""

from __future__ import annotations

import numpy as np

POW2 = np.array([2.0**k for k in range(0, 30)])  # 2^n for the n of exp(y), 0 <= y <= 20

LOG2E = 1.4426950408889634
LN2_HI = 0.6931471803691238  # ln 2 split so that n * LN2_HI is exact for |n| < 2^10
LN2_LO = 1.9082149292705877e-10


def tanh_f32(x):  # noqa: ANN001, ANN201
    a = abs(x)
    t = a * a
    small = x * (0.9999999998993987 + t * (-0.33333330598533567 + t * (0.1333321250107318 + t * (
        -0.053948240049826963 + t * (0.021710729139313184 + t * (-0.00820527257495574
                                                                 + t * 0.002170494928365341))))))
    y = 2.0 * min(a, 10.0)
    n = np.floor(y * LOG2E + 0.5)
    n = n if n == n else 0.0  # NaN input: any valid table index (the result is NaN anyway)
    r = (y - n * LN2_HI) - n * LN2_LO
    q = 0.9999999999718431 + r * (1.0000000281365038 + r * (0.5000000084378842 + r * (
        0.16666455914266934 + r * (0.041666280410334114 + r * (0.008371908718561473
                                                              + r * 0.0013944595670664073)))))
    large = 1.0 - 2.0 / (q * POW2[int(n)] + 1.0)
    large = large if x >= 0 else -large
    large = large if x == x else x
    return small if a < 0.625 else large
