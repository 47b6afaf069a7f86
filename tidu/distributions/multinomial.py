"""The multinomial distribution."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .binomial import Binomial
from .categorical import Categorical, CategoricalParams
from .distribution import Distribution
from .utils import broadcast_all, one_hot


class Multinomial(CategoricalParams, Distribution):
    """Counts of ``total_count`` draws over ``K`` categories weighted by ``probs`` (or
    ``softmax(logits)``); events are vectors of length ``K``.

    >>> import tidu
    >>> from tidu.distributions import Multinomial
    >>> d = Multinomial(4, probs=tidu.tensor([0.25, 0.75]))
    >>> d.log_prob(tidu.tensor([1.0, 3.0])), d.mean
    (tensor(-0.8630), tensor([1., 3.]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Multinomial:
        new = type(self).__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tidu.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.multinomial(self.total_count)


    @property
    def mean(self) -> Any:
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        draws = self._categorical.sample((self.total_count, *tuple(sample_shape)))
        return one_hot(draws, self._event_shape[0], self.probs.detach()).sum(0)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        logits, value = broadcast_all(self.logits, value)
        logits = tidu.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorials = tidu.lgamma(value.sum(-1) + 1) - tidu.lgamma(value + 1).sum(-1)
        return log_factorials + (logits * value).sum(-1)

    def entropy(self) -> Any:
        n = self.total_count
        binomial = Binomial(n, probs=self.probs, validate_args=False)
        support = binomial.enumerate_support(expand=False)[1:]
        weights = tidu.lgamma(support + 1)
        expected_log_factorials = (binomial.log_prob(support).exp() * weights).sum([0, -1])
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected_log_factorials
