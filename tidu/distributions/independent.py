"""``Independent``: batch dimensions of a distribution read as event dimensions."""

from __future__ import annotations

from typing import Any

from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dimensions made
    event dimensions: ``log_prob`` and ``entropy`` sum over them.

    >>> import tidu
    >>> from tidu.distributions import Independent, Normal
    >>> Independent(Normal(tidu.zeros(3), 1.0), 1).log_prob(tidu.zeros(3))
    tensor(-2.7568)
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        batch = tuple(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > len(batch):
            raise ValueError(f"Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(batch)}")
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        split = len(batch) - reinterpreted_batch_ndims
        super().__init__(batch[:split], batch[split:] + tuple(base_distribution.event_shape),
                         validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Independent:
        reinterpreted = tuple(self.base_dist.batch_shape)[len(self.base_dist.batch_shape) - self.reinterpreted_batch_ndims:]
        base = self.base_dist.expand(tuple(batch_shape) + reinterpreted)
        return Independent(base, self.reinterpreted_batch_ndims, validate_args=self._validate_args)

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self) -> constraints.Constraint:
        support = self.base_dist.support
        return constraints.independent(support, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims else support

    @property
    def mean(self) -> Any:
        return self.base_dist.mean

    @property
    def mode(self) -> Any:
        return self.base_dist.mode

    @property
    def variance(self) -> Any:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Any:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Any) -> Any:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Any:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Any:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist!r}, {self.reinterpreted_batch_ndims})"

