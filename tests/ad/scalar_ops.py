"""A scalar primitive set for the engine tests, with an evaluator and eager runtime.

Richer than the tutorial's (examples/eager_reverse_mode.py): ``add mul neg exp
sin cos conj``, the two-output ``sincos``, ``sign`` (its tangent is always
inactive), and three ops whose rules fail on purpose (``custom::op`` has no
JVP, ``fft`` no transpose, ``bad`` rejects its transpose input). Values are
Python floats or complex numbers; transposes follow the JAX convention for
complex numbers (``mul`` transposes with the conjugated constant).

Every rule reports itself to a ``CountingCtx`` when one is passed as ``ctx``.
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tidu.ad import (
    ADRuleError,
    ADRuleKind,
    Graph,
    GraphBuilder,
    LinearizedGraph,
    LocalValueId,
    OperationRole,
    Primitive,
    PrimitiveValue,
    TangentKey,
    ValueKey,
    linear_transpose,
    linearize,
    tangent_of,
    try_linear_transpose_with_builder,
)
from tidu.eager import BackwardExecutor, EagerInput, PrimitiveGraph, RecordedGraph, Recorder

Local = PrimitiveValue.Local
External = PrimitiveValue.External
PRIMARY = OperationRole.Primary


def _lib(x: Any) -> Any:
    return cmath if isinstance(x, complex) else math


def _sign(x: float) -> float:
    return float((x > 0) - (x < 0))


# name: (input count, output count, evaluator returning a tuple)
SPECS: dict[str, tuple[int, int, Callable[..., tuple]]] = {
    "add": (2, 1, lambda x, y: (x + y,)),
    "mul": (2, 1, lambda x, y: (x * y,)),
    "neg": (1, 1, lambda x: (-x,)),
    "exp": (1, 1, lambda x: (_lib(x).exp(x),)),
    "sin": (1, 1, lambda x: (_lib(x).sin(x),)),
    "cos": (1, 1, lambda x: (_lib(x).cos(x),)),
    "conj": (1, 1, lambda x: (x.conjugate(),)),
    "sincos": (1, 2, lambda x: (_lib(x).sin(x), _lib(x).cos(x))),
    "sign": (1, 1, lambda x: (_sign(x),)),
    "custom::op": (1, 1, lambda x: (x,)),
    "fft": (1, 1, lambda x: (2 * x,)),
    "bad": (1, 1, lambda x: (3 * x,)),
}


@dataclass
class CountingCtx:
    """An AD context that records every rule call it reaches: ``("jvp", "mul")``, ..."""

    calls: list[tuple[str, str]] = field(default_factory=list)

    def count(self, kind: str, name: str | None = None) -> int:
        return sum(1 for k, n in self.calls if k == kind and (name is None or n == name))


def _note(ctx: Any, kind: str, op: ScalarOp) -> None:
    if isinstance(ctx, CountingCtx):
        ctx.calls.append((kind, op.name))


@dataclass(frozen=True, repr=False)
class ScalarOp(Primitive):
    """An operation value named by ``name`` (hashable and equal by value)."""

    name: str

    def __repr__(self) -> str:
        return self.name

    def input_count(self) -> int:
        return SPECS[self.name][0]

    def output_count(self) -> int:
        return SPECS[self.name][1]

    def eval(self, ctx: Any, inputs: Sequence[Any]) -> list[Any]:
        return list(SPECS[self.name][2](*inputs))

    def add(self) -> ScalarOp:
        return ADD

    def jvp_rule(self, builder, primal_inputs, primal_outputs, tangent_inputs, ctx):  # type: ignore[no-untyped-def]
        _note(ctx, "jvp", self)
        rule = JVP.get(self.name)
        if rule is None:
            return super().jvp_rule(builder, primal_inputs, primal_outputs, tangent_inputs, ctx)
        return rule(builder, primal_inputs, primal_outputs, tangent_inputs)

    def transpose_rule(self, builder, cotangent_outputs, inputs, role, ctx):  # type: ignore[no-untyped-def]
        _note(ctx, "transpose", self)
        rule = TRANSPOSE.get(self.name)
        if rule is None:
            return super().transpose_rule(builder, cotangent_outputs, inputs, role, ctx)
        return rule(builder, cotangent_outputs, inputs, role.active_mask)


ADD, MUL, NEG, EXP = ScalarOp("add"), ScalarOp("mul"), ScalarOp("neg"), ScalarOp("exp")
SIN, COS, CONJ, SINCOS = ScalarOp("sin"), ScalarOp("cos"), ScalarOp("conj"), ScalarOp("sincos")
SIGN = ScalarOp("sign")
NO_JVP, NO_TRANSPOSE, BAD_TRANSPOSE = ScalarOp("custom::op"), ScalarOp("fft"), ScalarOp("bad")


def linear(builder: Any, op: ScalarOp, inputs: list[PrimitiveValue], mask: list[bool]) -> LocalValueId:
    return builder.add_primitive(op, inputs, OperationRole.Linearized(mask))[0]


def primal(builder: Any, op: ScalarOp, inputs: list[PrimitiveValue]) -> LocalValueId:
    return builder.add_primitive(op, inputs, PRIMARY)[0]


def total(builder: Any, terms: list[LocalValueId]) -> LocalValueId | None:
    result = None
    for term in terms:
        result = term if result is None else linear(builder, ADD, [Local(result), Local(term)], [True, True])
    return result


def _scale(builder: Any, t: LocalValueId, factor: LocalValueId) -> LocalValueId:
    """``t * factor`` with ``t`` linear and ``factor`` a primal value made by the builder."""
    return linear(builder, MUL, [Local(t), Local(factor)], [True, False])


def _jvp_mul(b, x, out, t):  # type: ignore[no-untyped-def]
    terms = []
    if t[0] is not None:
        terms.append(linear(b, MUL, [Local(t[0]), External(x[1])], [True, False]))
    if t[1] is not None:
        terms.append(linear(b, MUL, [External(x[0]), Local(t[1])], [False, True]))
    return [total(b, terms)]


def _jvp_cos(b, x, out, t):  # type: ignore[no-untyped-def]
    minus_sin = primal(b, NEG, [Local(primal(b, SIN, [External(x[0])]))])
    return [_scale(b, t[0], minus_sin)]


def _jvp_sincos(b, x, out, t):  # type: ignore[no-untyped-def]
    d_sin = linear(b, MUL, [Local(t[0]), External(out[1])], [True, False])
    d_cos = linear(b, NEG, [Local(linear(b, MUL, [Local(t[0]), External(out[0])], [True, False]))], [True])
    return [d_sin, d_cos]


JVP: dict[str, Callable[..., list]] = {
    "add": lambda b, x, out, t: [total(b, [d for d in t if d is not None])],
    "mul": _jvp_mul,
    "neg": lambda b, x, out, t: [linear(b, NEG, [Local(t[0])], [True])],
    "exp": lambda b, x, out, t: [linear(b, MUL, [Local(t[0]), External(out[0])], [True, False])],
    "sin": lambda b, x, out, t: [_scale(b, t[0], primal(b, COS, [External(x[0])]))],
    "cos": _jvp_cos,
    "conj": lambda b, x, out, t: [linear(b, CONJ, [Local(t[0])], [True])],
    "sincos": _jvp_sincos,
    "sign": lambda b, x, out, t: [None],
    "fft": lambda b, x, out, t: [linear(b, NO_TRANSPOSE, [Local(t[0])], [True])],
    "bad": lambda b, x, out, t: [linear(b, BAD_TRANSPOSE, [Local(t[0])], [True])],
}


def _transpose_mul(b, cts, inputs, mask):  # type: ignore[no-untyped-def]
    ct = cts[0]
    result: list[LocalValueId | None] = [None, None]
    for i, other in ((0, inputs[1]), (1, inputs[0])):
        if mask[i]:  # JAX convention: the transpose of t -> c * t is ct -> conj(c) * ct
            result[i] = linear(b, MUL, [Local(ct), Local(primal(b, CONJ, [other]))], [True, False])
    return result


def _transpose_bad(b, cts, inputs, mask):  # type: ignore[no-untyped-def]
    raise ADRuleError.invalid_input("bad", ADRuleKind.Transpose, "rank mismatch")


TRANSPOSE: dict[str, Callable[..., list]] = {
    "add": lambda b, cts, inputs, mask: [cts[0] if m else None for m in mask],
    "mul": _transpose_mul,
    "neg": lambda b, cts, inputs, mask: [linear(b, NEG, [Local(cts[0])], [True])],
    "conj": lambda b, cts, inputs, mask: [linear(b, CONJ, [Local(cts[0])], [True])],
    "bad": _transpose_bad,
}


# ---- graphs -----------------------------------------------------------------------------------------------


class Program:
    """Builds a graph tersely: ``p = Program("x"); y = p(EXP, p(MUL, "x", "x")); g = p.build(y)``."""

    def __init__(self, *names: Hashable) -> None:
        self.builder = GraphBuilder()
        self.ids = {name: self.builder.add_input(name) for name in names}

    def __call__(self, op: ScalarOp, *args: Any) -> Any:
        ids = [self.ids[a] if isinstance(a, str) else a for a in args]
        outs = self.builder.add_operation(op, [Local(i) for i in ids], PRIMARY)
        return outs[0] if len(outs) == 1 else outs

    def build(self, *outputs: LocalValueId) -> Graph:
        self.builder.set_outputs(outputs)
        return self.builder.build()


def eval_key(key: ValueKey, env: dict[Hashable, Any], memo: dict[ValueKey, Any] | None = None) -> Any:
    """The value of any key: inputs from ``env`` (by raw key), derived keys from their operation."""
    memo = {} if memo is None else memo
    if key in memo:
        return memo[key]
    if key.is_input():
        value = env[key.key]
    else:
        operation = key.operation
        inputs = [eval_key(k, env, memo) for k in operation.inputs]
        value = operation.op.eval(None, inputs)[key.output_slot]
    memo[key] = value
    return value


def evaluate(graph: Graph, env: dict[Hashable, Any]) -> dict[LocalValueId, Any]:
    """Run ``graph``'s operations in order. Input leaves come from ``env``; a leaf that refers
    to a value of another graph (a derived key) is computed from its operation."""
    memo: dict[ValueKey, Any] = {}
    values = {i: eval_key(graph.values[i].key, env, memo) for i in graph.inputs}
    for node in graph.operations:
        outs = node.operation.eval(None, [values[i] for i in node.inputs])
        assert len(outs) == len(node.outputs)
        values.update(zip(node.outputs, outs))
    return values


def jvp(
    graph: Graph,
    outputs: Sequence[LocalValueId],
    primals: dict[Hashable, Any],
    tangents: dict[Hashable, Any],
    pass_id: int = 0,
    ctx: Any = None,
) -> list[Any]:
    """Forward mode: the tangents of ``outputs`` for input ``tangents`` (``None`` when inactive)."""
    lin = linearize(graph, [graph.global_key(o) for o in outputs], list(tangents), pass_id, ctx)
    env = {**primals, **{tangent_of(k, pass_id): v for k, v in tangents.items()}}
    values = evaluate(lin.as_graph(), env)
    return [None if t is None else values[t] for t in lin.tangent_outputs]


def seed_env(transposed: LinearizedGraph, lin: LinearizedGraph, cotangents: Sequence[Any]) -> dict:
    """Concrete values for the seeds of ``transposed``: one per *active* output of ``lin``."""
    active = [ct for t, ct in zip(lin.tangent_outputs, cotangents) if t is not None]
    return {key: ct for (key, _), ct in zip(transposed.tangent_inputs, active)}


def vjp(
    graph: Graph,
    outputs: Sequence[LocalValueId],
    wrt: Sequence[Hashable],
    primals: dict[Hashable, Any],
    cotangents: Sequence[Any],
    ctx: Any = None,
) -> list[Any]:
    """Reverse mode: the cotangents of ``wrt`` for output ``cotangents`` (``None`` when unreached)."""
    lin = linearize(graph, [graph.global_key(o) for o in outputs], wrt, 0, ctx)
    transposed = linear_transpose(lin, ctx)
    values = evaluate(transposed.as_graph(), {**primals, **seed_env(transposed, lin, cotangents)})
    return [None if t is None else values[t] for t in transposed.tangent_outputs]


# ---- eager runtime ------------------------------------------------------------------------------------------


class ImmediateBuilder:
    """A ``PrimitiveBuilder`` that evaluates each operation at once (the tutorial's ``ScalarBuilder``)."""

    def __init__(self, external_data: dict[ValueKey, Any]) -> None:
        self.locals: list[Any] = []
        self.external_data = external_data
        self.ops: list[ScalarOp] = []

    def push_value(self, value: Any) -> LocalValueId:
        self.locals.append(value)
        return len(self.locals) - 1

    def add_primitive(self, op: ScalarOp, inputs: list[PrimitiveValue], role: OperationRole) -> list[int]:
        args = [self.locals[v.id] if v.is_local() else self.external_data[v.key] for v in inputs]
        self.ops.append(op)
        start = len(self.locals)
        self.locals.extend(op.eval(None, args))
        return list(range(start, len(self.locals)))


class Executor(BackwardExecutor):
    """A ``BackwardExecutor`` for scalars that keeps the linear graphs it was given."""

    def __init__(self) -> None:
        self.linear_graphs: list[LinearizedGraph] = []
        self.additions = 0

    def execute_forward(
        self, graph: PrimitiveGraph, initial_data: dict[ValueKey, Any]
    ) -> dict[ValueKey, Any]:
        g = graph.as_graph()
        values = dict(initial_data)
        for i in g.inputs:
            key = g.values[i].key
            if key not in values:
                if not (key.is_input() and isinstance(key.key, TangentKey)):
                    raise RuntimeError(f"missing concrete value for graph input {key!r}")
                values[key] = 0.0  # a tangent input: only steers the replay
        for node in g.operations:
            outs = node.operation.eval(None, [values[g.values[i].key] for i in node.inputs])
            values.update((g.values[o].key, v) for o, v in zip(node.outputs, outs))
        return values

    def run_transposed_linear(self, linear, cotangent_outputs, external_data, ctx):  # type: ignore[no-untyped-def]
        self.linear_graphs.append(linear)
        builder = ImmediateBuilder(external_data)
        seeds = [None if ct is None else builder.push_value(ct) for ct in cotangent_outputs]
        ids = try_linear_transpose_with_builder(linear, builder, seeds, ctx)
        return [None if i is None else builder.locals[i] for i in ids]

    def add_operands(self, a: Any, b: Any) -> Any:
        self.additions += 1
        return a + b


def leaf(name: str, value: Any, requires_grad: bool = True) -> EagerInput:
    return EagerInput(ValueKey.Input(name), None, requires_grad, value)


def call(recorder: Recorder, op: ScalarOp, *inputs: EagerInput) -> list[EagerInput]:
    """Run ``op`` eagerly, record it, and return its outputs ready to be used as inputs."""
    values = op.eval(None, [inp.data for inp in inputs])
    graph = RecordedGraph.from_primitive(op, [inp.key for inp in inputs])
    outs = recorder.record_graph(graph, list(inputs), values, dict(zip(graph.output_keys(), values)))
    return [EagerInput(o.key, o.trace, o.requires_grad, v) for o, v in zip(outs, values)]
