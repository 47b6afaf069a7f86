"""``linearize``: the JVP graph of a primitive computation graph.

Walks the operations that the requested outputs depend on, in topological
order, and asks each operation's ``jvp_rule`` to emit its tangent as linear
work into one ``GraphBuilder``. An operation whose input tangents are all
inactive is skipped and its output tangents are inactive (``None``).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from .errors import ADRuleError, ADRuleKind
from .graph import Graph, GraphBuilder, _short, op_name
from .keys import DiffPassId, LocalValueId, OperationKey, ValueKey, tangent_of


class LinearizedGraph:
    """A linear graph from tangent inputs to tangent outputs.

    ``tangent_inputs`` pairs each differentiated input key with the local id of
    its tangent; ``tangent_outputs`` holds one local id (or ``None`` when
    inactive) per requested output. Values the graph reads from the source
    graph appear as ``External`` leaves.
    """

    __slots__ = ("_graph", "_tangent_inputs", "_tangent_outputs")

    def __init__(
        self,
        graph: Graph,
        tangent_inputs: list[tuple[Hashable, LocalValueId]],
        tangent_outputs: list[LocalValueId | None],
    ) -> None:
        self._graph = graph
        self._tangent_inputs = tangent_inputs
        self._tangent_outputs = tangent_outputs

    @property
    def tangent_inputs(self) -> list[tuple[Hashable, LocalValueId]]:
        return self._tangent_inputs

    @property
    def tangent_outputs(self) -> list[LocalValueId | None]:
        return self._tangent_outputs

    def as_graph(self) -> Graph:
        return self._graph

    def into_graph(self) -> Graph:
        return self._graph

    def __str__(self) -> str:
        graph = self._graph
        tangent_ids = {i for _, i in self._tangent_inputs}
        tin = ", ".join(f"%{i}={_short(graph.values[i].key)}" for _, i in self._tangent_inputs)
        reads = ", ".join(f"%{i}={_short(graph.values[i].key)}" for i in graph.inputs if i not in tangent_ids)
        head = f"LinearizedGraph(tangent inputs: {tin}" + (f"; reads: {reads})" if reads else ")")
        tout = ", ".join("None" if i is None else f"%{i}" for i in self._tangent_outputs)
        body = str(graph).splitlines()[1:-1]
        return "\n".join([head, *body, f"tangent outputs: {tout}"])

    __repr__ = __str__


def topological_operations(outputs: Iterable[ValueKey], view: Any) -> list[tuple[OperationKey, list[ValueKey]]]:
    """Operations reached from ``outputs`` with the keys each produces, producers first."""
    order: list[tuple[OperationKey, list[ValueKey]]] = []
    produced: dict[OperationKey, list[ValueKey]] = {}
    done: set[OperationKey] = set()
    stack: list[tuple[OperationKey, bool]] = []

    def visit(key: ValueKey) -> None:
        definition = view.resolve_value(key)
        operation = getattr(definition, "operation", None)
        if operation is None:
            return
        slots = produced.setdefault(operation, [])
        if key not in slots:
            slots.append(key)
        if operation not in done:
            stack.append((operation, False))

    for key in outputs:
        visit(key)
    while stack:
        operation, expanded = stack.pop()
        if operation in done:
            continue
        if expanded:
            done.add(operation)
            order.append((operation, produced[operation]))
            continue
        stack.append((operation, True))
        for key in reversed(operation.inputs):
            visit(key)
    return order


def _jvp(op: Any, builder: Any, primal_in: list, primal_out: list, tangents: list, ctx: Any) -> list:
    rule = getattr(op, "try_jvp_rule", None) or getattr(op, "jvp_rule", None)
    if rule is None:
        raise ADRuleError.unsupported(op_name(op), ADRuleKind.Jvp)
    result = list(rule(builder, primal_in, primal_out, tangents, ctx))
    if len(result) != op.output_count():
        raise RuntimeError(
            f"jvp_rule for {op_name(op)} returned {len(result)} tangents for {op.output_count()} outputs"
        )
    return result


def try_linearize(
    view: Any,
    outputs: Sequence[ValueKey],
    wrt: Sequence[Hashable],
    pass_id: DiffPassId = 0,
    ctx: Any = None,
    aliases: dict[ValueKey, ValueKey] | None = None,
) -> LinearizedGraph:
    """Linearize ``outputs`` with respect to the input keys ``wrt``.

    ``view`` resolves keys to their producers (a ``Graph``, a ``ResolvedView``
    or a ``RecordedGraph``); ``pass_id`` names the tangent keys of this pass
    (``key.tangent_of(pass_id)``); ``aliases`` gives a value the tangent of
    another (checkpointed or shared values). Raises ``ADRuleError`` from rules.
    """
    builder = GraphBuilder()
    tangents: dict[ValueKey, LocalValueId] = {}
    tangent_inputs: list[tuple[Hashable, LocalValueId]] = []
    for key in wrt:
        value_key = key if isinstance(key, ValueKey) else ValueKey.Input(key)
        if value_key in tangents:
            continue
        raw = value_key.key if value_key.is_input() else value_key
        tid = builder.add_input(ValueKey.Input(tangent_of(raw, pass_id)))
        tangents[value_key] = tid
        tangent_inputs.append((raw, tid))
    aliases = aliases or {}

    def tangent(key: ValueKey) -> LocalValueId | None:
        found = tangents.get(key)
        if found is None and key in aliases:
            found = tangents.get(aliases[key])
        return found

    for operation, produced_keys in topological_operations(outputs, view):
        tangent_in = [tangent(k) for k in operation.inputs]
        if all(t is None for t in tangent_in):
            continue
        op = operation.op
        primal_out = [ValueKey.Derived(operation, s) for s in range(op.output_count())]
        tangent_out = _jvp(op, builder, list(operation.inputs), primal_out, tangent_in, ctx)
        for slot, tid in enumerate(tangent_out):
            if tid is not None:
                tangents[primal_out[slot]] = tid
        for key in produced_keys:
            definition = view.resolve_value(key)
            tid = tangent_out[definition.output_slot]
            if tid is not None:
                tangents[key] = tid

    tangent_outputs = [tangent(k) for k in outputs]
    builder.set_outputs([t for t in tangent_outputs if t is not None])
    return LinearizedGraph(builder.build(), tangent_inputs, tangent_outputs)


linearize = try_linearize  # tidu-rs 0.2.0's name; both raise ADRuleError from rules
