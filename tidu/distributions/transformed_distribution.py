"""``TransformedDistribution`` and ``LogNormal``, the exponential of a normal."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .distribution import Distribution
from .normal import Normal
from .transforms import ComposeTransform, ExpTransform, Transform
from .utils import sum_rightmost


class TransformedDistribution(Distribution):
    """``base_distribution`` pushed through ``transforms`` (one or a list, applied in order);
    ``log_prob`` by the change of variables.

    >>> import tidu
    >>> from tidu.distributions import Normal, TransformedDistribution
    >>> from tidu.distributions.transforms import AffineTransform
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [AffineTransform(1.0, 2.0)])
    >>> d.log_prob(tidu.tensor(1.0))
    tensor(-1.6121)
    """

    arg_constraints: dict[str, constraints.Constraint] = {}
    _batch_params: tuple[str, ...] = ()  # a subclass's own parameters, expanded with the batch

    def __init__(self, base_distribution: Distribution, transforms: Transform | list[Transform],
                 validate_args: bool | None = None) -> None:
        self.transforms = [transforms] if isinstance(transforms, Transform) else list(transforms)
        chain = ComposeTransform(self.transforms)
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {chain.domain.event_dim}, "
                             f"but got {tidu.Size(base_shape)}.")
        shape = tuple(chain.forward_shape(base_shape))
        # parameters of the transforms may broadcast the base's batch
        expanded_base_shape = tuple(chain.inverse_shape(shape))
        if expanded_base_shape != base_shape:
            base_distribution = base_distribution.expand(expanded_base_shape[:len(expanded_base_shape) - base_event_dim])
        self.base_dist = base_distribution
        event_dim = max(chain.codomain.event_dim, base_event_dim + chain.codomain.event_dim - chain.domain.event_dim)
        split = len(shape) - event_dim
        super().__init__(shape[:split], shape[split:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> TransformedDistribution:
        """The distribution broadcast to ``batch_shape``: the base expanded (its batch dimensions
        that the transforms make event dimensions kept) and the parameters named in
        ``_batch_params``; the transforms broadcast."""
        reinterpreted = tuple(self.base_dist.batch_shape)[len(self._batch_shape):]
        base = self.base_dist.expand(tuple(batch_shape) + reinterpreted)
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        for name in self._batch_params:
            new.__dict__[name] = self.__dict__[name].expand(*batch_shape)
        TransformedDistribution.__init__(new, base, self.transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        return self.transforms[-1].codomain if self.transforms else self.base_dist.support

    def _push(self, x: Any) -> Any:
        for transform in self.transforms:
            x = transform(x)
        return x

    def sample(self, sample_shape: Any = ()) -> Any:
        return self._push(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape: Any = ()) -> Any:
        return self._push(self.base_dist.rsample(sample_shape))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        event_dim = len(self._event_shape)
        log_prob, y = 0.0, value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                event_dim - transform.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotone_sign(self) -> Any:
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        return sign

    def cdf(self, value: Any) -> Any:
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        value = self.base_dist.cdf(value)
        sign = self._monotone_sign()
        return sign * (value - 0.5) + 0.5

    def icdf(self, value: Any) -> Any:
        sign = self._monotone_sign()
        return self._push(self.base_dist.icdf(sign * (value - 0.5) + 0.5))


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``.

    >>> import tidu
    >>> from tidu.distributions import LogNormal
    >>> LogNormal(0.0, 1.0).log_prob(tidu.tensor(1.0))
    tensor(-0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LogNormal:
        new = type(self).__new__(type(self))
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), ExpTransform(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def loc(self) -> Any:
        return self.base_dist.loc

    @property
    def scale(self) -> Any:
        return self.base_dist.scale

    @property
    def mean(self) -> Any:
        return (self.loc + self.scale ** 2 / 2).exp()

    @property
    def mode(self) -> Any:
        return (self.loc - self.scale ** 2).exp()

    @property
    def variance(self) -> Any:
        s2 = self.scale ** 2
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self) -> Any:
        return self.base_dist.entropy() + self.loc

    def __repr__(self) -> str:
        return repr(self.base_dist).replace("Normal", "LogNormal", 1)
