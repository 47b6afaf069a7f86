"""The continuous uniform distribution."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Uniform(Distribution):
    """The uniform distribution on the half-open interval ``[low, high)``.

    >>> import tidu
    >>> from tidu.distributions import Uniform
    >>> Uniform(0.0, 4.0).cdf(tidu.tensor(1.0))
    tensor(0.2500)
    """

    arg_constraints = {"low": constraints.dependent, "high": constraints.dependent}
    has_rsample = True

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.shape, validate_args=validate_args)

    def _parameter_constraints(self) -> dict[str, constraints.Constraint]:
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return self._expanded(batch_shape, ("low", "high"))

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Any:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Any:
        return tidu.full_like(self.low, float("nan"))

    @property
    def stddev(self) -> Any:
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self) -> Any:
        return (self.high - self.low) ** 2 / 12

    def rsample(self, sample_shape: Any = ()) -> Any:
        u = tidu.rand(tuple(self._extended_shape(sample_shape)), dtype=self.low.dtype, device=self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        inside = (self.low <= value) & (self.high > value)
        return inside.to(self.low.dtype).log() - (self.high - self.low).log()

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value: Any) -> Any:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Any:
        return (self.high - self.low).log()
