"""The negative binomial distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu
from tidu.nn import functional as F

from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma
from .parameterization import ProbsOrLogits
from .utils import broadcast_all, from_host, host, stream


class NegativeBinomial(ProbsOrLogits, Distribution):
    """The number of successes (of probability ``probs``) before ``total_count`` failures.

    >>> import tidu
    >>> from tidu.distributions import NegativeBinomial
    >>> d = NegativeBinomial(3.0, probs=tidu.tensor(0.4))
    >>> d.log_prob(tidu.tensor(2.0)), d.mean
    (tensor(-1.5733), tensor(2.))
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        name = "probs" if probs is not None else "logits"
        self.total_count, self.__dict__[name] = broadcast_all(total_count, param)
        self.total_count = self.total_count.to(param.dtype)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        return self._expanded(batch_shape, ("total_count", "probs", "logits"))

    @property
    def param_shape(self) -> tidu.Size:
        return self._param.shape

    @property
    def mean(self) -> Any:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Any:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Any:
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape: Any = ()) -> Any:
        """Poisson draws whose rates are Gamma(total_count, exp(-logits)) draws."""
        with tidu.no_grad():
            shape = tuple(self._extended_shape(sample_shape))
            rate = standard_gamma(self.total_count, shape) * self.logits.exp()
            rate = np.where(np.broadcast_to(host(self.total_count), shape) == 0, 0.0, host(rate))
            return from_host(stream().poisson(rate), self._param)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = -tidu.lgamma(n + value) + tidu.lgamma(1.0 + value) + tidu.lgamma(n)
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
