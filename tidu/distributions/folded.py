"""The half-normal and half-Cauchy distributions: ``|X|`` for ``X`` centred at 0."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` of a symmetric ``base`` family centred at 0 with scale ``scale``: the
    density and the CDF doubled on the positive half (PyTorch's formulas)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type = Normal

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mode(self) -> Any:
        return tidu.zeros_like(self.scale)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return tidu.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Any:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Any:
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    >>> import tidu
    >>> from tidu.distributions import HalfNormal
    >>> d = HalfNormal(tidu.tensor(2.0))
    >>> d.log_prob(tidu.tensor(1.0)), d.mean
    (tensor(-1.0439), tensor(1.5958))
    """

    _base = Normal

    @property
    def mean(self) -> Any:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Any:
        return self.scale ** 2 * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """``|X|`` for ``X ~ Cauchy(0, scale)``; its mean is infinite.

    >>> import tidu
    >>> from tidu.distributions import HalfCauchy
    >>> HalfCauchy(1.0).cdf(tidu.tensor(1.0))
    tensor(0.5000)
    """

    _base = Cauchy

    @property
    def mean(self) -> Any:
        return tidu.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self) -> Any:
        return self.base_dist.variance
