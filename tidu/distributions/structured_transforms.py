"""Transforms built from others or acting on whole events: ``ComposeTransform``,
``IndependentTransform``, ``ReshapeTransform``, ``CatTransform``, ``StackTransform``, the matrix
transforms (``LowerCholeskyTransform``, ``PositiveDefiniteTransform``, ``CorrCholeskyTransform``),
``SoftmaxTransform``, ``SoftplusTransform`` and ``CumulativeDistributionTransform``, as PyTorch's.

>>> import tidu
>>> from tidu.distributions.transforms import AffineTransform, ExpTransform
>>> from tidu.distributions.structured_transforms import ComposeTransform
>>> t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])
>>> t(tidu.tensor([0.0])), t.inv(tidu.tensor([3.0]))
(tensor([3.]), tensor([0.]))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import tidu
from tidu.nn import functional as F

from . import constraints
from .transforms import Transform
from .utils import sum_rightmost

__all__ = ["CatTransform", "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "identity_transform"]


def _independent(constraint: Any, ndims: int) -> Any:
    return constraints.independent(constraint, ndims) if ndims > 0 else constraint


class ComposeTransform(Transform):
    """``parts`` applied in order; the event dims grow to the largest any part needs."""

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        self.parts = list(parts)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim - part.codomain.event_dim + part.domain.event_dim, part.domain.event_dim)
        first = self.parts[0].domain
        return _independent(first, event_dim - first.event_dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        if not self.parts:
            return constraints.real
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim - part.domain.event_dim + part.codomain.event_dim, part.codomain.event_dim)
        last = self.parts[-1].codomain
        return _independent(last, event_dim - last.event_dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def sign(self) -> Any:
        sign = 1
        for part in self.parts:
            sign = sign * part.sign
        return sign

    def _call(self, x: Any) -> Any:
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y: Any) -> Any:
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        if not self.parts:
            return tidu.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape: Any) -> Any:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost dims part of the event."""

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        self.base_transform = base_transform
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return _independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return _independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Events of shape ``in_shape`` reshaped to ``out_shape`` (the same number of elements)."""

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Any) -> Any:
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Any) -> Any:
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x.new_zeros(*x.shape[:x.ndim - len(self.in_shape)])

    def forward_shape(self, shape: Any) -> Any:
        cut = len(shape) - len(self.in_shape)
        if cut < 0 or tuple(shape[cut:]) != self.in_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {self.in_shape}")
        return (*shape[:cut], *self.out_shape)

    def __repr__(self) -> str:
        return f"ReshapeTransform(in_shape={self.in_shape}, out_shape={self.out_shape})"


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by ``softmax`` (not bijective: its ``inv`` is ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = False

    def _call(self, x: Any) -> Any:
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Any) -> Any:
        return y.log()


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``."""

    codomain = constraints.positive
    sign = 1

    def _call(self, x: Any) -> Any:
        return F.softplus(x)

    def _inverse(self, y: Any) -> Any:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x: Any) -> Any:
        return x.tril(-1) + tidu.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Any) -> Any:
        return y.tril(-1) + tidu.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L Lᵀ`` of ``LowerCholeskyTransform``'s ``L``."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x: Any) -> Any:
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y: Any) -> Any:
        return LowerCholeskyTransform().inv(tidu.linalg.cholesky(y))


def _tril_indices(n: int, diag: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's row-major order of the entries on and below the ``diag``-th diagonal."""
    rows, cols = np.nonzero(np.arange(n)[None, :] < np.arange(n)[:, None] + (diag + 1))
    return rows, cols


def vec_to_tril_matrix(vec: Any, diag: int = 0) -> Any:
    """The square matrix whose lower triangle (from the ``diag``-th diagonal) is ``vec``, row by row."""
    n = round((-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))) / 2)
    rows, cols = _tril_indices(n, diag)
    flat = tidu.tensor(rows * n + cols, dtype=tidu.int64, device=vec.device)
    out = vec.new_zeros(*vec.shape[:-1], n * n)
    return out.index_add(-1, flat, vec).reshape(*vec.shape[:-1], n, n)


def tril_matrix_to_vec(mat: Any, diag: int = 0) -> Any:
    """The lower triangle (from the ``diag``-th diagonal) of ``mat``, row by row."""
    n = mat.shape[-1]
    rows, cols = _tril_indices(n, diag)
    flat = tidu.tensor(rows * n + cols, dtype=tidu.int64, device=mat.device)
    return mat.reshape(*mat.shape[:-2], n * n).index_select(-1, flat)


class CorrCholeskyTransform(Transform):
    """Real vectors of length ``D (D - 1) / 2`` to Cholesky factors of ``D x D`` correlation
    matrices (PyTorch's map: ``tanh``, then stick breaking along each row)."""

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def _call(self, x: Any) -> Any:
        eps = float(tidu.finfo(x.dtype).eps)
        x = x.tanh().clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        remaining = (1 - r * r).sqrt().cumprod(-1)
        r = r + tidu.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * F.pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y: Any) -> Any:
        left = 1 - (y * y).cumsum(-1)
        shifted = F.pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(shifted, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        left = 1 - (y * y).cumsum(-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(left, diag=-2).log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking + tanh

    def forward_shape(self, shape: Any) -> Any:
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return (*shape[:-1], d, d)


class CatTransform(Transform):
    """``tseq[i]`` applied to the ``i``-th piece of the input along ``dim`` (pieces of
    ``lengths``, one element each by default), the results concatenated."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError("lengths and tseq differ in length")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    def _pieces(self, x: Any) -> list:
        if x.shape[self.dim] != sum(self.lengths):
            raise AssertionError(f"CatTransform: size {x.shape[self.dim]} along dim {self.dim}, expected "
                                 f"{sum(self.lengths)}")
        return list(x.split(self.lengths, self.dim))

    def _call(self, x: Any) -> Any:
        return tidu.cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y: Any) -> Any:
        return tidu.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        dim = self.dim if self.dim < 0 else self.dim - x.ndim
        terms = []
        for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y)):
            term = t.log_abs_det_jacobian(a, b)
            if t.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        if dim + self.event_dim >= 0:  # the cat dim is an event dim: the terms add
            total = terms[0]
            for term in terms[1:]:
                total = total + term
            return total
        return tidu.cat(terms, dim + self.event_dim)


class StackTransform(Transform):
    """``tseq[i]`` applied to the ``i``-th slice of the input along ``dim``, the results stacked."""

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    def _slices(self, x: Any) -> list:
        if x.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"StackTransform: size {x.shape[self.dim]} along dim {self.dim}, expected "
                                 f"{len(self.transforms)}")
        return list(x.unbind(self.dim))

    def _call(self, x: Any) -> Any:
        return tidu.stack([t(s) for t, s in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y: Any) -> Any:
        return tidu.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return tidu.stack([t.log_abs_det_jacobian(a, b)
                           for t, a, b in zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: the support of a univariate distribution to the unit interval."""

    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def _call(self, x: Any) -> Any:
        return self.distribution.cdf(x)

    def _inverse(self, y: Any) -> Any:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return self.distribution.log_prob(x)


def _compare_by_type() -> None:
    """Transforms without parameters compare equal by type (``Transform.__eq__``)."""
    from . import transforms

    transforms._PARAMETERLESS = (*transforms._PARAMETERLESS, SoftmaxTransform, SoftplusTransform,
                                 LowerCholeskyTransform, PositiveDefiniteTransform, CorrCholeskyTransform)


_compare_by_type()
