"""The multivariate normal distribution."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import tidu

from . import constraints
from .distribution import CenteredAtLoc, Distribution


def batch_mahalanobis(scale_tril: Any, diff: Any) -> Any:
    """``|L^-1 diff|^2`` over the last dimension, ``L`` broadcast against ``diff``'s batch; only
    ``L``'s lower triangle is read (and differentiated)."""
    batch = tidu.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    n = diff.shape[-1]
    whitened = tidu.linalg.solve(scale_tril.tril().expand(*batch, n, n), diff.expand(*batch, n).unsqueeze(-1))
    return (whitened.squeeze(-1) ** 2).sum(-1)


def half_log_det(scale_tril: Any) -> Any:
    """``log det(L)`` of lower-triangular ``L`` with a positive diagonal."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def given_matrix(covariance_matrix: Any, precision_matrix: Any, scale_tril: Any,
                 error: type[Exception] = ValueError) -> tuple[str, Any]:
    """The one matrix parameter given, with its name; ``error`` if not exactly one is."""
    given = [(name, matrix) for name, matrix in (("covariance_matrix", covariance_matrix),
             ("precision_matrix", precision_matrix), ("scale_tril", scale_tril)) if matrix is not None]
    if len(given) != 1:
        raise error("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
    return given[0]


class ScaleTrilParameterized:
    """Mixin: the parameterization by one of ``covariance_matrix``, ``precision_matrix`` and
    ``scale_tril`` (``MultivariateNormal``, ``Wishart``); every computation uses the Cholesky factor
    of the covariance as given (``_unbroadcasted_scale_tril``), the others derive lazily."""

    _batch_shape: Any

    def _set_factor(self, name: str, matrix: Any) -> None:
        """Keep the Cholesky factor of the covariance given by ``matrix`` (the parameter ``name``),
        unbroadcasted; called after validation, which checks ``matrix`` first."""
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = tidu.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = tidu.linalg.cholesky(tidu.linalg.inv(matrix))

    def _expand_matrices(self, new: Any, batch_shape: Any) -> None:
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                matrix = self.__dict__[name]
                new.__dict__[name] = matrix.expand(*batch_shape, *matrix.shape[-2:])
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril

    def _matrix_shape(self) -> tuple[int, ...]:
        n = self._unbroadcasted_scale_tril.shape[-1]
        return (*self._batch_shape, n, n)

    @cached_property
    def scale_tril(self) -> Any:
        return self._unbroadcasted_scale_tril.expand(*self._matrix_shape())

    @cached_property
    def covariance_matrix(self) -> Any:
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(*self._matrix_shape())

    @cached_property
    def precision_matrix(self) -> Any:
        return tidu.linalg.inv(self.covariance_matrix)


class MultivariateNormal(ScaleTrilParameterized, CenteredAtLoc, Distribution):
    """The normal distribution over vectors, with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` and ``scale_tril`` (the covariance's Cholesky factor).

    >>> import tidu
    >>> from tidu.distributions import MultivariateNormal
    >>> MultivariateNormal(tidu.zeros(2), tidu.eye(2)).log_prob(tidu.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        name, matrix = given_matrix(covariance_matrix, precision_matrix, scale_tril)
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if matrix.ndim < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        batch = tidu.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        n = loc.shape[-1]
        self.__dict__[name] = matrix.expand(*batch, n, n)
        self.loc = loc.expand(*batch, n)
        super().__init__(batch, (n,), validate_args=validate_args)
        self._set_factor(name, matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> MultivariateNormal:
        new = self._expanded(batch_shape, ("loc",), event_dims=1)
        self._expand_matrices(new, batch_shape)
        return new

    @property
    def variance(self) -> Any:
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(*self._batch_shape, *self._event_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        eps = tidu.randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        n = self._event_shape[0]
        distance = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + distance) - half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self) -> Any:
        n = self._event_shape[0]
        entropy = 0.5 * n * (1.0 + math.log(2 * math.pi)) + half_log_det(self._unbroadcasted_scale_tril)
        return entropy.expand(*self._batch_shape)
