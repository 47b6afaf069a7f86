"""Transforms built from others or acting on whole events, as PyTorch's: ``ComposeTransform``,
``IndependentTransform``, ``ReshapeTransform``, ``CatTransform``, ``StackTransform``, the matrix
transforms (``LowerCholeskyTransform``, ``PositiveDefiniteTransform``, ``CorrCholeskyTransform``),
``SoftmaxTransform``, ``SoftplusTransform`` and ``CumulativeDistributionTransform``. They are
re-exported by ``tidu.distributions.transforms``.

>>> import tidu
>>> from tidu.distributions.transforms import AffineTransform, ComposeTransform, ExpTransform
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
from ._transform_base import Transform, _need_dims
from .utils import sum_rightmost

__all__ = ["CatTransform", "ComposeTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "identity_transform"]


def _independent(constraint: Any, ndims: int) -> Any:
    return constraints.independent(constraint, ndims) if ndims > 0 else constraint


class ComposeTransform(Transform):
    """``parts`` applied in order; the event dims grow to the largest any part needs. The parts
    cache for themselves (``cache_size`` is handed to each); the inverse is the composition of the
    inverses in reverse order.

    >>> import tidu
    >>> from tidu.distributions.transforms import ComposeTransform, ExpTransform, StickBreakingTransform
    >>> t = ComposeTransform([ExpTransform(), StickBreakingTransform()])
    >>> t.domain, t.codomain, t.forward_shape((4, 2))
    (IndependentConstraint(Real(), 1), Simplex(), (4, 3))
    >>> t.inv(t(tidu.tensor([0.5, -1.0])))
    tensor([ 0.5000, -1.0000])
    """

    def __init__(self, parts: Sequence[Transform], cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
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

    @property
    def inv(self) -> Transform:
        if self._inv is None:
            inverse = ComposeTransform([part.inv for part in reversed(self.parts)])
            inverse._inv = self
            self._inv = inverse
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x: Any) -> Any:
        for part in self.parts:
            x = part(x)
        return x

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

    def inverse_shape(self, shape: Any) -> Any:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with its ``reinterpreted_batch_ndims`` rightmost dims part of the event:
    the same map, its log-det summed over those dims.

    >>> import tidu
    >>> from tidu.distributions.transforms import ExpTransform, IndependentTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> x = tidu.tensor([[0.0, 1.0], [2.0, 3.0]])
    >>> t.log_abs_det_jacobian(x, t(x)), t.codomain
    (tensor([1., 5.]), IndependentConstraint(GreaterThan(lower_bound=0.0), 1))
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base_transform.bijective

    @property
    def sign(self) -> Any:
        return self.base_transform.sign

    def _call(self, x: Any) -> Any:
        _need_dims(x.shape, self.domain.event_dim)
        return self.base_transform(x)

    def _inverse(self, y: Any) -> Any:
        _need_dims(y.shape, self.codomain.event_dim)
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return f"IndependentTransform({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


class ReshapeTransform(Transform):
    """Events of shape ``in_shape`` reshaped to ``out_shape`` (the same number of elements); the
    log-det is zero.

    >>> import tidu
    >>> from tidu.distributions.transforms import ReshapeTransform
    >>> t = ReshapeTransform((6,), (2, 3))
    >>> t(tidu.arange(12.0).reshape(2, 6)).shape, t.forward_shape((5, 6)), t.inverse_shape((5, 2, 3))
    (tidu.Size([2, 2, 3]), (5, 2, 3), (5, 6))
    """

    bijective = True

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int], cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tidu.Size(in_shape), tidu.Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Any) -> Any:
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x.new_zeros(*x.shape[:x.ndim - len(self.in_shape)])

    def forward_shape(self, shape: Any) -> Any:
        return _swap_event(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return _swap_event(shape, self.out_shape, self.in_shape)

    def __repr__(self) -> str:
        return f"ReshapeTransform(in_shape={tuple(self.in_shape)}, out_shape={tuple(self.out_shape)})"


def _swap_event(shape: Any, old: tuple, new: tuple) -> tuple:
    """``shape`` with its rightmost ``old`` replaced by ``new``."""
    _need_dims(shape, len(old))
    cut = len(shape) - len(old)
    if tuple(shape[cut:]) != tuple(old):
        raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got {tuple(old)}")
    return (*shape[:cut], *new)


class SoftmaxTransform(Transform):
    """Real vectors to the simplex by ``softmax`` (not bijective: its ``inv`` is ``log``).

    >>> import tidu
    >>> from tidu.distributions.transforms import SoftmaxTransform
    >>> SoftmaxTransform()(tidu.tensor([0.0, 1.0]))
    tensor([0.2689, 0.7311])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def forward_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return shape

    inverse_shape = forward_shape


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` (linear above ``x = 20``, as ``F.softplus``).

    >>> import tidu
    >>> from tidu.distributions.transforms import SoftplusTransform
    >>> t = SoftplusTransform()
    >>> t(tidu.tensor([0.0])), t.inv(tidu.tensor([1.0]))
    (tensor([0.6931]), tensor([0.5413]))
    """

    codomain = constraints.positive
    bijective = True
    sign = 1
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return F.softplus(x)

    def _inverse(self, y: Any) -> Any:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones with a positive diagonal: the strict lower
    triangle kept, the diagonal exponentiated (the upper triangle is dropped, so it is not
    bijective and has no log-det, as PyTorch's).

    >>> import tidu
    >>> from tidu.distributions.transforms import LowerCholeskyTransform
    >>> LowerCholeskyTransform()(tidu.tensor([[0.0, 5.0], [2.0, 1.0]]))
    tensor([[1.0000, 0.0000],
            [2.0000, 2.7183]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return x.tril(-1) + tidu.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y: Any) -> Any:
        return y.tril(-1) + tidu.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive-definite ones: ``L Lᵀ`` of ``LowerCholeskyTransform``'s ``L``
    (not bijective, no log-det, as PyTorch's).

    >>> import tidu
    >>> from tidu.distributions.transforms import PositiveDefiniteTransform
    >>> PositiveDefiniteTransform()(tidu.tensor([[0.0, 5.0], [2.0, 0.0]]))
    tensor([[1., 2.],
            [2., 5.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    _equal_by_type = True

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
    matrices (PyTorch's map: ``tanh``, then stick breaking along each row). The log-det is that of
    the map onto the strict lower triangle.

    >>> import tidu
    >>> from tidu.distributions.transforms import CorrCholeskyTransform
    >>> t = CorrCholeskyTransform()
    >>> t(tidu.tensor([0.5])), t.forward_shape((4, 3)), t.inverse_shape((4, 3, 3))
    (tensor([[1.0000, 0.0000],
            [0.4621, 0.8868]]), (4, 3, 3), (4, 3))
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

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
        _need_dims(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return (*shape[:-1], d, d)

    def inverse_shape(self, shape: Any) -> Any:
        _need_dims(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return (*shape[:-2], d * (d - 1) // 2)


def _check_functor_dim(value: Any, dim: int, size: int, name: str, expected: str) -> None:
    """That ``dim`` indexes ``value`` and that ``value`` has ``size`` entries along it."""
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"dim {dim} out of range for {name} with {value.ndim} dimensions")
    if value.shape[dim] != size:
        raise AssertionError(f"{name}.size({dim}) = {value.shape[dim]} must equal {expected} {size}")


class CatTransform(Transform):
    """``tseq[i]`` applied to the ``i``-th piece of the input along ``dim`` (pieces of
    ``lengths``, one element each by default), the results concatenated as ``tidu.cat`` does.

    >>> import tidu
    >>> from tidu.distributions.transforms import AffineTransform, CatTransform, ExpTransform
    >>> t = CatTransform([ExpTransform(), AffineTransform(0.0, 3.0)], dim=0, lengths=[1, 2])
    >>> x = tidu.tensor([0.0, 1.0, 2.0])
    >>> t(x), t.log_abs_det_jacobian(x, t(x))
    (tensor([1., 3., 6.]), tensor([0.0000, 1.0986, 1.0986]))
    """

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None,
                 cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self) -> int:
        return sum(self.lengths)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, value: Any, name: str) -> tuple:
        _check_functor_dim(value, self.dim, self.length, name, "length")
        return value.split(self.lengths, self.dim)

    def _call(self, x: Any) -> Any:
        return tidu.cat([t(p) for t, p in zip(self.transforms, self._pieces(x, "x"))], self.dim)

    def _inverse(self, y: Any) -> Any:
        return tidu.cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        event_dim = self.event_dim
        terms = [sum_rightmost(t.log_abs_det_jacobian(a, b), event_dim - t.event_dim)
                 for t, a, b in zip(self.transforms, self._pieces(x, "x"), self._pieces(y, "y"))]
        dim = (self.dim if self.dim < 0 else self.dim - x.ndim) + event_dim
        if dim < 0:  # a batch dim: the pieces' log-dets sit side by side
            return tidu.cat(terms, dim)
        total = terms[0]  # an event dim: the pieces' log-dets add up
        for term in terms[1:]:
            total = total + term
        return total


class StackTransform(Transform):
    """``tseq[i]`` applied to the ``i``-th slice of the input along ``dim``, the results stacked
    as ``tidu.stack`` does.

    >>> import tidu
    >>> from tidu.distributions.transforms import ExpTransform, SigmoidTransform, StackTransform
    >>> t = StackTransform([ExpTransform(), SigmoidTransform()], dim=1)
    >>> t(tidu.zeros(2, 2)), t.codomain
    (tensor([[1.0000, 0.5000],
            [1.0000, 0.5000]]), Stack())
    """

    def __init__(self, tseq: Sequence[Transform], dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return constraints.stack([t.codomain for t in self.transforms], self.dim)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, value: Any, name: str) -> tuple:
        _check_functor_dim(value, self.dim, len(self.transforms), name, "len(transforms)")
        return value.unbind(self.dim)

    def _call(self, x: Any) -> Any:
        return tidu.stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))], self.dim)

    def _inverse(self, y: Any) -> Any:
        return tidu.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return tidu.stack([t.log_abs_det_jacobian(a, b)
                           for t, a, b in zip(self.transforms, self._slices(x, "x"), self._slices(y, "y"))], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: the support of a univariate distribution to the unit interval;
    the log-det is the log density.

    >>> import tidu
    >>> from tidu.distributions import Normal
    >>> from tidu.distributions.transforms import CumulativeDistributionTransform
    >>> t = CumulativeDistributionTransform(Normal(0.0, 1.0))
    >>> t(tidu.tensor([0.0])), t.inv(tidu.tensor([0.5]))
    (tensor([0.5000]), tensor([0.]))
    """

    codomain = constraints.unit_interval
    bijective = True
    sign = 1

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self.distribution.support

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        return self.distribution.cdf(x)

    def _inverse(self, y: Any) -> Any:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return self.distribution.log_prob(x)
