"""The gamma distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, from_host, host, stream, tiny


def standard_gamma(concentration: Any, shape: tuple[int, ...]) -> Any:
    """Draws of Gamma(concentration, 1) broadcast to ``shape``, kept above the dtype's smallest
    normal number; not differentiable."""
    draws = stream().standard_gamma(np.broadcast_to(host(concentration), shape))
    return from_host(np.maximum(draws, tiny(concentration)), concentration)


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and rate ``rate``.

    Sampling is not reparameterized (``has_rsample`` is False): tidu has no implicit gradient of
    the gamma sampler in the concentration.

    >>> import tidu
    >>> from tidu.distributions import Gamma
    >>> Gamma(2.0, 3.0).log_prob(tidu.tensor(0.5))
    tensor(0.0041)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expanded(batch_shape, ("concentration", "rate"))

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate ** 2

    def sample(self, sample_shape: Any = ()) -> Any:
        with tidu.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            return (standard_gamma(self.concentration, shape) / self.rate).clamp(min=tiny(self.rate))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        c, rate = self.concentration, self.rate
        return tidu.xlogy(c, rate) + tidu.xlogy(c - 1, value) - rate * value - tidu.lgamma(c)

    def entropy(self) -> Any:
        c = self.concentration
        return c - self.rate.log() + tidu.lgamma(c) + (1 - c) * tidu.digamma(c)
