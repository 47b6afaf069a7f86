"""Special functions as elementwise primitives: the scalar functions of
``tidu/backends/special.py`` give the CPU and CUDA kernels (``elementwise.unary``/``binary``).

Each derivative is another special function, so every order is a primitive:
d lgamma = digamma, d digamma = polygamma(1), d polygamma(n) = polygamma(n + 1).
"""

from __future__ import annotations

import math

from ..backends import special as scalar
from ._util import ops
from .elementwise import binary, unary

SQRT_PI_2 = math.sqrt(math.pi) / 2.0
SQRT_2PI = math.sqrt(2.0 * math.pi)

#                                  d(out) in terms of d(input)
erfc = unary("erfc", scalar.erfc, lambda dx, x, out: -(dx * ((1.0 / SQRT_PI_2) * ops.exp(-(x * x)))))
erfinv = unary("erfinv", scalar.erfinv, lambda dx, x, out: dx * (SQRT_PI_2 * ops.exp(out * out)))
ndtri = unary("ndtri", scalar.ndtri, lambda dp, p, out: dp * (SQRT_2PI * ops.exp(out * out * 0.5)))
lgamma = unary("lgamma", scalar.lgamma, lambda dx, x, out: dx * ops.digamma(x))
digamma = unary("digamma", scalar.digamma, lambda dx, x, out: dx * ops.polygamma(1, x))
# polygamma(n, x): ``n`` is a same-shape operand holding an integer (not differentiable)
polygamma = binary("polygamma", scalar.polygamma, None, lambda dx, n, x, out: dx * polygamma.bind(n + 1.0, x))
