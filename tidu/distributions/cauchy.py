"""The Cauchy distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from .distribution import LocScale
from .utils import from_host, stream


class Cauchy(LocScale):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half width ``scale``; it has no
    mean (NaN) and an infinite variance.

    >>> import tidu
    >>> from tidu.distributions import Cauchy
    >>> d = Cauchy(0.0, 2.0)
    >>> d.log_prob(tidu.tensor(2.0)), d.cdf(tidu.tensor(2.0))
    (tensor(-2.5310), tensor(0.7500))
    """

    @property
    def mean(self) -> Any:
        return tidu.full(tuple(self._extended_shape()), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def variance(self) -> Any:
        return tidu.full(tuple(self._extended_shape()), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape: Any = ()) -> Any:
        eps = from_host(stream().standard_cauchy(tuple(self._extended_shape(sample_shape))), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        return tidu.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Any:
        return tidu.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Any:
        return math.log(4 * math.pi) + self.scale.log()
