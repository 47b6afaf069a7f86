"""The tensor layer's ``BackwardExecutor``: rules run as tidu ops on tensors.

``execute_forward`` computes the primal-only work of a node's linear graph
(the residuals its transpose reads) from the saved values; ``run_transposed_linear``
executes the transpose through an ``ExecutingBuilder`` that runs each emitted
operation at once. Both bind primitives on tensors, so under ``create_graph``
the backward pass is recorded and differentiable again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ad import LinearizedGraph, PrimitiveValue, try_linear_transpose_with_builder
from ..core.primitive import Application
from ..core.programs import BoundGraph, BoundProgram, active_seeds
from ..core.tape import Freed, Packed, SavedInput, SavedOutput
from ..eager import BackwardExecutor, PrimitiveGraph
from ..eager.trace import operation_name


class ExecutingBuilder:
    """A ``PrimitiveBuilder`` that runs each operation as soon as it is added."""

    def __init__(self, external: dict[Any, Any]) -> None:
        self.external = external
        self.values: list[Any] = []

    def push(self, value: Any) -> int:
        self.values.append(value)
        return len(self.values) - 1

    def resolve(self, value: PrimitiveValue) -> Any:
        if value.is_local():
            return self.values[value.id]
        try:
            return self.external[value.key]
        except KeyError:
            raise RuntimeError(f"missing concrete value for graph input {value.key!r}") from None

    def add_primitive(self, op: Application, inputs: Sequence[PrimitiveValue], role: Any) -> list[int]:
        outs = op.eval(None, [self.resolve(v) for v in inputs])
        return [self.push(o) for o in outs]


def unpack(value: Any, name: str) -> Any:
    if isinstance(value, SavedInput | SavedOutput | Freed | Packed):  # a Freed value raises
        return value.unpack(name)
    return value


def _read(saved: dict[Any, Any], key: Any, name: str) -> Any:
    value = saved.get(key)
    if value is None:
        raise RuntimeError(f"internal error: the backward of {name} reads a value its node did not save ({key!r})")
    return unpack(value, name)


class _Name:
    """An operation's name for error messages, formatted only when one is raised."""

    __slots__ = ("operation",)

    def __init__(self, operation: Any) -> None:
        self.operation = operation

    def __str__(self) -> str:
        return operation_name(self.operation)


def evaluate(graph: Any, env: dict[Any, Any], *, primal_only: bool) -> dict[Any, Any]:
    """Run a graph's operations on tensors; with ``primal_only``, skip linear ones."""
    values = dict(env)
    for node in graph.operations:
        if primal_only and node.role.is_linearized() and any(node.role.active_mask):
            continue
        args = [values[graph.values[i].key] for i in node.inputs]
        for o, out in zip(node.outputs, node.operation.eval(None, args)):
            values[graph.values[o].key] = out
    return values


class TensorExecutor(BackwardExecutor):
    def execute_forward(self, graph: PrimitiveGraph, initial_data: dict[Any, Any]) -> dict[Any, Any]:
        g = graph.as_graph()
        if isinstance(g, BoundGraph):  # a cached program: its keys are canonical
            name = _Name(g.op)
            env = {canon: _read(initial_data, key, name) for canon, key in g.env_map.items()}
            return evaluate(g.program.linear.as_graph(), env, primal_only=True)
        reads = [g.values[i].key for i in g.inputs if g.values[i].key in initial_data]
        name = _Name(g.operations[0].operation) if g.operations else "node"  # (the rule's first op)
        return evaluate(g, {k: _read(initial_data, k, name) for k in reads}, primal_only=True)

    def run_transposed_linear(self, linear: LinearizedGraph, cotangent_outputs: Sequence[Any],
                              external_data: dict[Any, Any], ctx: Any) -> list[Any]:
        if ctx is not None:
            cotangent_outputs = ctx.apply_hooks(getattr(linear, "active_out", ()), cotangent_outputs)
        if isinstance(linear, BoundProgram):
            transposed = linear.program.transposed
            g = transposed.as_graph()
            env = dict(external_data)
            for (_, tid), ct in zip(transposed.tangent_inputs, active_seeds(linear.program, cotangent_outputs)):
                env[g.values[tid].key] = ct
            values = evaluate(g, env, primal_only=False)
            return [None if t is None else values[g.values[t].key] for t in transposed.tangent_outputs]
        builder = ExecutingBuilder(external_data)
        seeds = [None if c is None else builder.push(c) for c in cotangent_outputs]
        ids = try_linear_transpose_with_builder(linear, builder, seeds, ctx)
        return [None if i is None else builder.values[i] for i in ids]

    def add_operands(self, a: Any, b: Any) -> Any:
        return a + b


EXECUTOR = TensorExecutor()
