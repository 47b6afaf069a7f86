"""The Poisson distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_host, host, stream


class Poisson(ExponentialFamily):
    """Counts with mean ``rate``.

    >>> import tidu
    >>> from tidu.distributions import Poisson
    >>> Poisson(2.0).log_prob(tidu.tensor(3.0))
    tensor(-1.7123)
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expanded(batch_shape, ("rate",))

    @property
    def mean(self) -> Any:
        return self.rate

    @property
    def mode(self) -> Any:
        return self.rate.floor()

    @property
    def variance(self) -> Any:
        return self.rate

    def sample(self, sample_shape: Any = ()) -> Any:
        rate = np.broadcast_to(host(self.rate), tuple(self._extended_shape(sample_shape)))
        return from_host(stream().poisson(rate), self.rate)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        rate, value = broadcast_all(self.rate, value)
        return tidu.xlogy(value, rate) - rate - tidu.lgamma(value + 1)

    @property
    def _natural_params(self) -> tuple:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Any) -> Any:
        return x.exp()
