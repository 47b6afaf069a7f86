"""``ExponentialFamily``: the base class of the densities ``exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

from typing import Any

import tidu

from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of an exponential family, with density ``exp(<t(x), theta> - F(theta) + k(x))``
    for the natural parameters ``theta`` (``_natural_params``), the log normalizer ``F``
    (``_log_normalizer``) and the carrier measure ``k`` (``_mean_carrier_measure`` is its mean).

    Its ``entropy`` is the Bregman form ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, by autograd
    (the families give closed forms of their own; this one checks them). Unlike PyTorch's, it is
    differentiable in parameters that require grad.

    >>> import tidu
    >>> from tidu.distributions import ExponentialFamily, Normal
    >>> d = Normal(tidu.tensor([0.0, 1.0]), tidu.tensor([1.0, 2.0]))
    >>> ExponentialFamily.entropy(d), d.entropy()
    (tensor([1.4189, 2.1121]), tensor([1.4189, 2.1121]))
    """

    @property
    def _natural_params(self) -> tuple:
        """The natural parameters ``theta``, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Any:
        """The log normalizer ``F(theta)``, over the batch."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        """``E[k(x)]``, the expected carrier measure."""
        raise NotImplementedError

    def entropy(self) -> Any:
        thetas, log_normalizer, grads, differentiable = _log_normalizer_and_grad(self)
        result = log_normalizer - self._mean_carrier_measure
        for theta, grad in zip(thetas, grads):
            result = result - (theta * grad).reshape(*self._batch_shape, -1).sum(-1)
        return result if differentiable else result.detach()


def _log_normalizer_and_grad(d: ExponentialFamily) -> tuple[list, Any, tuple, bool]:
    """``theta``, ``F(theta)`` and ``grad F(theta)`` of ``d``, and whether they are differentiable
    in its parameters (grad mode on and some natural parameter requiring grad)."""
    grad_enabled = tidu.is_grad_enabled()
    with tidu.enable_grad():
        naturals = [t if grad_enabled else t.detach() for t in d._natural_params]
        differentiable = any(t.requires_grad for t in naturals)
        thetas = [t if t.requires_grad else t.detach().requires_grad_() for t in naturals]
        log_normalizer = d._log_normalizer(*thetas)
        grads = tidu.autograd.grad(log_normalizer.sum(), thetas, create_graph=differentiable)
    return thetas, log_normalizer, grads, differentiable


def bregman_kl(p: ExponentialFamily, q: ExponentialFamily) -> Any:
    """``KL(p || q)`` of two members of one family: the Bregman divergence of ``F`` between their
    natural parameters, ``F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>``."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    p_thetas, log_normalizer, grads, p_differentiable = _log_normalizer_and_grad(p)
    q_thetas = q._natural_params
    result = q._log_normalizer(*q_thetas) - log_normalizer
    batch_dims = len(tidu.broadcast_shapes(p.batch_shape, q.batch_shape))
    for p_theta, q_theta, grad in zip(p_thetas, q_thetas, grads):
        # the inner product over each parameter's own dims (PyTorch sums over len(event_shape)
        # dims, which also adds up the batch of a scalar parameter of a matrix family: Wishart's df)
        term = (q_theta - p_theta) * grad
        result = result - sum_rightmost(term, term.ndim - batch_dims)
    return result if p_differentiable or any(t.requires_grad for t in q_thetas) else result.detach()
