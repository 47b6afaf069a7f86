"""The generalized Pareto distribution, the limit law of exceedances over a high threshold."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution with location ``loc``, scale ``scale`` and shape
    ``concentration`` (``xi``): survival ``(1 + xi z) ** (-1 / xi)`` of ``z = (x - loc) / scale``,
    ``exp(-z)`` at ``xi = 0`` (the exponential). Its support is ``[loc, inf)`` for ``xi >= 0`` and
    ``[loc, loc - scale / xi]`` for ``xi < 0``; ``xi = -1`` is the uniform distribution.

    A ``concentration`` within ``isclose`` of 0 takes the exponential's formulas (and no gradient
    in the concentration), as PyTorch's. ``rsample`` is ``icdf`` of uniform draws.

    >>> import tidu
    >>> from tidu.distributions import GeneralizedPareto
    >>> d = GeneralizedPareto(0.0, 2.0, tidu.tensor([0.5, 0.0, -0.5]))
    >>> d.log_prob(tidu.tensor(1.0)), d.mean
    (tensor([-1.3626, -1.1931, -0.9808]), tensor([4.0000, 2.0000, 1.3333]))
    >>> d.support.upper_bound
    tensor([inf, inf, 4.])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expanded(batch_shape, ("loc", "scale", "concentration"))

    def _at_zero(self) -> tuple[Any, Any]:
        """Where the concentration counts as 0, and the concentration with 1 there (so that the
        formulas for ``xi != 0`` stay finite where they are not used)."""
        xi = self.concentration
        at_zero = tidu.isclose(xi, tidu.zeros_like(xi))
        return at_zero, tidu.where(at_zero, tidu.ones_like(xi), xi)

    def _z(self, value: Any) -> Any:
        return (value - self.loc) / self.scale

    def rsample(self, sample_shape: Any = ()) -> Any:
        u = tidu.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        z = self._z(value)
        at_zero, xi = self._at_zero()
        power = 1 / xi + tidu.ones_like(z)
        # at xi = -1 the density is flat: 0 * log(0) at the upper end would be NaN
        nonzero = tidu.where(power == 0, power, power * (xi * z).log1p())
        return -self.scale.log() - tidu.where(at_zero, z, nonzero)

    def log_survival_function(self, value: Any) -> Any:
        """``log P(X > value)``."""
        self._validate(value)
        z = self._z(value)
        at_zero, xi = self._at_zero()
        return tidu.where(at_zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value: Any) -> Any:
        """``log P(X <= value)``."""
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Any) -> Any:
        return self.log_cdf(value).exp()

    def icdf(self, value: Any) -> Any:
        at_zero, xi = self._at_zero()
        log_survival = (-value).log1p()
        nonzero = self.loc + self.scale / xi * (-xi * log_survival).expm1()
        return tidu.where(at_zero, self.loc - self.scale * log_survival, nonzero)

    @property
    def mean(self) -> Any:
        xi = self.concentration
        finite = xi < 1
        safe = tidu.where(finite, xi, 0.5)
        return tidu.where(finite, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        xi = self.concentration
        finite = xi < 0.5
        safe = tidu.where(finite, xi, 0.25)
        return tidu.where(finite, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self) -> Any:
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        xi = self.concentration
        upper = tidu.where(xi < 0, self.loc - self.scale / xi, math.inf)
        return constraints.interval(self.loc, upper)
