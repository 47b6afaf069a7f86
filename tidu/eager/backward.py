"""``try_backward``: reverse mode over recorded traces.

Walks the trace nodes from the output back to the leaves. Each node with an
incoming cotangent is linearized (only its seeded output slots), its linear
graph's primal work is replayed by ``execute_forward`` on the saved values,
and its transpose is run by ``run_transposed_linear``. Cotangents reaching the
same key are summed with ``add_operands``.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from typing import Any

from ..ad.graph import Graph
from ..ad.keys import ValueKey
from ..ad.linearize import LinearizedGraph
from .trace import FREED_MESSAGE, Trace, topological_traces


class PrimitiveGraph:
    """A borrowed view of a graph handed to executors for forward replay."""

    __slots__ = ("_graph",)

    def __init__(self, graph: Graph | LinearizedGraph) -> None:
        self._graph = graph.as_graph() if isinstance(graph, LinearizedGraph) else graph

    def as_graph(self) -> Graph:
        return self._graph


class BackwardExecutor:
    """Connects the engine to a runtime: replay, transposed linear work, and sums."""

    def execute_forward(self, graph: PrimitiveGraph, initial_data: dict[ValueKey, Any]) -> dict[ValueKey, Any]:
        raise NotImplementedError

    def run_transposed_linear(
        self,
        linear: LinearizedGraph,
        cotangent_outputs: Sequence[Any | None],
        external_data: dict[ValueKey, Any],
        ctx: Any,
    ) -> list[Any | None]:
        raise NotImplementedError

    def add_operands(self, a: Any, b: Any) -> Any:
        raise NotImplementedError


def try_backward(
    output_key: ValueKey,
    output_trace: Trace | None,
    seed: Any,
    executor: BackwardExecutor,
    ctx: Any = None,
    *,
    wanted: Collection[ValueKey] | None = None,
) -> dict[ValueKey, Any]:
    """Propagate ``seed`` (the cotangent of ``output_key``) back through ``output_trace``.

    Returns the cotangent of every key reached. With ``wanted`` (a tidu
    extension) only those keys are returned, other cotangents are dropped
    as soon as the walk has passed the node that produced them, and only the
    nodes on a path to a wanted key run, each differentiated only in the inputs
    on such a path (``leading_to``): as in PyTorch, a gradient nobody asked for
    never reads its node's saved values, so it cannot fail on them.
    """
    cotangents: dict[ValueKey, Any] = {output_key: seed}
    node_hooks = getattr(ctx, "node_hooks", None)  # the runtime's per-node work (hooks on nodes, checks)
    traces = topological_traces(output_trace)
    needed = None if wanted is None else leading_to(traces, wanted)
    for trace in reversed(traces):
        node = trace.node
        if needed is not None and node not in needed:
            continue
        cts = [cotangents.get(k) for k in node.primal_out_keys]
        if node_hooks is not None:
            cts = node_hooks.before(node, cts)
        active = [i for i, c in enumerate(cts) if c is not None]
        if not active:
            continue
        if node.saved_data is None:
            raise RuntimeError(FREED_MESSAGE)
        if needed is None:
            wrt = [key for _, key, requires_grad in node.input_edges if requires_grad]
        else:
            wrt = [edge[1] for edge in node.input_edges if _on_path(edge, wanted, needed)]
        linear = node.computation.try_linearize(active, ctx, wrt)
        values = executor.execute_forward(PrimitiveGraph(linear), node.saved_data)
        in_cts = executor.run_transposed_linear(linear, [cts[i] for i in active], values, ctx)
        by_key: dict[Hashable, Any] = {k: c for (k, _), c in zip(linear.tangent_inputs, in_cts)}
        if node_hooks is not None:
            by_key = node_hooks.after(trace, node, cts, by_key)
        if wanted is not None:
            for key in node.primal_out_keys:
                if key not in wanted:
                    cotangents.pop(key, None)
        done: set[ValueKey] = set()
        for _, key, requires_grad in node.input_edges:
            if not requires_grad or key in done:
                continue
            done.add(key)
            ct = by_key.get(key.key if key.is_input() else key)
            if ct is None:
                continue
            existing = cotangents.get(key)
            cotangents[key] = ct if existing is None else executor.add_operands(existing, ct)
    if wanted is not None:
        return {k: v for k, v in cotangents.items() if k in wanted}
    return cotangents


def leading_to(traces: Sequence[Trace], wanted: Collection[ValueKey]) -> set:
    """The nodes of ``traces`` (producers before consumers, as ``topological_traces`` lists them)
    with an input that requires grad and is wanted or made by such a node: those whose backward
    a cotangent of a ``wanted`` key needs."""
    needed: set = set()
    for trace in traces:
        node = trace.node
        if any(_on_path(edge, wanted, needed) for edge in node.input_edges):
            needed.add(node)
    return needed


def _on_path(edge: tuple, wanted: Collection[ValueKey], needed: set) -> bool:
    """Whether an input edge ``(trace, key, requires_grad)`` leads to a wanted key: it is one, or
    its producer is ``needed``."""
    trace, key, requires_grad = edge
    return requires_grad and (key in wanted or trace is not None and trace.node in needed)


backward = try_backward
