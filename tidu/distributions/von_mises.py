"""The von Mises distribution on the circle."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np

import tidu

from . import constraints
from .distribution import CenteredAtLoc, Distribution
from .utils import broadcast_all, from_host, host, stream

# Polynomial approximations of the modified Bessel functions I0 and I1 (Abramowitz and Stegun
# 9.8.1-9.8.4), the coefficients PyTorch uses: in (x / 3.75) ** 2 below 3.75, in 3.75 / x above.
_COEF_SMALL = ([1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2],
               [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3])
_COEF_LARGE = ([0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
                -0.1647633e-1, 0.392377e-2],
               [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
                0.1787654e-1, -0.420059e-2])


def _eval_poly(y: Any, coef: list[float]) -> Any:
    """``sum_i coef[i] * y ** i`` by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


def log_modified_bessel(x: Any, order: int = 0) -> Any:
    """``log I_order(x)`` for ``x > 0`` and ``order`` 0 or 1 (differentiable)."""
    if order not in (0, 1):
        raise ValueError(f"order must be 0 or 1, got {order}")
    small = _eval_poly((x / 3.75) ** 2, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return tidu.where(x < 3.75, small.log(), large)


class VonMises(CenteredAtLoc, Distribution):
    """The von Mises (circular normal) distribution with mean direction ``loc`` and
    ``concentration``; values are angles in [-pi, pi). Draws come from the host's sampler (Best
    and Fisher's rejection method, as PyTorch's) and are not reparameterized.

    >>> import tidu
    >>> from tidu.distributions import VonMises
    >>> d = VonMises(0.0, 2.0)
    >>> d.log_prob(tidu.tensor(0.5)), d.variance
    (tensor(-0.9067), tensor(0.3022))
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> VonMises:
        return self._expanded(batch_shape, ("loc", "concentration"))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - log_modified_bessel(self.concentration, 0))

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        loc, kappa = (np.broadcast_to(host(v), shape) for v in (self.loc, self.concentration))
        draws = stream().vonmises(0.0, kappa)
        return from_host((draws + math.pi + loc) % (2 * math.pi) - math.pi, self.loc)

    @cached_property
    def variance(self) -> Any:
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        return 1 - (log_modified_bessel(self.concentration, 1) - log_modified_bessel(self.concentration, 0)).exp()
