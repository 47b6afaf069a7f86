"""``biject_to`` and ``transform_to``: the transform from unconstrained reals onto a constraint's
set (a bijection, or merely onto), for optimizing parameters that must stay in it, as PyTorch's
registries; ``register`` adds a constraint type.

>>> import tidu
>>> from tidu.distributions import biject_to, constraints
>>> t = biject_to(constraints.positive)
>>> t(tidu.tensor([0.0])), t.inv(tidu.tensor([1.0]))
(tensor([1.]), tensor([0.]))
>>> type(transform_to(constraints.simplex)).__name__
'SoftmaxTransform'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import constraints
from .transforms import (
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    Transform,
    identity_transform,
)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Constraint types (or instances) to factories ``constraint -> Transform``."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[[Any], Transform]] = {}

    def register(self, constraint: Any, factory: Callable[[Any], Transform] | None = None) -> Any:
        """Register ``factory`` for ``constraint``'s type; usable as a decorator."""
        if factory is None:
            return lambda fn: self.register(constraint, fn)
        kind = constraint if isinstance(constraint, type) else type(constraint)
        if not (isinstance(kind, type) and issubclass(kind, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got {constraint}")
        self._registry[kind] = factory
        return factory

    def __call__(self, constraint: Any) -> Transform:
        for kind in type(constraint).__mro__:
            factory = self._registry.get(kind)
            if factory is not None:
                return factory(constraint)
        raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint: Any) -> Transform:
    return identity_transform


def _independent(constraint: Any, registry: ConstraintRegistry) -> Transform:
    return IndependentTransform(registry(constraint.base_constraint), constraint.reinterpreted_batch_ndims)


def _greater_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint: Any) -> Transform:
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if _is_number(lower) and _is_number(upper) and lower == 0 and upper == 1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(lower, upper - lower)])


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float)


def _cat(constraint: Any, registry: ConstraintRegistry) -> Transform:
    return CatTransform([registry(c) for c in constraint.cseq], constraint.dim, constraint.lengths)


def _stack(constraint: Any, registry: ConstraintRegistry) -> Transform:
    return StackTransform([registry(c) for c in constraint.cseq], constraint.dim)


for _registry in (biject_to, transform_to):
    _registry.register(constraints._Real, _real)
    _registry.register(constraints._IndependentConstraint, lambda c, r=_registry: _independent(c, r))
    _registry.register(constraints._GreaterThan, _greater_than)  # positive too: exp, then a shift by 0
    _registry.register(constraints._LessThan, _less_than)
    _registry.register(constraints._Interval, _interval)
    _registry.register(constraints._CorrCholesky, lambda c: CorrCholeskyTransform())
    _registry.register(constraints._Cat, lambda c, r=_registry: _cat(c, r))
    _registry.register(constraints._Stack, lambda c, r=_registry: _stack(c, r))
# not bijections onto their sets, so only ``transform_to`` has them (as PyTorch's)
transform_to.register(constraints._LowerCholesky, lambda c: LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: PositiveDefiniteTransform())
transform_to.register(constraints._PositiveSemidefinite, lambda c: PositiveDefiniteTransform())
biject_to.register(constraints._Simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: SoftmaxTransform())
