"""The normal distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from .distribution import LocScale
from .exp_family import ExponentialFamily

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(LocScale, ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    >>> import tidu
    >>> from tidu.distributions import Normal
    >>> Normal(0.0, 1.0).log_prob(tidu.tensor(0.0))
    tensor(-0.9189)
    """

    _mean_carrier_measure = 0

    @property
    def stddev(self) -> Any:
        return self.scale

    @property
    def variance(self) -> Any:
        return self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Any:
        eps = tidu.randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        return 0.5 * (1 + tidu.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))  # PyTorch's order

    def icdf(self, value: Any) -> Any:
        return self.loc + self.scale * tidu.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Any:
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    @property
    def _natural_params(self) -> tuple:
        precision = self.scale.pow(-2)
        return self.loc * precision, -0.5 * precision

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
