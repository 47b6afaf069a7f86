"""Primitive computation graphs: ``Graph``, ``GraphBuilder`` and value resolution.

A graph holds value nodes (each with a global ``ValueKey``) and operation nodes.
``GraphBuilder.add_operation`` gives each output the key
``ValueKey.Derived(OperationKey(op, input_keys, role), slot)``, so values are
identified across graphs by structure and identical applications are shared.
Leaves (declared inputs and ``External`` references) are the graph's inputs.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .keys import LocalValueId, OperationKey, OperationRole, PrimitiveValue, ValueKey


@runtime_checkable
class GraphOperation(Protocol):
    """An operation value: hashable, equal by value, with a fixed arity."""

    def input_count(self) -> int: ...

    def output_count(self) -> int: ...


@runtime_checkable
class EvaluableGraphOperation(GraphOperation, Protocol):
    """An operation that can run on concrete operands."""

    def eval(self, ctx: Any, inputs: Sequence[Any]) -> list[Any]: ...


@dataclass(frozen=True)
class ValueNode:
    key: ValueKey
    producer: tuple[int, int] | None  # (operation index, output slot); None for a leaf


@dataclass(frozen=True)
class OperationNode:
    operation: Any
    inputs: tuple[LocalValueId, ...]
    outputs: tuple[LocalValueId, ...]
    role: OperationRole
    key: OperationKey


def op_name(op: Any) -> str:
    name = getattr(op, "name", None)
    return name if isinstance(name, str) else repr(op)


@dataclass
class Graph:
    """A built graph. ``str(graph)`` prints one line per operation."""

    values: list[ValueNode] = field(default_factory=list)
    operations: list[OperationNode] = field(default_factory=list)
    inputs: list[LocalValueId] = field(default_factory=list)
    outputs: list[LocalValueId] = field(default_factory=list)
    parents: list[Any] = field(default_factory=list)
    _index: dict[ValueKey, LocalValueId] = field(default_factory=dict, repr=False)

    def global_key(self, id: LocalValueId) -> ValueKey:  # noqa: A002
        return self.values[id].key

    def local_id(self, key: ValueKey) -> LocalValueId | None:
        return self._index.get(key)

    def resolve_value(self, key: ValueKey) -> ValueDef:
        """How ``key`` is defined: produced by an operation, or a leaf input."""
        return resolve_value(key)

    def __str__(self) -> str:
        names = {i: f"%{i}" for i in range(len(self.values))}
        lines = [f"inputs: {', '.join(f'{names[i]}={_short(self.values[i].key)}' for i in self.inputs)}"]
        for node in self.operations:
            outs = ", ".join(names[o] for o in node.outputs)
            args = " ".join(names[i] for i in node.inputs)
            role = ""
            if node.role.is_linearized():
                mask = "".join("L" if m else "." for m in node.role.active_mask)
                role = f"  [{mask}]"
            lines.append(f"{outs} = {op_name(node.operation)} {args}{role}".rstrip())
        lines.append(f"outputs: {', '.join(names[o] for o in self.outputs)}")
        return "\n".join(lines)


def _short(key: ValueKey) -> str:
    if key.is_input():
        return repr(key.key)
    return f"{op_name(key.operation.op)}#{key.output_slot}"


class GraphBuilder:
    """Builds a ``Graph``; also a ``PrimitiveBuilder`` (``add_primitive``)."""

    def __init__(self) -> None:
        self._graph = Graph()
        self._op_index: dict[OperationKey, int] = {}

    def _leaf(self, key: ValueKey) -> LocalValueId:
        graph = self._graph
        found = graph._index.get(key)
        if found is not None:
            return found
        vid = len(graph.values)
        graph.values.append(ValueNode(key, None))
        graph.inputs.append(vid)
        graph._index[key] = vid
        return vid

    def add_input(self, key: Hashable) -> LocalValueId:
        """Declare an input leaf keyed ``ValueKey.Input(key)`` (idempotent)."""
        return self._leaf(key if isinstance(key, ValueKey) else ValueKey.Input(key))

    def add_operation(
        self, op: Any, inputs: Iterable[PrimitiveValue], role: OperationRole
    ) -> list[LocalValueId]:
        graph = self._graph
        ids: list[LocalValueId] = []
        for value in inputs:
            if value.is_local():
                if not 0 <= value.id < len(graph.values):
                    raise ValueError(f"unknown local value %{value.id} used by {op_name(op)}")
                ids.append(value.id)
            else:
                ids.append(self._leaf(value.key))
        if len(ids) != op.input_count():
            raise ValueError(f"{op_name(op)} takes {op.input_count()} inputs, got {len(ids)}")
        opkey = OperationKey(op, tuple(graph.values[i].key for i in ids), role)
        existing = self._op_index.get(opkey)
        if existing is not None:
            return list(graph.operations[existing].outputs)
        index = len(graph.operations)
        outs = []
        for slot in range(op.output_count()):
            key = ValueKey.Derived(opkey, slot)
            vid = graph._index.get(key)
            if vid is None:
                vid = len(graph.values)
                graph.values.append(ValueNode(key, (index, slot)))
                graph._index[key] = vid
            outs.append(vid)
        graph.operations.append(OperationNode(op, tuple(ids), tuple(outs), role, opkey))
        self._op_index[opkey] = index
        return outs

    add_primitive = add_operation

    def set_outputs(self, outputs: Iterable[LocalValueId]) -> None:
        self._graph.outputs = list(outputs)

    def add_parent(self, parent: Any) -> None:
        self._graph.parents.append(parent)

    def global_key(self, id: LocalValueId) -> ValueKey:  # noqa: A002
        return self._graph.values[id].key

    def build(self) -> Graph:
        return self._graph


class ValueDef:
    """``ValueDef.Input`` (a leaf) or ``ValueDef.Produced(operation, output_slot)``."""

    __slots__ = ()
    Input: ValueDef
    Produced: type


class _InputDef(ValueDef):
    __slots__ = ()

    def __repr__(self) -> str:
        return "ValueDef.Input"


class _Produced(ValueDef):
    __slots__ = ("operation", "output_slot")

    def __init__(self, operation: OperationKey, output_slot: int) -> None:
        self.operation = operation
        self.output_slot = output_slot


ValueDef.Input = _InputDef()
ValueDef.Produced = _Produced


def resolve_value(key: ValueKey) -> ValueDef:
    """Structural resolution: a derived key names the operation that made it."""
    if key.is_input():
        return ValueDef.Input
    return ValueDef.Produced(key.operation, key.output_slot)


class ResolvedView:
    """A view over values: structural for derived keys, plus named producers.

    ``producers`` maps keys that look like inputs (eager values) to the
    operation that produced them; ``resolve`` builds one from graphs.
    """

    def __init__(self, producers: dict[ValueKey, tuple[OperationKey, int]] | None = None) -> None:
        self.producers = producers or {}

    def resolve_value(self, key: ValueKey) -> ValueDef:
        found = self.producers.get(key)
        if found is not None:
            return ValueDef.Produced(*found)
        return resolve_value(key)


def resolve(roots: Iterable[Graph]) -> ResolvedView:
    """Merge graphs into one view (the prior graphs of a higher-order transform)."""
    del roots  # derived keys carry their definitions; nothing else to merge
    return ResolvedView()
