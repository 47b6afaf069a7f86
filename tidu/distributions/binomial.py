"""The binomial distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu
from tidu.nn import functional as F

from . import constraints
from .distribution import Distribution
from .parameterization import ProbsOrLogits
from .utils import broadcast_all, from_host, host, stream


class Binomial(ProbsOrLogits, Distribution):
    """Successes in ``total_count`` trials of probability ``probs`` (or ``sigmoid(logits)``).

    >>> import tidu
    >>> from tidu.distributions import Binomial
    >>> Binomial(4, probs=tidu.tensor(0.5)).log_prob(tidu.tensor(2.0))
    tensor(-0.9808)
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        name = "probs" if probs is not None else "logits"
        self.total_count, self.__dict__[name] = broadcast_all(total_count, param)
        self.total_count = self.total_count.to(param.dtype)
        super().__init__(self.total_count.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        return self._expanded(batch_shape, ("total_count", "probs", "logits"))

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Any:
        return self.total_count * self.probs

    @property
    def mode(self) -> Any:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Any:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        n, p = (np.broadcast_to(host(v), shape) for v in (self.total_count, self.probs))
        return from_host(stream().binomial(n.astype(np.int64), p), self.probs)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        n = self.total_count
        log_choose = tidu.lgamma(n + 1) - tidu.lgamma(value + 1) - tidu.lgamma(n - value + 1)
        return log_choose + value * self.logits - n * F.softplus(self.logits)

    def entropy(self) -> Any:
        counts = self.total_count.unique() if self.total_count.numel() else self.total_count
        if counts.numel() > 1:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        values = self.enumerate_support(expand=False)
        log_prob = self.log_prob(values)
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Any:
        n = int(self.total_count.max().item())
        values = tidu.arange(1 + n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values
