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
from collections.abc import Callable, Sequence
from typing import Any

from ..core import grad_mode
from ..core.groups import GroupTrace
from ..core.programs import TensorRecordedGraph, saved_positions
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


# Note [saved tensors hooks]
# While a ``saved_tensors_hooks`` context is active, every call is recorded as a node of its own
# (``dispatch.GROUPED`` off, ``dispatch._record`` swapped for ``_record_packed``): each value its
# backward reads goes through the innermost pack hook now and is saved as a ``tape.Packed``,
# which unpacks through the unpack hook when the backward reads it. Such nodes' recorded graph
# is a ``PackedRecordedGraph``, which the compiled backward does not take (its walk reads arrays
# without unpacking), so their backward runs the general walk. Outside the contexts recording is
# what it always was: the swap costs nothing there.

_HOOKS: list[tuple[Callable, Callable]] = []  # the active (pack, unpack) pairs, innermost last
_DISABLED: list[str] = []  # the messages of the active ``disable_saved_tensors_hooks``
_ORIGINAL_RECORD = None


class PackedRecordedGraph(TensorRecordedGraph):
    """The recorded graph of a call whose saved values were packed (Note [saved tensors hooks])."""

    __slots__ = ()


def _wrapped_number(t: Any) -> bool:
    """A constant standing for a Python number (``x * 2``'s 2, ``mean``'s count): PyTorch saves
    it unhooked, as a wrapped number."""
    from ..core.tape import KEPT
    from ..ops._operands import _CONSTANTS

    if t._trace is not None or t._requires_grad:
        return False
    return KEPT.get(id(t)) is t or any(c is t for c in _CONSTANTS.values())


def _pack_order(app: Any, in_keys: list, edges: list, slots: tuple, needed: tuple) -> list[tuple[bool, int]]:
    """The saved values in PyTorch's order: those the first differentiable input's rule reads,
    then the next one's (``mul`` saves ``other`` before ``self``); inputs before outputs."""
    order: list[tuple[bool, int]] = []
    wanted = {(False, i) for i in needed[0]} | {(True, s) for s in needed[1]}
    for i, (_, _, requires_grad) in enumerate(edges):
        if not requires_grad:
            continue
        alone = [j == i for j in range(len(edges))]
        reads = saved_positions(app, in_keys, alone, slots) or (set(range(len(edges))), set(slots))
        for item in [(False, j) for j in sorted(reads[0])] + [(True, s) for s in sorted(reads[1])]:
            if item in wanted and item not in order:
                order.append(item)
    return order + sorted(wanted - set(order))


def _record_packed(prim: Any, args: Sequence[Any], params: dict[str, Any], entry: list, outs: list[Any]) -> None:
    """``dispatch._record`` with each value the backward reads packed by the innermost hooks."""
    from ..core import groups
    from ..core.dispatch import _application, _plan, join_graph
    from ..core.tape import Packed, SavedInput, TapeNode, fresh_key

    app = _application(prim, params, entry)
    in_keys = [a._key or a._ensure_key() for a in args]
    edges = [(a._trace, k, a._requires_grad) for a, k in zip(args, in_keys)]
    save_in, save_out, float_slots = _plan(app, args, in_keys, entry)
    if groups._open is not None:
        groups.close()
    needed = saved_positions(app, in_keys, [r for _, _, r in edges], float_slots)
    if needed is None:
        needed = (set(save_in), set(save_out))
    keys = [fresh_key() for _ in outs]
    graph = PackedRecordedGraph.of_call(app, in_keys, keys)
    saved: dict = {}
    node = TapeNode(graph, keys, saved, edges)
    join_graph(outs, float_slots, keys, node)  # first: an output is packed as requiring grad
    pack, unpack = _HOOKS[-1]
    bundle: list = []
    out_keys = graph.output_keys() if save_out else None
    for is_output, i in _pack_order(app, in_keys, edges, float_slots, needed):
        t = outs[i] if is_output else args[i]
        key = out_keys[i] if is_output else in_keys[i]
        if key in saved:  # one tensor read twice (``x * x``): saved once
            continue
        if not is_output and _wrapped_number(t):
            saved[key] = SavedInput(t)
            continue
        with grad_mode.no_grad():
            packed = pack(t.detach() if is_output else t)
        value = (Packed(packed, unpack, t, keys[i], None, weakref.ref(node)) if is_output
                 else Packed(packed, unpack, t, key, t._trace, None))
        value.bundle = bundle
        bundle.append(value)
        saved[key] = value
    for i in save_in:  # the leaves that receive .grad, unread (tape.Note [release])
        if in_keys[i] not in saved:
            saved[in_keys[i]] = SavedInput(args[i])


def _push(pair: Any) -> None:
    global _ORIGINAL_RECORD
    from ..core import dispatch

    if not _HOOKS:
        _ORIGINAL_RECORD = dispatch._record
        dispatch._record = _record_packed
        dispatch.GROUPED = False
    _HOOKS.append(pair)


def _pop() -> None:
    from ..core import dispatch, programs
    from ..core.primitive import DEBUG

    _HOOKS.pop()
    if not _HOOKS:
        dispatch._record = _ORIGINAL_RECORD
        dispatch.GROUPED = programs.ENABLED and not DEBUG


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Pack and unpack hooks for the tensors a node saves for backward (PyTorch's).

    While active, every tensor a recorded operation saves is passed to ``pack_hook(tensor)``
    and the result kept; the backward reads ``unpack_hook(packed)`` instead. Nested contexts:
    the innermost pair applies.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> with tidu.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda p: p / 10):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4.])
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        if _DISABLED:
            raise RuntimeError(_DISABLED[-1])
        _push((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc: Any) -> None:
        _pop()


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Refuse saved tensors hooks while active: entering ``saved_tensors_hooks`` raises
    ``RuntimeError(error_message)``, and so does entering this while hooks are active.

    >>> import tidu
    >>> with tidu.autograd.graph.disable_saved_tensors_hooks("not here"):
    ...     tidu.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    Traceback (most recent call last):
    ...
    RuntimeError: not here
    """

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _HOOKS:
            raise RuntimeError(self.error_message)
        _DISABLED.append(self.error_message)

    def __exit__(self, *exc: Any) -> None:
        _DISABLED.pop()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Saved tensors kept as CPU copies and moved back to their device when the backward reads
    them (PyTorch's; ``pin_memory`` is accepted and has no effect).

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> with tidu.autograd.graph.save_on_cpu():
    ...     y = x.exp().sum()
    >>> y.backward()
    >>> x.grad
    tensor([2.7183, 7.3891])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(t: Any) -> tuple[Any, Any]:
            copy = t.detach().cpu()
            return t.device, (copy.clone() if copy._buf is t._buf else copy)

        def unpack(packed: tuple[Any, Any]) -> Any:
            device, copy = packed
            return copy.to(device)

        super().__init__(pack, unpack)
