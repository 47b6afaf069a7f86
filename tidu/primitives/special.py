"""Special functions as elementwise primitives: the scalar functions of
``tidu/backends/special.py`` give the CPU and CUDA kernels (``elementwise.unary``/``binary``).

Each derivative is another special function, so every order is a primitive:
d lgamma = digamma, d digamma = polygamma(1), d polygamma(n) = polygamma(n + 1); the modified
Bessel functions i0, i0e, i1, i1e differentiate into each other.
"""

from __future__ import annotations

import math

from ..backends import special as scalar
from ._util import ops
from .elementwise import binary, unary

SQRT_PI_2 = math.sqrt(math.pi) / 2.0
SQRT_2PI = math.sqrt(2.0 * math.pi)
SQRT_2_PI = math.sqrt(2.0 / math.pi)
SQRT_HALF = math.sqrt(0.5)

#                                  d(out) in terms of d(input)
erfc = unary("erfc", scalar.erfc, lambda dx, x, out: -(dx * ((1.0 / SQRT_PI_2) * ops.exp(-(x * x)))))
erfcx = unary("erfcx", scalar.erfcx, lambda dx, x, out: dx * (2.0 * x * out - 1.0 / SQRT_PI_2))
# d log ndtr(x) = phi(x) / ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt 2): no cancellation in either tail
log_ndtr = unary("log_ndtr", scalar.log_ndtr, lambda dx, x, out: dx * (SQRT_2_PI / erfcx.bind(x * -SQRT_HALF)))
# from the input, as PyTorch's: it saves the input, not the output, so writing the output in place
# leaves the backward valid
erfinv = unary("erfinv", scalar.erfinv, lambda dx, x, out: dx * (SQRT_PI_2 * ops.exp(ops.square(erfinv.bind(x)))))
ndtri = unary("ndtri", scalar.ndtri, lambda dp, p, out: dp * (SQRT_2PI * ops.exp(out * out * 0.5)))
lgamma = unary("lgamma", scalar.lgamma, lambda dx, x, out: dx * ops.digamma(x))
digamma = unary("digamma", scalar.digamma, lambda dx, x, out: dx * ops.polygamma(1, x))
# polygamma(n, x): ``n`` is a same-shape operand holding an integer (not differentiable)
polygamma = binary("polygamma", scalar.polygamma, None, lambda dx, n, x, out: dx * polygamma.bind(n + 1.0, x))


# The modified Bessel functions of the first kind and their exponentially scaled forms
# (i0e = e^-|x| i0); at x = 0 the derivatives of i1 and i1e are their limit 1/2 (as PyTorch's).
def _nonzero(x):  # noqa: ANN001, ANN202
    """``x`` with its zeros replaced by 1: the divisor of ``1/x`` in a branch that ``where`` drops
    at 0 (a NaN there would still reach the gradient through the dropped branch)."""
    return ops.where(x == 0, 1.0, x)


i0 = unary("i0", scalar.i0, lambda dx, x, out: dx * i1.bind(x))
i0e = unary("i0e", scalar.i0e, lambda dx, x, out: dx * (i1e.bind(x) - ops.sign(x) * out))
i1 = unary("i1", scalar.i1, lambda dx, x, out: dx * ops.where(x == 0, 0.5, i0.bind(x) - out / _nonzero(x)))
i1e = unary("i1e", scalar.i1e,
            lambda dx, x, out: dx * ops.where(x == 0, 0.5, i0e.bind(x) - out * (ops.sign(x) + 1.0 / _nonzero(x))))


# The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x). As in PyTorch, only
# x is differentiable, d P = x^(a-1) e^-x / Gamma(a) dx (PyTorch's formula, so its NaN at x = 0 too);
# a derivative for a raises PyTorch's error in a backward.
def _no_derivative_for_a(name: str):  # noqa: ANN202
    def rule(da, a, x, out):  # noqa: ANN001, ANN202, ARG001
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return rule


def _gamma_density(a, x):  # noqa: ANN001, ANN202
    return ops.exp((a - 1.0) * ops.log(x) - x - ops.lgamma(a))


igamma = binary("igamma", scalar.igamma, _no_derivative_for_a("igamma"),
                lambda dx, a, x, out: dx * _gamma_density(a, x))
igammac = binary("igammac", scalar.igammac, _no_derivative_for_a("igammac"),
                 lambda dx, a, x, out: -(dx * _gamma_density(a, x)))


# The Hurwitz zeta function zeta(s, q): as in PyTorch, differentiable in q only,
# d zeta(s, q) = -s zeta(s + 1, q) dq; a derivative in s raises PyTorch's error in a backward.
def _zeta_no_derivative_in_s(ds, s, q, out):  # noqa: ANN001, ANN202, ARG001
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


zeta = binary("zeta", scalar.zeta, _zeta_no_derivative_in_s, lambda dq, s, q, out: dq * (-s * zeta.bind(s + 1.0, q)))


# Bessel functions PyTorch does not differentiate (their results never require grad): nondiff.
modified_bessel_k0 = unary("modified_bessel_k0", scalar.k0, nondiff=True)
modified_bessel_k1 = unary("modified_bessel_k1", scalar.k1, nondiff=True)
scaled_modified_bessel_k0 = unary("scaled_modified_bessel_k0", scalar.k0e, nondiff=True)
scaled_modified_bessel_k1 = unary("scaled_modified_bessel_k1", scalar.k1e, nondiff=True)
spherical_bessel_j0 = unary("spherical_bessel_j0", scalar.spherical_j0, nondiff=True)
bessel_j0 = unary("bessel_j0", scalar.bessel_j0, nondiff=True)
bessel_j1 = unary("bessel_j1", scalar.bessel_j1, nondiff=True)
bessel_y0 = unary("bessel_y0", scalar.bessel_y0, nondiff=True)
bessel_y1 = unary("bessel_y1", scalar.bessel_y1, nondiff=True)
airy_ai = unary("airy_ai", scalar.airy_ai, nondiff=True)
