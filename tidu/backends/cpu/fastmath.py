"""Transcendentals that vectorize, for float32 kernels.

Numba calls the C library one element at a time (no SVML in PyPI's llvmlite): ``tanhf``
costs about 15 ns an element, ``expf`` about 2. These functions are branch-free arithmetic
that LLVM vectorizes, computed in float64 and rounded once to float32 by the kernel's store.
Polynomials are Horner steps through ``fma`` (LLVM's ``fmuladd``: one fused multiply-add where
the CPU has FMA; Numba contracts nothing by itself), and clamps are conditional expressions
(one min/max instruction each, NaN passing through) rather than ``min``/``max``. The loops are
bound by the number of vector operations, not by latency, so Horner beats Estrin here.

- ``exp_core(y) = 2^n * Q(r)`` with ``n = round(y / ln 2)`` (adding ``ROUNDER``, whose low bits
  then hold ``n`` for building ``2^n``), ``r = y - n ln 2`` (one fused step, ``|r| <= ln2 / 2``),
  ``Q`` a degree-6 fit of ``exp`` (relative error 6e-9); ``y`` is clamped to the range where
  float32 ``exp`` is neither 0 nor inf.
- ``tanh_f32``: ``x P(x^2) / Q(x^2)``, one rational approximation (degrees 5 and 5 in ``x^2``,
  relative error 1e-10) on ``x`` clamped to ``[-9.5, 9.5]``, where ``tanh`` is +-1 in float32
  beyond.
- ``exp_f32`` and ``logistic_f32`` (``1 / (1 + exp(-x))``, never overflowing) on ``exp_core``.
- ``expm1_f32``: ``2^n expm1(r) + (2^n - 1)`` with the reduction of ``exp_core`` and
  ``expm1(r) = r + r^2 G(r)``, ``G`` of degree 5 (relative error 2e-10; ``r = x`` and full
  relative accuracy where ``|x| < ln2 / 2``).
- ``log_f32`` and ``log1p_f32`` on ``log_core`` (exponent from the bits, ``2 atanh`` series);
  ``log1p(x) = log(u) + (x - (u - 1)) / u`` with ``u = 1 + x`` rounded.
- ``sin_f32``, ``cos_f32``, ``tan_f32``: exact reduction by pi/2 over the WHOLE float32 range
  (``reduce_pio2``: integer Payne-Hanek against 112 bits of 2/pi, branch-free), then Taylor
  polynomials of sin and cos on ``[-pi/4, pi/4]``; ``tan = sin / cos`` or ``-cos / sin``.
- ``erf_f32``: ``|x| < 0.75``: ``x * P(x^2)`` (degree 5, leading coefficient exactly
  ``2 / sqrt(pi)``, relative error 1.6e-9); ``0.75 <= |x| <= 4``: ``1 - R(|x|)^32`` with ``R`` a
  degree-6 fit of ``erfc^(1/32)`` (five squarings instead of an ``exp``: the error of ``erfc``
  is within 0.01 ULP of erf's float32 result), ``|x|`` clamped to 4, where erf is +-1 in float32.

Each is within 1 ULP of float64 numpy (erf: ``math.erf``) rounded to float32 over the whole
float32 range, NaN, infinities, signed zeros and subnormals included: tested on every exponent
and densely where the formulas switch (tests/backends/test_fastmath.py), and checked on all
2^32 inputs by ``python bench/fastmath.py --exhaustive``. NaN in gives NaN out; outside the
domain (log of a negative number, sin of inf) the result is NaN as in numpy.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload, register_jitable

ROUNDER = 6755399441055744.0  # 2^52 + 2^51: adding it leaves a small integer in a float64's low bits

# The public functions carry LLVM's alwaysinline: a kernel's loop vectorizes only once the scalar
# function is inlined into it, and LLVM's cost model declines to inline bodies as long as sin's.
# They are registered here, before the kernel factories register them again (cpu.scalar), and
# Numba resolves a call to the first overload registered for a function.
inline = register_jitable(forceinline=True)

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


def fma(a, b, c):  # noqa: ANN001, ANN201
    """``a * b + c``; compiled, LLVM's ``fmuladd``: one fused multiply-add (one rounding) where the
    CPU has FMA. Numba contracts nothing by itself (no ``fastmath``), so without it every
    polynomial step is a multiply and an add."""
    return a * b + c


@intrinsic
def _fmuladd(typingctx, a, b, c):  # noqa: ANN001, ANN202, ARG001
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]), "llvm.fmuladd.f64")
        return builder.call(fn, [context.cast(builder, v, t, types.float64) for v, t in zip(args, signature.args)])

    return sig, codegen


@overload(fma, inline="always")
def _fma_overload(a, b, c):  # noqa: ANN001, ANN202
    return lambda a, b, c: _fmuladd(a, b, c)


def fma_exact(a, b, c):  # noqa: ANN001, ANN201
    """``a * b + c`` rounded once, in the operands' float type (LLVM's ``llvm.fma``: fused on every
    CPU, emulated where there is no FMA) when compiled; as plain Python (the CUDA simulator's
    kernels) two roundings."""
    return a * b + c


@intrinsic
def _fma_in_type(typingctx, a, b, c):  # noqa: ANN001, ANN202, ARG001
    if not isinstance(a, types.Float):
        return None
    sig = a(a, a, a)

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202, ARG001
        t = context.get_value_type(a)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), f"llvm.fma.f{a.bitwidth}")
        return builder.call(fn, list(args))

    return sig, codegen


@overload(fma_exact, inline="always")
def _fma_exact_overload(a, b, c):  # noqa: ANN001, ANN202
    return lambda a, b, c: _fma_in_type(a, b, c)


@register_jitable
def round_log2(y):  # noqa: ANN001, ANN201
    """``(k, n, r)`` with ``y = n ln2 + r``, ``n = round(y / ln 2)`` an integer-valued float64,
    ``|r| <= ln2 / 2`` (``r = y`` exactly where ``n = 0``) and ``k = n + ROUNDER``, whose low bits
    hold ``n`` (no floor: adding ROUNDER rounds)."""
    k = fma(y, LOG2E, ROUNDER)
    n = k - ROUNDER
    return k, n, fma(n, -LN2, y)


@register_jitable
def pow2(k):  # noqa: ANN001, ANN201
    """``2.0 ** n`` for ``k = n + ROUNDER`` from ``round_log2``, ``-1022 <= n <= 1023``: ``n + 1023``
    shifted into the exponent bits (ROUNDER's own bits leave by the top), so loops vectorize."""
    return np.int64((np.float64(k).view(np.int64) + 1023) << 52).view(np.float64)


@register_jitable
def exp_core(y):  # noqa: ANN001, ANN201
    """``exp(y)`` in float64, exact to 6e-9 where float32 has a finite nonzero ``exp``; NaN gives NaN."""
    y = -110.0 if y < -110.0 else y  # conditional expressions (not min/max): one instruction each,
    y = 89.0 if y > 89.0 else y  # and NaN passes through
    k, n, r = round_log2(y)
    q = fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, 0.0013944595670664073, 0.008371908718561473),
                                               0.041666280410334114), 0.16666455914266934),
                             0.5000000084378842), 1.0000000281365038), 0.9999999999718431)
    return q * pow2(k)


@inline
def exp_f32(x):  # noqa: ANN001, ANN201
    return exp_core(x)


@inline
def logistic_f32(x):  # noqa: ANN001, ANN201
    e = exp_core(-abs(x))
    r = 1.0 / (1.0 + e)
    return r if x >= 0 else e * r  # NaN: exp_core's NaN


@inline
def tanh_f32(x):  # noqa: ANN001, ANN201
    y = 9.5 if x > 9.5 else x  # tanh is 1 in float32 from 9.02 on; NaN passes through
    y = -9.5 if y < -9.5 else y
    t = y * y
    p = fma(t, fma(t, fma(t, fma(t, fma(t, 3.4608236785020206e-11, 1.0771646285817752e-07),
                                    4.166783709862873e-05), 0.004402389113988383), 0.14081521157989335), 1.0)
    q = fma(t, fma(t, fma(t, fma(t, fma(t, 2.8235244009421504e-09, 2.547684661304026e-06),
                                    0.0004963054982799082), 0.02911857181538206), 0.47414854416664376), 1.0)
    return y * p / q


@inline
def expm1_f32(x):  # noqa: ANN001, ANN201
    y = -40.0 if x < -40.0 else x  # expm1 is -1 in float32 below -17.4, inf above 88.8; NaN passes
    y = 89.0 if y > 89.0 else y
    k, n, r = round_log2(y)  # exact r = y where n == 0, so small results keep their digits
    p = fma(r * r, fma(r, fma(r, fma(r, fma(r, fma(r, 0.0001984585992544551, 0.001394061799240036),
                                                 0.008333389371418561), 0.041666361026482225),
                                   0.16666666370570526), 0.5000000044138856), r)
    t = pow2(k)
    out = fma(t, p, t - 1.0)  # 2^n (expm1(r) + 1) - 1, no cancellation for n != 0
    return out if x != 0 else x  # keeps the sign of zero


SQRT2 = 1.4142135623730951


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
    a = abs(x)
    a = 4.0 if a > 4.0 else a  # erf is 1 in float32 from 3.92 on; NaN passes through
    t = a * a
    small = x * fma(t, fma(t, fma(t, fma(t, fma(t, -0.0006777972559401698, 0.005118745663115034),
                                            -0.02683709454088057), 0.1128343701651963),
                           -0.37612624735970424), 1.1283791670955126)
    p = fma(a, fma(a, fma(a, fma(a, fma(a, fma(a, 2.9401112026918406e-06, -9.750669622009375e-05),
                                            0.0010852458981498551), -0.002687962443717577),
                          -0.019174543775617607), -0.03529434342695757), 1.0000047040973734)
    p = p * p  # erfc(a) = p^32
    p = p * p
    p = p * p
    p = p * p
    p = p * p
    large = math.copysign(1.0 - p, x)
    return small if a < 0.75 else large
