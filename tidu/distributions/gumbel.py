"""The Gumbel distribution, built as PyTorch builds it: uniform noise through
``x = loc - scale * log(-log u)``."""

from __future__ import annotations

import math
from typing import Any

import tidu

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all

EULER = 0.57721566490153286061


class Gumbel(TransformedDistribution):
    """The Gumbel (type-I extreme value) distribution with location ``loc`` and scale ``scale``.

    >>> import tidu
    >>> from tidu.distributions import Gumbel
    >>> d = Gumbel(1.0, 2.0)
    >>> d.log_prob(tidu.tensor(1.0)), d.cdf(tidu.tensor(1.0)), d.mean
    (tensor(-1.6931), tensor(0.3679), tensor(2.1544))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _batch_params = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = tidu.finfo(self.loc.dtype)
        base = Uniform(tidu.full_like(self.loc, float(finfo.tiny)), tidu.full_like(self.loc, 1 - float(finfo.eps)),
                       validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-tidu.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self) -> Any:
        return self.loc + self.scale * EULER

    @property
    def mode(self) -> Any:
        return self.loc

    @property
    def stddev(self) -> Any:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Any:
        return self.stddev ** 2

    def entropy(self) -> Any:
        return self.scale.log() + (1 + EULER)
