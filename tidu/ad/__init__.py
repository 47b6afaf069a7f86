"""tidu's AD engine: graph transforms over any operand type (tidu-rs in Python).

``linearize`` builds the JVP graph of a primitive computation graph from each
primitive's ``jvp_rule``; ``linear_transpose`` reverses a linear graph with each
primitive's ``transpose_rule``. The engine knows nothing of tensors.
"""

from .errors import ADRuleError, ADRuleKind
from .graph import (
    EvaluableGraphOperation,
    Graph,
    GraphBuilder,
    GraphOperation,
    OperationNode,
    ResolvedView,
    ValueDef,
    ValueNode,
    resolve,
)
from .keys import (
    DiffPassId,
    LocalOperationId,
    LocalValueId,
    OperationKey,
    OperationRole,
    PrimitiveValue,
    TangentKey,
    ValueKey,
    ValueRef,
    tangent_of,
)
from .linearize import LinearizedGraph, linearize, topological_operations, try_linearize
from .primitive import Primitive, PrimitiveBuilder
from .transpose import (
    linear_transpose,
    linear_transpose_with_builder,
    try_linear_transpose,
    try_linear_transpose_with_builder,
)
from .undefined import UndefinedPrimal, is_undefined_primal

ADRuleResult = object  # Rust's Result<T, ADRuleError>: Python returns T or raises

__all__ = [
    "ADRuleError", "ADRuleKind", "ADRuleResult", "DiffPassId", "EvaluableGraphOperation",
    "Graph", "GraphBuilder", "GraphOperation", "LinearizedGraph", "LocalOperationId",
    "LocalValueId", "OperationKey", "OperationNode", "OperationRole", "Primitive",
    "PrimitiveBuilder", "PrimitiveValue", "ResolvedView", "TangentKey", "ValueDef",
    "UndefinedPrimal", "ValueKey", "ValueNode", "is_undefined_primal", "ValueRef", "linear_transpose", "linear_transpose_with_builder",
    "linearize", "resolve", "tangent_of", "topological_operations", "try_linear_transpose",
    "try_linear_transpose_with_builder", "try_linearize",
]
