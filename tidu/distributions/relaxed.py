"""The relaxed (Concrete, Gumbel-softmax) Bernoulli and one-hot categorical distributions
(Maddison, Mnih and Teh 2017; Jang, Gu and Poole 2017): reparameterized, differentiable stand-ins
for discrete draws, sharper as ``temperature`` goes to 0."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .parameterization import ProbsOrLogits
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform, SigmoidTransform
from .utils import _clamp_probs, as_tensor, broadcast_all


def _uniforms(shape: Any, like: Any) -> Any:
    """Uniform draws kept inside the open unit interval (PyTorch's ``clamp_probs``)."""
    return _clamp_probs(tidu.rand(tuple(shape), dtype=like.dtype, device=like.device))


class LogitRelaxedBernoulli(ProbsOrLogits, Distribution):
    """The logit of a ``RelaxedBernoulli`` draw: ``(logit(u) + logits) / temperature``.

    >>> import tidu
    >>> from tidu.distributions import LogitRelaxedBernoulli
    >>> LogitRelaxedBernoulli(tidu.tensor(0.5), probs=0.3).log_prob(tidu.tensor(0.2))
    tensor(-2.2959)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real  # has_rsample stays False, as PyTorch's, though it has rsample

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.temperature = as_tensor(temperature)
        param = self._set_probs_or_logits(probs, logits)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogitRelaxedBernoulli:
        new = self._expanded(batch_shape, ("probs", "logits"))
        new.temperature = self.temperature
        return new

    @property
    def param_shape(self) -> tidu.Size:
        return self._param.shape

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = self._extended_shape(sample_shape)
        probs = _clamp_probs(self.probs.expand(*shape))
        u = _uniforms(shape, probs)
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class _RelaxedParams:
    """``temperature``, ``logits`` and ``probs`` of a relaxed distribution: its base's."""

    base_dist: Any

    @property
    def temperature(self) -> Any:
        return self.base_dist.temperature

    @property
    def logits(self) -> Any:
        return self.base_dist.logits

    @property
    def probs(self) -> Any:
        return self.base_dist.probs


class RelaxedBernoulli(_RelaxedParams, TransformedDistribution):
    """``sigmoid`` of a ``LogitRelaxedBernoulli`` draw: values in (0, 1).

    >>> import tidu
    >>> from tidu.distributions import RelaxedBernoulli
    >>> d = RelaxedBernoulli(tidu.tensor(0.5), probs=tidu.tensor([0.3, 0.9]))
    >>> d.log_prob(tidu.tensor([0.2, 0.9])), d.rsample((4,)).shape
    (tensor([-0.2528,  0.0408]), tidu.Size([4, 2]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)


class ExpRelaxedCategorical(Distribution):
    """The log of a ``RelaxedOneHotCategorical`` draw: ``log_softmax((logits + gumbels) / temperature)``.

    >>> import tidu
    >>> from tidu.distributions import ExpRelaxedCategorical
    >>> d = ExpRelaxedCategorical(tidu.tensor(0.5), probs=tidu.tensor([0.2, 0.8]))
    >>> d.log_prob(tidu.tensor([0.5, 1.0]).log())
    tensor(-2.3383)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # the true support is a submanifold of it
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = as_tensor(temperature)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> ExpRelaxedCategorical:
        new = type(self).__new__(type(self))
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tidu.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self) -> tidu.Size:
        return self._categorical.param_shape

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    def rsample(self, sample_shape: Any = ()) -> Any:
        u = _uniforms(self._extended_shape(sample_shape), self.logits)
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Any) -> Any:
        k = self._categorical._num_events
        self._validate(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = tidu.full_like(self.temperature, float(k)).lgamma() + (k - 1) * self.temperature.log()
        score = logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(_RelaxedParams, TransformedDistribution):
    """``exp`` of an ``ExpRelaxedCategorical`` draw: points of the simplex, near its corners at
    low ``temperature``.

    >>> import tidu
    >>> from tidu.distributions import RelaxedOneHotCategorical
    >>> d = RelaxedOneHotCategorical(tidu.tensor(0.5), probs=tidu.tensor([0.2, 0.8]))
    >>> d.log_prob(tidu.tensor([0.25, 0.75])), d.rsample((3,)).sum(-1)
    (tensor(-0.5757), tensor([1.0000, 1.0000, 1.0000]))
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

