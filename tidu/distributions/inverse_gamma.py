"""The inverse gamma distribution: ``1 / X`` for ``X ~ Gamma(concentration, rate)``."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform


class InverseGamma(TransformedDistribution):
    """``1 / Gamma(concentration, rate)``, reparameterized through the gamma draw.

    >>> import tidu
    >>> from tidu.distributions import InverseGamma
    >>> d = InverseGamma(3.0, 2.0)
    >>> d.log_prob(tidu.tensor(1.0)), d.mean
    (tensor(-0.6137), tensor(1.))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _batch_params = ()

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> InverseGamma:
        shape = tuple(batch_shape)
        return InverseGamma(self.concentration.expand(*shape), self.rate.expand(*shape),
                            validate_args=self._validate_args)

    @property
    def concentration(self) -> Any:
        return self.base_dist.concentration

    @property
    def rate(self) -> Any:
        return self.base_dist.rate

    @property
    def mean(self) -> Any:
        result = self.rate / (self.concentration - 1)
        return tidu.where(self.concentration > 1, result, math.inf)

    @property
    def mode(self) -> Any:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Any:
        result = self.rate ** 2 / ((self.concentration - 1) ** 2 * (self.concentration - 2))
        return tidu.where(self.concentration > 2, result, math.inf)

    def entropy(self) -> Any:
        c = self.concentration
        return c + self.rate.log() + tidu.lgamma(c) - (1 + c) * tidu.digamma(c)
