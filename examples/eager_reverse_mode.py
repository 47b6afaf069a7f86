"""Eager reverse mode: record an eager call and run ``tidu.eager.try_backward`` over it.

A Python port of tidu-rs's "Eager Reverse Mode" tutorial (docs/tutorials/eager_reverse_mode.md).
A downstream frontend supplies four things: a primitive set (operation values
that can evaluate themselves), their AD rules, a builder that executes
transposed linear work immediately, and a ``BackwardExecutor``. The driver
records ``x * x`` at ``x = 3`` and checks that the gradient is 6.

Run it from the repository root::

    PYTHONPATH=. python examples/eager_reverse_mode.py
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tidu import eager
from tidu.ad import (
    LocalValueId,
    OperationRole,
    Primitive,
    PrimitiveBuilder,
    PrimitiveValue,
    ValueKey,
    try_linear_transpose_with_builder,
)
from tidu.eager import BackwardExecutor, EagerInput, EagerOutput, PrimitiveGraph, RecordedGraph, Recorder

# [START aliases]
Local = PrimitiveValue.Local  # a value the rule's builder has just made
External = PrimitiveValue.External  # a value of the graph being differentiated
Linearized = OperationRole.Linearized  # role of linear work; the mask marks the tangent inputs
# [END aliases]


# [START scalar_op]
class ScalarOp(Primitive, enum.Enum):
    """The scalar primitive set: hashable operation values with an arity and an evaluator."""

    Add = "add"
    Mul = "mul"
    Neg = "neg"
    Exp = "exp"

    def input_count(self) -> int:
        return 2 if self in (ScalarOp.Add, ScalarOp.Mul) else 1

    def output_count(self) -> int:
        return 1

    def eval(self, ctx: Any, inputs: Sequence[float]) -> list[float]:
        match self:
            case ScalarOp.Add:
                return [inputs[0] + inputs[1]]
            case ScalarOp.Mul:
                return [inputs[0] * inputs[1]]
            case ScalarOp.Neg:
                return [-inputs[0]]
            case ScalarOp.Exp:
                return [math.exp(inputs[0])]
        raise AssertionError(self)

    # [END scalar_op]

    # [START ad_rules]
    def add(self) -> ScalarOp:
        return ScalarOp.Add  # sums cotangents where a value fans out

    def jvp_rule(
        self,
        builder: PrimitiveBuilder,
        primal_inputs: Sequence[ValueKey],
        primal_outputs: Sequence[ValueKey],
        tangent_inputs: Sequence[LocalValueId | None],
        ctx: Any,
    ) -> list[LocalValueId | None]:
        match self:
            case ScalarOp.Add:  # d(x + y) = dx + dy
                return sum_tangent_terms(builder, [t for t in tangent_inputs if t is not None])
            case ScalarOp.Mul:  # d(x * y) = dx * y + x * dy
                # [START mul_jvp]
                terms = []
                if (dx := tangent_inputs[0]) is not None:
                    terms += builder.add_primitive(
                        ScalarOp.Mul, [Local(dx), External(primal_inputs[1])], Linearized([True, False])
                    )
                if (dy := tangent_inputs[1]) is not None:
                    terms += builder.add_primitive(
                        ScalarOp.Mul, [External(primal_inputs[0]), Local(dy)], Linearized([False, True])
                    )
                return sum_tangent_terms(builder, terms)
                # [END mul_jvp]
            case ScalarOp.Neg:  # d(-x) = -dx
                return builder.add_primitive(ScalarOp.Neg, [Local(tangent_inputs[0])], Linearized([True]))
            case ScalarOp.Exp:  # d exp(x) = exp(x) * dx, reading the primal output
                return builder.add_primitive(
                    ScalarOp.Mul,
                    [External(primal_outputs[0]), Local(tangent_inputs[0])],
                    Linearized([False, True]),
                )
        raise AssertionError(self)

    def transpose_rule(
        self,
        builder: PrimitiveBuilder,
        cotangent_outputs: Sequence[LocalValueId | None],
        inputs: Sequence[PrimitiveValue],
        role: OperationRole,
        ctx: Any,
    ) -> list[LocalValueId | None]:
        ct = cotangent_outputs[0]
        if ct is None:
            return [None] * self.input_count()
        match self:
            case ScalarOp.Add:
                return [ct, ct]
            case ScalarOp.Mul:
                return transpose_mul(builder, inputs, ct, role)
            case ScalarOp.Neg:
                return builder.add_primitive(ScalarOp.Neg, [Local(ct)], Linearized([True]))
        # Exp is not linear: linearize replaces it by Mul before anything is transposed.
        return super().transpose_rule(builder, cotangent_outputs, inputs, role, ctx)

    # [END ad_rules]


def sum_tangent_terms(builder: PrimitiveBuilder, terms: list[LocalValueId]) -> list[LocalValueId | None]:
    """Add up a rule's tangent terms with linear ``Add`` operations; no terms means inactive."""
    if not terms:
        return [None]
    total = terms[0]
    for term in terms[1:]:
        (total,) = builder.add_primitive(ScalarOp.Add, [Local(total), Local(term)], Linearized([True, True]))
    return [total]


# [START transpose_mul]
def transpose_mul(
    builder: PrimitiveBuilder, inputs: Sequence[PrimitiveValue], ct: LocalValueId, role: OperationRole
) -> list[LocalValueId | None]:
    """``ct`` flows back to each linear input of ``x * y``, scaled by the other (primal) input."""
    if not role.is_linearized():
        return [None, None]
    x, y = inputs  # both are External keys; the active mask tells which one was the tangent
    ct_x, ct_y = None, None
    if role.active_mask[0]:
        (ct_x,) = builder.add_primitive(ScalarOp.Mul, [y, Local(ct)], Linearized([False, True]))
    if role.active_mask[1]:
        (ct_y,) = builder.add_primitive(ScalarOp.Mul, [x, Local(ct)], Linearized([False, True]))
    return [ct_x, ct_y]


# [END transpose_mul]


# [START scalar_key]
class ScalarKey:
    """Input keys: ``ScalarKey.User(name)`` names a value, ``ScalarKey.Tangent(of, pass_id)`` its tangent."""

    User: type[ScalarKey]
    Tangent: type[ScalarKey]

    def tangent_of(self, pass_id: int) -> ScalarKey:  # the ADKey protocol
        return ScalarKey.Tangent(self, pass_id)


@dataclass(frozen=True)
class _User(ScalarKey):
    name: str

    def __repr__(self) -> str:
        return f"User({self.name!r})"


@dataclass(frozen=True)
class _Tangent(ScalarKey):
    of: ScalarKey
    pass_id: int

    def __repr__(self) -> str:
        return f"Tangent({self.of!r}, {self.pass_id})"


ScalarKey.User = _User
ScalarKey.Tangent = _Tangent


class ExampleKeySource:
    """A ``KeySource``: names the values the recorder makes ``e0``, ``e1``, ..."""

    def __init__(self) -> None:
        self.next = 0

    def fresh_input_key(self) -> ScalarKey:
        key = ScalarKey.User(f"e{self.next}")
        self.next += 1
        return key


# [END scalar_key]


# [START scalar_builder]
class ScalarBuilder:
    """A ``PrimitiveBuilder`` that runs each operation as soon as a rule adds it."""

    def __init__(self, external_data: dict[ValueKey, float]) -> None:
        self.locals: list[float] = []
        self.external_data = dict(external_data)

    def push_value(self, value: float) -> LocalValueId:
        self.locals.append(value)
        return len(self.locals) - 1

    def value(self, local_id: LocalValueId) -> float:
        return self.locals[local_id]

    def resolve_input(self, operand: PrimitiveValue) -> float:
        if operand.is_local():
            return self.value(operand.id)
        try:
            return self.external_data[operand.key]
        except KeyError:
            raise KeyError(f"missing eager value for {operand.key!r}") from None

    def add_primitive(
        self, op: ScalarOp, inputs: list[PrimitiveValue], role: OperationRole
    ) -> list[LocalValueId]:
        outputs = op.eval(None, [self.resolve_input(value) for value in inputs])
        start = len(self.locals)
        self.locals.extend(outputs)
        return list(range(start, len(self.locals)))


# [END scalar_builder]


class ScalarBackwardExecutor(BackwardExecutor):
    """Connects ``try_backward`` to the scalar runtime: replay, transpose, and sums."""

    def execute_forward(
        self, graph: PrimitiveGraph, initial_data: dict[ValueKey, float]
    ) -> dict[ValueKey, float]:
        values = dict(initial_data)
        graph = graph.as_graph()
        # [START execute_forward_inputs]
        for input_id in graph.inputs:
            key = graph.values[input_id].key
            if key in values:
                continue
            if key.is_input() and isinstance(key.key, ScalarKey.Tangent):
                values[key] = 0.0  # tangent inputs only steer the replay; their value is unused
            else:
                raise RuntimeError(f"missing concrete value for graph input {key!r}")
        # [END execute_forward_inputs]
        for node in graph.operations:
            inputs = [values[graph.values[i].key] for i in node.inputs]
            for output_id, output in zip(node.outputs, node.operation.eval(None, inputs)):
                values[graph.values[output_id].key] = output
        return values

    def run_transposed_linear(
        self,
        linear: Any,
        cotangent_outputs: Sequence[float | None],
        external_data: dict[ValueKey, float],
        ctx: Any,
    ) -> list[float | None]:
        # [START run_transposed_linear]
        builder = ScalarBuilder(external_data)
        seed_ids = [None if seed is None else builder.push_value(seed) for seed in cotangent_outputs]
        ids = try_linear_transpose_with_builder(linear, builder, seed_ids, ctx)
        return [None if i is None else builder.value(i) for i in ids]
        # [END run_transposed_linear]

    def add_operands(self, a: float, b: float) -> float:
        return a + b


def input_key(name: str) -> ValueKey:
    return ValueKey.Input(ScalarKey.User(name))


def eager_input(name: str, value: float, requires_grad: bool) -> EagerInput:
    """A leaf value: it has a key and data, and no trace."""
    return EagerInput(key=input_key(name), trace=None, requires_grad=requires_grad, data=value)


def record_primitive(
    recorder: Recorder, op: ScalarOp, inputs: list[EagerInput], outputs: list[float]
) -> list[EagerOutput]:
    """Record one eager call as a one-operation ``RecordedGraph``, keeping its outputs for the rules."""
    graph = RecordedGraph.from_primitive(op, [inp.key for inp in inputs])
    retained = dict(zip(graph.output_keys(), outputs))
    return recorder.record_graph(graph, inputs, outputs, retained)


def assert_close(actual: float, expected: float) -> None:
    assert abs(actual - expected) < 1e-12, f"expected {expected}, got {actual}"


def run() -> float:
    """Record ``x * x`` at ``x = 3`` and return d(x * x)/dx, which is 6."""
    # [START driver]
    recorder = Recorder(ExampleKeySource())
    x = eager_input("x", 3.0, requires_grad=True)
    inputs = [EagerInput(x.key, x.trace, x.requires_grad, x.data), x]  # the same value, twice
    outputs = record_primitive(recorder, ScalarOp.Mul, inputs, ScalarOp.Mul.eval(None, [x.data, x.data]))

    executor = ScalarBackwardExecutor()
    cotangents = eager.try_backward(outputs[0].key, outputs[0].trace, 1.0, executor, None)
    # [END driver]
    # [START check_gradient]
    gradient = cotangents[input_key("x")]
    assert_close(gradient, 6.0)
    # [END check_gradient]
    return gradient


if __name__ == "__main__":
    print(f"d(x * x)/dx at x = 3: {run()}")
