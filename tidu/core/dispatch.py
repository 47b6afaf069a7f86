"""Eager ``bind``: shape rule, kernel, result tensors, and recording on the tape."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..eager import EagerInput
from ..tensor import Tensor, ViewInfo
from . import grad_mode
from .primitive import DEBUG, Application, Primitive, abstract_eval, freeze
from .programs import TensorRecordedGraph, saved_positions
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
    if grad_mode._state.enabled:
        for a in args:
            if a._view is not None and a._view.version != a._version.value:
                refresh_view(a)
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
    for slot, t in enumerate(outs):
        if t._data.base is not None or any(t._data is a._data for a in args):  # cheap pre-check
            _link_view(prim, args, params, t, slot, len(outs))
    if not prim.nondiff and grad_mode._state.enabled and any(a._requires_grad for a in args):
        _record(prim, args, params, in_avals, out_avals, outs)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _record(prim: Primitive, args: Sequence[Any], params: dict[str, Any], in_avals: tuple,
            out_avals: tuple, outs: list[Any]) -> None:
    app = Application(prim, freeze(params), in_avals, out_avals)
    in_keys = [a._ensure_key() for a in args]
    graph = TensorRecordedGraph.from_primitive(app, in_keys)
    slots = tuple(i for i, t in enumerate(outs) if t._dtype.is_floating_point)
    needed = saved_positions(app, in_keys, [a._requires_grad for a in args], slots)
    if needed is None:
        inputs = [EagerInput(k, a._trace, a._requires_grad, SavedInput(a)) for k, a in zip(in_keys, args)]
        saved = [SavedOutput(t) for t in outs]
        retained = dict(zip(graph.output_keys(), saved))
    else:
        read_in, read_out = needed
        # an input nothing reads is not saved; a leaf that requires grad is, to receive ``.grad``
        inputs = [
            EagerInput(k, a._trace, a._requires_grad,
                       SavedInput(a) if i in read_in or (a._trace is None and a._requires_grad) else None)
            for i, (k, a) in enumerate(zip(in_keys, args))
        ]
        saved = [SavedOutput(t) for t in outs]
        retained = {k: saved[i] for i, k in enumerate(graph.output_keys()) if i in read_out}
    eager_outs = RECORDER.record_graph(graph, inputs, [t._data for t in outs], retained)
    graph.eager_out_keys = [e.key for e in eager_outs]
    if needed is not None and len(needed[0]) < len(args):
        saved_data = eager_outs[0].trace.node.saved_data
        for k in [k for k, v in saved_data.items() if v is None]:
            del saved_data[k]
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


def _link_view(prim: Primitive, args: Sequence[Any], params: dict[str, Any], out: Any, slot: int,
               n_outs: int) -> None:
    """An output that is a numpy view of an input's storage shares its version counter and
    remembers how to replay itself from the root base (for writes through the view)."""
    owner = _storage(out._data)
    for i, a in enumerate(args):
        if _storage(a._data) is owner:
            out._version = a._version
            if not prim.nondiff:
                root = a if a._view is None else a._view.base
                out._view = ViewInfo(root, _replay(prim, args, params, i, slot, n_outs, a._view), a._version.value)
            return


def _storage(array: np.ndarray) -> np.ndarray:
    """The array that owns ``array``'s memory (views chain to it through ``.base``)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _replay(prim: Primitive, args: Sequence[Any], params: dict[str, Any], i: int, slot: int, n_outs: int,
            parent: ViewInfo | None) -> Any:
    """``base -> view``: the parent view's replay, then this call with the view's input swapped in."""
    inner = None if parent is None else parent.fn
    rest = list(args)
    rest[i] = None  # the view must not keep its direct input alive

    def replay(base: Any) -> Any:
        call = rest.copy()
        call[i] = base if inner is None else inner(base)
        result = prim.bind(*call, **params)
        return result[slot] if n_outs > 1 else result

    return replay


def refresh_view(view: Any) -> None:
    """A view whose base was written since its graph position was derived takes ``fn(base)``'s."""
    info = view._view
    info.version = view._version.value
    if not (info.base._requires_grad or view._requires_grad):
        return
    fresh = info.fn(info.base)
    view._requires_grad = fresh._requires_grad
    view._key = fresh._key
    view._trace = fresh._trace
