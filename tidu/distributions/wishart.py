"""The Wishart distribution."""

from __future__ import annotations

import math
import warnings
from typing import Any

import tidu

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import ScaleTrilParameterized, given_matrix, half_log_det


def mvdigamma(x: Any, p: int) -> Any:
    """The multivariate digamma function: ``sum_{j < p} digamma(x - j / 2)``, the derivative of
    ``mvlgamma(x, p)``."""
    if not bool((x > (p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return tidu.digamma(x.unsqueeze(-1) - tidu.arange(p, dtype=x.dtype, device=x.device) / 2).sum(-1)


class Wishart(ScaleTrilParameterized, ExponentialFamily):
    """The Wishart distribution over ``p x p`` positive-definite matrices with ``df`` degrees of
    freedom (``df > p - 1``) and exactly one of ``covariance_matrix``, ``precision_matrix`` and
    ``scale_tril`` (the covariance's Cholesky factor): the law of ``X.mT @ X`` for ``df`` rows ``X``
    of ``MultivariateNormal(0, covariance_matrix)`` when ``df`` is an integer.

    ``rsample`` uses the Bartlett decomposition ``L A A.mT L.mT``: ``A`` lower-triangular with
    ``sqrt(Chi2(df - i))`` on the diagonal (reparameterized through tidu's gamma sampler) and
    standard normals below it.

    >>> import tidu
    >>> from tidu.distributions import Wishart
    >>> d = Wishart(tidu.tensor(4.0), covariance_matrix=tidu.eye(2))
    >>> d.log_prob(tidu.eye(2)), d.mean
    (tensor(-4.2242), tensor([[4., 0.],
            [0., 4.]]))
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict[str, constraints.Constraint]:  # type: ignore[override]
        return {"covariance_matrix": constraints.positive_definite, "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(self._event_shape[-1] - 1)}

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None, scale_tril: Any = None,
                 validate_args: bool | None = None) -> None:
        name, matrix = given_matrix(covariance_matrix, precision_matrix, scale_tril, error=AssertionError)
        if matrix.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, tidu.Tensor):
            batch = tidu.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape))
            self.df = df.expand(*batch)
        else:
            batch = tuple(matrix.shape[:-2])
            self.df = tidu.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        p = matrix.shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        self.__dict__[name] = matrix.expand(*batch, p, p)
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                          stacklevel=2)
        super().__init__(batch, (p, p), validate_args=validate_args)
        self._set_factor(name, matrix)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Wishart:
        new = self._expanded(batch_shape, ())
        new.df = self.df.expand(*batch_shape)
        self._expand_matrices(new, batch_shape)
        return new

    def _df(self) -> Any:
        """``df`` with two trailing dimensions, to scale matrices of the batch."""
        return self.df.expand(*self._batch_shape)[..., None, None]

    @property
    def mean(self) -> Any:
        return self._df() * self.covariance_matrix

    @property
    def mode(self) -> Any:
        factor = self._df() - self._event_shape[-1] - 1
        return tidu.where(factor > 0, factor, math.nan) * self.covariance_matrix

    @property
    def variance(self) -> Any:
        v = self.covariance_matrix
        diagonal = v.diagonal(dim1=-2, dim2=-1)
        return self._df() * (v ** 2 + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def _bartlett(self, sample_shape: tuple[int, ...]) -> Any:
        p = self._event_shape[-1]
        tril = self._unbroadcasted_scale_tril
        chi2_df = self.df.expand(*self._batch_shape).unsqueeze(-1) - tidu.arange(p, dtype=tril.dtype, device=tril.device)
        chi = Chi2(chi2_df, validate_args=False).rsample(sample_shape).sqrt()
        below = tidu.randn((*sample_shape, *self._batch_shape, p, p), dtype=tril.dtype, device=tril.device).tril(-1)
        factor = tril @ (tidu.diag_embed(chi.clamp(min=float(tidu.finfo(chi.dtype).eps))) + below)
        return factor @ factor.mT

    def rsample(self, sample_shape: Any = (), max_try_correction: int | None = None) -> Any:
        """Bartlett draws; a singular one (possible for ``df`` near ``p - 1``) is redrawn up to
        ``max_try_correction`` (10) times and may then be returned as it is."""
        sample_shape = tuple(sample_shape)
        sample = self._bartlett(sample_shape)
        for _ in range(10 if max_try_correction is None else max_try_correction):
            singular = ~self.support.check(sample)
            if not bool(singular.any()):
                break
            warnings.warn("Singular sample detected.", stacklevel=2)
            sample = tidu.where(singular[..., None, None], self._bartlett(sample_shape), sample)
        return sample

    def log_prob(self, value: Any) -> Any:
        self._validate(value)
        nu, p, tril = self.df, self._event_shape[-1], self._unbroadcasted_scale_tril
        trace = tidu.cholesky_solve(value, tril).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det(tril)) - tidu.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * tidu.linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self) -> Any:
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det(self._unbroadcasted_scale_tril))
                + tidu.mvlgamma(nu / 2, p) - (nu - p - 1) / 2 * mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x: Any, y: Any) -> Any:
        p = self._event_shape[-1]
        half_df = y + (p + 1) / 2
        return half_df * (p * math.log(2) - tidu.linalg.slogdet(-2 * x).logabsdet) + tidu.mvlgamma(half_df, p)
