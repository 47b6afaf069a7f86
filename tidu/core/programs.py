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

ENABLED = os.environ.get("TIDU_CACHE", "1") != "0"
MAX_PROGRAMS = 4096
_programs: OrderedDict[Any, Program] = OrderedDict()


class Program:
    """A canonical node program: its linear graph (residuals) and the transpose."""

    __slots__ = ("linear", "transposed", "in_keys", "out_keys")

    def __init__(self, linear: LinearizedGraph, transposed: LinearizedGraph, in_keys: list, out_keys: list) -> None:
        self.linear = linear
        self.transposed = transposed
        self.in_keys = in_keys  # canonical ValueKeys of the distinct inputs
        self.out_keys = out_keys  # canonical keys of the primal outputs (Derived)


class BoundGraph:
    """A program's linear graph plus the node's keys, handed to ``execute_forward``."""

    __slots__ = ("program", "env_map")

    def __init__(self, program: Program, env_map: dict[Any, Any]) -> None:
        self.program = program
        self.env_map = env_map  # canonical key -> the node's saved-data key

    @property
    def operations(self) -> list:
        return self.program.linear.as_graph().operations

    @property
    def values(self) -> list:
        return self.program.linear.as_graph().values


class BoundProgram(LinearizedGraph):
    """A cached program seen through one node's keys (what ``try_backward`` receives)."""

    __slots__ = ("program", "bound")

    def __init__(self, program: Program, tangent_inputs: list, env_map: dict[Any, Any]) -> None:
        super().__init__(program.linear.as_graph(), tangent_inputs, program.linear.tangent_outputs)
        self.program = program
        self.bound = BoundGraph(program, env_map)

    def as_graph(self) -> Any:
        return self.bound


def clear() -> None:
    _programs.clear()


def size() -> int:
    return len(_programs)


class TensorRecordedGraph(RecordedGraph):
    """A one-primitive recorded call whose backward program comes from the cache.

    Its graph is built only when something asks for it (printing, ``TIDU_CACHE=0``):
    recording needs just the operation and its keys.
    """

    __slots__ = ("_op",)

    @classmethod
    def from_primitive(cls, op: Any, input_keys: Sequence[ValueKey]) -> TensorRecordedGraph:
        self = object.__new__(cls)
        self._op = op
        self._graph = None
        self._input_keys = list(input_keys)
        opkey = OperationKey(op, tuple(input_keys), OperationRole.Primary)
        self._output_keys = [ValueKey.Derived(opkey, s) for s in range(op.output_count())]
        return self

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
        if not ENABLED:
            return super().try_linearize(active_slots, ctx, wrt)
        inputs = self.input_keys()
        distinct = list(dict.fromkeys(inputs))
        pattern = tuple(distinct.index(k) for k in inputs)
        active_in = tuple(range(len(distinct))) if wrt is None else tuple(
            i for i, k in enumerate(distinct) if k in set(wrt))
        op = self._op
        cache_key = (op, tuple(active_slots), pattern, active_in)
        program = _programs.get(cache_key)
        if program is None:
            canon_in = [ValueKey.Input(("arg", i)) for i in range(len(distinct))]
            canon = RecordedGraph.from_primitive(op, [canon_in[p] for p in pattern])
            linear = canon.try_linearize(active_slots, ctx, [canon_in[i] for i in active_in])
            program = Program(linear, try_linear_transpose(linear, ctx), canon_in, canon.output_keys())
            _programs[cache_key] = program
            if len(_programs) > MAX_PROGRAMS:
                _programs.popitem(last=False)
        else:
            _programs.move_to_end(cache_key)
        env_map = dict(zip(program.in_keys, distinct))
        env_map.update(zip(program.out_keys, self.output_keys()))
        raw_to_eager = {canon.key: key.key for canon, key in zip(program.in_keys, distinct)}
        tangent_inputs = [(raw_to_eager[raw], tid) for raw, tid in program.linear.tangent_inputs]
        return BoundProgram(program, tangent_inputs, env_map)
