"""Eager ``bind``: shape rule, kernel, result tensors, and recording on the tape."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import Any

from ..eager import EagerInput
from ..tensor import Tensor
from . import grad_mode
from .primitive import DEBUG, Application, Primitive, abstract_eval, freeze
from .programs import TensorRecordedGraph
from .tape import RECORDER, SavedInput, SavedOutput


def _check_devices(prim: Primitive, args: Sequence[Any]) -> str:
    first = args[0]._device
    for a in args:
        if a._device is not first and a._device != first:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{first} and {a._device}! (when checking arguments for {prim.name})"
            )
    return first.type


def bind_eager(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    for i, a in enumerate(args):
        if type(a) is not Tensor and not isinstance(a, Tensor):
            raise TypeError(f"{prim.name}(): argument {i} must be a Tensor, not {type(a).__name__}")
    device = _check_devices(prim, args) if args else "cpu"
    in_avals = tuple(a.aval for a in args)
    out_avals = abstract_eval(prim, in_avals, params)
    impl = prim.impls.get(device)
    if impl is None:
        raise NotImplementedError(f"primitive {prim.name} has no kernel for device {device!r}")
    result = impl(*[a._data for a in args], **params)
    arrays = result if isinstance(result, tuple) else (result,)
    outs = []
    for array, aval in zip(arrays, out_avals):
        if array.dtype != aval.dtype.np or array.shape != aval.shape:
            raise RuntimeError(
                f"internal error: kernel of {prim.name} returned {array.shape} {array.dtype}, "
                f"its shape rule says {aval.shape} {aval.dtype.name}"
            )
        outs.append(Tensor(array, aval.dtype))
    if not prim.nondiff and grad_mode._state.enabled and any(a._requires_grad for a in args):
        _record(prim, args, params, in_avals, out_avals, outs)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _record(prim: Primitive, args: Sequence[Any], params: dict[str, Any], in_avals: tuple,
            out_avals: tuple, outs: list[Any]) -> None:
    app = Application(prim, freeze(params), in_avals, out_avals)
    in_keys = [a._ensure_key() for a in args]
    graph = TensorRecordedGraph.from_primitive(app, in_keys)
    inputs = [EagerInput(k, a._trace, a._requires_grad, SavedInput(a)) for k, a in zip(in_keys, args)]
    saved = [SavedOutput(t) for t in outs]
    retained = dict(zip(graph.output_keys(), saved))
    eager_outs = RECORDER.record_graph(graph, inputs, [t._data for t in outs], retained)
    node = weakref.ref(eager_outs[0].trace.node)
    for t, s, e in zip(outs, saved, eager_outs):
        s.key = e.key
        s.node = node
        if t._dtype.is_floating_point:
            t._requires_grad = True
            t._key = e.key
            t._trace = e.trace
    if DEBUG:
        print(f"tidu: {', '.join(f'%{o._key.key}' for o in outs)} = {app.name} "
              f"{' '.join(f'%{k.key}' for k in in_keys)}", file=sys.stderr)
