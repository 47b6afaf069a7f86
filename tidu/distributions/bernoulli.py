"""The Bernoulli distribution."""

from __future__ import annotations

from typing import Any

import tidu
from tidu.nn import functional as F

from . import constraints
from .exp_family import ExponentialFamily
from .parameterization import ProbsOrLogits
from .utils import broadcast_all


class Bernoulli(ProbsOrLogits, ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0.

    >>> import tidu
    >>> from tidu.distributions import Bernoulli
    >>> Bernoulli(probs=0.25).log_prob(tidu.tensor([0.0, 1.0]))
    tensor([-0.2877, -1.3863])
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        return self._expanded(batch_shape, ("probs", "logits"))

    @property
    def mean(self) -> Any:
        return self.probs

    @property
    def mode(self) -> Any:
        ones = (self.probs >= 0.5).to(self.probs.dtype)
        return tidu.where(self.probs == 0.5, float("nan"), ones)

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        with tidu.no_grad():
            return tidu.bernoulli(self.probs.expand(*self._extended_shape(sample_shape)))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Any:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_params(self) -> tuple:
        return (tidu.logit(self.probs),)

    def _log_normalizer(self, x: Any) -> Any:
        return x.exp().log1p()

    def enumerate_support(self, expand: bool = True) -> Any:
        values = tidu.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape(2, *(1,) * len(self._batch_shape))
        return values.expand(2, *self._batch_shape) if expand else values
