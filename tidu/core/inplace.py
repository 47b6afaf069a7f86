"""In-place writes: a tensor takes a new value in its own storage and its place in the graph.

Every in-place operation (``add_``, ``x[i] = v``, ``+=``, ...) computes its new value
out of place with ordinary (recorded) ops and then calls ``assign_``. The storage is
overwritten and its version counter bumped, so a node that saved the old value refuses
to run at backward (PyTorch's "modified by an inplace operation" error); when the new
value was recorded, the tensor takes over its key and trace, so gradients flow through
the write as PyTorch's do.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from . import dtypes, grad_mode, groups
from .imports import module

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_VIEW_ERROR = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use "
    "case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the "
    "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked)."
)
VIEW_OF_LEAF_ERROR = "a view of a leaf Variable that requires grad is being used in an in-place operation."


# tensors that refuse in-place writes with grad mode on, by id: (weak reference, message); the
# outputs of a module call with backward hooks (nn/modules/_backward_hooks.py)
NO_INPLACE: dict[int, tuple[weakref.ref, str]] = {}


def forbid_inplace(tensor: Any, message: str) -> None:
    """Make in-place writes to ``tensor`` with grad mode on raise ``RuntimeError(message)``."""
    key = id(tensor)
    NO_INPLACE[key] = (weakref.ref(tensor, lambda _, key=key: NO_INPLACE.pop(key, None)), message)


def written(target: Any) -> None:
    """``target``'s storage was written in place, its key kept (a write under ``no_grad``, or of
    a value no graph made): its version moves on, and the open group closes. A call of the
    group may have saved the old value, and one group keeps one saved value per key: a later
    call saving the new value must start another group.

    >>> import tidu
    >>> from tidu.core.inplace import written
    >>> x = tidu.zeros(2)
    >>> written(x)
    >>> x._version.value
    1
    """
    target._version.value += 1
    if groups._open is not None:
        groups.close()


def check_writable(target: Any, op: str) -> None:
    """Raise PyTorch's errors for in-place writes that can never be allowed."""
    if NO_INPLACE and grad_mode.is_grad_enabled():
        entry = NO_INPLACE.get(id(target))
        if entry is not None and entry[0]() is target:
            raise RuntimeError(entry[1])
    if grad_mode.is_grad_enabled() and target._requires_grad and target._trace is None:
        raise RuntimeError(LEAF_ERROR)
    if not target._data.flags.writeable:
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation."
        )


def read_from_base(target: Any) -> None:
    """Before a write to ``target`` computes its new value: a view of a base in autograd takes a
    fresh place in the graph, replayed from the base, so that the write reads the base's region
    directly, as PyTorch's CopySlices does. Hooks on the view's old value, and on views between
    it and the base, then see none of the write's gradient, as in PyTorch.

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> v = (x * 1.0)[1:]
    >>> h = v.register_hook(lambda g: g * 10)  # on the view's value before the write
    >>> v.mul_(3.0).sum().backward()
    >>> x.grad
    tensor([0., 3., 3.])
    """
    info = target._view
    if info is None or info.no_grad or not info.base._requires_grad or not grad_mode.is_grad_enabled():
        return  # (a view made under no_grad: the write is refused, ``assign_``)
    module("tidu.core.dispatch").refresh_view(target)  # replayed whether or not the base was written


def mark() -> int:
    """A point on the tape: nodes recorded after it belong to the in-place op being computed."""
    return module("tidu.core.tape").fresh_key().key


def _keep_originals(value: Any, target: Any, since: int | None) -> None:
    """Nodes recorded for this in-place op (after ``since``; without it, only ``value``'s own
    node) that saved ``target``'s storage keep its old value."""
    from .tape import SavedInput, SavedOutput

    counter = target._version
    stack, seen = [value._trace], set()
    while stack:
        trace = stack.pop()
        if trace is None or id(trace.node) in seen:
            continue
        node = trace.node
        seen.add(id(node))
        if node.saved_data is None or (since is not None and node.primal_out_keys[0].key < since):
            continue
        for saved in node.saved_data.values():
            if isinstance(saved, SavedInput) and saved.tensor._version is counter:
                saved.keep_original()
            elif isinstance(saved, SavedOutput) and saved.counter is counter:  # a value made in a group
                saved.keep_original()
        if since is not None:
            stack.extend(edge[0] for edge in node.input_edges)


def assign_(target: Any, value: Any, *, op: str, since: int | None = None, overwrites: bool = False) -> Any:
    """Write ``value`` (a tensor of ``target``'s shape and dtype) into ``target``, in place.

    Pass ``since=mark()`` taken before computing ``value``: nodes recorded for this write that
    saved ``target`` then keep its original value instead of failing at backward. A ``target``
    that is a view of a base in autograd is written through the base (PyTorch's semantics).
    ``overwrites``: ``value`` does not read ``target`` (``copy_``, ``fill_``); the overwritten
    value's history then gets a zero gradient (``_overwrite_in_graph``), as a constant's does.

    >>> import tidu
    >>> from tidu.core.inplace import assign_
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> buffer = tidu.zeros(2)
    >>> _ = assign_(buffer, x * x, op="example")
    >>> buffer.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """
    check_writable(target, op)
    view = target._view
    if (view is not None and view.no_grad and grad_mode.is_grad_enabled()
            and (value._requires_grad or view.base._requires_grad or target._requires_grad)):
        raise RuntimeError(NO_GRAD_VIEW_ERROR)
    if tuple(value.shape) != tuple(target.shape) or value.dtype is not target.dtype:
        raise RuntimeError(
            f"{op}: internal error: in-place value {tuple(value.shape)} {value.dtype.name} does not fit the "
            f"tensor {tuple(target.shape)} {target.dtype.name}"
        )
    if grad_mode.is_grad_enabled() and value._requires_grad:
        if value._trace is None:  # a leaf: the target becomes a recorded copy of it
            value = value.clone()
        _keep_originals(value, target, since)
        if overwrites and target._trace is not None:
            value = _overwrite_in_graph(value, target)
    elif grad_mode.is_grad_enabled() and target._trace is not None:
        value = _overwrite_in_graph(value, target)
    if view is not None and grad_mode.is_grad_enabled() and (
        value._trace is not None or view.base._requires_grad or target._requires_grad
    ):
        return _assign_through_view(target, value, op)
    recorded = grad_mode.is_grad_enabled() and value._trace is not None
    if target._device.type == "cpu":
        target._data[...] = value._data
    else:
        module("tidu.backends.cuda.copy").copy_into(target._data, value._data)
    if not recorded:
        written(target)
    else:
        target._version.value += 1
        target._requires_grad = True
        target._key = value._key
        target._trace = value._trace
    return target


def _overwrite_in_graph(value: Any, target: Any) -> Any:
    """``value`` written over a non-leaf whose value it does not read (constant data, or a
    ``copy_`` source): recorded as ``where(True, value, target)``, so the tensor still requires
    grad and its history gets a zero gradient (PyTorch's ``FillBackward``, ``CopyBackwards``),
    with no arithmetic on ``target`` (an inf in it stays out of the result)."""
    from ..ops._operands import kept_constant
    from ..ops.math import where

    # the mask is kept on release (as PyTorch's copy_ saves nothing): the overwritten history may
    # be walked again by a later step's write, as in ``c.copy_(w)`` every step
    return where(kept_constant(True, dtypes.bool_, target, tuple(target._buf.shape)), value, target)


def _assign_through_view(target: Any, value: Any, op: str) -> Any:
    """Write into a view of a base that takes part in autograd (PyTorch's CopySlices).

    With ``f`` the view as a function of its base, the base becomes
    ``where(f^T(1) != 0, f^T(value), base)`` (recorded), and the view ``f(new base)``.
    """
    from ..autograd.backward import grad
    from ..ops.math import where
    from ..tensor import Tensor, placed

    info = target._view
    base = info.base
    if base._requires_grad and base._trace is None:
        raise RuntimeError(VIEW_OF_LEAF_ERROR)
    check_writable(base, op)
    probe = Tensor(base._data, base._dtype, requires_grad=True, device=base._device)
    placed_view = info.fn(probe)
    (spread,) = grad(placed_view, probe, value, create_graph=True)
    ones = placed(dtypes.cast(np.ones(target._buf.shape), target._dtype), target._dtype, target._device)
    (mask,) = grad(placed_view, probe, ones)
    assign_(base, where(mask != 0, spread, base), op=op)
    fresh = info.fn(base)
    info.version = target._version.value
    target._requires_grad = fresh._requires_grad
    target._key = fresh._key
    target._trace = fresh._trace
    return target
