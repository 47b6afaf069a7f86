"""Forward mode on tensors: ``linearize`` (JAX's name; ``jvp`` is built on it).

A function is run once with its inputs recorded; the recorded trace is then
linearized by the engine (each primitive's JVP rule) into one
``LinearizedGraph``, which is evaluated on tangents.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from ..ad import LinearizedGraph, ResolvedView, try_linearize
from ..autograd.executor import evaluate, unpack
from ..core import grad_mode
from ..eager import topological_traces
from ..tensor import Tensor

_passes = itertools.count(1)


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def _check_tensors(values: Sequence[Any], what: str) -> None:
    for v in values:
        if not isinstance(v, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(v).__name__}")


def _run(fn: Callable[..., Any], primals: Sequence[Tensor]) -> tuple[list[Tensor], Any, bool]:
    inputs = []
    for p in primals:
        if not p.dtype.is_floating_point:
            raise TypeError(f"linearize: inputs must be floating point, got {p.dtype.name}")
        q = p if p._requires_grad else p.detach().requires_grad_()
        inputs.append(q)
    with grad_mode.enable_grad():
        out = fn(*inputs)
    single = isinstance(out, Tensor)
    outs = list(_as_tuple(out))
    _check_tensors(outs, "outputs of the linearized function")
    return inputs, outs, single


class JvpFn:
    """The linear map of ``linearize``: call it on tangents; ``graph`` prints the program."""

    def __init__(self, graph: LinearizedGraph, env: dict[Any, Any], outs: list[Tensor], single: bool,
                 inputs: list[Tensor], track: bool = True) -> None:
        self.graph = graph
        self._track = track
        self._env = env
        self._outs = outs
        self._single = single
        self._inputs = inputs

    def __call__(self, *tangents: Tensor) -> Any:
        from .batching import is_batched

        for t in tangents:
            if not isinstance(t, Tensor) and not is_batched(t):
                raise TypeError(f"tangents must be Tensors, got {type(t).__name__}")
        if len(tangents) != len(self._inputs):
            raise TypeError(f"expected {len(self._inputs)} tangents, got {len(tangents)}")
        g = self.graph.as_graph()
        env = dict(self._env)
        tangent_by_key = {}
        for p, t in zip(self._inputs, tangents):
            if tuple(t.shape) != tuple(p.shape):
                raise RuntimeError(
                    f"jvp: tangent shape {tuple(t.shape)} does not match primal shape {tuple(p.shape)}"
                )
            tangent_by_key[p._key.key] = t if t.dtype is p.dtype else t.to(p.dtype)
        for raw, tid in self.graph.tangent_inputs:
            env[g.values[tid].key] = tangent_by_key[raw]
        track = self._track or any(getattr(t, "_requires_grad", False) for t in tangents)
        with grad_mode.set_grad_enabled(track and grad_mode.is_grad_enabled()):
            values = evaluate(g, env, primal_only=False)
        results = []
        for out, tid in zip(self._outs, self.graph.tangent_outputs):
            if tid is None:
                from ..ops.creation import zeros_like

                results.append(zeros_like(out))
            else:
                results.append(values[g.values[tid].key])
        return results[0] if self._single else tuple(results)

    def __repr__(self) -> str:
        return f"JvpFn(\n{self.graph}\n)"


def linearize(fn: Callable[..., Any], *primals: Tensor) -> tuple[Any, JvpFn]:
    """Outputs of ``fn(*primals)`` and the linear map from input tangents to output tangents.

    >>> import tidu
    >>> out, jvp_fn = tidu.linearize(lambda x: x * x, tidu.tensor(3.0))
    >>> out.detach(), jvp_fn(tidu.tensor(1.5))
    (tensor(9.), tensor(9.))
    """
    _check_tensors(primals, "primals")
    inputs, outs, single = _run(fn, primals)
    wrt = {p._ensure_key() for p in inputs}
    producers: dict[Any, Any] = {}
    env: dict[Any, Any] = {p._key: p for p in inputs}
    for out in outs:
        for trace in topological_traces(_stop_at(out, wrt)):
            node = trace.node
            if trace.is_released():
                raise RuntimeError("linearize: the function's graph was freed during the call")
            opnode = node.computation.as_graph().operations[0]
            for slot, key in enumerate(node.primal_out_keys):
                producers[key] = (opnode.key, slot)
            for key, value in node.saved_data.items():
                env.setdefault(key, unpack(value, opnode.operation.name))
    view = _StopView(producers, wrt)
    out_keys = [o._ensure_key() for o in outs]
    graph = try_linearize(view, out_keys, [p._key.key for p in inputs], next(_passes))
    track = any(p._requires_grad for p in primals)
    fn_out = outs[0] if single else tuple(outs)
    jvp_fn = JvpFn(graph, env, outs, single, inputs, track)
    return (fn_out if track else _detach_all(fn_out)), jvp_fn


class _StopView(ResolvedView):
    """The trace as a view, with the differentiated inputs as leaves."""

    def __init__(self, producers: dict[Any, Any], leaves: set[Any]) -> None:
        super().__init__(producers)
        self.leaves = leaves

    def resolve_value(self, key: Any) -> Any:
        if key in self.leaves:
            from ..ad import ValueDef

            return ValueDef.Input
        return super().resolve_value(key)


def _stop_at(out: Tensor, wrt: set[Any]) -> Any:
    return None if out._key in wrt else out._trace


def _detach_all(out: Any) -> Any:
    if isinstance(out, Tensor):
        return out.detach()
    return tuple(o.detach() for o in out)
