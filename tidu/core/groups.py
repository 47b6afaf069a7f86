"""Grouped recording: the recorded calls of deferred elementwise work as one tape node.

A deferred bind (``core.deferred``) whose inputs require grad is not recorded as a node of
its own: it is appended to the open ``GroupNode``, a compact list of the calls recorded
since the last node that is not grouped. Each output gets its own ``GroupTrace`` (its
``grad_fn``), a handle to (group, index). The compiled backward (``autograd.compiled``)
reads a group as one unit: one structural key part per group, built while recording, and
one pass over its calls; so a chain of elementwise ops costs one node, not one per op.

Everything else that walks the tape (the general ``try_backward``, ``create_graph``,
``tidu.func``, hooks on non-leaves, in-place bookkeeping, printing the recorder) reads
``trace.node``, which *splits* the group first: one ordinary ``TapeNode`` per call, with the
values each call saved. Nothing is recomputed: a group saves what its calls' backward
programs read, exactly as their own nodes would.

A group closes when a node that is not grouped is recorded (so groups and nodes never form
a cycle), when the deferral queue flushes for the user (a read of a value: a flush for an op
that reads queued work keeps it open), after ``MAX_CALLS`` calls, and before it is walked.
"""

from __future__ import annotations

import gc
import weakref

from ..eager import ReleasedValues, Trace, TraceNode
from ..eager.trace import operation_name
from .programs import TensorRecordedGraph
from .tape import SavedOutput, TapeNode, release_saved

_open: weakref.ref | None = None  # the open group, weakly: a group lives as long as its tensors
MAX_CALLS = 256  # a longer group closes (its structure is a compiled step's key)


class GroupNode(TraceNode):
    """Calls recorded as one node.

    ``primal_out_keys`` lists every call's output key (call ``j`` produced key ``j``);
    ``input_edges`` the distinct values from outside the group; ``saved_data`` what the calls'
    backward programs read, by the raw key of each value (``key.key``, an int). ``records[j]`` is ``(app, in_keys, codes, save_in,
    save_out)``, where an input code ``c >= 0`` is call ``c``'s output and ``~c`` is
    ``input_edges[c]``. ``structure`` is the tuple of applications and codes: the group's part
    of a compiled step's key.
    """

    __slots__ = ("records", "parts", "structure", "external", "split_nodes", "released_calls", "broadcasts")

    def __init__(self) -> None:
        self.computation = None
        self.primal_out_keys: list = []
        self.saved_data: dict | None = {}
        self.input_edges: list = []
        self.records: list[tuple] = []
        self.parts: list | None = []  # the structure while open
        self.structure: tuple | None = None
        self.external: dict | None = {}  # raw key -> index in input_edges, while open
        self.split_nodes: list[TapeNode] | None = None
        self.released_calls: frozenset = frozenset()  # released one by one (``release_calls``)
        # (id(leaf), shape) -> a leaf's operand broadcast recorded here (``dispatch.broadcast_operand``)
        self.broadcasts: dict | None = None

    def close(self) -> None:
        global _open
        if self.structure is None:
            self.structure = tuple(self.parts)
            self.parts = self.external = self.broadcasts = None
        if _open is not None and _open() is self:
            _open = None

    release = TapeNode.release  # the calls' saved values freed, their leaves kept (Note [release])

    def release_calls(self, calls: frozenset) -> None:
        """Release only ``calls`` (a pass ran only theirs, as PyTorch frees only the nodes it
        runs): a saved value is freed once no call left reads it."""
        saved = self.saved_data
        if saved is None or saved.__class__ is ReleasedValues:
            return
        released = self.released_calls = self.released_calls | calls
        if len(released) == len(self.records):
            self.release()
            return
        out_keys = self.primal_out_keys
        read: set = set()  # by the calls not released
        for j, (_, in_keys, _, save_in, save_out) in enumerate(self.records):
            if j not in released:
                read.update(in_keys[i].key for i in save_in)
                if save_out:
                    read.add(out_keys[j].key)
        saved.update(release_saved({k: v for k, v in saved.items() if k not in read}))

    def split(self) -> list[TapeNode]:
        """One ``TapeNode`` per call (built once), sharing the group's saved values."""
        nodes = self.split_nodes
        if nodes is not None:
            return nodes
        self.close()
        saved_all = self.saved_data
        released = saved_all.__class__ is ReleasedValues
        out_keys = self.primal_out_keys
        nodes = []
        for j, (app, in_keys, codes, save_in, save_out) in enumerate(self.records):
            # a call reads an earlier call's node directly: no reference back to the group
            edges = [(Trace(nodes[c]), k, True) if c >= 0 else self.input_edges[~c] for c, k in zip(codes, in_keys)]
            graph = TensorRecordedGraph.of_call(app, list(in_keys), [out_keys[j]])
            saved = None
            if saved_all is not None:
                saved = {in_keys[i]: saved_all[in_keys[i].key] for i in save_in}
                if save_out:
                    saved[graph.output_keys()[0]] = saved_all[out_keys[j].key]
                if released:
                    saved = ReleasedValues(saved)
            nodes.append(TapeNode(graph, [out_keys[j]], saved, edges))
        if saved_all is not None:  # a saved call output unpacks with its call's node as grad_fn
            index = {k.key: j for j, k in enumerate(out_keys)}
            for key, value in saved_all.items():
                j = index.get(key)
                if j is not None and value.__class__ is SavedOutput:
                    value.node = weakref.ref(nodes[j])
        self.split_nodes = nodes
        self.saved_data = None  # the calls' nodes own the saved values now
        return nodes

    def raw(self, index: int) -> TraceNode:
        """What a walk that reads groups sees at call ``index``: the group, or its call's node
        once split."""
        return self if self.split_nodes is None else self.split_nodes[index]

    def name(self, index: int) -> str:
        return operation_name(self.records[index][0])


class GroupTrace(Trace):
    """The ``grad_fn`` of a grouped call's output: reading ``node`` splits the group."""

    __slots__ = ("group", "index")

    def __init__(self, group: GroupNode, index: int) -> None:  # noqa: D107 - Trace's slot stays unset
        self.group = group
        self.index = index

    @property
    def node(self) -> TraceNode:  # type: ignore[override]
        return self.group.split()[self.index]

    def name(self) -> str:
        return self.group.name(self.index)

    def __eq__(self, other: object) -> bool:  # by (group, index): comparing never splits
        if other.__class__ is GroupTrace:
            return other.group is self.group and other.index == self.index
        return isinstance(other, Trace) and other.node is self.node

    def __hash__(self) -> int:
        return hash((id(self.group), self.index))


def raw_node(trace: Trace) -> TraceNode:
    """``trace``'s node for walks that read groups (``autograd.compiled``): no split."""
    if trace.__class__ is GroupTrace:
        return trace.group.raw(trace.index)
    return trace.node


def _start() -> GroupNode:
    global _open
    group = GroupNode()
    _open = weakref.ref(group)
    return group


def close() -> None:
    """Close the open group (the next grouped call starts a new one)."""
    global _open
    group = None if _open is None else _open()
    if group is not None:
        group.close()
    _open = None


def split_all() -> None:
    """Split every live group (for listings of the recorder's nodes)."""
    for o in gc.get_objects():
        if type(o) is GroupNode:
            o.split()
