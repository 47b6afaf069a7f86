"""Scalar special functions for the elementwise kernels: each compiles for Numba's CPU target and
for numba-cuda (``math`` only, no numpy), so one function gives both devices' kernels.

Computed in float64 (a float32 input meets float64 constants), so float32 results are the float64
values rounded once. Poles and domain ends follow PyTorch: ``digamma`` is ``-inf`` at ``+0``,
``+inf`` at ``-0`` and NaN at the negative integers; ``lgamma`` is ``+inf`` at the non-positive
integers; ``polygamma(n >= 1)`` is ``(-1)**(n+1) inf`` there.
"""

from __future__ import annotations

import math

from numba.extending import register_jitable

_EXACT = 4503599627370496.0  # 2**52: every float64 at least this large is an integer
_SQRT_PI_2 = 0.88622692545275801365  # sqrt(pi) / 2
_SQRT2 = 1.41421356237309504880


@register_jitable
def is_integer(x):  # noqa: ANN001, ANN201
    """Whether a non-NaN ``x`` is an integer (infinities count)."""
    return not math.fabs(x) < _EXACT or x == float(int(x))


@register_jitable
def _digamma_asymptotic(x):  # noqa: ANN001, ANN201
    """psi(x) for x >= 10: ln x - 1/(2x) - sum B_2k / (2k x^2k)."""
    t = 1.0 / (x * x)
    tail = t * (1.0 / 12 - t * (1.0 / 120 - t * (1.0 / 252 - t * (1.0 / 240 - t * (
        1.0 / 132 - t * (691.0 / 32760 - t * (1.0 / 12)))))))
    return math.log(x) - 0.5 / x - tail


@register_jitable
def _digamma_positive(x):  # noqa: ANN001, ANN201
    """psi(x) for x > 0: psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series."""
    if x == math.inf:
        return x
    shift = 0.0
    while x < 10.0:
        shift += 1.0 / x
        x += 1.0
    return _digamma_asymptotic(x) - shift


@register_jitable
def digamma(x):  # noqa: ANN001, ANN201
    """The logarithmic derivative of the gamma function; for x < 0 the reflection
    psi(x) = psi(1 - x) - pi / tan(pi x), with x reduced to [-1/2, 1/2] first."""
    if x != x:
        return x
    if x == 0.0:
        return math.copysign(math.inf, -x)
    if x < 0.0:
        if is_integer(x):
            return math.nan
        r = x - float(int(x))  # exact, in (-1, 0); tan(pi x) = tan(pi r)
        if r < -0.5:
            r += 1.0  # exact too: pi r stays accurate near the pole
        return _digamma_positive(1.0 - x) - math.pi / math.tan(math.pi * r)
    return _digamma_positive(x)


@register_jitable
def _zeta_tail(s, a):  # noqa: ANN001, ANN201
    """Hurwitz zeta(s, a) for a >= s + 9 by Euler-Maclaurin: a^(1-s)/(s-1) + a^-s/2 +
    sum_j B_2j/(2j)! s(s+1)...(s+2j-2) a^(-s-2j+1)."""
    p = math.pow(a, -s)
    total = p * a / (s - 1.0) + 0.5 * p
    inv2 = 1.0 / (a * a)
    p /= a
    rising = s  # s (s + 1) ... (s + 2j - 2)
    total += rising * p / 12.0
    rising *= (s + 1.0) * (s + 2.0)
    p *= inv2
    total -= rising * p / 720.0
    rising *= (s + 3.0) * (s + 4.0)
    p *= inv2
    total += rising * p / 30240.0
    rising *= (s + 5.0) * (s + 6.0)
    p *= inv2
    total -= rising * p / 1209600.0
    rising *= (s + 7.0) * (s + 8.0)
    p *= inv2
    total += rising * p / 47900160.0
    rising *= (s + 9.0) * (s + 10.0)
    p *= inv2
    total -= rising * p * (691.0 / 1307674368000.0)
    rising *= (s + 11.0) * (s + 12.0)
    p *= inv2
    total += rising * p / 74724249600.0
    return total


@register_jitable
def _zeta_from(s, q, start):  # noqa: ANN001, ANN201
    """sum_{k >= 0} (q + k)^-s for q > -start: the terms below ``start``, then the tail."""
    total = 0.0
    while q < start:
        total += math.pow(q, -s)
        q += 1.0
    return total + _zeta_tail(s, q)


@register_jitable
def hurwitz_zeta(s, q):  # noqa: ANN001, ANN201
    """sum_{k >= 0} (q + k)^-s for an integer s >= 2 and a q that is not a non-positive integer.
    Terms far below zero are summed as a difference of two zetas of positive arguments."""
    start = s + 9.0
    if q >= -start:
        return _zeta_from(s, q, start)
    # q + k < -start for k < K: those terms are (-1)^s sum_{j < K} (u + j)^-s with u = -(q + K - 1)
    k = math.ceil(-start - q)
    u = -(q + k - 1.0)
    sign = 1.0 if int(s) % 2 == 0 else -1.0
    far = sign * (_zeta_from(s, u, start) - _zeta_from(s, u + k, start))
    return far + _zeta_from(s, q + k, start)


@register_jitable
def polygamma(n, x):  # noqa: ANN001, ANN201
    """The n-th derivative of digamma (``n`` an integer-valued float >= 0):
    (-1)^(n+1) n! zeta(n + 1, x) for n >= 1. At +inf trigamma is 0 and the higher ones NaN, at
    -inf trigamma is NaN and the higher ones infinite, as in PyTorch."""
    order = float(int(n))
    if order == 0.0:
        return digamma(x)
    if x != x:
        return x
    sign = 1.0 if int(order) % 2 == 1 else -1.0
    if x == math.inf:
        return 0.0 if order == 1.0 else math.nan
    if x == -math.inf and order == 1.0:
        return math.nan
    if x <= 0.0 and is_integer(x):
        return sign * math.inf
    factorial = 1.0
    for i in range(2, int(order) + 1):
        factorial *= i
    return sign * factorial * hurwitz_zeta(order + 1.0, x * 1.0)


@register_jitable
def lgamma(x):  # noqa: ANN001, ANN201
    """log |Gamma(x)|; +inf at the poles (math.lgamma raises there in Python)."""
    if x <= 0.0 and is_integer(x):
        return math.inf
    return math.lgamma(x * 1.0)  # x * 1.0: float64 for a float32 x (numba's float() keeps float32)


@register_jitable
def erfc(x):  # noqa: ANN001, ANN201
    return math.erfc(x * 1.0)


@register_jitable
def _erfinv_guess(a, rest):  # noqa: ANN001, ANN201
    """Giles' single-precision approximation of erfinv(a), 0 <= a = 1 - rest < 1 ("Approximating
    the erfinv function", GPU Computing Gems, 2011)."""
    w = -math.log(rest * (2.0 - rest))
    if w > 25.0:  # past the fit: erfc(y) ~ exp(-y^2) / (y sqrt(pi)) solved for y once
        lead = -math.log(rest)
        return math.sqrt(lead - 0.5 * math.log(math.pi * lead))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    return p * a


@register_jitable
def _erfinv_positive(a, rest):  # noqa: ANN001, ANN201
    """erfinv(a) for 0 < a < 1 given ``rest = 1 - a`` exactly: Giles' guess, then Halley steps on
    erf(y) = a up to 0.5, and past 0.5 Newton steps on log erfc(y) = log(rest) (the logarithm is
    nearly linear where the guess, fitted for float32, is far off)."""
    y = _erfinv_guess(a, rest)
    if a <= 0.5:
        for _ in range(2):
            step = (math.erf(y) - a) * _SQRT_PI_2 * math.exp(y * y)  # residual / erf'(y)
            y -= step / (1.0 + y * step)  # Halley: erf''(y) = -2 y erf'(y)
    else:
        target = math.log(rest)
        for _ in range(5):
            tail = math.erfc(y)
            y += (math.log(tail) - target) * tail * _SQRT_PI_2 * math.exp(y * y)
    return y


@register_jitable
def erfinv(x):  # noqa: ANN001, ANN201
    """The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside."""
    a = math.fabs(x)
    if not a <= 1.0:
        return math.nan
    if a == 1.0:
        return math.copysign(math.inf, x)
    if a == 0.0:
        return x
    return math.copysign(_erfinv_positive(a * 1.0, 1.0 - a), x)


@register_jitable
def ndtri(p):  # noqa: ANN001, ANN201
    """The standard normal quantile sqrt(2) erfinv(2p - 1), with 2p - 1 never rounded: below 1/2
    it is -sqrt(2) erfinv(1 - c) for c = 2p, exact."""
    if not 0.0 <= p <= 1.0:
        return math.nan
    if p == 0.0 or p == 1.0:
        return -math.inf if p == 0.0 else math.inf
    if p == 0.5:
        return 0.0
    c = 2.0 * p if p < 0.5 else 2.0 * (1.0 - p)  # 1 - p is exact for p >= 1/2
    y = _erfinv_positive(1.0 - c, c)
    return -_SQRT2 * y if p < 0.5 else _SQRT2 * y


_BESSEL_SWITCH = 20.0  # the power series below, the asymptotic series above (both <= 35 terms)
_INV_SQRT_2PI = 0.39894228040143267794  # 1 / sqrt(2 pi)


@register_jitable
def _bessel_i_series(nu, x):  # noqa: ANN001, ANN201
    """I_nu(x) for nu = 0 or 1 and 0 <= x < 20: sum_k (x/2)^(2k+nu) / (k! (k+nu)!) (A&S 9.6.10).
    Every term is positive, so the sum is accurate to a few ulps; it stops at the first term
    below 1e-17 of the sum (35 terms at x = 20)."""
    q = 0.25 * x * x
    term = 1.0 if nu == 0 else 0.5 * x
    total = term
    k = 1.0
    while term > 1e-17 * total:
        term *= q / (k * (k + nu))
        total += term
        k += 1.0
    return total


@register_jitable
def _bessel_i_asymptotic(nu, x):  # noqa: ANN001, ANN201
    """sqrt(2 pi x) e^-x I_nu(x) for x >= 20: sum_k (-1)^k prod_{j <= k} (4 nu^2 - (2j - 1)^2) /
    (k! (8x)^k) (A&S 9.7.1; the e^-2x part it leaves out is below 1e-17 there). The series
    diverges, but at x >= 20 its terms fall below 1e-17 of the sum by the 27th."""
    mu = 4.0 * nu * nu
    term = 1.0
    total = 1.0
    for k in range(1, 40):
        odd = 2.0 * k - 1.0
        term *= (odd * odd - mu) / (8.0 * k * x)
        total += term
        if math.fabs(term) <= 1e-17 * total:
            break
    return total


@register_jitable
def _bessel_i(nu, x, scaled):  # noqa: ANN001, ANN201
    """I_nu(|x|), times e^-|x| when ``scaled``. Unscaled, e^|x| overflows past 709.78 (inf, and
    inf * 0 = NaN at |x| = inf), as in PyTorch and SciPy (Cephes)."""
    ax = math.fabs(x * 1.0)  # x * 1.0: float64 for a float32 x
    if ax < _BESSEL_SWITCH:
        s = _bessel_i_series(nu, ax)
        return s * math.exp(-ax) if scaled else s
    s = _bessel_i_asymptotic(nu, ax) * (_INV_SQRT_2PI / math.sqrt(ax))
    return s if scaled else math.exp(ax) * s


@register_jitable
def i0(x):  # noqa: ANN001, ANN201
    """The modified Bessel function of the first kind of order 0 (even)."""
    if x != x:
        return x * 1.0
    return _bessel_i(0, x, False)


@register_jitable
def i0e(x):  # noqa: ANN001, ANN201
    """e^-|x| I0(x)."""
    if x != x:
        return x * 1.0
    return _bessel_i(0, x, True)


@register_jitable
def i1(x):  # noqa: ANN001, ANN201
    """The modified Bessel function of the first kind of order 1 (odd; +0 at -0, as PyTorch's)."""
    if x != x:
        return x * 1.0
    v = _bessel_i(1, x, False)
    return -v if x < 0.0 else v


@register_jitable
def i1e(x):  # noqa: ANN001, ANN201
    """e^-|x| I1(x)."""
    if x != x:
        return x * 1.0
    v = _bessel_i(1, x, True)
    return -v if x < 0.0 else v


_INV_SQRT_PI = 0.56418958354775628695  # 1 / sqrt(pi)
_SQRT_HALF = 0.70710678118654752440


@register_jitable
def _exp_square(x):  # noqa: ANN001, ANN201
    """exp(x^2) with x^2 carried as hi + lo (Dekker's exact product), so the result keeps full
    precision where exp(x * x) would lose log2(x^2) bits to the rounding of x * x."""
    c = 134217729.0 * x  # 2^27 + 1: splits x into 26-bit halves
    xh = c - (c - x)
    xl = x - xh
    hi = x * x
    lo = ((xh * xh - hi) + 2.0 * xh * xl) + xl * xl
    return math.exp(hi) * (1.0 + lo)  # |lo| <= ulp(hi) / 2: exp(lo) is 1 + lo to rounding


@register_jitable
def erfcx(x):  # noqa: ANN001, ANN201
    """The scaled complementary error function exp(x^2) erfc(x): below 10 that product (erfc has
    not underflowed; inf below -26.64, where exp(x^2) overflows); from 10 the asymptotic series
    1 / (x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k (A&S 7.1.23), at most 13 terms."""
    x = x * 1.0
    if x != x:
        return x
    if x < -26.7:
        return math.inf
    if x < 10.0:
        return _exp_square(x) * math.erfc(x)
    inv = 0.5 / (x * x)
    term = 1.0
    total = 1.0
    for k in range(1, 20):
        term *= -(2.0 * k - 1.0) * inv
        total += term
        if math.fabs(term) < 1e-17:
            break
    return total * _INV_SQRT_PI / x


@register_jitable
def log_ndtr(x):  # noqa: ANN001, ANN201
    """log of the standard normal CDF: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below -1 (no
    underflow), log1p(-erfc(x / sqrt 2) / 2) above (no cancellation near 0)."""
    t = x * _SQRT_HALF
    if x < -1.0:
        return math.log(erfcx(-t) * 0.5) - t * t
    return math.log1p(-0.5 * math.erfc(t))


_EULER = 0.57721566490153286061  # Euler's constant gamma


@register_jitable
def _log_gamma_density(a, x):  # noqa: ANN001, ANN201
    """log(x^a e^-x / Gamma(a)) for a, x > 0. From a = 10, Gamma(a) as Stirling's
    sqrt(2 pi / a) (a / e)^a e^c(a) turns the exponent into -a (t - 1 - log t) with t = x / a:
    no cancellation between a log x, x and lgamma(a), which are each ~a log a."""
    if a < 10.0:
        return a * math.log(x) - x - math.lgamma(a)
    d = (x - a) / a  # t - 1
    if d < -0.5:  # 1 + d would lose the digits of t
        series = d - math.log(x / a)
    elif math.fabs(d) < 0.25:  # t - 1 - log t = d - log1p(d) = sum_{k >= 2} (-1)^k d^k / k
        term = d * d
        series = 0.0
        k = 2.0
        while math.fabs(term) > 1e-17 * math.fabs(series) * k or k == 2.0:
            series += term / k
            term *= -d
            k += 1.0
    else:
        series = d - math.log1p(d)
    inv = 1.0 / (a * a)
    # Stirling's series of log Gamma(a) - its leading part (A&S 6.1.41), to a^-15: 1e-17 at a = 10
    correction = (1.0 / 12 - inv * (1.0 / 360 - inv * (1.0 / 1260 - inv * (1.0 / 1680 - inv * (
        1.0 / 1188 - inv * (691.0 / 360360 - inv * (1.0 / 156 - inv * (3617.0 / 122400)))))))) / a
    return -a * series + 0.5 * math.log(a / (2.0 * math.pi)) - correction


@register_jitable
def _igamma_series(a, x):  # noqa: ANN001, ANN201
    """P(a, x) = x^a e^-x / Gamma(a) sum_{n >= 0} x^n / (a (a + 1) ... (a + n)) (A&S 6.5.29),
    positive terms, for x < a + 1."""
    term = 1.0 / a
    total = term
    n = 1.0
    while term > 1e-17 * total:
        term *= x / (a + n)
        total += term
        n += 1.0
    return total * math.exp(_log_gamma_density(a, x))


@register_jitable
def _igammac_fraction(a, x):  # noqa: ANN001, ANN201
    """Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...))
    (A&S 6.5.31 in its even form), by the modified Lentz method, for x >= a + 1."""
    tiny = 1e-300
    b = x + 1.0 - a
    f = 1.0 / b if b != 0.0 else 1.0 / tiny
    c = 1.0 / tiny
    d = f
    n = 1.0
    while n < 100000.0:
        an = -n * (n - a)
        b += 2.0
        d = b + an * d
        d = 1.0 / (d if d != 0.0 else tiny)
        c = b + an / c
        c = c if c != 0.0 else tiny
        delta = c * d
        f *= delta
        if math.fabs(delta - 1.0) < 1e-16:
            break
        n += 1.0
    return f * math.exp(_log_gamma_density(a, x))


_ZETA_2_TO_10 = (1.6449340668482264, 1.2020569031595943, 1.0823232337111382, 1.0369277551433699,
                 1.0173430619844491, 1.0083492773819228, 1.0040773561979443, 1.0020083928260822,
                 1.0009945751278181)  # zeta(2), ..., zeta(10)


@register_jitable
def _lgamma1p(a):  # noqa: ANN001, ANN201
    """lgamma(1 + a) without rounding 1 + a: for |a| <= 1/4 the series -gamma a +
    sum_{k >= 2} (-1)^k zeta(k) a^k / k (A&S 6.1.33), zeta(k > 10) as 1 + 2^-k + ... + 5^-k."""
    if math.fabs(a) > 0.25:
        return math.lgamma(1.0 + a)
    total = -_EULER * a
    power = -a  # (-1)^k a^k after k - 1 steps
    for k in range(2, 40):
        power *= -a
        if k <= 10:
            z = _ZETA_2_TO_10[k - 2]
        else:
            z = 1.0 + math.pow(2.0, -k) + math.pow(3.0, -k) + math.pow(4.0, -k) + math.pow(5.0, -k)
        total += z * power / k
        if math.fabs(power) < 1e-18 * math.fabs(total):
            break
    return total


@register_jitable
def _igammac_small_a(a, x):  # noqa: ANN001, ANN201
    """Q(a, x) for 0 < a <= 1 and x < 2, where 1 - P would cancel: with
    P = x^a / Gamma(a + 1) (1 + a sum_{n >= 1} (-x)^n / (n! (a + n))) (A&S 6.5.29's other form),
    Q = -expm1(a log x - lgamma(a + 1)) - x^a / Gamma(a + 1) a sum_{n >= 1} (-x)^n / (n! (a + n))."""
    lead = a * math.log(x) - _lgamma1p(a)
    term = 1.0
    total = 0.0
    n = 1.0
    while True:
        term *= -x / n
        part = term / (a + n)
        total += part
        if math.fabs(part) <= 1e-17 * math.fabs(total):
            break
        n += 1.0
    return -math.expm1(lead) - math.exp(lead) * a * total


@register_jitable
def _igamma_pair(a, x, upper):  # noqa: ANN001, ANN201
    """P(a, x), or Q(a, x) when ``upper``, with PyTorch's edges, tested in its order (so a NaN
    meets an edge first: P(NaN, 0) = 0): NaN for a < 0 or x < 0; at a = 0, P = 1 for x > 0 and NaN
    otherwise; P = 0 at x = 0; at a = inf, P = 0 (NaN at x = inf); P = 1 at x = inf."""
    a = a * 1.0
    x = x * 1.0
    if x < 0.0 or a < 0.0:
        return math.nan
    if a == 0.0:
        if not x > 0.0:
            return math.nan
        p = 1.0
    elif x == 0.0:
        p = 0.0
    elif a == math.inf:
        if x == math.inf:
            return math.nan
        p = 0.0
    elif x == math.inf:
        p = 1.0
    elif a != a or x != x:
        return math.nan
    elif x < 2.0 and a <= 1.0 and (upper or x > 0.5):
        q = _igammac_small_a(a, x)
        return q if upper else 1.0 - q
    elif x < a + 1.0:
        p = _igamma_series(a, x)
    else:
        q = _igammac_fraction(a, x)
        return q if upper else 1.0 - q
    return 1.0 - p if upper else p


@register_jitable
def igamma(a, x):  # noqa: ANN001, ANN201
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a)."""
    return _igamma_pair(a, x, False)


@register_jitable
def igammac(a, x):  # noqa: ANN001, ANN201
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _igamma_pair(a, x, True)


@register_jitable
def zeta(s, q):  # noqa: ANN001, ANN201
    """The Hurwitz zeta function sum_{k >= 0} (q + k)^-s for s > 1 (s = 1 gives inf, s < 1 NaN):
    the terms below 2 s + 9 summed (stopping once a term is below 1e-17 of the sum, which bounds
    the rest for large s), then Euler-Maclaurin (``_zeta_tail``: its first omitted term is below
    1e-17 there). PyTorch's (Cephes') edges, in its order: inf at s = 1, NaN for s < 1, inf at
    the non-positive integers q, NaN for other q < 0 unless s is an integer (then the terms are
    real; inf for s = inf); at s = inf, 1 for q = 1, inf for 0 < q < 1 and NaN for q > 1; NaN
    at q = inf."""
    s = s * 1.0
    q = q * 1.0
    if s == 1.0:
        return math.inf
    if s < 1.0:
        return math.nan
    if q <= 0.0:
        if is_integer(q):
            return math.inf
        if s != s:
            return s
        if s == math.inf:
            return math.inf
        if not is_integer(s):
            return math.nan
        return hurwitz_zeta(s, q)
    if s != s or q != q:
        return math.nan
    if q == math.inf:
        return math.nan
    if s == math.inf:
        return 1.0 if q == 1.0 else (math.inf if q < 1.0 else math.nan)
    start = 2.0 * s + 9.0
    total = 0.0
    while q < start:
        term = math.pow(q, -s)
        total += term
        if term <= 1e-17 * total:
            return total
        q += 1.0
    return total + _zeta_tail(s, q)


_K_SERIES_END = 1.0  # the power series up to here, the trapezoid rule to 20, the asymptotic series on


@register_jitable
def _bessel_k_series(nu, x):  # noqa: ANN001, ANN201
    """K_nu(x) for nu = 0 or 1 and 0 < x <= 1 (A&S 9.6.13 and 9.6.11):
    K0 = -(log(x/2) + gamma) I0(x) + sum_{k >= 1} H_k (x^2/4)^k / (k!)^2 (both parts positive);
    K1 = 1/x + log(x/2) I1(x) - x/4 sum_{k >= 0} (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)
    (1/x dominates)."""
    q = 0.25 * x * x
    log_half = math.log(0.5 * x)
    if nu == 0:
        term = 1.0
        harmonic = 0.0
        total = 0.0
        k = 1.0
        while True:
            term *= q / (k * k)
            harmonic += 1.0 / k
            total += harmonic * term
            if term * harmonic <= 1e-17 * total:
                break
            k += 1.0
        return total - (log_half + _EULER) * _bessel_i_series(0, x)
    term = 1.0
    psi_sum = 1.0 - 2.0 * _EULER  # psi(1) + psi(2)
    total = psi_sum
    k = 1.0
    while True:
        term *= q / (k * (k + 1.0))
        psi_sum += 1.0 / k + 1.0 / (k + 1.0)
        total += psi_sum * term
        if math.fabs(psi_sum * term) <= 1e-17 * math.fabs(total):
            break
        k += 1.0
    return 1.0 / x + log_half * _bessel_i_series(1, x) - 0.25 * x * total


@register_jitable
def _bessel_k_trapezoid(nu, x):  # noqa: ANN001, ANN201
    """e^x K_nu(x) = int_0^inf exp(-2x sinh^2(t/2)) cosh(nu t) dt (A&S 9.6.24) for 1 < x < 20 by
    the trapezoid rule with step 1/16: the integrand is analytic and decays doubly exponentially,
    so the error is about exp(x (1 - cos d) - 2 pi d * 16) for d = 0.6, below 1e-24; positive
    terms, stopped below 1e-18 of the sum."""
    h = 0.0625
    total = 0.5  # the t = 0 term, halved
    t = h
    while True:
        s = math.sinh(0.5 * t)
        term = math.exp(-2.0 * x * s * s) * (math.cosh(nu * t) if nu != 0.0 else 1.0)
        total += term
        if term <= 1e-18 * total:
            break
        t += h
    return total * h


@register_jitable
def _bessel_k_asymptotic(nu, x):  # noqa: ANN001, ANN201
    """sqrt(2 x / pi) e^x K_nu(x) for x >= 20: sum_k prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! (8x)^k)
    (A&S 9.7.2); its terms fall below 1e-17 of the sum by the 27th."""
    mu = 4.0 * nu * nu
    term = 1.0
    total = 1.0
    for k in range(1, 40):
        odd = 2.0 * k - 1.0
        term *= (mu - odd * odd) / (8.0 * k * x)
        total += term
        if math.fabs(term) <= 1e-17 * total:
            break
    return total


@register_jitable
def _bessel_k(nu, x, scaled):  # noqa: ANN001, ANN201
    """K_nu(x) (times e^x when ``scaled``) for nu = 0, 1, with PyTorch's edges: inf at +-0, NaN for
    x < 0, 0 at inf."""
    x = x * 1.0
    if x != x or x < 0.0:
        return math.nan
    if x == 0.0:
        return math.inf
    if x == math.inf:
        return 0.0
    if x <= _K_SERIES_END:
        v = _bessel_k_series(nu, x)
        return v * math.exp(x) if scaled else v
    if x < _BESSEL_SWITCH:
        v = _bessel_k_trapezoid(nu * 1.0, x)
    else:
        v = _bessel_k_asymptotic(nu * 1.0, x) * math.sqrt(0.5 * math.pi / x)
    return v if scaled else v * math.exp(-x)


@register_jitable
def k0(x):  # noqa: ANN001, ANN201
    """The modified Bessel function of the second kind of order 0."""
    return _bessel_k(0, x, False)


@register_jitable
def k1(x):  # noqa: ANN001, ANN201
    """The modified Bessel function of the second kind of order 1."""
    return _bessel_k(1, x, False)


@register_jitable
def k0e(x):  # noqa: ANN001, ANN201
    """e^x K0(x)."""
    return _bessel_k(0, x, True)


@register_jitable
def k1e(x):  # noqa: ANN001, ANN201
    """e^x K1(x)."""
    return _bessel_k(1, x, True)


@register_jitable
def spherical_j0(x):  # noqa: ANN001, ANN201
    """sin(x) / x: 1 at 0, 0 at +-inf (PyTorch's)."""
    x = x * 1.0
    if x == 0.0:
        return 1.0
    if math.fabs(x) == math.inf:
        return 0.0
    return math.sin(x) / x


_J_SERIES_END = 2.0  # the power series below, Miller's recurrence to 25, Hankel's expansion on
_J_HANKEL = 25.0
_TWO_PI = 0.63661977236758134308  # 2 / pi


@register_jitable
def _bessel_jy_series(x):  # noqa: ANN001, ANN201
    """(J0, J1, Y0, Y1) at 0 < x < 2 by their power series in q = x^2 / 4 (A&S 9.1.10, 9.1.11):
    J0 = sum (-q)^k / (k!)^2, J1 = x/2 sum (-q)^k / (k! (k+1)!),
    Y0 = 2/pi (log(x/2) + gamma) J0 + 2/pi sum_{k >= 1} (-1)^(k+1) H_k q^k / (k!)^2,
    Y1 = -2/(pi x) + 2/pi log(x/2) J1 - x/(2 pi) sum (-1)^k (psi(k+1) + psi(k+2)) q^k / (k! (k+1)!).
    At most 16 terms; q < 1 keeps the cancellation below a factor of 5."""
    q = 0.25 * x * x
    t0 = 1.0  # (-q)^k / (k!)^2
    t1 = 1.0  # (-q)^k / (k! (k+1)!)
    j0 = 1.0
    j1 = 1.0
    harmonic = 0.0
    psi_sum = 1.0 - 2.0 * _EULER
    y0 = 0.0
    y1 = psi_sum
    k = 1.0
    while k < 40.0:
        t0 *= -q / (k * k)
        t1 *= -q / (k * (k + 1.0))
        harmonic += 1.0 / k
        psi_sum += 1.0 / k + 1.0 / (k + 1.0)
        j0 += t0
        j1 += t1
        y0 -= harmonic * t0
        y1 += psi_sum * t1
        if math.fabs(t0) * (harmonic + 1.0) < 1e-17:
            break
        k += 1.0
    j1 *= 0.5 * x
    log_half = math.log(0.5 * x)
    y0 = _TWO_PI * ((log_half + _EULER) * j0 + y0)
    y1 = -_TWO_PI / x + _TWO_PI * log_half * j1 - (0.5 / math.pi) * x * y1
    return j0, j1, y0, y1


@register_jitable
def _bessel_jy_miller(x):  # noqa: ANN001, ANN201
    """(J0, J1, Y0, Y1) at 2 <= x < 25 by Miller's backward recurrence J_{k-1} = 2k/x J_k - J_{k+1}
    from k = M ~ x + 50 (where J_M(x) < 1e-22), normalized by J0 + 2 sum J_2k = 1, with the
    Neumann series (A&S 9.1.88 and its derivative)
    Y0 = 2/pi (log(x/2) + gamma) J0 - 4/pi sum_{k >= 1} (-1)^k J_2k / k,
    Y1 = 2/pi ((log(x/2) + gamma) J1 - J0 / x) + 2/pi sum_{k >= 1} (-1)^k (J_{2k-1} - J_{2k+1}) / k.
    All sums are O(1), so the results are accurate to a few ulps of 1 (absolutely)."""
    m = 2 * int((x + 50.0) / 2.0)
    above = 0.0  # J_{k+1}
    here = 1e-30  # J_k, unnormalized
    norm = 0.0
    y0_sum = 0.0
    y1_sum = 0.0
    j1 = 0.0
    k = m
    while k > 0:
        below = (2.0 * k / x) * here - above  # J_{k-1}
        if k % 2 == 0:
            half = k // 2
            sign = 1.0 if half % 2 == 0 else -1.0
            norm += 2.0 * here
            y0_sum += sign * here / half
            y1_sum += sign * (below - above) / half  # (J_{2k-1} - J_{2k+1}) / k at 2k = k here
        if k == 1:
            j1 = here
        above = here
        here = below
        k -= 1
        if math.fabs(here) > 1e250:  # rescale everything kept so far
            above *= 1e-250
            here *= 1e-250
            norm *= 1e-250
            y0_sum *= 1e-250
            y1_sum *= 1e-250
            j1 *= 1e-250
    norm += here  # + J0
    j0 = here / norm
    j1 = j1 / norm
    log_term = math.log(0.5 * x) + _EULER
    y0 = _TWO_PI * (log_term * j0 - 2.0 * y0_sum / norm)
    y1 = _TWO_PI * (log_term * j1 - j0 / x + y1_sum / norm)
    return j0, j1, y0, y1


@register_jitable
def _bessel_jy_hankel(nu, x):  # noqa: ANN001, ANN201
    """(J_nu, Y_nu) at x >= 25 by Hankel's expansion (A&S 9.2.5-9.2.10): sqrt(2/(pi x)) times
    (P cos chi - Q sin chi, P sin chi + Q cos chi), chi = x - (2 nu + 1) pi / 4, P and Q the even
    and odd terms of sum_k (+-1) prod_{j <= k} (4 nu^2 - (2j - 1)^2) / (k! (8x)^k); cos chi and
    sin chi from cos x and sin x (exact argument reduction in libm)."""
    mu = 4.0 * nu * nu
    term = 1.0
    p = 1.0
    q = 0.0
    for k in range(1, 60):
        odd = 2.0 * k - 1.0
        term *= (mu - odd * odd) / (8.0 * k * x)
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2 == 0:
            p += sign * term
        else:
            q += sign * term
        if math.fabs(term) < 1e-17:
            break
    c = math.cos(x)
    s = math.sin(x)
    if nu == 0:
        cos_chi = (c + s) * _SQRT_HALF
        sin_chi = (s - c) * _SQRT_HALF
    else:
        cos_chi = (s - c) * _SQRT_HALF
        sin_chi = -(s + c) * _SQRT_HALF
    scale = math.sqrt(_TWO_PI / x)
    return scale * (p * cos_chi - q * sin_chi), scale * (p * sin_chi + q * cos_chi)


@register_jitable
def _bessel_jy(which, x):  # noqa: ANN001, ANN201
    """J0 (which = 0), J1 (1), Y0 (2) or Y1 (3) at x > 0, finite."""
    if x < _J_SERIES_END:
        v = _bessel_jy_series(x)
    elif x < _J_HANKEL:
        v = _bessel_jy_miller(x)
    else:
        nu = which % 2
        j, y = _bessel_jy_hankel(nu * 1.0, x)
        return j if which < 2 else y
    return v[which]


@register_jitable
def bessel_j0(x):  # noqa: ANN001, ANN201
    """The Bessel function of the first kind of order 0 (even; NaN at +-inf, as PyTorch's)."""
    x = math.fabs(x * 1.0)
    if x != x or x == math.inf:
        return math.nan
    if x == 0.0:
        return 1.0
    return _bessel_jy(0, x)


@register_jitable
def bessel_j1(x):  # noqa: ANN001, ANN201
    """The Bessel function of the first kind of order 1 (odd; NaN at +-inf)."""
    x = x * 1.0
    if x != x or math.fabs(x) == math.inf:
        return math.nan
    if x == 0.0:
        return x
    v = _bessel_jy(1, math.fabs(x))
    return -v if x < 0.0 else v


@register_jitable
def bessel_y0(x):  # noqa: ANN001, ANN201
    """The Bessel function of the second kind of order 0: -inf at +-0, NaN for x < 0 and at inf."""
    x = x * 1.0
    if x == 0.0:
        return -math.inf
    if not 0.0 < x < math.inf:
        return math.nan
    return _bessel_jy(2, x)


@register_jitable
def bessel_y1(x):  # noqa: ANN001, ANN201
    """The Bessel function of the second kind of order 1: -inf at +-0, NaN for x < 0 and at inf."""
    x = x * 1.0
    if x == 0.0:
        return -math.inf
    if not 0.0 < x < math.inf:
        return math.nan
    return _bessel_jy(3, x)


_AI0 = 0.35502805388781723926  # Ai(0) = 1 / (3^(2/3) Gamma(2/3))
_AIP0 = -0.25881940379280679840  # Ai'(0) = -1 / (3^(1/3) Gamma(1/3))
_AIRY_ASYMPTOTIC = -9.5  # Taylor steps from 0 above this, the oscillating expansion below


@register_jitable
def _airy_maclaurin(x):  # noqa: ANN001, ANN201
    """Ai(x) for |x| <= 1: Ai(0) f(x) + Ai'(0) g(x) with f = sum 3^k (1/3)_k x^3k / (3k)! and
    g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)! (A&S 10.4.2-10.4.3); cancellation below a factor of 3."""
    cube = x * x * x
    f_term = 1.0
    g_term = x
    f = 1.0
    g = x
    k = 1.0
    while math.fabs(f_term) + math.fabs(g_term) > 1e-18:
        f_term *= cube / ((3.0 * k - 1.0) * (3.0 * k))
        g_term *= cube / ((3.0 * k) * (3.0 * k + 1.0))
        f += f_term
        g += g_term
        k += 1.0
    return _AI0 * f + _AIP0 * g


@register_jitable
def _airy_taylor_steps(x):  # noqa: ANN001, ANN201
    """Ai(x) for -9.5 <= x < -1: from (Ai(0), Ai'(0)), steps of at most 1/2 along Ai'' = x Ai,
    each by the Taylor series whose coefficients obey a_{n+2} = (x0 a_n + a_{n-1}) / ((n+2)(n+1)).
    Both solutions oscillate there (no growth), so each step adds only rounding: the error stays
    within a few tens of ulps of the envelope |x|^(-1/4) / sqrt(pi)."""
    steps = int(math.ceil(-x / 0.5))
    h = x / steps
    y = _AI0
    yp = _AIP0
    x0 = 0.0
    for _ in range(steps):
        prev = 0.0  # a_{n-1}
        a_n = y  # a_n
        a_next = yp  # a_{n+1}
        power = 1.0  # h^n
        value = y
        slope = 0.0
        n = 0.0
        while True:
            a_new = (x0 * a_n + prev) / ((n + 2.0) * (n + 1.0))  # a_{n+2}
            prev = a_n
            a_n = a_next
            a_next = a_new
            n += 1.0
            slope += n * a_n * power  # n a_n h^(n-1)
            power *= h
            value += a_n * power
            if n > 4.0 and math.fabs(a_n * power) + math.fabs(a_next * power * h) < 1e-18:
                break
        y = value
        yp = slope
        x0 += h
    return y


@register_jitable
def _airy_oscillating(x):  # noqa: ANN001, ANN201
    """Ai(x) for x < -9.5 (A&S 10.4.60): (cos(z - pi/4) P + sin(z - pi/4) Q) / (sqrt(pi) |x|^(1/4)),
    z = 2/3 |x|^(3/2), P = sum (-1)^k u_2k z^-2k, Q = sum (-1)^k u_(2k+1) z^-(2k+1),
    u_k = u_{k-1} (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k); at z >= 19.5 the terms fall below 1e-17."""
    ax = -x
    z = 2.0 / 3.0 * ax * math.sqrt(ax)
    term = 1.0
    p = 1.0
    q = 0.0
    for k in range(1, 60):
        term *= (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k * z)
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2 == 0:
            p += sign * term
        else:
            q += sign * term
        if math.fabs(term) < 1e-17:
            break
    c = math.cos(z)
    s = math.sin(z)
    cos_phase = (c + s) * _SQRT_HALF  # cos(z - pi/4)
    sin_phase = (s - c) * _SQRT_HALF
    return (cos_phase * p + sin_phase * q) * _INV_SQRT_PI / math.sqrt(math.sqrt(ax))


@register_jitable
def airy_ai(x):  # noqa: ANN001, ANN201
    """The Airy function Ai: for x > 1, sqrt(x/3) / pi K_{1/3}(2/3 x^(3/2)) (A&S 10.4.14) by the
    K functions' trapezoid rule and asymptotic series; the Maclaurin series on [-1, 1]; Taylor
    steps to -9.5; the oscillating expansion below. NaN at +-inf (PyTorch's)."""
    x = x * 1.0
    if x != x or math.fabs(x) == math.inf:
        return math.nan
    if x > 1.0:
        z = 2.0 / 3.0 * x * math.sqrt(x)
        if z > 745.0:
            return 0.0
        if z < _BESSEL_SWITCH:
            scaled = _bessel_k_trapezoid(1.0 / 3.0, z)
        else:
            scaled = _bessel_k_asymptotic(1.0 / 3.0, z) * math.sqrt(0.5 * math.pi / z)
        return math.sqrt(x / 3.0) / math.pi * scaled * math.exp(-z)
    if x >= -1.0:
        return _airy_maclaurin(x)
    if x >= _AIRY_ASYMPTOTIC:
        return _airy_taylor_steps(x)
    return _airy_oscillating(x)
