"""The multivariate normal with a low-rank-plus-diagonal covariance ``W W^T + diag(D)``."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import tidu

from . import constraints
from .distribution import CenteredAtLoc, Distribution
from .multivariate_normal import batch_mahalanobis


def capacitance_tril(cov_factor: Any, cov_diag: Any) -> Any:
    """The Cholesky factor of the capacitance ``I + W^T D^-1 W`` (m by m, m the rank)."""
    m = cov_factor.shape[-1]
    capacitance = (cov_factor.mT / cov_diag.unsqueeze(-2)) @ cov_factor
    return tidu.linalg.cholesky(capacitance + tidu.eye(m, dtype=cov_factor.dtype, device=cov_factor.device))


def lowrank_logdet(cov_diag: Any, cap_tril: Any) -> Any:
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return 2 * cap_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + cov_diag.log().sum(-1)


def lowrank_mahalanobis(cov_factor: Any, cov_diag: Any, x: Any, cap_tril: Any) -> Any:
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv_x = ((cov_factor.mT / cov_diag.unsqueeze(-2)) @ x.unsqueeze(-1)).squeeze(-1)
    return (x ** 2 / cov_diag).sum(-1) - batch_mahalanobis(cap_tril, wt_dinv_x)


class LowRankMultivariateNormal(CenteredAtLoc, Distribution):
    """The normal over vectors with mean ``loc`` and covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``; ``log_prob`` and ``entropy`` cost O(n m^2) through the rank-m capacitance.

    >>> import tidu
    >>> from tidu.distributions import LowRankMultivariateNormal
    >>> d = LowRankMultivariateNormal(tidu.zeros(2), tidu.tensor([[1.0], [0.5]]), tidu.ones(2))
    >>> d.log_prob(tidu.tensor([1.0, 0.0])), d.covariance_matrix
    (tensor(-2.5211), tensor([[2.0000, 0.5000],
            [0.5000, 1.2500]]))
    """

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any, validate_args: bool | None = None) -> None:
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tidu.Size(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != tuple(event_shape):
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != tuple(event_shape):
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = tidu.broadcast_tensors(loc.unsqueeze(-1), cov_factor,
                                                                      cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> LowRankMultivariateNormal:
        new = self._expanded(batch_shape, ("loc", "cov_diag"), event_dims=1)
        new.cov_factor = self.cov_factor.expand(*batch_shape, *self.cov_factor.shape[-2:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    def _full(self, matrix: Any) -> Any:
        return matrix.expand(*self._batch_shape, *self._event_shape, *self._event_shape)

    @cached_property
    def variance(self) -> Any:
        variance = (self._unbroadcasted_cov_factor ** 2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(*self._batch_shape, *self._event_shape)

    @cached_property
    def scale_tril(self) -> Any:
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        dinvsqrt_w = self._unbroadcasted_cov_factor / diag_sqrt
        k = dinvsqrt_w @ dinvsqrt_w.mT + tidu.eye(n, dtype=self.loc.dtype, device=self.loc.device)
        return self._full(diag_sqrt * tidu.linalg.cholesky(k))

    @cached_property
    def covariance_matrix(self) -> Any:
        w = self._unbroadcasted_cov_factor
        return self._full(w @ w.mT + tidu.diag_embed(self._unbroadcasted_cov_diag))

    @cached_property
    def precision_matrix(self) -> Any:
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = tidu.linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return self._full(tidu.diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a)

    def rsample(self, sample_shape: Any = ()) -> Any:
        shape = tuple(self._extended_shape(sample_shape))
        eps_w = tidu.randn((*shape[:-1], self.cov_factor.shape[-1]), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = tidu.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _logdet(self) -> Any:
        return lowrank_logdet(self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        distance = lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                       value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + distance)

    def entropy(self) -> Any:
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return entropy.expand(*self._batch_shape)
