"""Reading and hooking the recorded graph through ``grad_fn`` (PyTorch's ``torch.autograd.graph.Node``).

A tensor's ``grad_fn`` is its trace (``eager.Trace``; ``core.groups.GroupTrace`` for a call
recorded in a group). It answers PyTorch's node API: ``name()``, ``next_functions`` (one
``(node, output index)`` per input: the producer's trace, an ``AccumulateGrad`` for a leaf that
requires grad, ``(None, 0)`` for an input that does not), ``metadata`` (a dict kept with the
node), ``register_hook`` and ``register_prehook``. Reading a group's calls never splits the group
(nothing a later backward caches changes); registering a node hook does, and makes the backward
passes that reach that node run the general walk (``eager.try_backward``), which calls the hooks.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..core import grad_mode
from ..core.groups import GroupTrace
from ..eager import Trace
from ..tensor import RemovableHandle

# node hooks, by node (weakly): [prehooks, hooks], each an OrderedDict of handle id -> hook
NODE_HOOKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_METADATA: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # node (or group) -> dict
_ACCUMULATORS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(leaf) -> AccumulateGrad


class AccumulateGrad:
    """The node that accumulates a leaf's gradient into its ``.grad``: ``variable`` is the leaf.

    >>> import tidu
    >>> w = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> node, index = (w * 3).grad_fn.next_functions[0]
    >>> node.name(), node.variable is w, index
    ('torch::autograd::AccumulateGrad', True, 0)
    """

    __slots__ = ("variable", "metadata", "__weakref__")
    next_functions: tuple = ()

    def __init__(self, variable: Any) -> None:
        self.variable = variable
        self.metadata: dict = {}

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def accumulate_grad(leaf: Any) -> AccumulateGrad:
    """The one ``AccumulateGrad`` of ``leaf`` while it is referenced (PyTorch's too is cached)."""
    acc = _ACCUMULATORS.get(id(leaf))
    if acc is None or acc.variable is not leaf:
        acc = AccumulateGrad(leaf)
        _ACCUMULATORS[id(leaf)] = acc
    return acc


def _edge(edge: tuple, saved: Any) -> tuple[Any, int]:
    producer, key, requires_grad = edge
    if not requires_grad:
        return (None, 0)
    if producer is None:  # a leaf: saved by every node that reads it (tape.Note [release])
        leaf = getattr(saved, "tensor", None)
        return (None, 0) if leaf is None else (accumulate_grad(leaf), 0)
    if producer.__class__ is GroupTrace:
        return (producer, 0)
    keys = producer.node.primal_out_keys
    return (producer, keys.index(key) if key in keys else 0)


def next_functions(trace: Any) -> tuple[tuple[Any, int], ...]:
    """``grad_fn.next_functions``: one ``(node, index)`` per input of the node."""
    if trace.__class__ is GroupTrace and trace.group.split_nodes is None:
        group = trace.group
        _, in_keys, codes, _, _ = group.records[trace.index]
        saved = group.saved_data or {}  # by raw key
        return tuple((GroupTrace(group, c), 0) if c >= 0 else _edge(group.input_edges[~c], saved.get(k.key))
                     for c, k in zip(codes, in_keys))
    node = trace.node
    saved = node.saved_data or {}
    return tuple(_edge(edge, saved.get(edge[1])) for edge in node.input_edges)


def metadata(trace: Any) -> dict:
    """``grad_fn.metadata``: a dict kept as long as the node."""
    if trace.__class__ is GroupTrace:
        return _METADATA.setdefault(trace.group, {}).setdefault(trace.index, {})
    return _METADATA.setdefault(trace.node, {})


def _register(trace: Any, hook: Callable, which: int) -> RemovableHandle:
    node = trace.node  # a grouped call's node of its own: the general walk reads it
    hooks = NODE_HOOKS.get(node)
    if hooks is None:
        hooks = NODE_HOOKS[node] = [OrderedDict(), OrderedDict()]
    handle = RemovableHandle(hooks[which])
    hooks[which][handle.id] = hook
    return handle


def register_hook(trace: Any, hook: Callable) -> RemovableHandle:
    """``grad_fn.register_hook(hook)``: ``hook(grad_inputs, grad_outputs)`` after the node's
    backward ran (one gradient per input, per output; ``None`` where there is none); a tuple
    returned replaces ``grad_inputs``.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * 2
    >>> h = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10, gi[1]))
    >>> y.sum().backward()
    >>> x.grad
    tensor([20., 20.])
    """
    return _register(trace, hook, 1)


def register_prehook(trace: Any, hook: Callable) -> RemovableHandle:
    """``grad_fn.register_prehook(hook)``: ``hook(grad_outputs)`` before the node's backward; a tuple
    returned replaces ``grad_outputs``.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x.exp()
    >>> h = y.grad_fn.register_prehook(lambda go: (go[0] * 0,))
    >>> y.sum().backward()
    >>> x.grad
    tensor([0., 0.])
    """
    return _register(trace, hook, 0)


def _checked(result: Any, expected: int, what: str) -> list:
    if not isinstance(result, tuple | list) or len(result) != expected:
        got = len(result) if isinstance(result, tuple | list) else 1
        raise RuntimeError(f"hook '{what}' has returned an incorrect number of values (got {got}, but "
                           f"expected {expected})")
    return list(result)


class NodeHooks:
    """The general walk's per-node work (``try_backward``'s ``ctx.node_hooks``): node hooks, and
    anomaly mode's NaN check of every gradient a node returns."""

    def __init__(self, check_nan: bool) -> None:
        self.check_nan = check_nan

    def before(self, node: Any, cts: list) -> list:
        hooks = NODE_HOOKS.get(node)
        if hooks is None or not hooks[0]:
            return cts
        for hook in tuple(hooks[0].values()):
            result = hook(tuple(cts))
            if result is not None:
                cts = _checked(result, len(cts), getattr(hook, "__name__", "hook"))
        return cts

    def after(self, trace: Any, node: Any, cts: list, by_key: dict) -> dict:
        hooks = NODE_HOOKS.get(node)
        if not self.check_nan and (hooks is None or not hooks[1]):
            return by_key
        slots = [(k.key if k.is_input() else k) if requires_grad else None for _, k, requires_grad in node.input_edges]
        grads = [None if s is None else by_key.get(s) for s in slots]
        if self.check_nan:
            with grad_mode.no_grad():
                for i, g in enumerate(grads):
                    if g is not None and g.dtype.is_floating_point and bool(g.isnan().any()):
                        raise RuntimeError(f"Function '{trace.name()}' returned nan values in its {i}th output.")
        if hooks is not None and hooks[1]:
            for hook in tuple(hooks[1].values()):
                result = hook(tuple(grads), tuple(cts))
                if result is not None:
                    grads = _checked(result, len(grads), getattr(hook, "__name__", "hook"))
            by_key = dict(by_key)
            for s, g in zip(slots, grads):
                if s is not None:
                    by_key[s] = g
        return by_key


# the tensor layer's node API on the engine's trace handle (and so on GroupTrace)
Trace.next_functions = property(next_functions, doc=next_functions.__doc__)  # type: ignore[attr-defined]
Trace.metadata = property(metadata, doc=metadata.__doc__)  # type: ignore[attr-defined]
Trace.register_hook = register_hook  # type: ignore[attr-defined]
Trace.register_prehook = register_prehook  # type: ignore[attr-defined]
