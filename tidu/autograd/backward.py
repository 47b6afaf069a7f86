"""``Tensor.backward`` and ``autograd.grad`` on the engine's ``try_backward``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compat import _settings
from ..core import dtypes, grad_mode, groups, programs
from ..core.device import CPU
from ..core.groups import raw_node
from ..core.imports import module
from ..eager import topological_traces, try_backward
from ..eager.backward import leading_to
from ..tensor import (
    HOOK_NODES,
    HOOKED,
    POST_ACCUMULATE,
    POST_ACCUMULATE_HOOKS,
    RETAINED,
    Tensor,
    placed,
    wrap,
)
from . import compiled
from .executor import EXECUTOR
from .graph import NODE_HOOKS, NodeHooks


class Hooks:
    """The tensor hooks of one backward pass, by key; handed to the executor as ``ctx``.

    A hook is kept under the key its tensor had when it was registered: written in place since,
    the tensor holds a new value, and the hook still sees the gradient of the old one (PyTorch's
    rule; ``retain_grad`` follows the tensor instead). The hooks of tensors gone since are found
    through the nodes that made their values (``HOOK_NODES``). A non-leaf's hooks run when its node is
    reached (its gradient is then complete); ``final`` keeps each hooked gradient for
    ``retain_grad``.
    """

    def __init__(self) -> None:
        self.by_key: dict[Any, list] = {}
        self.non_leaf = False  # a hook waits on a non-leaf's gradient
        if HOOKED.data or HOOK_NODES.data:  # their dicts, as ``_any_hooked`` reads them
            # each tensor's hook dict once: a live tensor's, then those of tensors gone since (their nodes hold them)
            owners = [(t._hooks, t) for t in list(HOOKED.values()) if t._hooks is not None]
            owners += [(hooks, None) for node in list(HOOK_NODES) for hooks in node.tensor_hooks]
            seen = set()
            for hooks, t in owners:
                if id(hooks) in seen:
                    continue
                seen.add(id(hooks))
                for key, hook in hooks.values():
                    self.by_key.setdefault(key, []).append(hook)
                    self.non_leaf = self.non_leaf or t is None or key is not t._key or t._trace is not None
        self.final: dict[Any, Tensor] = {}
        self.node_hooks = None  # hooks on nodes, anomaly mode: the general walk calls them
        anomaly = _settings["anomaly"]
        if NODE_HOOKS.data or anomaly:
            self.node_hooks = NodeHooks(anomaly and _settings["anomaly_nan"])
            self.non_leaf = True

    def run(self, key: Any, grad: Tensor) -> Tensor:
        hooks = self.by_key.get(key)
        if hooks is None:
            return grad
        for hook in hooks:
            result = hook(grad)
            if result is not None:
                _check_hook_result(hook, grad, result)
                grad = result
        self.final[key] = grad
        return grad

    def apply_hooks(self, keys: Sequence[Any], cotangents: Sequence[Any]) -> list[Any]:
        return [c if c is None else self.run(k, c) for k, c in zip(keys, cotangents)]

    def on_non_leaves(self) -> bool:
        """Whether a hook waits on a non-leaf (it runs inside the walk; leaves' run after it)."""
        return self.non_leaf


def _check_hook_result(hook: Callable, grad: Tensor, result: Any) -> None:
    """PyTorch's errors for a tensor hook that returned something other than a gradient of
    ``grad``'s dtype, device and shape."""
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    if result.dtype is not grad.dtype or result.device != grad.device:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {result.type()})")
    if result.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _as_list(x: Any) -> list[Any]:
    if isinstance(x, Tensor):
        return [x]
    if x is None:
        return []
    return list(x)


def _seed(output: Tensor, grad: Any, shared: bool = False, index: int = 0) -> Tensor:
    """The output's gradient: ``grad``, or ones for a one-element output. ``shared``: the ones may
    be one cached array that owns no writable memory (no allocation, no launch), for a caller
    that copies any gradient it hands out that does not own its memory, as ``backward`` does."""
    if grad is None:
        if output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if shared:
            return wrap(_shared_ones(output), output._dtype, output._device)
        if output._device is CPU:  # a copy of the cached ones: its own memory, made in C
            return Tensor(_shared_ones(output).copy(), output._dtype)
        return module("tidu.ops.creation").ones_like(output)
    if not isinstance(grad, Tensor):
        raise TypeError(f"gradient must be a Tensor or None, got {type(grad).__name__}")
    if tuple(grad.shape) != tuple(output.shape):
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{index}] has a shape of {grad.shape!r} and output[{index}] has a "
            f"shape of {output.shape!r}."
        )
    return grad if grad.dtype is output.dtype else grad.to(output.dtype)


def _shared_ones(output: Tensor) -> Any:
    """A cached array of ones shaped as ``output``, on its device, that owns no writable memory (a
    read-only host array, a device view), so ``backward`` copies it before it could become a
    ``.grad``."""
    key = (output._buf.shape, output._dtype, output._device.type)  # (``device.__hash__`` is Python-level)
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) >= 64:
            _ONES.clear()
        if output._device is CPU:
            ones = dtypes.cast(np.ones(output._buf.shape), output._dtype)
            ones.setflags(write=False)
        else:
            filled = module("tidu.ops.creation").ones_like(output.detach())._data
            ones = filled.view(filled.shape, filled.strides)
        _ONES[key] = ones
    return ones


_ONES: dict[tuple, Any] = {}


def run_backward(outputs: Sequence[Tensor], grad_outputs: Sequence[Any], inputs: Sequence[Tensor] | None,
                 retain_graph: bool | None, create_graph: bool, hooks: Hooks | None = None,
                 walked: compiled.Walk | None = None, shared_seed: bool = False) -> dict[Any, Tensor]:
    """Cotangents of the wanted keys, summed over every output (tensor hooks applied on the way);
    ``walked``: the one output's ``compiled.structure``, when the caller has walked it;
    ``shared_seed``: implicit ones seeds may be ``_seed``'s shared arrays.

    A ``create_graph`` pass closes the group its recorded calls left open (core/groups.py): the
    caller's next calls start a new one. Left open, it would take in the next step's forward,
    and each step's graph would reach the last one's through it (a walk, and the memory it
    holds, growing every step while a result such as the gradient is kept)."""
    try:
        return _pass(outputs, grad_outputs, inputs, retain_graph, create_graph, hooks, walked, shared_seed)
    finally:
        if create_graph:
            groups.close()


def _pass(outputs: Sequence[Tensor], grad_outputs: Sequence[Any], inputs: Sequence[Tensor] | None,
          retain_graph: bool | None, create_graph: bool, hooks: Hooks | None, walked: compiled.Walk | None,
          shared_seed: bool) -> dict[Any, Tensor]:
    if retain_graph is None:
        retain_graph = create_graph
    for ts in (outputs, inputs or ()):
        for t in ts:
            if t._view is not None:
                t._refresh()  # a view whose base was written since: its current graph position
    for i, out in enumerate(outputs):
        if not out._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} entries for {len(outputs)} outputs")
    wanted = None if inputs is None else {t._ensure_key() for t in inputs}
    with grad_mode.set_grad_enabled(create_graph):
        seeds = [_seed(out, g, shared_seed and not create_graph, i) for i, (out, g) in enumerate(zip(outputs, grad_outputs))]
        out, seed = outputs[0], seeds[0]
        if len(outputs) > 1:
            if create_graph and any(s._requires_grad for s in seeds):
                return _each_output(outputs, seeds, inputs, retain_graph, hooks)
            # one pass from sum_i <out_i, seed_i>, each seed a constant: each node (and hook) is reached once
            with grad_mode.enable_grad():
                out = functools.reduce(lambda a, b: a + b, [(o * s.detach()).sum() for o, s in zip(outputs, seeds)])
            seed = placed(dtypes.cast(np.ones(()), out.dtype), out.dtype, out.device)
        if out._trace is None and (wanted is None or out._key in wanted):
            totals = {out._ensure_key(): seed}
        else:
            totals = None
            if hooks is None or not hooks.on_non_leaves():
                # it releases every node reachable from the outputs (and the sum node of several)
                totals = compiled.backward(out._ensure_key(), out._trace, seed, wanted, retain_graph, create_graph,
                                           walked, all(g is None for g in grad_outputs))
                if totals is not None:
                    return totals
            totals = try_backward(out._ensure_key(), out._trace, seed, EXECUTOR, hooks, wanted=wanted)
    if not retain_graph:  # as PyTorch, free the nodes the pass ran: those on a path to a wanted key
        for out in outputs:
            traces = topological_traces(out._trace)
            needed = None if wanted is None else leading_to(traces, wanted)
            for trace in traces:
                if needed is None or trace.node in needed:
                    trace.release()
    return totals


def _each_output(outputs: Sequence[Tensor], seeds: list[Tensor], inputs: Sequence[Tensor] | None,
                 retain_graph: bool, hooks: Hooks | None) -> dict[Any, Tensor]:
    """``create_graph`` with seeds that require grad: one pass per output, summed, so that each
    result is differentiable in its seed and no gradient flows into a seed's own graph (a
    tensor hook then runs once per output that reaches it)."""
    totals: dict[Any, Tensor] = {}
    last = len(outputs) - 1
    for i, (out, seed) in enumerate(zip(outputs, seeds)):
        part = run_backward([out], [seed], inputs, retain_graph or i < last, True, hooks)
        with grad_mode.enable_grad():
            for key, ct in part.items():
                totals[key] = ct if key not in totals else totals[key] + ct
    return totals


def _any_hooked() -> bool:
    """Whether a tensor has hooks or ``retain_grad``, or a node has hooks. The weak mappings'
    dicts are read: a weak mapping's own truth test is a Python-level ``__len__`` (three a
    backward). A dead entry not yet removed only sends a pass down the general path."""
    return bool(HOOKED.data or HOOK_NODES.data or RETAINED.data or NODE_HOOKS.data)


def _walked_leaves(walked: compiled.Walk) -> list[Tensor]:
    """``_leaves`` of one output from its compiled walk: the leaves that require grad, as saved."""
    found: dict[int, Tensor] = {}
    for node, key in walked.grad_leaves:
        saved = node.saved_data
        # a group keeps its saved values by raw key
        t = None if saved is None else getattr(saved.get(key if node.computation is not None else key.key),
                                               "tensor", None)
        if t is not None and t._trace is None and t._requires_grad:
            found[id(t)] = t
    return list(found.values())


def _leaves(outputs: Sequence[Tensor], walks: list[list]) -> list[Tensor]:
    """Leaf tensors that require grad, reachable from ``outputs`` (``walks``: each one's nodes)."""
    found: dict[int, Tensor] = {}
    for out, nodes in zip(outputs, walks):
        if out._trace is None and out._requires_grad:
            found[id(out)] = out
        for node in reversed(nodes):
            saved = node.saved_data
            if saved is None:
                continue
            for value in saved.values():
                t = getattr(value, "tensor", None)
                if t is not None and t._trace is None and t._requires_grad:
                    found[id(t)] = t
    return list(found.values())


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs: Any = None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of leaves (or of ``inputs``).

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> w = tidu.tensor([3.0, 4.0], requires_grad=True)
    >>> tidu.autograd.backward((x * w).sum(), inputs=[w])
    >>> w.grad, x.grad
    (tensor([1., 2.]), None)
    """
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(outputs)
    targets = _as_list(inputs) if inputs is not None else None
    if targets is not None and not targets:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    walked = None
    if targets is None:
        walked = _walk(outputs, create_graph)
        if walked is not None:
            leaves = _walked_leaves(walked)
            if (grad_tensors is None and not (create_graph or retain_graph or _any_hooked())
                    and not _settings["anomaly"] and _plain_pass(outputs[0], walked, leaves)):
                return
            leaves += _retained()
        else:
            walks = [[] if out._trace is None else compiled.walk_nodes(raw_node(out._trace)) for out in outputs]
            leaves = _leaves(outputs, walks) + _retained()
    else:
        leaves = [*targets, *_retained_on_path(targets)]
    hooks = Hooks()
    # no hook may see (and write into) a shared seed; every .grad below owns its memory
    totals = run_backward(outputs, grads, leaves, retain_graph, create_graph, hooks, walked,
                          shared_seed=not hooks.by_key)
    _deposit(leaves, totals, hooks, create_graph)


def _plain_pass(out: Tensor, walk: compiled.Walk, leaves: list[Tensor]) -> bool:
    """``out.backward()`` through its compiled step (``walk``, which found ``leaves``), without the general pass's
    bookkeeping (hooks, key sets, seed tensors): for one scalar output with no gradient
    argument, no hooks, retained gradients, anomaly mode or ``retain_graph`` (the caller checked
    those), once its step is built. The same step, leaves and deposit as ``run_backward`` and
    ``_deposit``; ``False`` (nothing done) where the general pass runs instead: a view, an output
    that is not one element (it raises), a step not built yet (it builds it)."""
    totals = _built_step_gradients(out, walk, leaves)
    if totals is None:
        return False
    _deposit(leaves, totals, None, False)
    return True


def _plain_grad(out: Tensor, inputs: list[Tensor], walk: compiled.Walk) -> dict[Any, Tensor] | None:
    """The gradients for ``grad(out, inputs)`` through its built step (``walk``), as ``_plain_pass``
    for ``backward``: for leaf ``inputs`` (the caller checked the rest). A gradient that does not
    own writable memory (the shared seed of ones, or a view of it) is copied, so the results are
    the user's to write, as the general pass's (whose seed is fresh). ``None`` (nothing done)
    where the general pass runs instead."""
    if any(t._trace is not None for t in inputs):
        return None
    totals = _built_step_gradients(out, walk, inputs)
    if totals is None:
        return None
    for key, ct in totals.items():
        flags = ct._buf.flags  # one object (a CudaArray makes its flags on each read); a result is never queued
        if not (flags.writeable and flags.owndata):
            totals[key] = wrap(ct._buf.copy(), ct._dtype, ct._device)
    return totals


def _built_step_gradients(out: Tensor, walk: compiled.Walk, leaves: Sequence[Tensor]) -> dict[Any, Tensor] | None:
    """The gradients of the one-element ``out`` for ``leaves`` (by key; a leaf no gradient
    reaches gets none, as ``with_wanted`` gives) through the built step of ``walk``, seeded with
    the shared ones; ``None`` (nothing run) for a view, an output of several elements or a step
    not built yet."""
    if out._view is not None or not out._requires_grad or out._buf.size != 1:
        return None
    leaf_index = walk.leaf_index
    wanted = set()
    for t in leaves:
        index = leaf_index.get(t._ensure_key().key)
        if index is not None:
            wanted.add(index)
    compiled.set_wanted(walk, sorted(wanted), [], True)
    if walk.key not in compiled._steps:
        return None
    with grad_mode.set_grad_enabled(False):
        return compiled.run_walk(walk, _shared_ones(out), out._device, False, False)


def _deposit(leaves: Sequence[Tensor], totals: dict[Any, Tensor], hooks: Hooks | None, create_graph: bool) -> None:
    """Accumulate each of ``leaves``' gradient in ``totals`` into its ``.grad``, hooked by ``hooks``
    (``None``: the gradients are final)."""
    given: set[int] = set()
    for leaf in leaves:
        ct = totals.pop(leaf._key, None)  # popped: a gradient copied into ``.grad`` dies at once
        if ct is None:
            continue
        if hooks is not None:
            ct = hooks.final.get(leaf._key, ct) if leaf._trace is not None else hooks.run(leaf._key, ct)
        old = leaf._grad  # (the property's read and write, written out: their checks hold by construction)
        if old is not None:
            ct = _accumulate(old, ct, create_graph)
            if ct is old:  # added in place: .grad stays the same tensor, as in PyTorch
                given.add(id(old._buf))
                ct = None
        if ct is not None:
            if not create_graph:
                data = ct._data
                flags = data.flags  # one object (a CudaArray makes its flags on each read)
                # .grad owns writable memory: no broadcast view, no storage shared with another .grad
                if not (flags.writeable and flags.owndata) or id(data) in given:
                    data = data.copy()
                given.add(id(data))
                ct = wrap(data, ct._dtype, ct._device)
            leaf._grad = ct
        if POST_ACCUMULATE.data and leaf._trace is None:
            for hook in list(POST_ACCUMULATE_HOOKS.get(id(leaf), {}).values()):
                hook(leaf)


def _walk(outputs: Sequence[Tensor], create_graph: bool) -> compiled.Walk | None:
    """The one output's compiled walk (its leaves and the step's key in one pass), if it has one."""
    if len(outputs) != 1 or not programs.ENABLED:
        return None
    out = outputs[0]
    if out._trace is None:
        return None
    return compiled.structure(raw_node(out._trace), out._ensure_key(), out._device.type, create_graph)


def _accumulate(old: Tensor, ct: Tensor, create_graph: bool) -> Tensor:
    """``old + ct``. Two host arrays of one dtype and shape are added by numpy, not dispatched:
    into ``old`` itself (PyTorch's ``grad += new``, which a held reference to ``.grad`` sees)
    when ``old`` is a plain gradient that owns writable memory."""
    a, b = old._data, ct._data
    if (create_graph or a.__class__ is not np.ndarray or b.__class__ is not np.ndarray
            or a.dtype != b.dtype or a.shape != b.shape or old._dtype is not ct._dtype or old._dtype.is_half):
        return old + ct  # (a half dtype's storage is not its values: bfloat16 holds bits)
    if old._trace is None and not old._requires_grad and a.flags.writeable and a.flags.owndata:
        np.add(a, b, out=a)
        old._version.value += 1
        return old
    return Tensor(np.add(a, b), ct._dtype)


def _retained() -> list[Tensor]:
    """Non-leaf tensors that asked for ``retain_grad`` (those the pass reaches get ``.grad``)."""
    if not RETAINED.data:
        return []
    return [t for t in list(RETAINED.values()) if t._retains_grad and t._trace is not None]


def _retained_on_path(inputs: Sequence[Tensor]) -> list[Tensor]:
    """The ``retain_grad`` tensors (not among ``inputs``) that a pass for ``inputs`` differentiates,
    as PyTorch's does: those with one of ``inputs`` behind them. Each of their nodes is read as its
    own (a group is split), which only a pass with such tensors pays."""
    retained = _retained()
    if not retained:
        return []
    wanted = {t._key for t in inputs if t._key is not None}
    found = []
    for t in retained:
        if t._key in wanted:
            continue
        stack, seen = [t._trace], set()
        while stack:
            node = stack.pop().node
            if node in seen:
                continue
            seen.add(node)
            if any(requires_grad and key in wanted for _, key, requires_grad in node.input_edges):
                found.append(t)
                break
            stack += [trace for trace, _, requires_grad in node.input_edges if requires_grad and trace is not None]
    return found


def _batched_grad(outputs: Any, inputs: Any, grad_outputs: Any, retain_graph: bool | None, create_graph: bool,
                  allow_unused: bool | None, materialize_grads: bool) -> tuple:
    """``grad`` with ``is_grads_batched``: one pass per row of the seeds, the results stacked."""
    from ..ops.shape import stack

    seeds = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(_as_list(outputs))
    sizes = [int(g.shape[0]) for g in seeds if g is not None]
    if not sizes:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outputs, inputs, [None if g is None else g[b] for g in seeds], retain_graph=keep or b + 1 < sizes[0],
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(sizes[0])]
    columns = zip(*rows) if rows else [[] for _ in _as_list(inputs)]
    return tuple(None if not column or column[0] is None else stack(column) for column in map(list, columns))


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).
    ``is_grads_batched``: the first dim of each of ``grad_outputs`` is a batch of seeds, and each
    gradient gets that dim too (PyTorch vmaps the backward; tidu runs it once per seed).

    >>> import tidu
    >>> x = tidu.tensor(3.0, requires_grad=True)
    >>> (g,) = tidu.autograd.grad(x * x, x, create_graph=True)
    >>> g
    tensor(6., grad_fn=<add>)
    >>> tidu.autograd.grad(g, x)
    (tensor(2.),)
    """
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    totals = hooks = walked = None
    if (grad_outputs is None and not (create_graph or retain_graph or _any_hooked())
            and not _settings["anomaly"]):
        walked = _walk(outs, False)
        if walked is not None:
            totals = _plain_grad(outs[0], ins, walked)
    if totals is None:
        grads = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
        hooks = Hooks()
        retained = _retained_on_path(ins)
        totals = run_backward(outs, grads, [*ins, *retained], retain_graph, create_graph, hooks, walked)
        if retained:  # as in PyTorch, a pass that differentiates a retain_grad tensor fills its .grad
            _deposit(retained, {t._key: totals.pop(t._key) for t in retained if t._key in totals}, hooks,
                     create_graph)
    result = []
    for i, t in enumerate(ins):
        ct = totals.get(t._key)
        if ct is not None and hooks is not None:
            ct = hooks.final.get(t._key, ct) if t._trace is not None else hooks.run(t._key, ct)
        if ct is None:
            if materialize_grads:
                from ..ops.creation import zeros_like

                ct = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
        else:
            if not create_graph:
                ct = ct.detach()
            if t._retains_grad and t._trace is not None:  # an input that retains its gradient
                _deposit([t], {t._key: ct.clone()}, None, create_graph)  # gets a copy, as in PyTorch
        result.append(ct)
    return tuple(result)
