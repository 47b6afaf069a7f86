"""The Weibull distribution: ``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .exponential import Exponential
from .gumbel import EULER
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all


class Weibull(TransformedDistribution):
    """The two-parameter Weibull distribution with ``scale`` (lambda) and ``concentration`` (k).

    >>> import tidu
    >>> from tidu.distributions import Weibull
    >>> d = Weibull(2.0, 1.5)
    >>> d.log_prob(tidu.tensor(1.0)), d.cdf(tidu.tensor(1.0))
    (tensor(-0.9878), tensor(0.2978))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    _batch_params = ("scale", "concentration", "concentration_reciprocal")

    def __init__(self, scale: Any, concentration: Any, validate_args: bool | None = None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(tidu.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return self.scale * tidu.lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self) -> Any:
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self) -> Any:
        r = self.concentration_reciprocal
        return self.scale ** 2 * (tidu.lgamma(1 + 2 * r).exp() - (2 * tidu.lgamma(1 + r)).exp())

    def entropy(self) -> Any:
        r = self.concentration_reciprocal
        return EULER * (1 - r) + (self.scale * r).log() + 1
