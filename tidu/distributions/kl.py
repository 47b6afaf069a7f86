"""``kl_divergence(p, q)`` by a registry of closed forms keyed on the pair of types."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tidu
from tidu.nn import functional as F

from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical, OneHotCategorical
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily, bregman_kl
from .exponential import Exponential
from .folded import HalfNormal
from .gamma import Gamma
from .gumbel import EULER, Gumbel
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, lowrank_logdet, lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal, batch_mahalanobis, half_log_det
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import sum_rightmost, trace_xxt
from .wishart import Wishart, mvdigamma

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Any]] = {}

_INF = float("inf")


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator registering a function ``(p, q) -> KL(p || q)`` for the pair of types.

    >>> from tidu.distributions import Normal, kl_divergence, register_kl
    >>> class Unit(Normal): pass
    >>> @register_kl(Unit, Unit)
    ... def _kl_unit(p, q): return (p.loc - q.loc) ** 2 / 2
    >>> kl_divergence(Unit(0.0, 1.0), Unit(2.0, 1.0))
    tensor(2.)
    """
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: Callable) -> Callable:
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def _lookup(type_p: type, type_q: type) -> Callable | None:
    """The registered function for the most specific pair of base classes (by MRO distance)."""
    best, best_rank = None, None
    for (super_p, super_q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, super_p) and issubclass(type_q, super_q):
            rank = (type_p.__mro__.index(super_p), type_q.__mro__.index(super_q))
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Any:
    """``KL(p || q)`` over the batch, from a registered closed form.

    >>> from tidu.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 2.0))
    tensor(0.4431)
    """
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} "
                                  f"and q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Any:
    var_ratio = (p.scale / q.scale) ** 2
    shift = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + shift - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Any:
    ones = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    ones = tidu.where(p.probs == 0, 0.0, tidu.where(q.probs == 0, _INF, ones))
    zeros = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    zeros = tidu.where(p.probs == 1, 0.0, tidu.where(q.probs == 1, _INF, zeros))
    return ones + zeros


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Any:
    terms = p.probs * (p.logits - q.logits)
    terms = tidu.where(p.probs == 0, 0.0, tidu.where(q.probs == 0, _INF, terms))
    return terms.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Any:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Any:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
    n = p.event_shape[0]
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    distance = batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_log_det(q_tril) - half_log_det(p_tril) + 0.5 * (_relative_trace(p_tril, q_tril) + distance - n)


def _relative_trace(p_tril: Any, q_tril: Any) -> Any:
    """``trace(Q^-1 P)`` of the covariances ``P = p_tril p_tril^T``, ``Q = q_tril q_tril^T``."""
    n = p_tril.shape[-1]
    batch = tidu.broadcast_shapes(tuple(p_tril.shape[:-2]), tuple(q_tril.shape[:-2]))
    return trace_xxt(tidu.linalg.solve(q_tril.tril().expand(*batch, n, n), p_tril.expand(*batch, n, n)))


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p: Wishart, q: Wishart) -> Any:
    # the closed form of PyTorch's exponential-family (Bregman) KL for this pair
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Wisharts with different event shapes cannot be computed")
    n = p.event_shape[-1]
    p_tril, q_tril, p_df, q_df = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril, p.df, q.df
    return (q_df * (half_log_det(q_tril) - half_log_det(p_tril)) + p_df / 2 * (_relative_trace(p_tril, q_tril) - n)
            + tidu.mvlgamma(q_df / 2, n) - tidu.mvlgamma(p_df / 2, n) + (p_df - q_df) / 2 * mvdigamma(p_df / 2, n))


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Any:
    pa, pb, qa, qb = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    p_total, q_total = pa + pb, qa + qb
    log_norm = (tidu.lgamma(qa) + tidu.lgamma(qb) + tidu.lgamma(p_total)
                - tidu.lgamma(pa) - tidu.lgamma(pb) - tidu.lgamma(q_total))
    return (log_norm + (pa - qa) * tidu.digamma(pa) + (pb - qb) * tidu.digamma(pb)
            + (q_total - p_total) * tidu.digamma(p_total))


register_kl(ExponentialFamily, ExponentialFamily)(bregman_kl)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Any:
    pc, pr, qc, qr = p.concentration, p.rate, q.concentration, q.rate
    return (qc * (pr / qr).log() + tidu.lgamma(qc) - tidu.lgamma(pc) + (pc - qc) * tidu.digamma(pc)
            + (qr - pr) * (pc / pr))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Any:
    pc, qc = p.concentration, q.concentration
    p_total = pc.sum(-1)
    log_norm = tidu.lgamma(p_total) - tidu.lgamma(qc.sum(-1)) - (tidu.lgamma(pc) - tidu.lgamma(qc)).sum(-1)
    return log_norm + ((pc - qc) * (tidu.digamma(pc) - tidu.digamma(p_total).unsqueeze(-1))).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Any:
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Any:
    ratio = p.scale / q.scale
    distance = (p.loc - q.loc).abs()
    return -ratio.log() + distance / q.scale + ratio * (-distance / p.scale).exp() - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Any:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Any:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return tidu.where((q.low > p.low) | (q.high < p.high), _INF, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Any:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Any:
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + (-p.probs).log1p()
            - q._cont_bern_log_norm() - (-q.probs).log1p())


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p: Gumbel, q: Gumbel) -> Any:
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    return -ct1.log() - ct2 + ct3 + ct1 * EULER + (ct2 + tidu.lgamma(1 + ct1) - ct3).exp() - (1 + EULER)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p: HalfNormal, q: HalfNormal) -> Any:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p: Pareto, q: Pareto) -> Any:
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return tidu.where(p.support.lower_bound < q.support.lower_bound, _INF, result)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Any:
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


def _check_event_shapes(p: Distribution, q: Distribution) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with different event shapes "
                         "cannot be computed")


def _woodbury_factor(q: LowRankMultivariateNormal) -> Any:
    """``A = L^-1 W^T D^-1`` with ``L`` the capacitance's factor: ``Sigma_q^-1 = D^-1 - A^T A``."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return tidu.linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _lowrank_terms(q: LowRankMultivariateNormal, p_loc: Any) -> tuple[Any, Any]:
    """``log det Sigma_q`` and the Mahalanobis distance of the means under ``Sigma_q``."""
    logdet = lowrank_logdet(q._unbroadcasted_cov_diag, q._capacitance_tril)
    distance = lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, q.loc - p_loc,
                                   q._capacitance_tril)
    return logdet, distance


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal) -> Any:
    _check_event_shapes(p, q)
    q_logdet, distance = _lowrank_terms(q, p.loc)
    a = _woodbury_factor(q)
    p_w, p_d, q_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    trace = ((p_d / q_d).sum(-1) + trace_xxt(p_w * q_d.rsqrt().unsqueeze(-1))
             - trace_xxt(a * p_d.sqrt().unsqueeze(-2)) - trace_xxt(a @ p_w))
    p_logdet = lowrank_logdet(p_d, p._capacitance_tril)
    return 0.5 * (q_logdet - p_logdet + trace + distance - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p: MultivariateNormal, q: LowRankMultivariateNormal) -> Any:
    _check_event_shapes(p, q)
    q_logdet, distance = _lowrank_terms(q, p.loc)
    p_tril = p._unbroadcasted_scale_tril
    trace = trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1)) - trace_xxt(_woodbury_factor(q) @ p_tril)
    return 0.5 * (q_logdet - 2 * half_log_det(p_tril) + trace + distance - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p: LowRankMultivariateNormal, q: MultivariateNormal) -> Any:
    _check_event_shapes(p, q)
    n, q_tril = p.event_shape[0], q._unbroadcasted_scale_tril
    p_logdet = lowrank_logdet(p._unbroadcasted_cov_diag, p._capacitance_tril)
    distance = batch_mahalanobis(q_tril, q.loc - p.loc)
    batch = tidu.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p._unbroadcasted_cov_factor.shape[:-2]))
    q_tril = q_tril.expand(*batch, n, n)
    p_w = p._unbroadcasted_cov_factor.expand(*batch, n, p.cov_factor.shape[-1])
    p_d = tidu.diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(*batch, n, n)
    trace = (trace_xxt(tidu.linalg.solve_triangular(q_tril, p_w, upper=False))
             + trace_xxt(tidu.linalg.solve_triangular(q_tril, p_d, upper=False)))
    return 0.5 * (2 * half_log_det(q_tril) - p_logdet + trace + distance - n)
