"""The continuous Bernoulli distribution (Loaiza-Ganem and Cunningham 2019)."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import tidu
from tidu.nn import functional as F

from . import constraints
from .exp_family import ExponentialFamily
from .parameterization import ProbsOrLogits
from .utils import _clamp_probs, broadcast_all, logits_to_probs


class ContinuousBernoulli(ProbsOrLogits, ExponentialFamily):
    """The density ``C(p) p^x (1 - p)^(1 - x)`` on [0, 1], parameterized by ``probs`` (clamped
    into the open unit interval) or ``logits``. Near ``p = 1/2`` (inside ``lims``) the normalizer
    and moments use PyTorch's Taylor expansions.

    >>> import tidu
    >>> from tidu.distributions import ContinuousBernoulli
    >>> d = ContinuousBernoulli(tidu.tensor(0.8))
    >>> d.log_prob(tidu.tensor(0.5)), d.mean, d.cdf(tidu.tensor(0.5))
    (tensor(-0.0788), tensor(0.6120), tensor(0.3333))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None, lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        if probs is not None:
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(param).all()):
                raise ValueError("The parameter probs has invalid values")
            self.__dict__["probs"] = _clamp_probs(param)
        self._lims = lims
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ContinuousBernoulli:
        new = self._expanded(batch_shape, ("probs", "logits"))
        new._lims = self._lims
        return new

    @cached_property
    def probs(self) -> Any:
        return _clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> tidu.Size:
        return self._param.shape

    def _outside_unstable_region(self) -> Any:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Any:
        return tidu.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self) -> Any:
        """``log C(p)``."""
        cut = self._cut_probs()
        below_half = tidu.where(cut <= 0.5, cut, 0.0)
        above_half = tidu.where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - tidu.where(
            cut <= 0.5, (-2.0 * below_half).log1p(), (2.0 * above_half - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return tidu.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Any:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return tidu.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self) -> Any:
        cut = self._cut_probs()
        variances = cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2 + 1.0 / ((-cut).log1p() - cut.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return tidu.where(self._outside_unstable_region(), variances, taylor)

    def rsample(self, sample_shape: Any = ()) -> Any:
        u = tidu.rand(tuple(self._extended_shape(sample_shape)), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value: Any) -> Any:
        self._validate(value)
        cut = self._cut_probs()
        cdfs = (cut ** value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = tidu.where(self._outside_unstable_region(), cdfs, value)
        return tidu.where(value <= 0.0, 0.0, tidu.where(value >= 1.0, 1.0, unbounded))

    def icdf(self, value: Any) -> Any:
        cut = self._cut_probs()
        inverse = ((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p()) / (cut.log() - (-cut).log1p())
        return tidu.where(self._outside_unstable_region(), inverse, value)

    def entropy(self) -> Any:
        log_probs0, log_probs1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: Any) -> Any:
        """``log((e^x - 1) / x)``; a Taylor expansion for ``sigmoid(x)`` inside ``lims``."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = tidu.where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return tidu.where(outside, log_norm, taylor)
