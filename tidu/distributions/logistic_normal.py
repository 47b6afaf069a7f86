"""The logistic-normal distribution: a normal vector pushed onto the simplex by stick breaking."""

from __future__ import annotations

from typing import Any

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """``StickBreakingTransform()(X)`` for ``X ~ Normal(loc, scale)`` over the last dimension
    (length ``K - 1``): points of the ``K``-simplex.

    >>> import tidu
    >>> from tidu.distributions import LogisticNormal
    >>> d = LogisticNormal(tidu.tensor([0.3, -0.5]), tidu.tensor([1.0, 0.7]))
    >>> d.event_shape, d.log_prob(tidu.tensor([0.2, 0.3, 0.5]))
    (tidu.Size([3]), tensor(1.5321))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Any:
        return self.base_dist.loc

    @property
    def scale(self) -> Any:
        return self.base_dist.scale
