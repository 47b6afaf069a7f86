"""The geometric distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu
from tidu.nn import functional as F

from . import constraints
from .distribution import Distribution
from .parameterization import ProbsOrLogits
from .utils import broadcast_all, from_host, host, stream


class Geometric(ProbsOrLogits, Distribution):
    """The number of failures before the first success in trials of probability ``probs``.

    >>> import tidu
    >>> from tidu.distributions import Geometric
    >>> Geometric(probs=tidu.tensor(0.5)).log_prob(tidu.tensor(2.0))
    tensor(-2.0794)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    def _check_parameters(self) -> None:
        super()._check_parameters()
        if "probs" in self.__dict__ and not bool((self.probs > 0).all()):
            raise ValueError(f"Expected parameter probs ({type(self.probs).__name__} of shape "
                             f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but found "
                             f"invalid values:\n{self.probs}")

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return self._expanded(batch_shape, ("probs", "logits"))

    @property
    def mean(self) -> Any:
        return 1 / self.probs - 1

    @property
    def mode(self) -> Any:
        return tidu.zeros_like(self.probs)

    @property
    def variance(self) -> Any:
        return (1 / self.probs - 1) / self.probs

    def sample(self, sample_shape: Any = ()) -> Any:
        probs = np.broadcast_to(host(self.probs), tuple(self._extended_shape(sample_shape)))
        return from_host(stream().geometric(probs) - 1, self.probs)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        value, probs = broadcast_all(value, self.probs)
        certain_zero = (probs == 1) & (value == 0)  # 0 * log(0) counts as 0
        failures = value * (-tidu.where(certain_zero, 0.0, probs)).log1p()
        return failures + self.probs.log()

    def entropy(self) -> Any:
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
