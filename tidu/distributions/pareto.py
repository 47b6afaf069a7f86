"""The Pareto (type I) distribution: ``scale * exp(E)`` for ``E ~ Exponential(alpha)``."""

from __future__ import annotations

from typing import Any

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all


class Pareto(TransformedDistribution):
    """The Pareto distribution with minimum ``scale`` and tail index ``alpha``.

    >>> import tidu
    >>> from tidu.distributions import Pareto
    >>> d = Pareto(1.0, 3.0)
    >>> d.log_prob(tidu.tensor(2.0)), d.mean, d.support
    (tensor(-1.6740), tensor(1.5000), GreaterThanEq(lower_bound=1.0))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}
    _batch_params = ("scale", "alpha")

    def __init__(self, scale: Any, alpha: Any, validate_args: bool | None = None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)], validate_args=validate_args)

    @property
    def mean(self) -> Any:
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        a = self.alpha.clamp(min=2)
        return self.scale ** 2 * a / ((a - 1) ** 2 * (a - 2))

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.greater_than_eq(self.scale)

    def entropy(self) -> Any:
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
