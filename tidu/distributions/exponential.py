"""The exponential distribution."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_host, stream


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``).

    >>> import tidu
    >>> from tidu.distributions import Exponential
    >>> Exponential(2.0).log_prob(tidu.tensor(1.0))
    tensor(-1.3069)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return self._expanded(batch_shape, ("rate",))

    @property
    def mean(self) -> Any:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Any:
        return tidu.zeros_like(self.rate)

    @property
    def stddev(self) -> Any:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        return self.rate ** -2

    def rsample(self, sample_shape: Any = ()) -> Any:
        draws = from_host(stream().standard_exponential(tuple(self._extended_shape(sample_shape))), self.rate)
        return draws / self.rate

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value: Any) -> Any:
        return -(-value).log1p() / self.rate

    def entropy(self) -> Any:
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: Any) -> Any:
        return -(-x).log()
