"""``Distribution``: the base class (shapes, validation, sampling entry points, ``repr``)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import tidu

from . import constraints
from .constraints import Constraint
from .utils import broadcast_all

__all__ = ["Distribution"]


class Distribution:
    """A batch of probability distributions over events of ``event_shape``.

    Subclasses give ``arg_constraints``, ``support`` and the methods they can compute; the rest
    raise ``NotImplementedError``. Parameters and values are validated unless
    ``validate_args=False`` (or ``Distribution.set_default_validate_args(False)``).

    >>> import tidu
    >>> from tidu.distributions import Normal
    >>> Normal(tidu.zeros(3), 1.0).sample((2,)).shape
    tidu.Size([2, 3])
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    arg_constraints: dict[str, Constraint] = {}
    support: Any = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for distributions made without ``validate_args``."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (), validate_args: bool | None = None) -> None:
        self._batch_shape = tidu.Size(batch_shape)
        self._event_shape = tidu.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _parameter_constraints(self) -> dict[str, Constraint]:
        return self.arg_constraints

    def _check_parameters(self) -> None:
        for name, constraint in self._parameter_constraints().items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(getattr(type(self), name, None), cached_property):
                continue  # derived lazily from the parameter that was given
            value = getattr(self, name)
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {name} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> tidu.Size:
        return self._batch_shape

    @property
    def event_shape(self) -> tidu.Size:
        return self._event_shape

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """The same distribution broadcast to ``batch_shape``."""
        raise NotImplementedError

    def _expanded(self, batch_shape: Any, names: tuple[str, ...], event_dims: int = 0) -> Distribution:
        """A copy of ``self`` whose parameters ``names`` are expanded to ``batch_shape`` (plus their
        ``event_dims`` rightmost sizes)."""
        new = type(self).__new__(type(self))
        shape = tidu.Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                new.__dict__[name] = value.expand(*shape, *value.shape[value.ndim - event_dims:])
        Distribution.__init__(new, shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _extended_shape(self, sample_shape: Any = ()) -> tidu.Size:
        return tidu.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def sample(self, sample_shape: Any = ()) -> Any:
        """Draws of shape ``sample_shape + batch_shape + event_shape``, not differentiable."""
        with tidu.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Any:
        """Reparameterized draws: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Any:
        return self.sample((n,))

    def log_prob(self, value: Any) -> Any:
        raise NotImplementedError

    def cdf(self, value: Any) -> Any:
        raise NotImplementedError

    def icdf(self, value: Any) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Any:
        raise NotImplementedError

    def perplexity(self) -> Any:
        return self.entropy().exp()

    @property
    def mean(self) -> Any:
        raise NotImplementedError

    @property
    def mode(self) -> Any:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Any:
        raise NotImplementedError

    @property
    def stddev(self) -> Any:
        return self.variance.sqrt()

    def _validate_sample(self, value: Any) -> None:
        if not isinstance(value, tidu.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.ndim - len(self._event_shape)
        if tuple(value.shape[event_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs {self._event_shape}.")
        expected = tuple(self._batch_shape) + tuple(self._event_shape)
        for actual, wanted in zip(reversed(tuple(value.shape)), reversed(expected)):
            if actual != 1 and wanted != 1 and actual != wanted:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value.shape} vs {tidu.Size(expected)}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _validate(self, value: Any) -> None:
        if self._validate_args:
            self._validate_sample(value)

    def __repr__(self) -> str:
        names = [name for name in self.arg_constraints if name in self.__dict__]
        shown = (f"{name}: {_summary(self.__dict__[name])}" for name in names)
        return f"{type(self).__name__}({', '.join(shown)})"


def _summary(value: Any) -> Any:
    if value.numel() != 1:
        return value.size()
    return value.item() if value.ndim == 0 else value


class CenteredAtLoc:
    """``mean`` and ``mode``: the distribution's ``loc``."""

    loc: Any

    @property
    def mean(self) -> Any:
        return self.loc

    @property
    def mode(self) -> Any:
        return self.loc


class LocScale(CenteredAtLoc, Distribution):
    """What the real-valued location-scale families share (``Normal``, ``Laplace``): their
    parameters, broadcast to the batch shape, and ``loc`` as the mean and the mode."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Any:
        return self._expanded(batch_shape, ("loc", "scale"))

