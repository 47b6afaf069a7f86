"""Bijective transforms with the log-absolute-determinant of their Jacobian, for
``TransformedDistribution``.

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

__all__ = ["AffineTransform", "ExpTransform", "SigmoidTransform", "TanhTransform", "Transform"]


class Transform:
    """An invertible map ``y = f(x)`` from ``domain`` to ``codomain`` of sign ``sign``
    (+1 increasing, -1 decreasing)."""

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    bijective = True
    sign = 1

    @property
    def event_dim(self) -> int:
        return self.domain.event_dim

    @property
    def inv(self) -> Any:
        return self._inverse

    def __call__(self, x: Any) -> Any:
        return self._call(x)

    def _call(self, x: Any) -> Any:
        raise NotImplementedError

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class ExpTransform(Transform):
    """``y = exp(x)``."""

    codomain = constraints.positive

    def _call(self, x: Any) -> Any:
        return x.exp()

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return x


class AffineTransform(Transform):
    """``y = loc + scale * x`` (elementwise; ``event_dim`` rightmost dimensions form one event)."""

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0) -> None:
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

    def __repr__(self) -> str:
        return f"AffineTransform(loc={self.loc}, scale={self.scale})"


class SigmoidTransform(Transform):
    """``y = sigmoid(x)``; the inverse clamps ``y`` into the open unit interval."""

    codomain = constraints.unit_interval

    def _call(self, x: Any) -> Any:
        finfo = tidu.finfo(x.dtype)
        return x.sigmoid().clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))

    def _inverse(self, y: Any) -> Any:
        finfo = tidu.finfo(y.dtype)
        y = y.clamp(min=float(finfo.tiny), max=1 - float(finfo.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -F.softplus(-x) - F.softplus(x)


class TanhTransform(Transform):
    """``y = tanh(x)``."""

    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x: Any) -> Any:
        return x.tanh()

    def _inverse(self, y: Any) -> Any:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return 2.0 * (math.log(2.0) - x - F.softplus(-2.0 * x))
