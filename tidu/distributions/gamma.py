"""The gamma distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import tidu

from . import constraints
from ._gamma_grad import standard_gamma_grad_host
from .exp_family import ExponentialFamily
from .utils import broadcast_all, from_host, host, stream, tiny


def standard_gamma(concentration: Any, shape: tuple[int, ...]) -> Any:
    """Draws of Gamma(concentration, 1) broadcast to ``shape``, kept above the dtype's smallest
    normal number; not differentiable."""
    draws = stream().standard_gamma(np.broadcast_to(host(concentration), shape))
    return from_host(np.maximum(draws, tiny(concentration)), concentration)


def keep_above(value: Any, low: float, high: float | None = None) -> Any:
    """``value`` clamped to ``[low, high]`` with its gradient kept where clamped (PyTorch clamps its
    samples after the gradient is taken)."""
    clamped = value.detach().clamp(min=low, max=high)
    return value + (clamped - value.detach()) if value.requires_grad else clamped


def _standard_gamma_grad(self: Any, output: Any) -> Any:  # noqa: A002 - PyTorch's names
    """``d output / d self`` for samples ``output`` of Gamma(``self``, 1), holding their quantiles
    fixed (the implicit reparameterization gradient: tidu/distributions/_gamma_grad.py); PyTorch's
    ``torch._standard_gamma_grad``. Not differentiable itself.

    >>> import tidu
    >>> tidu._standard_gamma_grad(tidu.tensor([1.0, 4.0]), tidu.tensor([0.5, 3.0]))
    tensor([0.8070, 0.8995])
    """
    alpha, x = tidu.broadcast_tensors(self, output)
    return from_host(standard_gamma_grad_host(host(alpha), host(x)), x)


def _standard_gamma(self: Any) -> Any:  # noqa: A002 - PyTorch's name
    """Draws of Gamma(``self``, 1), one per element, differentiable in ``self`` by the implicit
    reparameterization gradient (``_standard_gamma_grad``), as ``torch._standard_gamma``.

    >>> import tidu
    >>> alpha = tidu.tensor([2.0, 0.5], requires_grad=True)
    >>> x = tidu._standard_gamma(alpha)
    >>> x.sum().backward()
    >>> bool((alpha.grad == tidu._standard_gamma_grad(alpha.detach(), x.detach())).all())
    True
    """
    with tidu.no_grad():
        draws = standard_gamma(self, tuple(self.shape))
    if not (self.requires_grad and tidu.is_grad_enabled()):
        return draws
    # the draws' value, with the gradient d draws / d self (exactly: self - self.detach() is 0)
    return draws + (self - self.detach()) * _standard_gamma_grad(self.detach(), draws)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and rate ``rate``.

    ``rsample`` is reparameterized: its gradient in ``concentration`` is the implicit one of the
    gamma sampler (``_standard_gamma_grad``), in ``rate`` that of ``x / rate``.

    >>> import tidu
    >>> from tidu.distributions import Gamma
    >>> Gamma(2.0, 3.0).log_prob(tidu.tensor(0.5))
    tensor(0.0041)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expanded(batch_shape, ("concentration", "rate"))

    @property
    def mean(self) -> Any:
        return self.concentration / self.rate

    @property
    def mode(self) -> Any:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Any:
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return keep_above(value, tiny(value))

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        c, rate = self.concentration, self.rate
        return tidu.xlogy(c, rate) + tidu.xlogy(c - 1, value) - rate * value - tidu.lgamma(c)

    def cdf(self, value: Any) -> Any:
        """``P(concentration, rate * value)`` (``special.gammainc``): differentiable in ``value`` and
        ``rate``; in ``concentration`` a backward raises ``NotImplementedError``, as PyTorch's.

        >>> import tidu
        >>> from tidu.distributions import Gamma, Chi2
        >>> Gamma(2.0, 3.0).cdf(tidu.tensor(0.5)), Chi2(tidu.tensor(2.0)).cdf(tidu.tensor(1.0))
        (tensor(0.4422), tensor(0.3935))
        """
        self._validate(value)
        return tidu.special.gammainc(self.concentration, self.rate * value)

    def entropy(self) -> Any:
        c = self.concentration
        return c - self.rate.log() + tidu.lgamma(c) + (1 - c) * tidu.digamma(c)

    @property
    def _natural_params(self) -> tuple:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        return tidu.lgamma(x + 1) + (x + 1) * (-y.reciprocal()).log()


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    >>> import tidu
    >>> from tidu.distributions import Chi2
    >>> d = Chi2(tidu.tensor(3.0))
    >>> d.log_prob(tidu.tensor(2.0)), d.df
    (tensor(-1.5724), tensor(3.))
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    @property
    def df(self) -> Any:
        return self.concentration * 2
