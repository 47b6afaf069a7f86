"""Constraints: the set a parameter or a value must lie in, each with a ``check`` that answers
element-wise (over the constraint's ``event_dim`` rightmost dimensions) with a boolean tensor.

>>> import tidu
>>> from tidu.distributions import constraints
>>> constraints.positive.check(tidu.tensor([1.0, -1.0]))
tensor([ True, False])
>>> constraints.unit_interval
Interval(lower_bound=0.0, upper_bound=1.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tidu

__all__ = [
    "Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
    "greater_than", "greater_than_eq", "half_open_interval", "independent", "integer_interval", "interval",
    "is_dependent", "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative",
    "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer", "positive_semidefinite",
    "real", "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval",
]


def _show(bound: Any) -> Any:
    """A bound as PyTorch prints it: a 0-d tensor as its number."""
    return bound.item() if isinstance(bound, tidu.Tensor) and bound.ndim == 0 else bound


class Constraint:
    """A set of values; ``check(value)`` is True where ``value`` lies in it."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Any:
        raise NotImplementedError

    def _params(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"{type(self).__name__[1:]}({self._params()})"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters; it cannot check."""

    def __init__(self, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        self.is_discrete = is_discrete
        self.event_dim = event_dim

    def check(self, value: Any) -> Any:
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint: Any) -> bool:
    """Whether ``constraint`` is a placeholder for one that depends on other parameters."""
    return isinstance(constraint, _Dependent)


class dependent_property(property):  # noqa: N801 - PyTorch's name
    """A property that is also a dependent constraint (read on the class, it is the placeholder)."""

    def __init__(self, fn: Any = None, *, is_discrete: bool = False, event_dim: int = 0) -> None:
        super().__init__(fn)
        self.is_discrete = is_discrete
        self.event_dim = event_dim


class _Real(Constraint):
    def check(self, value: Any) -> Any:
        return value == value  # False only at NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value: Any) -> Any:
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Bound(Constraint):
    """A one-sided bound: ``compare(value, bound)``."""

    def __init__(self, bound: Any) -> None:
        self._bound = bound

    def _params(self) -> str:
        return f"{self._bound_name}={_show(self._bound)}"


class _GreaterThan(_Bound):
    _bound_name = "lower_bound"

    @property
    def lower_bound(self) -> Any:
        return self._bound

    def check(self, value: Any) -> Any:
        return value > self._bound


class _GreaterThanEq(_GreaterThan):
    def check(self, value: Any) -> Any:
        return value >= self._bound


class _LessThan(_Bound):
    _bound_name = "upper_bound"

    @property
    def upper_bound(self) -> Any:
        return self._bound

    def check(self, value: Any) -> Any:
        return value < self._bound


class _IntegerGreaterThan(_GreaterThan):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & (value >= self._bound)


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound

    def _params(self) -> str:
        return f"lower_bound={_show(self.lower_bound)}, upper_bound={_show(self.upper_bound)}"

    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value <= self.upper_bound)


class _HalfOpenInterval(_Interval):
    def check(self, value: Any) -> Any:
        return (self.lower_bound <= value) & (value < self.upper_bound)


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value: Any) -> Any:
        return (value % 1 == 0) & super().check(value)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value: Any) -> Any:
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        return (value.tril() == value).flatten(-2).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value: Any) -> Any:
        return _LowerTriangular().check(value) & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _CorrCholesky(Constraint):
    """Lower-triangular matrices with a positive diagonal and rows of unit norm (to ``10 n eps``):
    Cholesky factors of correlation matrices."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        tolerance = float(tidu.finfo(value.dtype).eps) * value.shape[-1] * 10
        unit_rows = ((value.detach() ** 2).sum(-1).sqrt() - 1).abs().le(tolerance).all(-1)
        return _LowerCholesky().check(value) & unit_rows


class _Square(Constraint):
    """Square matrices: the answer is the same for the whole batch."""

    event_dim = 2

    def check(self, value: Any) -> Any:
        return tidu.full(tuple(value.shape[:-2]), value.shape[-2] == value.shape[-1], dtype=tidu.bool,
                         device=value.device)


class _Symmetric(_Square):
    """Square matrices equal to their transpose (to ``atol=1e-6``)."""

    def check(self, value: Any) -> Any:
        square = super().check(value)
        if not bool(square.all()):
            return square
        return tidu.isclose(value, value.mT, atol=1e-6).flatten(-2).all(-1)


class _PositiveSemidefinite(_Symmetric):
    """Symmetric matrices without negative eigenvalues. Each matrix of a batch is judged on its
    own (PyTorch answers only the symmetry when some matrix of the batch is not symmetric)."""

    def check(self, value: Any) -> Any:
        symmetric = super().check(value)
        if not bool(symmetric.any()):
            return symmetric
        return symmetric & tidu.linalg.eigvalsh(value).ge(0).all(-1)


class _PositiveDefinite(_Symmetric):
    """Symmetric matrices with a Cholesky factor, judged one by one as ``positive_semidefinite``."""

    def check(self, value: Any) -> Any:
        symmetric = super().check(value)
        if not bool(symmetric.any()):
            return symmetric
        return symmetric & tidu.linalg.cholesky_ex(value).info.eq(0)


class _Pieces(Constraint):
    """Constraints ``cseq`` on pieces of a value along ``dim`` (``_Cat``, ``_Stack``)."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0) -> None:
        if not all(isinstance(c, Constraint) for c in cseq):
            raise AssertionError("All elements of cseq must be Constraint instances")
        self.cseq = list(cseq)
        self.dim = dim

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return any(c.is_discrete for c in self.cseq)


class _Cat(_Pieces):
    """``cseq[i]`` checked on the ``i``-th piece of a value along ``dim`` (pieces of ``lengths``,
    one element each by default), the answers concatenated as ``tidu.cat`` does."""

    def __init__(self, cseq: Sequence[Constraint], dim: int = 0, lengths: Sequence[int] | None = None) -> None:
        super().__init__(cseq, dim)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match cseq ({len(self.cseq)})")

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return max(c.event_dim for c in self.cseq)

    def check(self, value: Any) -> Any:
        _check_dim(value, self.dim)
        pieces = value.split(self.lengths, self.dim)
        return tidu.cat([c.check(piece) for c, piece in zip(self.cseq, pieces)], self.dim)


class _Stack(_Pieces):
    """``cseq[i]`` checked on the ``i``-th slice of a value along ``dim``, the answers stacked as
    ``tidu.stack`` does."""

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        event_dim = max(c.event_dim for c in self.cseq)
        # a negative dim reaching past the slices' event dims makes the stacked dim an event dim too
        return event_dim + 1 if self.dim + event_dim < 0 else event_dim

    def check(self, value: Any) -> Any:
        _check_dim(value, self.dim)
        return tidu.stack([c.check(piece) for c, piece in zip(self.cseq, value.unbind(self.dim))], self.dim)


def _check_dim(value: Any, dim: int) -> None:
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"dim {dim} out of range for value with {value.ndim} dimensions")


class _IndependentConstraint(Constraint):
    """``base`` with its ``reinterpreted_batch_ndims`` rightmost dimensions checked as one event."""

    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value: Any) -> Any:
        result = self.base_constraint.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most ``upper_bound`` (PyTorch's weaker check)."""

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def check(self, value: Any) -> Any:
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """The component distribution's ``base_constraint``, checked with the component dimension put
    back (a value of a mixture is a value of each component)."""

    def __init__(self, base_constraint: Constraint) -> None:
        self.base_constraint = base_constraint

    @property
    def is_discrete(self) -> bool:  # type: ignore[override]
        return self.base_constraint.is_discrete

    @property
    def event_dim(self) -> int:  # type: ignore[override]
        return self.base_constraint.event_dim

    def check(self, value: Any) -> Any:
        if value.ndim < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.ndim - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self) -> str:
        return f"MixtureSameFamilyConstraint({self.base_constraint!r})"


dependent = _Dependent()
real = _Real()
boolean = _Boolean()
one_hot = _OneHot()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
independent = _IndependentConstraint
multinomial = _Multinomial
real_vector = _IndependentConstraint(real, 1)
cat = _Cat
stack = _Stack
