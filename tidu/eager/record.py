"""Recording eager calls: ``KeySource``, ``Recorder``, ``RecordedGraph``.

A recorded call keeps a graph, its inputs' keys and data, and the values its
rules may read. A trace node is made only when an input requires grad; all
outputs of one call share it. Nodes are owned by the values that reach them
(``EagerOutput.trace``), never by the recorder, so a tape is freed with its
tensors; the recorder lists live nodes through weak references only.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..ad.graph import Graph, GraphBuilder, ValueDef, op_name
from ..ad.keys import OperationRole, PrimitiveValue, ValueKey
from ..ad.linearize import LinearizedGraph, try_linearize
from .trace import Trace, TraceNode

MAX_OUTPUTS = 256


class EagerRecordError(RuntimeError):
    """A recording call whose arguments do not match its graph (tidu-rs 0.2.0)."""


class KeySource(Protocol):
    """Makes fresh input keys for recorded values."""

    def fresh_input_key(self) -> Hashable: ...


class CountingKeySource:
    """A ``KeySource`` of consecutive integers."""

    def __init__(self, start: int = 0) -> None:
        self.counter = itertools.count(start).__next__  # the next integer, without a method call

    def fresh_input_key(self) -> int:
        return self.counter()


@dataclass
class EagerInput:
    key: ValueKey
    trace: Trace | None
    requires_grad: bool
    data: Any


@dataclass
class EagerOutput:
    key: ValueKey
    trace: Trace | None
    requires_grad: bool
    output_slot: int


class RecordedGraph:
    """A graph with the eager keys its inputs and outputs are known by.

    ``RecordedGraph.from_primitive(op, input_keys)`` is the one-operation graph
    of a single eager call; a composite call may record a many-operation graph
    as one node with ``RecordedGraph(graph, input_keys, output_keys)``.
    """

    __slots__ = ("_graph", "_input_keys", "_output_keys")

    def __init__(self, graph: Graph, input_keys: Sequence[ValueKey], output_keys: Sequence[ValueKey]) -> None:
        input_keys, output_keys = list(input_keys), list(output_keys)
        graph_inputs = list(dict.fromkeys(graph.values[i].key for i in graph.inputs))
        distinct_inputs = list(dict.fromkeys(input_keys))
        if len(distinct_inputs) != len(graph_inputs):
            raise EagerRecordError(
                f"input_keys expected {len(graph_inputs)} entries, got {len(distinct_inputs)}"
            )
        for index, (mine, theirs) in enumerate(zip(distinct_inputs, graph_inputs)):
            if mine != theirs:
                raise EagerRecordError(f"input_keys does not match graph metadata at slot {index}")
        graph_outputs = [graph.values[i].key for i in graph.outputs]
        if len(output_keys) != len(graph_outputs):
            raise EagerRecordError(f"output_keys expected {len(graph_outputs)} entries, got {len(output_keys)}")
        for index, (mine, theirs) in enumerate(zip(output_keys, graph_outputs)):
            if mine != theirs:
                raise EagerRecordError(f"output_keys does not match graph metadata at slot {index}")
        self._graph = graph
        self._input_keys = input_keys
        self._output_keys = output_keys

    @classmethod
    def from_primitive(cls, op: Any, input_keys: Sequence[ValueKey]) -> RecordedGraph:
        if len(input_keys) != op.input_count():
            raise EagerRecordError(f"input_keys expected {op.input_count()} entries, got {len(input_keys)}")
        builder = GraphBuilder()
        for key in input_keys:
            builder.add_input(key)
        outs = builder.add_operation(op, [PrimitiveValue.External(k) for k in input_keys], OperationRole.Primary)
        builder.set_outputs(outs)
        graph = builder.build()
        return cls(graph, input_keys, [graph.values[o].key for o in outs])

    def as_graph(self) -> Graph:
        return self._graph

    def input_keys(self) -> list[ValueKey]:
        return self._input_keys

    def output_keys(self) -> list[ValueKey]:
        return self._output_keys

    def resolve_value(self, key: ValueKey) -> ValueDef:
        return self._graph.resolve_value(key)

    def try_linearize(
        self, active_slots: Sequence[int], ctx: Any = None, wrt: Sequence[ValueKey] | None = None
    ) -> LinearizedGraph:
        """Linearize only the given output slots, with respect to ``wrt`` (every input by default).

        ``try_backward`` passes the inputs that require grad, so rules never see a
        tangent for a value nothing asked the gradient of.
        """
        outputs = [self.output_keys()[s] for s in active_slots]
        keys = list(dict.fromkeys(self._input_keys if wrt is None else wrt))
        return try_linearize(self, outputs, keys, 0, ctx)

    def describe(self) -> str:
        return " ; ".join(op_name(node.operation) for node in self._graph.operations)


class Recorder:
    """Records eager graph invocations as trace nodes.

    ``str(recorder)`` lists live nodes, one per line (``%3 = mul %1 %2``).
    """

    def __init__(self, key_source: KeySource | None = None) -> None:
        self.key_source: KeySource = key_source if key_source is not None else CountingKeySource()
        self._live: list[weakref.ref[TraceNode]] = []

    def key_source_mut(self) -> KeySource:
        return self.key_source

    def into_key_source(self) -> KeySource:
        return self.key_source

    def fresh_input_keys(self, count: int) -> list[Hashable]:
        return [self.key_source.fresh_input_key() for _ in range(count)]

    def record_graph(
        self,
        graph: RecordedGraph,
        inputs: Sequence[EagerInput],
        outputs: Sequence[Any],
        retained_values: dict[ValueKey, Any] | None = None,
    ) -> list[EagerOutput]:
        """Record one call: fresh keys for ``outputs``, a trace node if any input requires grad."""
        if len(inputs) != len(graph.input_keys()):
            raise EagerRecordError(f"inputs expected {len(graph.input_keys())} entries, got {len(inputs)}")
        if len(outputs) != len(graph.output_keys()):
            raise EagerRecordError(f"outputs expected {len(graph.output_keys())} entries, got {len(outputs)}")
        if len(outputs) > MAX_OUTPUTS:
            raise EagerRecordError(f"eager recording supports at most {MAX_OUTPUTS} outputs, got {len(outputs)}")
        for index, (inp, key) in enumerate(zip(inputs, graph.input_keys())):
            if inp.key != key:
                raise EagerRecordError(f"inputs does not match graph metadata at slot {index}")
        keys = [ValueKey.Input(self.key_source.fresh_input_key()) for _ in outputs]
        requires_grad = any(inp.requires_grad for inp in inputs)
        trace = None
        if requires_grad:
            saved = {inp.key: inp.data for inp in inputs}
            if retained_values:
                saved.update(retained_values)
            edges = [(inp.trace, inp.key, inp.requires_grad) for inp in inputs]
            node = TraceNode(graph, keys, saved, edges)
            trace = Trace(node)
            self._track(node)
        return [EagerOutput(k, trace, requires_grad, slot) for slot, k in enumerate(keys)]

    def _track(self, node: TraceNode) -> None:
        self._live.append(weakref.ref(node))
        if len(self._live) >= 4096 and len(self._live) & (len(self._live) - 1) == 0:
            self._live = [r for r in self._live if r() is not None]

    def live_nodes(self) -> list[TraceNode]:
        nodes = [r() for r in self._live]
        alive = [n for n in nodes if n is not None]
        self._live = [weakref.ref(n) for n in alive]
        return alive

    def __str__(self) -> str:
        lines = []
        for node in self.live_nodes():
            outs = ", ".join(_name(k) for k in node.primal_out_keys)
            args = " ".join(_name(k) for k in node.computation.input_keys())
            lines.append(f"{outs} = {node.computation.describe()} {args}".rstrip())
        return "\n".join(lines)


def _name(key: ValueKey) -> str:
    raw = key.key if key.is_input() else key
    return f"%{raw}" if isinstance(raw, int) else repr(raw)


def record_primitive(
    recorder: Recorder,
    op: Any,
    inputs: Sequence[EagerInput],
    outputs: Sequence[Any],
    retain_outputs: bool = True,
) -> list[EagerOutput]:
    """Record a one-operation call, retaining its outputs for the rules."""
    graph = RecordedGraph.from_primitive(op, [inp.key for inp in inputs])
    retained = dict(zip(graph.output_keys(), outputs)) if retain_outputs else None
    return recorder.record_graph(graph, inputs, outputs, retained)

