"""Invertible transforms with the log-absolute-determinant of their Jacobian, for
``TransformedDistribution`` and the constraint registries: the elementwise ones are defined here;
the base class (``_transform_base``) and the transforms built from others or acting on whole events
(``structured_transforms``) are re-exported, as PyTorch keeps all of them in one module.

>>> import tidu
>>> from tidu.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> t.inv(t(tidu.tensor([0.5])))
tensor([0.5000])
"""

from __future__ import annotations

import math
from typing import Any

import tidu
from tidu.nn import functional as F

from . import constraints
from ._transform_base import Transform, _InverseTransform, _need_dims  # noqa: F401 - PyTorch's module has _InverseTransform
from .structured_transforms import (
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    identity_transform,
)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class ExpTransform(Transform):
    """``y = exp(x)``."""

    codomain = constraints.positive
    bijective = True
    sign = 1
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return x.exp()

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x


class AffineTransform(Transform):
    """``y = loc + scale * x`` (elementwise; ``event_dim`` rightmost dimensions form one event)."""

    bijective = True

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim
        self.domain = self.codomain = constraints.independent(constraints.real, event_dim) if event_dim else constraints.real

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def sign(self) -> Any:
        return self.scale.sign() if isinstance(self.scale, tidu.Tensor) else math.copysign(1, self.scale)

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        return self.loc + self.scale * x

    def _inverse(self, y: Any) -> Any:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        scale = self.scale
        if isinstance(scale, tidu.Tensor):
            result = scale.abs().log().expand(*x.shape) if scale.shape != x.shape else scale.abs().log()
        else:
            result = tidu.full_like(x, math.log(abs(scale)))
        for _ in range(self._event_dim):
            result = result.sum(-1)
        return result

    def forward_shape(self, shape: Any) -> Any:
        return tidu.broadcast_shapes(shape, getattr(self.loc, "shape", ()), getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale) and self._event_dim == other._event_dim)

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"


def _same(a: Any, b: Any) -> bool:
    """Whether two numbers or tensors are equal everywhere."""
    if isinstance(a, tidu.Tensor) or isinstance(b, tidu.Tensor):
        return bool((tidu.as_tensor(a) == tidu.as_tensor(b)).all())
    return a == b


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``; the inverse clamps ``y`` into the open unit interval."""

    codomain = constraints.unit_interval
    bijective = True
    sign = 1
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return _clipped_sigmoid(x)

    def _inverse(self, y: Any) -> Any:
        finfo = tidu.finfo(y.dtype)
        y = y.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``."""

    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = 1
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return x.tanh()

    def _inverse(self, y: Any) -> Any:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals (``exponent`` broadcast elementwise).

    >>> import tidu
    >>> from tidu.distributions.transforms import PowerTransform
    >>> t = PowerTransform(tidu.tensor(2.0))
    >>> t(tidu.tensor([3.0])), t.log_abs_det_jacobian(tidu.tensor([3.0]), tidu.tensor([9.0]))
    (tensor([9.]), tensor([1.7918]))
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = exponent if isinstance(exponent, tidu.Tensor) else tidu.tensor(float(exponent))

    @property
    def sign(self) -> Any:
        return self.exponent.sign()

    def with_cache(self, cache_size: int = 1) -> Transform:
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def _call(self, x: Any) -> Any:
        return x.pow(self.exponent)

    def _inverse(self, y: Any) -> Any:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape: Any) -> Any:
        return tidu.broadcast_shapes(shape, self.exponent.shape)

    inverse_shape = forward_shape

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent).all())

    __hash__ = Transform.__hash__


class AbsTransform(Transform):
    """``y = |x|``: not injective, so its "inverse" is the identity on the positive half (PyTorch's).

    >>> import tidu
    >>> from tidu.distributions.transforms import AbsTransform
    >>> AbsTransform()(tidu.tensor([-2.0, 3.0]))
    tensor([2., 3.])
    """

    codomain = constraints.positive
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        return x.abs()

    def _inverse(self, y: Any) -> Any:
        return y


class StickBreakingTransform(Transform):
    """Real vectors of length ``K - 1`` to the ``K``-simplex by stick breaking (PyTorch's map:
    ``z = sigmoid(x - log(K - 1 - i))``, each coordinate the fraction ``z`` of the stick left).

    >>> import tidu
    >>> from tidu.distributions.transforms import StickBreakingTransform
    >>> t = StickBreakingTransform()
    >>> y = t(tidu.tensor([0.5, -1.0]))
    >>> y, t.inv(y)
    (tensor([0.4519, 0.1474, 0.4007]), tensor([ 0.5000, -1.0000]))
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True
    _equal_by_type = True

    def _call(self, x: Any) -> Any:
        offset = x.shape[-1] + 1 - tidu.ones_like(x).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return F.pad(z, [0, 1], value=1) * F.pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y: Any) -> Any:
        y_crop = y[..., :-1]
        offset = y.shape[-1] - tidu.ones_like(y_crop).cumsum(-1)
        sf = 1 - y_crop.cumsum(-1)
        # the stick left before each cut, clamped away from 0 (PyTorch's clamp)
        sf = sf.clamp(min=float(tidu.finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + offset.log()

    def forward_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Any) -> Any:
        _need_dims(shape, 1)
        return (*shape[:-1], shape[-1] - 1)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        offset = x.shape[-1] + 1 - tidu.ones_like(x).cumsum(-1)
        x = x - offset.log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)


def _clipped_sigmoid(x: Any) -> Any:
    finfo = tidu.finfo(x.dtype)
    return x.sigmoid().clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

