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
- ``expm1_f32``: ``2^n expm1(r) + (2^n - 1)`` with the reduction of ``exp_core`` and ``expm1(r)``
  to ``r^10`` (so ``r = x`` and full relative accuracy where ``|x| < ln2 / 2``).
- ``log_f32`` and ``log1p_f32`` on ``log_core`` (exponent from the bits, ``2 atanh`` series);
  ``log1p(x) = log(u) + (x - (u - 1)) / u`` with ``u = 1 + x`` rounded.
- ``sin_f32``, ``cos_f32``, ``tan_f32``: exact reduction by pi/2 over the WHOLE float32 range
  (``reduce_pio2``: integer Payne-Hanek against 112 bits of 2/pi, branch-free), then Taylor
  polynomials of sin and cos on ``[-pi/4, pi/4]``; ``tan = sin / cos`` or ``-cos / sin``.
- ``erf_f32``: ``|x| < 1``: ``x * P(x^2)`` (degree 8, relative error 4e-12); ``1 <= |x| < 4``:
  ``1 - exp(-x^2) erfcx(x)`` with ``erfcx`` a degree-14 polynomial (error 2e-11); 1 beyond.

Each is within 1 ULP of float64 numpy (erf: ``math.erf``) rounded to float32 over the whole
float32 range, NaN, infinities, signed zeros and subnormals included: tested on every exponent
and densely where the formulas switch (tests/backends/test_fastmath.py), and checked on all
2^32 inputs by ``python bench/fastmath.py --exhaustive``. NaN in gives NaN out; outside the
domain (log of a negative number, sin of inf) the result is NaN as in numpy.
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

ROUNDER = 6755399441055744.0  # 2^52 + 2^51: adding it leaves a small integer in a float64's low bits
ROUNDER_BITS = int(np.float64(ROUNDER).view(np.int64))

# The public functions carry LLVM's alwaysinline: a kernel's loop vectorizes only once the scalar
# function is inlined into it, and LLVM's cost model declines to inline bodies as long as sin's.
# They are registered here, before the kernel factories register them again (cpu.scalar), and
# Numba resolves a call to the first overload registered for a function.
inline = register_jitable(forceinline=True)

LOG2E = 1.4426950408889634
LN2_HI = 0.6931471803691238  # ln 2 split so that n * LN2_HI is exact for |n| < 2^10
LN2_LO = 1.9082149292705877e-10


@register_jitable
def pow2(n):  # noqa: ANN001, ANN201
    """``2.0 ** n`` for an integer-valued float64 ``-1022 <= n <= 1023``, built from its exponent
    bits: no table lookup, so loops calling it vectorize."""
    k = np.float64(n + (1023.0 + ROUNDER)).view(np.int64) - ROUNDER_BITS
    return np.int64(k << 52).view(np.float64)


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
    return q * pow2(n)


@inline
def exp_f32(x):  # noqa: ANN001, ANN201
    e = exp_core(x)
    return e if x == x else x


@inline
def logistic_f32(x):  # noqa: ANN001, ANN201
    e = exp_core(-abs(x))
    r = 1.0 / (1.0 + e)
    out = r if x >= 0 else e * r
    return out if x == x else x


@inline
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


@inline
def expm1_f32(x):  # noqa: ANN001, ANN201
    y = x if x == x else 0.0
    y = min(max(y, -40.0), 89.0)  # expm1 is -1 in float32 below -17.4, inf above 88.8
    n = np.floor(y * LOG2E + 0.5)
    r = (y - n * LN2_HI) - n * LN2_LO  # exact r = y where n == 0, so small results keep their digits
    p = r + r * r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 + r * (
        1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800)))))))))
    t = pow2(n)
    out = t * p + (t - 1.0)  # 2^n (expm1(r) + 1) - 1, no cancellation for n != 0
    out = out if x == x else x
    return out if x != 0 else x  # keeps the sign of zero


SQRT2 = 1.4142135623730951
LN2 = 0.6931471805599453


@register_jitable
def log_core(y):  # noqa: ANN001, ANN201
    """``log(y)`` in float64 for a positive normal float64 ``y``, exact to 1e-15.

    ``y = 2^e m`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` read from the bits, then
    ``log(m) = 2 atanh(s)``, ``s = (m - 1) / (m + 1)``, ``|s| < 0.172``: 7 terms of the series.
    """
    b = np.float64(y).view(np.int64)
    e = (b >> 52) - 1023
    m = np.int64((b & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000).view(np.float64)
    big = m > SQRT2
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    series = 1.0 + z * (1.0 / 3 + z * (1.0 / 5 + z * (1.0 / 7 + z * (1.0 / 9 + z * (1.0 / 11 + z * (1.0 / 13))))))
    return e * LN2 + 2.0 * s * series


@inline
def log_f32(x):  # noqa: ANN001, ANN201
    out = log_core(min(max(x, 1e-300), 1e300))  # finite positive for every input; specials below
    out = out if x < np.inf else x
    return out if x > 0 else (-np.inf if x == 0 else np.nan)


@inline
def log1p_f32(x):  # noqa: ANN001, ANN201
    u = 1.0 + x
    c = x - (u - 1.0)  # what rounding 1 + x lost: log1p(x) = log(u) + c / u
    out = log_core(min(max(u, 1e-300), 1e300)) + c / min(max(u, 1e-300), 1e300)
    out = out if x < np.inf else x
    out = out if x > -1.0 else (-np.inf if x == -1.0 else np.nan)
    return out if x != 0 else x


# 2/pi to 256 bits, for the reduction of large arguments of sin, cos and tan.
TWO_OVER_PI = 0xA2F9836E4E441529FC2757D1F534DDC0DB6295993C439041FE5163ABDEBBC561
LIMB = 28
LIMB_MASK = (1 << LIMB) - 1
REDUCE_E_MIN = -25  # float32 |x| = M 2^E with M < 2^24: |x| >= pi/4 means E >= -25
REDUCE_E_MAX = 104


def _reduction_table() -> np.ndarray:
    """Row ``E``: ``(2^E 2/pi) mod 4`` in fixed point, bits of weight 2^1 to 2^-110, as 4 limbs of 28 bits."""
    rows = []
    for e in range(REDUCE_E_MIN, REDUCE_E_MAX + 1):
        bits = (TWO_OVER_PI >> (256 - 110 - e)) & ((1 << 4 * LIMB) - 1)
        rows.append([(bits >> (LIMB * (3 - j))) & LIMB_MASK for j in range(4)])
    return np.array(rows, np.int64)


REDUCE = _reduction_table()
PIO2 = 1.5707963267948966
PIO4 = 0.7853981633974483


@register_jitable
def reduce_pio2(x):  # noqa: ANN001, ANN201
    """``(k, r)`` with ``x = k pi/2 + r``, ``|r| <= pi/4``, for any finite float32 ``x``.

    Small ``|x| < pi/4``: ``k = 0``, ``r = x``. Otherwise ``|x| = M 2^E`` from the bits and
    ``M ((2^E 2/pi) mod 4)`` is computed exactly in integers (28-bit limbs of 2/pi from a
    table, 56-bit products, carries): the quadrant is its integer part and the fraction keeps
    82 bits, so ``r`` is exact to float64 rounding even for the float32 arguments closest to a
    multiple of pi/2 (Payne-Hanek without branches, so the loop vectorizes).
    """
    b = np.float32(x).view(np.int32)
    mant = np.int64((b & 0x7FFFFF) | 0x800000)
    row = min(max(((b >> 23) & 0xFF) - 150 - REDUCE_E_MIN, 0), REDUCE_E_MAX - REDUCE_E_MIN)
    p3 = mant * REDUCE[row, 3]
    p2 = mant * REDUCE[row, 2] + (p3 >> LIMB)
    p1 = mant * REDUCE[row, 1] + (p2 >> LIMB)
    p0 = mant * REDUCE[row, 0] + (p1 >> LIMB)
    q = p0 & LIMB_MASK  # (|x| 2/pi) mod 4 in units of 2^-26
    k = (q + (1 << 25)) >> 26
    d = ((q - (k << 26)) << LIMB) + (p1 & LIMB_MASK)  # the signed fraction in units of 2^-54, exact
    r = (np.float64(d) * 2.0**-54 + np.float64(p2 & LIMB_MASK) * 2.0**-82) * PIO2
    small = abs(x) < PIO4
    r = x if small else (r if x > 0 else -r)
    k = 0 if small else (k if x > 0 else -k)
    return k, r


@register_jitable
def sin_poly(r):  # noqa: ANN001, ANN201
    """sin on ``[-pi/4, pi/4]``: Taylor to ``r^11`` (relative error 7e-12)."""
    t = r * r
    return r + r * t * (-1.0 / 6 + t * (1.0 / 120 + t * (-1.0 / 5040 + t * (1.0 / 362880 + t * (
        -1.0 / 39916800 + t * (1.0 / 6227020800))))))


@register_jitable
def cos_poly(r):  # noqa: ANN001, ANN201
    """cos on ``[-pi/4, pi/4]``: Taylor to ``r^12`` (error 5e-13)."""
    t = r * r
    return 1.0 + t * (-0.5 + t * (1.0 / 24 + t * (-1.0 / 720 + t * (1.0 / 40320 + t * (
        -1.0 / 3628800 + t * (1.0 / 479001600))))))


@inline
def sin_f32(x):  # noqa: ANN001, ANN201
    k, r = reduce_pio2(x)
    s = sin_poly(r)
    c = cos_poly(r)
    q = k & 3
    out = (s if q == 0 else c) if q < 2 else (-s if q == 2 else -c)
    out = out if x != 0 else x  # keeps the sign of zero
    return out if abs(x) < np.inf else x - x


@inline
def cos_f32(x):  # noqa: ANN001, ANN201
    k, r = reduce_pio2(x)
    s = sin_poly(r)
    c = cos_poly(r)
    q = k & 3
    out = (c if q == 0 else -s) if q < 2 else (-c if q == 2 else s)
    return out if abs(x) < np.inf else x - x


@inline
def tan_f32(x):  # noqa: ANN001, ANN201
    k, r = reduce_pio2(x)
    s = sin_poly(r)
    c = cos_poly(r)
    out = -c / s if k & 1 else s / c
    out = out if x != 0 else x  # keeps the sign of zero
    return out if abs(x) < np.inf else x - x


@inline
def erf_f32(x):  # noqa: ANN001, ANN201
    a = min(abs(x), 4.0)  # erf is 1 in float32 from 3.9 on
    t = a * a
    small = x * (1.1283791670955126 + t * (-0.3761263890285535 + t * (0.11283791627406102 + t * (
        -0.02686616137459383 + t * (0.005223902495300011 + t * (-0.0008545327614271411 + t * (
            0.00011989854429438532 + t * (-1.4122153040985978e-05 + t * 1.1138614366364308e-06))))))))
    u = a - 2.5
    erfcx = 0.2108063640546237 + u * (-0.07434734716623975 + u * (0.024937997454850022 + u * (
        -0.008001563193369449 + u * (0.0024670334113428612 + u * (-0.0007336202814719963 + u * (
            0.00021103177901167874 + u * (-5.880790903172612e-05 + u * (1.5941337872650453e-05 + u * (
                -4.278965940761424e-06 + u * (1.1041790075528594e-06 + u * (-2.3687737146089962e-07 + u * (
                    5.760026441978739e-08 + u * (-2.5990653418913676e-08 + u * 6.2105799053766875e-09)))))))))))))
    large = 1.0 - exp_core(-t) * erfcx
    large = large if x > 0 else -large
    out = small if a < 1.0 else large
    return out if x == x else x
