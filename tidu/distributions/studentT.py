"""Student's t distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import broadcast_all


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    ``rsample`` is ``loc + scale * X / sqrt(Z / df)`` with ``X`` standard normal and ``Z ~ Chi2(df)``
    (reparameterized in ``df`` through the gamma draws, as PyTorch's).

    >>> import tidu
    >>> from tidu.distributions import StudentT
    >>> d = StudentT(tidu.tensor(3.0), 1.0, 2.0)
    >>> d.log_prob(tidu.tensor(0.0)), d.variance
    (tensor(-1.8541), tensor(12.))
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> StudentT:
        new = self._expanded(batch_shape, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Any:
        return tidu.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def variance(self) -> Any:
        df = self.df
        finite = self.scale ** 2 * df / (df - 2)
        return tidu.where(df > 2, finite, tidu.where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        x = tidu.randn(tuple(shape), dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * (z / self.df).rsqrt()

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                    + tidu.lgamma(0.5 * df) - tidu.lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * (y ** 2 / df).log1p() - log_norm

    def entropy(self) -> Any:
        df = self.df
        lbeta = tidu.lgamma(0.5 * df) + math.lgamma(0.5) - tidu.lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (tidu.digamma(0.5 * (df + 1)) - tidu.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
