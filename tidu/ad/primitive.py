"""The rule contract: ``Primitive`` and ``PrimitiveBuilder``.

A primitive is an operation value that also knows ``add()`` (the operation
that sums cotangents), a JVP rule and, when it is linear, a transpose rule.
Rules emit work through a ``PrimitiveBuilder`` and never see inactive
(``None``) tangents as zeros: the engine skips a rule when no input is active.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .errors import ADRuleError, ADRuleKind
from .graph import op_name
from .keys import LocalValueId, OperationRole, PrimitiveValue, ValueKey


class PrimitiveBuilder(Protocol):
    """Where rules emit operations; returns the new values' local ids."""

    def add_primitive(
        self, op: Any, inputs: list[PrimitiveValue], role: OperationRole
    ) -> list[LocalValueId]: ...


class Primitive:
    """Base class of engine primitives (tidu-rs's ``Primitive`` trait).

    Subclasses are hashable operation values implementing ``input_count``,
    ``output_count``, ``add`` and the rules they support. A rule left
    undefined raises ``ADRuleError`` naming the operation and the rule kind.
    """

    def input_count(self) -> int:
        raise NotImplementedError

    def output_count(self) -> int:
        raise NotImplementedError

    def add(self) -> Primitive:
        """The operation used to accumulate fan-out cotangents."""
        raise NotImplementedError

    def jvp_rule(
        self,
        builder: PrimitiveBuilder,
        primal_inputs: Sequence[ValueKey],
        primal_outputs: Sequence[ValueKey],
        tangent_inputs: Sequence[LocalValueId | None],
        ctx: Any,
    ) -> list[LocalValueId | None]:
        raise ADRuleError.unsupported(op_name(self), ADRuleKind.Jvp)

    def transpose_rule(
        self,
        builder: PrimitiveBuilder,
        cotangent_outputs: Sequence[LocalValueId | None],
        inputs: Sequence[PrimitiveValue],
        role: OperationRole,
        ctx: Any,
    ) -> list[LocalValueId | None]:
        raise ADRuleError.unsupported(op_name(self), ADRuleKind.Transpose)

    def try_jvp_rule(self, builder, primal_inputs, primal_outputs, tangent_inputs, ctx):  # type: ignore[no-untyped-def]
        return self.jvp_rule(builder, primal_inputs, primal_outputs, tangent_inputs, ctx)

    def try_linear_transpose_rule(self, builder, cotangent_outputs, inputs, role, ctx):  # type: ignore[no-untyped-def]
        return self.transpose_rule(builder, cotangent_outputs, inputs, role, ctx)
