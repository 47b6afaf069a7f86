"""Eager integration: record calls as traces and run reverse mode over them."""

from .backward import BackwardExecutor, PrimitiveGraph, backward, try_backward
from .record import (
    CountingKeySource,
    EagerInput,
    EagerOutput,
    EagerRecordError,
    KeySource,
    RecordedGraph,
    Recorder,
    record_primitive,
)
from .trace import FREED_MESSAGE, ReleasedValues, Trace, TraceNode, topological_traces

__all__ = [
    "BackwardExecutor", "CountingKeySource", "EagerInput", "EagerOutput", "EagerRecordError",
    "FREED_MESSAGE", "KeySource", "PrimitiveGraph", "RecordedGraph", "Recorder", "ReleasedValues",
    "Trace", "TraceNode", "backward", "record_primitive", "topological_traces", "try_backward",
]
