"""``Transform``, the base class of the transforms, and ``_InverseTransform``, a transform run
backwards (re-exported by ``tidu.distributions.transforms``)."""

from __future__ import annotations

from typing import Any

from . import constraints


class Transform:
    """An invertible map ``y = f(x)`` from ``domain`` to ``codomain``; ``sign`` is +1 (increasing)
    or -1 (decreasing) for elementwise monotone bijections. With ``cache_size=1`` the latest pair
    ``(x, y)`` is remembered, so ``t.inv(t(x))`` returns ``x`` itself.

    Transforms without parameters compare equal by type; the others by identity unless they say
    otherwise (as PyTorch's).

    >>> import tidu
    >>> from tidu.distributions.transforms import ExpTransform
    >>> t = ExpTransform(cache_size=1)
    >>> x = tidu.tensor([0.5])
    >>> t.inv(t(x)) is x, ExpTransform() == ExpTransform()
    (True, True)
    """

    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real
    bijective = False
    _cache_size = 0
    _inv: Transform | None = None  # the cached inverse (``_InverseTransform``: the transform it inverts)
    _equal_by_type = False

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y: tuple[Any, Any] = (None, None)

    @property
    def sign(self) -> Any:
        raise NotImplementedError

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim != self.codomain.event_dim:
            raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")
        return self.domain.event_dim

    @property
    def inv(self) -> Transform:
        """The inverse map, itself a ``Transform`` (``t.inv(y)`` inverts, ``t.inv.inv`` is ``t``)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        """This transform with a cache of ``cache_size`` (``self`` when it already has one)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __call__(self, x: Any) -> Any:
        if not self._cache_size:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y: Any) -> Any:
        if not self._cache_size:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x: Any) -> Any:
        raise NotImplementedError

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def forward_shape(self, shape: Any) -> Any:
        """The shape of ``self(x)`` for ``x`` of ``shape``."""
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        """The shape of ``self.inv(y)`` for ``y`` of ``shape``."""
        return shape

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) if self._equal_by_type else self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    """``transform`` run backwards: domain and codomain swapped, the log-det negated; it shares the
    cache of ``transform``."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self) -> Any:  # type: ignore[override]
        return self._inv.codomain

    @property
    def codomain(self) -> Any:  # type: ignore[override]
        return self._inv.domain

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self._inv.bijective

    @property
    def sign(self) -> Any:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size: int = 1) -> Transform:
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x: Any) -> Any:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Any, y: Any) -> Any:
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape: Any) -> Any:
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self._inv.forward_shape(shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __repr__(self) -> str:
        return f"{self._inv!r}.inv"


def _need_dims(shape: Any, ndims: int) -> None:
    if len(shape) < ndims:
        raise ValueError("Too few dimensions on input")
