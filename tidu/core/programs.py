"""Cached backward programs.

The linearized and transposed program of a recorded call depends only on its
``Application`` (primitive, params, input avals), which outputs carry a
cotangent, and which inputs are the same tensor. It is built once on
canonical keys (``("arg", i)``) and reused by every later node of that form.
``TIDU_CACHE=0`` turns the cache off (every backward re-derives, as tidu-rs does).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..ad import LinearizedGraph, OperationKey, OperationRole, ValueKey, try_linear_transpose
from ..eager import RecordedGraph

_Derived = ValueKey.Derived
ENABLED = os.environ.get("TIDU_CACHE", "1") != "0"
MAX_PROGRAMS = 4096
_programs: OrderedDict[Any, Program] = OrderedDict()


class Program:
    """A canonical node program: its linear graph (residuals) and the transpose."""

    __slots__ = ("linear", "transposed", "in_keys", "out_keys", "reads")

    def __init__(self, linear: LinearizedGraph, transposed: LinearizedGraph, in_keys: list, out_keys: list) -> None:
        self.linear = linear
        self.transposed = transposed
        self.in_keys = in_keys  # canonical ValueKeys of the distinct inputs
        self.out_keys = out_keys  # canonical keys of the primal outputs (Derived)
        self.reads = external_reads(linear)


def external_reads(linear: LinearizedGraph) -> frozenset:
    """Keys of the primal values a linear graph reads (its leaves that are not tangents).

    Only these are unpacked (and version-checked) at backward, and only these are saved.
    """
    graph = linear.as_graph()
    tangents = {tid for _, tid in linear.tangent_inputs}
    return frozenset(graph.values[i].key for i in graph.inputs if i not in tangents)


class BoundGraph:
    """A program's linear graph plus the node's keys, handed to ``execute_forward``."""

    __slots__ = ("program", "env_map", "op")

    def __init__(self, program: Program, env_map: dict[Any, Any], op: Any) -> None:
        self.program = program
        self.env_map = env_map  # canonical key -> the node's saved-data key, for the values read
        self.op = op  # the node's call, named by errors about what it saved

    @property
    def operations(self) -> list:
        return self.program.linear.as_graph().operations

    @property
    def values(self) -> list:
        return self.program.linear.as_graph().values


class BoundProgram(LinearizedGraph):
    """A cached program seen through one node's keys (what ``try_backward`` receives)."""

    __slots__ = ("program", "bound", "active_out")

    def __init__(self, program: Program, tangent_inputs: list, env_map: dict[Any, Any], active_out: list,
                 op: Any) -> None:
        super().__init__(program.linear.as_graph(), tangent_inputs, program.linear.tangent_outputs)
        self.program = program
        self.bound = BoundGraph(program, env_map, op)
        self.active_out = active_out  # the node's keys of the outputs given a cotangent

    def as_graph(self) -> Any:
        return self.bound


def clear() -> None:
    _programs.clear()
    _positions.clear()


def size() -> int:
    return len(_programs)


class TensorRecordedGraph(RecordedGraph):
    """A one-primitive recorded call whose backward program comes from the cache.

    Its graph is built only when something asks for it (printing, ``TIDU_CACHE=0``):
    recording needs just the operation and its keys.
    """

    __slots__ = ("_op", "eager_out_keys")
    cacheable = True  # False for ops whose program depends on more than (op, avals): autograd.Function

    @classmethod
    def from_primitive(cls, op: Any, input_keys: Sequence[ValueKey]) -> TensorRecordedGraph:
        self = object.__new__(cls)
        self._op = op
        self._graph = None
        self._input_keys = list(input_keys)
        self._output_keys = None  # derived on first use (recording does not need them)
        self.eager_out_keys: list = []  # the keys the recorder gave the outputs (set after recording)
        return self

    @classmethod
    def of_call(cls, op: Any, input_keys: list[ValueKey], eager_out_keys: list) -> TensorRecordedGraph:
        """``from_primitive`` for the recording hot path: ``input_keys`` is the caller's own list
        and the recorder's output keys are known."""
        self = object.__new__(cls)
        self._op = op
        self._graph = None
        self._input_keys = input_keys
        self._output_keys = None
        self.eager_out_keys = eager_out_keys
        return self

    def output_keys(self) -> list[ValueKey]:
        keys = self._output_keys
        if keys is None:
            opkey = OperationKey(self._op, tuple(self._input_keys), OperationRole.Primary)
            n = self._op.output_count()
            keys = self._output_keys = [_Derived(opkey, 0)] if n == 1 else [_Derived(opkey, s) for s in range(n)]
        return keys

    def as_graph(self) -> Any:
        if self._graph is None:
            self._graph = RecordedGraph.from_primitive(self._op, self._input_keys).as_graph()
        return self._graph

    def resolve_value(self, key: ValueKey) -> Any:
        return self.as_graph().resolve_value(key)

    def describe(self) -> str:
        return self._op.name

    def try_linearize(
        self, active_slots: Sequence[int], ctx: Any = None, wrt: Sequence[Any] | None = None
    ) -> LinearizedGraph:
        active_out = [self.eager_out_keys[s] for s in active_slots] if self.eager_out_keys else []
        if not ENABLED or not self.cacheable:
            linear = super().try_linearize(active_slots, ctx, wrt)
            return NodeLinearizedGraph(linear, active_out)
        distinct, pattern = _distinct(self.input_keys())
        wanted = set(distinct) if wrt is None else set(wrt)
        active_in = tuple(i for i, k in enumerate(distinct) if k in wanted)
        program = _program(self._op, tuple(active_slots), pattern, active_in, ctx)
        env_map = {c: k for c, k in zip(program.in_keys, distinct) if c in program.reads}
        env_map.update((c, k) for c, k in zip(program.out_keys, self.output_keys()) if c in program.reads)
        raw_to_eager = {canon.key: key.key for canon, key in zip(program.in_keys, distinct)}
        tangent_inputs = [(raw_to_eager[raw], tid) for raw, tid in program.linear.tangent_inputs]
        return BoundProgram(program, tangent_inputs, env_map, active_out, self._op)


class NodeLinearizedGraph(LinearizedGraph):
    """An uncached node's linear graph, with the keys of the outputs it was asked for."""

    __slots__ = ("active_out",)

    def __init__(self, linear: LinearizedGraph, active_out: list) -> None:
        super().__init__(linear.as_graph(), linear.tangent_inputs, linear.tangent_outputs)
        self.active_out = active_out


def active_seeds(program: Program, cotangents: Sequence[Any]) -> list[Any]:
    """The cotangents (one per output slot of the program) that seed its transpose: those of the
    outputs with a tangent (a multi-output primitive's JVP may give one output none)."""
    return [c for c, t in zip(cotangents, program.linear.tangent_outputs) if t is not None]


def _distinct(inputs: Sequence[ValueKey]) -> tuple[list, tuple[int, ...]]:
    distinct = list(dict.fromkeys(inputs))
    return distinct, tuple(distinct.index(k) for k in inputs)


def distinct_pattern(inputs: Sequence[ValueKey]) -> tuple[int, ...]:
    """Which inputs are the same value: each one's index among the distinct inputs."""
    if len({k._hash for k in inputs}) == len(inputs):  # distinct hashes: distinct values
        return _IDENTITY[len(inputs)] if len(inputs) < len(_IDENTITY) else tuple(range(len(inputs)))
    return _distinct(inputs)[1]


_IDENTITY = [tuple(range(n)) for n in range(8)]


def _build(op: Any, active_slots: tuple, pattern: tuple, active_in: tuple, ctx: Any) -> Program:
    canon_in = [ValueKey.Input(("arg", i)) for i in range(max(pattern, default=-1) + 1)]
    canon = RecordedGraph.from_primitive(op, [canon_in[p] for p in pattern])
    linear = canon.try_linearize(active_slots, ctx, [canon_in[i] for i in active_in])
    return Program(linear, try_linear_transpose(linear, ctx), canon_in, canon.output_keys())


def _program(op: Any, active_slots: tuple, pattern: tuple, active_in: tuple, ctx: Any) -> Program:
    cache_key = (op, active_slots, pattern, active_in)
    program = _programs.get(cache_key)
    if program is None:
        program = _build(op, active_slots, pattern, active_in, ctx)
        _programs[cache_key] = program
        if len(_programs) > MAX_PROGRAMS:
            _programs.popitem(last=False)
    else:
        _programs.move_to_end(cache_key)
    return program


_positions: dict[Any, tuple[set[int], set[int]] | None] = {}
_MISSING = object()


def saved_positions(op: Any, input_keys: Sequence[ValueKey], requires_grad: Sequence[bool],
                    slots: tuple[int, ...]) -> tuple[set[int], set[int]] | None:
    """Which inputs (positions) and output slots a node's backward program reads.

    Remembered per node form even with ``TIDU_CACHE=0`` (which only stops reusing programs).
    ``None`` (save everything) when the program cannot be built now: a missing rule is
    reported at backward, where PyTorch reports it.
    """
    if not slots:
        return None
    n = len(input_keys)
    if n == 1:
        pattern, active_in = (0,), ((0,) if requires_grad[0] else ())
    elif n == 2 and input_keys[0] is not input_keys[1]:  # one tensor has one key object
        pattern = (0, 1)
        active_in = tuple(i for i in (0, 1) if requires_grad[i])
    else:
        pattern = _distinct(input_keys)[1]
        active_in = tuple(sorted({p for p, r in zip(pattern, requires_grad) if r}))
    # keyed by the application's fields: tuple equality in C, not Application.__eq__
    key = (op.prim, op.params, op.in_avals, slots, pattern, active_in)
    found = _positions.get(key, _MISSING)
    if found is not _MISSING:
        return found
    try:
        program = (_program if ENABLED else _build)(op, tuple(slots), pattern, active_in, None)
    except Exception:  # noqa: BLE001 - the same error is raised again at backward
        found = None
    else:
        reads = program.reads
        found = ({i for i, p in enumerate(pattern) if program.in_keys[p] in reads},
                 {s for s, k in enumerate(program.out_keys) if k in reads})
    if len(_positions) >= MAX_PROGRAMS:
        _positions.clear()
    _positions[key] = found
    return found
