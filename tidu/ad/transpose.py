"""``linear_transpose``: run a linear graph backwards, from cotangents to cotangents.

Linear operations (role ``Linearized`` with an active input) are visited in
reverse; each gets its output cotangents and *all* inputs as ``External`` keys,
its role's ``active_mask`` telling which inputs are linear. Cotangents that fan
in to one value are summed with the primitive set's ``add()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import ADRuleError, ADRuleKind
from .graph import GraphBuilder, op_name
from .keys import MAX_PASS, LocalValueId, OperationRole, PrimitiveValue, ValueKey, tangent_of
from .linearize import LinearizedGraph


def _transpose(op: Any, builder: Any, cts: list, inputs: list, role: OperationRole, ctx: Any) -> list:
    rule = getattr(op, "try_linear_transpose_rule", None) or getattr(op, "transpose_rule", None)
    if rule is None:
        raise ADRuleError.unsupported(op_name(op), ADRuleKind.Transpose)
    result = list(rule(builder, cts, inputs, role, ctx))
    if len(result) != op.input_count():
        raise RuntimeError(
            f"transpose_rule for {op_name(op)} returned {len(result)} cotangents for {op.input_count()} inputs"
        )
    return result


def try_linear_transpose_with_builder(
    linear: LinearizedGraph,
    builder: Any,
    cotangent_seeds: Sequence[LocalValueId | None],
    ctx: Any = None,
) -> list[LocalValueId | None]:
    """Emit the transpose of ``linear`` into ``builder``.

    ``cotangent_seeds`` are builder ids (or ``None``) aligned with
    ``linear.tangent_outputs``, as in tidu-rs; a seed for an inactive (``None``)
    tangent output is ignored. One seed per *active* tangent output (in order)
    is also accepted. Returns one builder id (or ``None``) per tangent input of
    ``linear``.
    """
    graph = linear.as_graph()
    cotangents: dict[LocalValueId, LocalValueId] = {}
    add_op: Any = graph.operations[0].operation.add() if graph.operations else None

    def accumulate(target: LocalValueId, ct: LocalValueId, via: Any) -> None:
        existing = cotangents.get(target)
        if existing is None:
            cotangents[target] = ct
            return
        add = via.add() if via is not None else add_op
        if add is None:
            raise RuntimeError(
                "cannot sum two cotangents of one value: the linear graph has no operation to take add() from"
            )
        both = [PrimitiveValue.Local(existing), PrimitiveValue.Local(ct)]
        cotangents[target] = builder.add_primitive(add, both, OperationRole.Linearized((True, True)))[0]

    tangent_outputs = list(linear.tangent_outputs)
    active_outputs = [t for t in tangent_outputs if t is not None]
    if len(cotangent_seeds) == len(tangent_outputs):
        targets = tangent_outputs
    elif len(cotangent_seeds) == len(active_outputs):
        targets = active_outputs
    else:
        raise ValueError(
            f"expected {len(tangent_outputs)} cotangent seeds (one per tangent output), "
            f"got {len(cotangent_seeds)}"
        )
    for target, seed in zip(targets, cotangent_seeds):
        if target is not None and seed is not None:
            accumulate(target, seed, None)

    for node in reversed(graph.operations):
        role = node.role
        if not role.is_linearized() or not any(role.active_mask):
            continue
        cts_out = [cotangents.get(o) for o in node.outputs]
        if all(c is None for c in cts_out):
            continue
        inputs = [PrimitiveValue.External(graph.values[i].key) for i in node.inputs]
        cts_in = _transpose(node.operation, builder, cts_out, inputs, role, ctx)
        for value, active, ct in zip(node.inputs, role.active_mask, cts_in):
            if active and ct is not None:
                accumulate(value, ct, node.operation)
    return [cotangents.get(tid) for _, tid in linear.tangent_inputs]


def try_linear_transpose(linear: LinearizedGraph, ctx: Any = None) -> LinearizedGraph:
    """The transposed linear graph: seeds in, cotangents of the tangent inputs out."""
    active = [t for t in linear.tangent_outputs if t is not None]
    tangent_inputs = linear.tangent_inputs
    if active and not tangent_inputs:
        raise RuntimeError("active tangent outputs require at least one tangent input to derive seed keys")
    builder = GraphBuilder()
    seeds: list[tuple[Any, LocalValueId]] = []
    for i in range(len(active)):
        base = tangent_inputs[min(i, len(tangent_inputs) - 1)][0]
        key = tangent_of(base, MAX_PASS - i)
        seeds.append((key, builder.add_input(ValueKey.Input(key))))
    outs = try_linear_transpose_with_builder(linear, builder, [sid for _, sid in seeds], ctx)
    builder.set_outputs([o for o in outs if o is not None])
    return LinearizedGraph(builder.build(), seeds, outs)


def linear_transpose(linear: LinearizedGraph, ctx: Any = None) -> LinearizedGraph:
    """``try_linear_transpose``; rule failures raise ``ADRuleError``."""
    return try_linear_transpose(linear, ctx)


linear_transpose_with_builder = try_linear_transpose_with_builder
