"""The Laplace distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from .distribution import LocScale


class Laplace(LocScale):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    >>> import tidu
    >>> from tidu.distributions import Laplace
    >>> Laplace(0.0, 1.0).cdf(tidu.tensor(0.0))
    tensor(0.5000)
    """

    @property
    def stddev(self) -> Any:
        return math.sqrt(2) * self.scale

    @property
    def variance(self) -> Any:
        return 2 * self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Any:
        eps = float(tidu.finfo(self.loc.dtype).eps)
        u = tidu.rand(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype, device=self.loc.device)
        u = u * (2 - eps) - 1 + eps  # in (-1, 1): log1p(-|u|) stays finite
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        centred = value - self.loc
        return 0.5 - 0.5 * centred.sign() * (-centred.abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Any:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Any:
        return 1 + (2 * self.scale).log()
