"""The beta distribution."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma, keep_above
from .utils import broadcast_all, tiny


def log_beta(a: Any, b: Any) -> Any:
    """``log B(a, b)``."""
    return tidu.lgamma(a) + tidu.lgamma(b) - tidu.lgamma(a + b)


class Beta(ExponentialFamily):
    """The beta distribution on [0, 1] with ``concentration1`` (alpha) and ``concentration0`` (beta).

    ``rsample`` is ``x / (x + y)`` of two gamma draws, its gradient theirs (``Gamma``); PyTorch's
    goes through the beta's CDF instead: another unbiased gradient, not the same one for a draw.

    >>> import tidu
    >>> from tidu.distributions import Beta
    >>> Beta(2.0, 2.0).log_prob(tidu.tensor(0.5))
    tensor(0.4055)
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Beta:
        return self._expanded(batch_shape, ("concentration1", "concentration0"))

    @property
    def mean(self) -> Any:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Any:
        concentration = tidu.stack([self.concentration1, self.concentration0], -1)
        return Dirichlet(concentration, validate_args=False).mode[..., 0]

    @property
    def variance(self) -> Any:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        x = _standard_gamma(self.concentration1.expand(shape))
        y = _standard_gamma(self.concentration0.expand(shape))
        value = x / (x + y)
        return keep_above(value, tiny(value), 1 - float(tidu.finfo(value.dtype).eps))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        a, b = self.concentration1, self.concentration0
        return tidu.xlogy(a - 1, value) + tidu.xlogy(b - 1, 1 - value) - log_beta(a, b)

    def entropy(self) -> Any:
        a, b = self.concentration1, self.concentration0
        total = a + b
        return (log_beta(a, b) - (a - 1) * tidu.digamma(a) - (b - 1) * tidu.digamma(b)
                + (total - 2) * tidu.digamma(total))

    @property
    def _natural_params(self) -> tuple:
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return log_beta(x, y)
