"""The Fisher-Snedecor (F) distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .gamma import Gamma, keep_above
from .utils import broadcast_all, tiny


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom: the ratio of two scaled
    chi-squared draws (``rsample`` is reparameterized through them).

    >>> import tidu
    >>> from tidu.distributions import FisherSnedecor
    >>> d = FisherSnedecor(tidu.tensor(4.0), tidu.tensor(6.0))
    >>> d.log_prob(tidu.tensor(1.0)), d.mean
    (tensor(-0.8802), tensor(1.5000))
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> FisherSnedecor:
        new = self._expanded(batch_shape, ("df1", "df2"))
        new._gamma1, new._gamma2 = self._gamma1.expand(batch_shape), self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self) -> Any:
        df2 = tidu.where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self) -> Any:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return tidu.where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self) -> Any:
        df1, df2 = self.df1, tidu.where(self.df2 <= 4, math.nan, self.df2)
        return 2 * df2 ** 2 * (df1 + df2 - 2) / (df1 * (df2 - 2) ** 2 * (df2 - 4))

    def rsample(self, sample_shape: Any = ()) -> Any:
        x1 = self._gamma1.rsample(sample_shape)
        x2 = keep_above(self._gamma2.rsample(sample_shape), tiny(self.df2))
        return keep_above(x1 / x2, tiny(self.df2))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = tidu.lgamma(ct1 + ct2) - tidu.lgamma(ct1) - tidu.lgamma(ct2)
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
