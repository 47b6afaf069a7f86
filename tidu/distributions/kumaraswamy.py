"""The Kumaraswamy distribution: ``(1 - U ** (1 / b)) ** (1 / a)`` for uniform ``U``."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .gumbel import EULER
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all


def _moment(a: Any, b: Any, n: int) -> Any:
    """``E[X ** n] = b * B(1 + n / a, b)``."""
    arg = 1 + n / a
    return b * (tidu.lgamma(arg) + tidu.lgamma(b) - tidu.lgamma(arg + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on [0, 1] with ``concentration1`` (a) and ``concentration0`` (b):
    density ``a b x^(a-1) (1 - x^a)^(b-1)``.

    >>> import tidu
    >>> from tidu.distributions import Kumaraswamy
    >>> d = Kumaraswamy(2.0, 3.0)
    >>> d.log_prob(tidu.tensor(0.5)), d.mean
    (tensor(0.5232), tensor(0.4571))
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True
    _batch_params = ("concentration1", "concentration0")

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(tidu.full_like(self.concentration0, 0.0), tidu.full_like(self.concentration0, 1.0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    @property
    def mean(self) -> Any:
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Any:
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return tidu.where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self) -> Any:
        return _moment(self.concentration1, self.concentration0, 2) - self.mean ** 2

    def entropy(self) -> Any:
        a, b = self.concentration1, self.concentration0
        t1, t0 = 1 - a.reciprocal(), 1 - b.reciprocal()
        return t0 + t1 * (tidu.digamma(b + 1) + EULER) - a.log() - b.log()
