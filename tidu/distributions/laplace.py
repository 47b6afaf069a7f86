"""The Laplace distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Laplace(Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    >>> import tidu
    >>> from tidu.distributions import Laplace
    >>> Laplace(0.0, 1.0).cdf(tidu.tensor(0.0))
    tensor(0.5000)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return self._expanded(batch_shape, ("loc", "scale"))

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return math.sqrt(2) * self.scale

    @property
    def variance(self) -> Any:
        return 2 * self.scale ** 2

    def rsample(self, sample_shape: Any = ()) -> Any:
        eps = float(tidu.finfo(self.loc.dtype).eps)
        u = tidu.rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
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
