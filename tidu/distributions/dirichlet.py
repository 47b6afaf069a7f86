"""The Dirichlet distribution."""

from __future__ import annotations

from typing import Any

import tidu

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import _standard_gamma, keep_above
from .utils import as_tensor, one_hot, tiny


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution on the simplex, with ``concentration`` over the last dimension.

    ``rsample`` normalizes gamma draws, so its gradient is theirs (``Gamma``) through the
    normalization; PyTorch's goes through the marginal beta's CDF instead (``_dirichlet_grad``):
    another unbiased gradient, not the same one for a given draw.

    >>> import tidu
    >>> from tidu.distributions import Dirichlet
    >>> Dirichlet(tidu.tensor([1.0, 1.0, 1.0])).log_prob(tidu.tensor([0.2, 0.3, 0.5]))
    tensor(0.6931)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        concentration = as_tensor(concentration)
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Dirichlet:
        return self._expanded(batch_shape, ("concentration",), event_dims=1)

    @property
    def mean(self) -> Any:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Any:
        above_one = (self.concentration - 1).clamp(min=0)
        mode = above_one / above_one.sum(-1, keepdim=True)
        # every concentration below 1: no interior mode. PyTorch's vertex is the argmax of the NaN
        # quotients above (0/0), the first one
        peak = one_hot(mode.argmax(-1), self.concentration.shape[-1], mode)
        return tidu.where((self.concentration < 1).all(-1, keepdim=True), peak, mode)

    @property
    def variance(self) -> Any:
        total = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (total - self.concentration) / (total ** 2 * (total + 1))

    def rsample(self, sample_shape: Any = ()) -> Any:
        draws = _standard_gamma(self.concentration.expand(tuple(self._extended_shape(sample_shape))))
        value = draws / draws.sum(-1, keepdim=True)
        return keep_above(value, tiny(value), 1 - float(tidu.finfo(value.dtype).eps))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        c = self.concentration
        return tidu.xlogy(c - 1, value).sum(-1) + tidu.lgamma(c.sum(-1)) - tidu.lgamma(c).sum(-1)

    def entropy(self) -> Any:
        c = self.concentration
        k, total = c.shape[-1], c.sum(-1)
        return (tidu.lgamma(c).sum(-1) - tidu.lgamma(total) - (k - total) * tidu.digamma(total)
                - ((c - 1) * tidu.digamma(c)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Any) -> Any:
        return tidu.lgamma(x).sum(-1) - tidu.lgamma(x.sum(-1))
