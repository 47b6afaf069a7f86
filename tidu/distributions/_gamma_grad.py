"""The implicit reparameterization gradient of gamma samples (Figurnov, Mohamed and Mnih 2018,
"Implicit Reparameterization Gradients").

A sample ``x`` of Gamma(alpha, 1) is ``x = F^-1(u; alpha)`` for a uniform ``u``, ``F`` the CDF
``P(alpha, x)`` (the regularized lower incomplete gamma function). Holding ``u`` fixed,

    dx / d alpha = -(dP(alpha, x) / d alpha) / p(x; alpha),     p(x; alpha) = x^(alpha-1) e^-x / Gamma(alpha),

which needs no inverse CDF, only the CDF's derivative in ``alpha``. That derivative is computed
as in the paper (and TensorFlow's ``random_gamma`` gradient, after Moore 1982, AS 187): forward-mode
differentiation, in ``alpha``, of the two classic evaluations of ``P`` (Numerical Recipes 6.2):

- ``x < alpha + 1``: the series ``P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n))``;
- otherwise: ``Q = 1 - P = x^a e^-x / Gamma(a) * K``, ``K`` the continued fraction evaluated by
  the modified Lentz method, with each step's derivative carried along.

Divided by ``p``, the prefactors cancel to ``x / alpha`` (series) and ``x`` (fraction), so no
exponential over- or underflows whatever ``alpha``. Everything is float64; the iterations stop
at float64's resolution. PyTorch's ``_standard_gamma_grad`` approximates the same quantity
(a Taylor series, a saddle-point expansion and a fitted rational function); the two agree to its
approximation's accuracy (tests/distributions/test_gamma_grad.py).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, vectorize

from ..backends.special import digamma

_EPS = 1e-16
_TINY = 1e-300
_MAX_STEPS = 100000


@njit(cache=True)
def _series(a: float, x: float) -> float:
    """dx/da from the series: ``-(S dL + dS) x / a`` with ``L`` the log prefactor."""
    term, dterm = 1.0, 0.0  # t_n and dt_n/da: t_n = t_{n-1} x / (a + n)
    total, dtotal = 1.0, 0.0
    n = 0
    while n < _MAX_STEPS:
        n += 1
        ratio = x / (a + n)
        dterm = dterm * ratio - term * ratio / (a + n)
        term *= ratio
        total += term
        dtotal += dterm
        if term < _EPS * total and abs(dterm) <= _EPS * abs(dtotal):
            break
    dlog = math.log(x) - digamma(a + 1.0)
    return -(total * dlog + dtotal) * x / a


@njit(cache=True)
def _fraction(a: float, x: float) -> float:
    """dx/da from the continued fraction: ``(K dM + dK) x`` with ``M`` the log prefactor."""
    b = x + 1.0 - a
    db = -1.0
    c, dc = 1.0 / _TINY, 0.0
    d = 1.0 / b
    dd = -db * d * d
    h, dh = d, dd
    i = 0
    while i < _MAX_STEPS:
        i += 1
        an = -i * (i - a)
        dan = float(i)
        b += 2.0
        # d = 1 / (an d + b), c = b + an / c, h *= d c; each with its derivative in a
        pre = an * d + b
        dpre = dan * d + an * dd + db
        if abs(pre) < _TINY:
            pre = _TINY
        d = 1.0 / pre
        dd = -dpre * d * d
        ratio = an / c
        dc = db + (dan - ratio * dc) / c  # d(an / c) without squaring c (it starts near 1e300)
        c = b + ratio
        if abs(c) < _TINY:
            c = _TINY
        step = d * c
        dstep = dd * c + d * dc
        dh = dh * step + h * dstep
        h *= step
        if abs(step - 1.0) < _EPS and abs(h * dstep) <= _EPS * abs(dh):
            break
    dlog = math.log(x) - digamma(a)
    return (h * dlog + dh) * x


def _standard_gamma_grad(alpha: float, x: float) -> float:
    """``dx / d alpha`` for a Gamma(alpha, 1) sample ``x`` (0 where it is undefined: ``x <= 0``)."""
    if not (alpha > 0.0 and x > 0.0) or math.isinf(x) or math.isinf(alpha):
        return 0.0
    if x < alpha + 1.0:
        return _series(alpha, x)
    return _fraction(alpha, x)


_ufunc: list = []  # the compiled ufunc, built at the first call: ``import tidu`` compiles nothing


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``_standard_gamma_grad`` elementwise over broadcast float64 arrays."""
    if not _ufunc:
        _ufunc.append(vectorize(["float64(float64, float64)"], cache=True)(_standard_gamma_grad))
    return _ufunc[0](alpha, x)


def standard_gamma_grad_host(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    return standard_gamma_grad(np.asarray(alpha, np.float64), np.asarray(x, np.float64))
