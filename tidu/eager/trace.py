"""``Trace``: a handle to one recorded call and, through its edges, its past."""

from __future__ import annotations

from typing import Any

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


class ReleasedValues(dict):
    """A released node's ``saved_data`` when its runtime keeps part of it: every saved key,
    mapped to what is left of its value. The tensor layer (``core.tape.release_saved``) keeps
    the leaves that receive ``.grad`` and a few constants, and frees the rest, whose markers
    raise ``FREED_MESSAGE`` when read: a later backward runs if it reads no freed value, as in
    PyTorch."""

    __slots__ = ()


def operation_name(op: Any) -> str:
    """What messages call an operation: its primitive's name (``short_name``, without params)
    where it has one."""
    return str(getattr(op, "short_name", None) or getattr(op, "name", op))


class TraceNode:
    """One recorded call: its graph, output keys, saved values and input edges."""

    # ``tensor_hooks``: the hook dicts of tensors this node made (set by the tensor layer when it
    # registers one, unset before: a hook outlives its tensor, as it lives as long as the node)
    __slots__ = ("computation", "primal_out_keys", "saved_data", "input_edges", "tensor_hooks", "__weakref__")

    def __init__(self, computation: Any, primal_out_keys: list, saved_data: dict, input_edges: list) -> None:
        self.computation = computation
        self.primal_out_keys = primal_out_keys
        self.saved_data: dict | None = saved_data
        self.input_edges = input_edges  # [(producer Trace | None, key, requires_grad)]

    def release(self) -> None:
        """Free the saved values; a later backward through this node raises. A runtime's node
        class may keep some instead (``ReleasedValues``)."""
        self.saved_data = None


class Trace:
    """An opaque, shareable handle to a ``TraceNode`` (equal when the node is)."""

    __slots__ = ("node",)

    def __init__(self, node: TraceNode) -> None:
        self.node = node

    def saved_values(self) -> dict:
        saved = self.node.saved_data
        if saved is None or saved.__class__ is ReleasedValues:
            raise RuntimeError(FREED_MESSAGE)
        return saved

    def is_released(self) -> bool:
        saved = self.node.saved_data
        return saved is None or saved.__class__ is ReleasedValues

    def release(self) -> None:
        """Free the saved values (``TraceNode.release``); a later backward that reads one raises."""
        self.node.release()

    def input_traces(self) -> list[Trace]:
        return [t for t, _, _ in self.node.input_edges if t is not None]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Trace) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)

    def name(self) -> str:
        """The name of the recorded computation (its primitive for a one-op node)."""
        graph = self.node.computation.as_graph()
        if len(graph.operations) == 1:
            return operation_name(graph.operations[0].operation)
        return self.node.computation.describe()

    def __repr__(self) -> str:
        return f"<Trace {self.name()}>"


def topological_traces(root: Trace | None) -> list[Trace]:
    """Trace nodes reachable from ``root``, producers before consumers."""
    if root is None:
        return []
    order: list[Trace] = []
    expanded_nodes: set[int] = set()
    stack: list[tuple[Trace, bool]] = [(root, False)]
    while stack:
        trace, expanded = stack.pop()
        if expanded:
            order.append(trace)
            continue
        if id(trace.node) in expanded_nodes:
            continue
        expanded_nodes.add(id(trace.node))
        stack.append((trace, True))
        for parent in trace.input_traces():
            if id(parent.node) not in expanded_nodes:
                stack.append((parent, False))
    return order
