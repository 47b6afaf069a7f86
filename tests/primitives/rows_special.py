"""``op_db`` rows for the special functions and the scans (appended to ``OP_DB``; see op_db.py
for the row format). The numpy references are the functions' defining properties or series."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from op_db import OpCase

import tidu

_erf = np.vectorize(math.erf)
_lgamma = np.vectorize(math.lgamma)


def _digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = psi(x + N) - sum_{k < N} 1 / (x + k), psi(x + N) by three terms of Stirling's series:
    for N = 1000 the first term left out is 1e-14."""
    n = 1000
    big = x + n
    shifted = np.log(big) - 1 / (2 * big) - 1 / (12 * big**2)
    return shifted - (1.0 / (x[..., None] + np.arange(n))).sum(-1)


def _polygamma(n: int) -> object:
    """(-1)^(n+1) n! sum_k (x + k)^-(n+1), the tail past k = 10^5 as its midpoint integral."""

    def ref(x: np.ndarray) -> np.ndarray:
        s, big = n + 1, 100_000
        total = (1.0 / (x[..., None] + np.arange(big)) ** s).sum(-1) + (x + big - 0.5) ** (1 - s) / (s - 1)
        return (-1) ** (n + 1) * math.factorial(n) * total

    return ref


def _erfinv(y: np.ndarray) -> np.ndarray:
    """Newton on erf from 0 (monotone: erf is concave on each side of 0)."""
    x = np.zeros_like(y)
    for _ in range(60):
        x -= (_erf(x) - y) * (math.sqrt(math.pi) / 2) * np.exp(x * x)
    return x


def _erfcx_continued_fraction(x: np.ndarray) -> np.ndarray:
    """exp(x^2) erfc(x) = (1 / sqrt(pi)) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))) for x > 0
    (A&S 7.1.14), 200 levels from the bottom up."""
    tail = np.zeros_like(x)
    for k in range(200, 0, -1):
        tail = (k / 2) / (x + tail)
    return 1.0 / (math.sqrt(math.pi) * (x + tail))


def _bessel_i(n: int, scaled: bool = False) -> object:
    """I_n(x) = 1/pi int_0^pi exp(x cos t) cos(n t) dt by the trapezoid rule on 64 intervals: the
    integrand is smooth and periodic, so the rule converges geometrically (1e-16 for |x| < 4)."""

    def ref(x: np.ndarray) -> np.ndarray:
        t = np.linspace(0.0, np.pi, 65)
        w = np.full(65, 1.0 / 64)
        w[[0, -1]] /= 2
        values = (np.exp(x[..., None] * np.cos(t)) * np.cos(n * t) * w).sum(-1)
        return values * np.exp(-np.abs(x)) if scaled else values

    return ref


def _incomplete_gamma(a: float, upper: bool = False) -> object:
    """P(a, x) (or Q) from mpmath at 30 digits; ``a`` is fixed: only ``x`` is differentiable."""
    def ref(x: np.ndarray) -> np.ndarray:
        mpmath.mp.dps = 30
        bounds = (lambda v: (v, mpmath.inf)) if upper else (lambda v: (0, v))
        return np.vectorize(lambda v: float(mpmath.gammainc(a, *bounds(v), regularized=True)))(x)

    return ref


def _bessel_k(nu: int, scaled: bool = False) -> object:
    """K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt by the trapezoid rule with step 1/200 to
    t = 12 (the integrand is analytic and decays doubly exponentially: rounding-level error)."""
    def ref(x: np.ndarray) -> np.ndarray:
        t = np.linspace(0.0, 12.0, 2401)
        w = np.full(t.shape, t[1])
        w[[0, -1]] /= 2
        values = (np.exp(-x[..., None] * np.cosh(t)) * np.cosh(nu * t) * w).sum(-1)
        return values * np.exp(x) if scaled else values

    return ref


def _bessel_j(n: int) -> object:
    """J_n(x) = 1/pi int_0^pi cos(n t - x sin t) dt by the trapezoid rule on 64 intervals (smooth and
    periodic: rounding-level for |x| < 20)."""
    def ref(x: np.ndarray) -> np.ndarray:
        t = np.linspace(0.0, np.pi, 65)
        w = np.full(65, 1.0 / 64)
        w[[0, -1]] /= 2
        return (np.cos(n * t - x[..., None] * np.sin(t)) * w).sum(-1)

    return ref


def _bessel_y(n: int) -> object:
    """Y_n(x) = 1/pi int_0^pi sin(x sin t - n t) dt - 1/pi int_0^inf (e^(nt) + (-1)^n e^(-nt))
    e^(-x sinh t) dt (A&S 9.1.22), both by Simpson's rule on 20000 intervals (to 1e-12)."""
    def simpson(f: np.ndarray, h: float) -> np.ndarray:
        return h / 3 * (f[..., 0] + f[..., -1] + 4 * f[..., 1:-1:2].sum(-1) + 2 * f[..., 2:-1:2].sum(-1))

    def ref(x: np.ndarray) -> np.ndarray:
        t = np.linspace(0.0, np.pi, 20001)
        first = simpson(np.sin(x[..., None] * np.sin(t) - n * t), t[1])
        u = np.linspace(0.0, 12.0, 20001)
        second = simpson((np.exp(n * u) + (-1) ** n * np.exp(-n * u)) * np.exp(-x[..., None] * np.sinh(u)), u[1])
        return (first - second) / np.pi

    return ref


def _airy_maclaurin(x: np.ndarray) -> np.ndarray:
    """Ai(x) = Ai(0) f(x) + Ai'(0) g(x), f and g the power series of A&S 10.4.2-10.4.3, 40 terms."""
    c1, c2 = 1 / (3 ** (2 / 3) * math.gamma(2 / 3)), -1 / (3 ** (1 / 3) * math.gamma(1 / 3))
    f, g = np.ones_like(x), x.copy()
    tf, tg = np.ones_like(x), x.copy()
    for k in range(1, 40):
        tf = tf * x**3 / ((3 * k - 1) * 3 * k)
        tg = tg * x**3 / (3 * k * (3 * k + 1))
        f, g = f + tf, g + tg
    return c1 * f + c2 * g


def _zeta(s: float) -> object:
    def ref(q: np.ndarray) -> np.ndarray:
        return (1.0 / (q[..., None] + np.arange(100_000)) ** s).sum(-1) + (q + 100_000 - 0.5) ** (1 - s) / (s - 1)

    return ref


ROWS: list[OpCase] = [
    OpCase("erfc", tidu.erfc, ((5,), (2, 3), ()), ref=lambda x: 1.0 - _erf(x)),
    OpCase("erfinv", tidu.erfinv, ((5,), (2, 3)), low=-0.9, high=0.9, ref=_erfinv),
    OpCase("ndtri", tidu.special.ndtri, ((5,), (2, 3)), low=0.05, high=0.95,
           ref=lambda p: math.sqrt(2) * _erfinv(2 * p - 1)),
    OpCase("lgamma", tidu.lgamma, ((5,), (2, 3)), low=0.2, high=5.0, ref=_lgamma),
    OpCase("lgamma", tidu.lgamma, ((4,),), low=-2.9, high=-2.1, ref=_lgamma, name="negative"),
    OpCase("digamma", tidu.digamma, ((5,), (2, 3)), low=0.2, high=5.0, ref=_digamma),
    OpCase("digamma", tidu.digamma, ((4,),), low=-1.9, high=-1.1, ref=_digamma, name="negative"),
    OpCase("polygamma", lambda x: tidu.polygamma(1, x), ((5,), (2, 3)), low=0.2, high=5.0, ref=_polygamma(1)),
    OpCase("polygamma", lambda x: x.polygamma(3), ((4,),), low=-2.9, high=-2.1, ref=_polygamma(3), name="n3-negative"),
    OpCase("erfcx", tidu.special.erfcx, ((5,), (2, 3)), low=-3.0, high=3.0, ref=lambda x: np.exp(x * x) * (1.0 - _erf(x))),
    OpCase("erfcx", tidu.special.erfcx, ((4,),), low=12.0, high=40.0, name="asymptotic", rtol=1e-6,
           ref=lambda x: _erfcx_continued_fraction(x)),
    OpCase("log_ndtr", tidu.special.log_ndtr, ((5,), (2, 3)), low=-0.9, high=3.0,
           ref=lambda x: np.log(0.5 * (1.0 + _erf(x / math.sqrt(2))))),
    OpCase("log_ndtr", tidu.special.log_ndtr, ((4,),), low=-30.0, high=-1.5, name="lower-tail", rtol=1e-6,
           ref=lambda x: np.log(_erfcx_continued_fraction(-x / math.sqrt(2)) / 2) - x * x / 2),
    OpCase("i0", tidu.i0, ((5,), (2, 3), ()), low=-4.0, high=4.0, ref=_bessel_i(0)),
    OpCase("i0e", tidu.special.i0e, ((5,), (2, 3)), low=-4.0, high=4.0, ref=_bessel_i(0, scaled=True)),
    OpCase("i1", tidu.special.i1, ((5,), (2, 3)), low=-4.0, high=4.0, ref=_bessel_i(1)),
    OpCase("i1e", tidu.special.i1e, ((5,), (2, 3)), low=-4.0, high=4.0, ref=_bessel_i(1, scaled=True)),
    # the derivatives' limits at 0 (1/2 for i1 and i1e) and the kink of i0e and i1e there: the rows
    # sample away from 0 (finite differences straddle the kink); tests/ops/test_special.py checks 0
    # the incomplete gamma functions in x, for a fixed a (PyTorch has no derivative in a)
    OpCase("igamma", lambda x: tidu.igamma(tidu.full_like(x, 0.7), x), ((5,), (2, 3)), low=0.1, high=4.0,
           ref=_incomplete_gamma(0.7)),
    OpCase("igamma", lambda x: tidu.special.gammainc(tidu.full_like(x, 30.0), x), ((4,),), low=20.0, high=45.0,
           ref=_incomplete_gamma(30.0), name="large-a"),
    OpCase("igammac", lambda x: tidu.full_like(x, 2.5).igammac(x), ((5,), (2, 3)), low=0.2, high=6.0,
           ref=_incomplete_gamma(2.5, upper=True)),
    # zeta(s, q) in q (PyTorch has no derivative in s), for s = 2.5 and 7: the sum's first 10^5
    # terms and its midpoint-integral tail
    OpCase("zeta", lambda q: tidu.special.zeta(2.5, q), ((5,), (2, 3)), low=0.3, high=4.0, ref=_zeta(2.5)),
    OpCase("zeta", lambda q: tidu.special.zeta(tidu.full_like(q, 7.0), q), ((4,),), low=-2.9, high=-2.1, ref=_zeta(7.0),
           name="negative-q"),
    # no derivatives (nondiff, as PyTorch's): value rows only
    OpCase("modified_bessel_k0", tidu.special.modified_bessel_k0, ((5,), (2, 3)), low=0.1, high=6.0, ref=_bessel_k(0)),
    OpCase("modified_bessel_k1", tidu.special.modified_bessel_k1, ((5,), (2, 3)), low=0.1, high=6.0, ref=_bessel_k(1)),
    OpCase("scaled_modified_bessel_k0", tidu.special.scaled_modified_bessel_k0, ((5,),), low=0.1, high=6.0,
           ref=_bessel_k(0, scaled=True)),
    OpCase("scaled_modified_bessel_k1", tidu.special.scaled_modified_bessel_k1, ((5,),), low=0.1, high=6.0,
           ref=_bessel_k(1, scaled=True)),
    OpCase("bessel_j0", tidu.special.bessel_j0, ((5,), (2, 3)), low=-8.0, high=8.0, ref=_bessel_j(0)),
    OpCase("bessel_j1", tidu.special.bessel_j1, ((5,), (2, 3)), low=-8.0, high=8.0, ref=_bessel_j(1)),
    OpCase("bessel_y0", tidu.special.bessel_y0, ((5,), (2, 3)), low=0.5, high=8.0, ref=_bessel_y(0)),
    OpCase("bessel_y1", tidu.special.bessel_y1, ((5,), (2, 3)), low=0.5, high=8.0, ref=_bessel_y(1)),
    OpCase("airy_ai", tidu.special.airy_ai, ((5,), (2, 3)), low=-3.0, high=2.0, ref=_airy_maclaurin),
    OpCase("spherical_bessel_j0", tidu.special.spherical_bessel_j0, ((5,), (2, 3)), low=-8.0, high=8.0,
           ref=lambda x: np.sinc(x / np.pi)),
    OpCase("i1", lambda x: tidu.special.i1(x * 30.0), ((4,),), low=0.5, high=2.0, ref=lambda x: _bessel_i(1)(x * 30.0),
           name="asymptotic", rtol=1e-6),
    # the orthogonal polynomials at degree 9 (nondiff, as PyTorch's): numpy's series, or the
    # Chebyshev kinds' trigonometric forms; the shifted ones in 2x - 1
    *[OpCase(name, lambda x, name=name: getattr(tidu.special, name)(x, 9), ((5,), (2, 3)),
             low=0.05 if name.startswith("shifted") else -0.9, high=0.95 if name.startswith("shifted") else 0.9,
             ref=lambda x, kind=name[-1], shift=name.startswith("shifted"): _chebyshev(kind, 9)(2 * x - 1 if shift else x))
      for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                   "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                   "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w")],
    *[OpCase(name, lambda x, name=name: getattr(tidu.special, name)(x, 9), ((5,), (2, 3)), low=-2.0, high=2.0,
             ref=lambda x, series=series: series(x, [0] * 9 + [1]))
      for name, series in (("hermite_polynomial_h", np.polynomial.hermite.hermval),
                           ("hermite_polynomial_he", np.polynomial.hermite_e.hermeval),
                           ("laguerre_polynomial_l", np.polynomial.laguerre.lagval),
                           ("legendre_polynomial_p", np.polynomial.legendre.legval))],
]


def _chebyshev(kind: str, n: int) -> object:
    """The Chebyshev polynomial of ``kind`` (t, u, v, w) of degree ``n`` on (-1, 1), in ``t = acos(x)``."""
    forms = {"t": lambda t: np.cos(n * t), "u": lambda t: np.sin((n + 1) * t) / np.sin(t),
             "v": lambda t: np.cos((n + 0.5) * t) / np.cos(t / 2), "w": lambda t: np.sin((n + 0.5) * t) / np.sin(t / 2)}
    return lambda x: forms[kind](np.arccos(x))

_ZEROS = np.array([[1.5, 0.0, 2.0, 0.0, -1.0], [0.0, 3.0, -2.0, 1.0, 0.5]])
_NONZERO = tidu.tensor((_ZEROS != 0).astype(np.float64))  # module-level: the CUDA test moves it

SCAN_ROWS: list[OpCase] = [
    OpCase("linear_recurrence", lambda x: tidu.cumprod(x, 0), ((5,), (2, 3)), ref=lambda x: np.cumprod(x, 0)),
    OpCase("linear_recurrence", lambda x: x.cumprod(-1), ((2, 4),), ref=lambda x: np.cumprod(x, -1), name="last"),
    # exact at zeros: the inputs' zeros are kept (x * mask keeps them zero under every perturbation
    # of the other entries), so finite differences see the polynomial there
    OpCase("linear_recurrence", lambda x: (x * _NONZERO).cumprod(1), ((2, 5),),
           ref=lambda x: np.cumprod(x * (_ZEROS != 0), 1), name="zeros"),
    OpCase("logcumsumexp", lambda x: tidu.logcumsumexp(x, 0), ((5,), (2, 3)),
           ref=lambda x: np.logaddexp.accumulate(x, 0)),
    OpCase("logcumsumexp", lambda x: x.logcumsumexp(1) * 30.0, ((2, 4),), low=-30.0, high=30.0, name="wide",
           ref=lambda x: np.logaddexp.accumulate(x, 1) * 30.0),
    OpCase("cumulative_arg_extreme", lambda x: tidu.cummax(x, 0).values, ((6,), (2, 3)), distinct=True,
           ref=lambda x: np.maximum.accumulate(x, 0)),
    OpCase("cumulative_arg_extreme", lambda x: x.cummin(1).values, ((2, 5),), distinct=True, name="min",
           ref=lambda x: np.minimum.accumulate(x, 1)),
]
ROWS += SCAN_ROWS
