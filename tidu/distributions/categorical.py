"""The categorical distribution and its one-hot form."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .parameterization import ProbsOrLogits
from .utils import one_hot


class Categorical(ProbsOrLogits, Distribution):
    """Category indices ``0 .. K-1`` weighted by ``probs`` (normalized over the last dimension) or
    by ``softmax(logits)``.

    >>> import tidu
    >>> from tidu.distributions import Categorical
    >>> Categorical(probs=tidu.tensor([1.0, 3.0])).log_prob(tidu.tensor(1))
    tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        param = self._set_probs_or_logits(probs, logits)
        if param.ndim < 1:
            raise ValueError("`probs` parameter must be at least one-dimensional.")
        if probs is not None:
            self.__dict__["probs"] = param / param.sum(-1, keepdim=True)
        else:
            self.__dict__["logits"] = param - param.logsumexp(-1, keepdim=True)
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Categorical:
        new = self._expanded(batch_shape, ("probs", "logits"), event_dims=1)
        new._num_events = self._num_events
        return new

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> tidu.Size:
        return self._param.shape

    @property
    def mean(self) -> Any:
        return tidu.full(tuple(self._batch_shape), float("nan"), dtype=self._param.dtype, device=self._param.device)

    @property
    def mode(self) -> Any:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Any:
        return self.mean

    def sample(self, sample_shape: Any = ()) -> Any:
        sample_shape = tidu.Size(sample_shape)
        rows = self.probs.detach().reshape(-1, self._num_events)
        count = max(sample_shape.numel(), 1)
        draws = tidu.multinomial(rows, count, replacement=True).T
        return draws.reshape(*sample_shape, *self._batch_shape)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        index = value.long().unsqueeze(-1)
        index, logits = tidu.broadcast_tensors(index, self.logits)
        return logits.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Any:
        logits = self.logits.clamp(min=float(tidu.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Any:
        values = tidu.arange(self._num_events, device=self._param.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(-1, *self._batch_shape) if expand else values


class CategoricalParams:
    """``probs``, ``logits`` and ``param_shape`` of a distribution built on a ``Categorical``
    (its ``_categorical``)."""

    _categorical: Categorical

    @property
    def probs(self) -> Any:
        return self._categorical.probs

    @property
    def logits(self) -> Any:
        return self._categorical.logits

    @property
    def param_shape(self) -> tidu.Size:
        return self._categorical.param_shape


class OneHotCategorical(CategoricalParams, Distribution):
    """``Categorical`` with each category a one-hot vector of length ``K``.

    >>> import tidu
    >>> from tidu.distributions import OneHotCategorical
    >>> OneHotCategorical(probs=tidu.tensor([0.25, 0.75])).log_prob(tidu.tensor([0.0, 1.0]))
    tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Any = None, logits: Any = None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:], validate_args=False)
        if validate_args is not None:
            self._validate_args = validate_args

    def expand(self, batch_shape: Any, _instance: Any = None) -> OneHotCategorical:
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tidu.Size(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


    @property
    def mean(self) -> Any:
        return self.probs

    @property
    def mode(self) -> Any:
        return one_hot(self.probs.argmax(-1), self._event_shape[0], self.probs)

    @property
    def variance(self) -> Any:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Any:
        return one_hot(self._categorical.sample(sample_shape), self._event_shape[0], self.probs.detach())

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Any:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Any:
        n = self._event_shape[0]
        values = tidu.eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(n, *(1,) * len(self._batch_shape), n)
        return values.expand(n, *self._batch_shape, n) if expand else values

    def __repr__(self) -> str:
        return repr(self._categorical).replace("Categorical", type(self).__name__, 1)


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """``OneHotCategorical`` whose ``rsample`` passes the gradient of ``probs`` straight through
    the one-hot draw (``sample + probs - probs.detach()``).

    >>> import tidu
    >>> from tidu.distributions import OneHotCategoricalStraightThrough
    >>> probs = tidu.tensor([0.25, 0.75], requires_grad=True)
    >>> OneHotCategoricalStraightThrough(probs=probs).rsample().sum().backward()
    >>> probs.grad
    tensor([1., 1.])
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Any:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())

