"""Eager ``bind``: shape rule, kernel, result tensors, and recording on the tape."""

from __future__ import annotations

import sys
import weakref
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from ..backends.cpu.fusion import layout_of
from ..backends.layout import storage
from ..eager import Trace
from ..tensor import SHORT_PATH_TYPES, Tensor, VersionCounter, ViewInfo, wrap
from . import deferred, grad_mode, groups, half, programs
from .device import CPU, CUDA
from .groups import GroupTrace
from .imports import module
from .primitive import DEBUG, Application, Literal, Primitive, abstract_eval, bind, freeze
from .programs import TensorRecordedGraph, distinct_pattern, saved_positions
from .tape import SavedInput, SavedOutput, TapeNode, _count, _Input, fresh_key


def _same_device(prim: Primitive, args: Sequence[Any]) -> Sequence[Any]:
    """Arguments on one device: 0-d CPU tensors join a CUDA call (as in PyTorch); anything else
    on two devices is an error naming both."""
    devices = {a._device for a in args}
    if devices == {CPU, CUDA}:
        if all(a._device is CUDA or a._buf.ndim == 0 for a in args):
            return [a if a._device is CUDA else device_put.bind(a, device="cuda") for a in args]
    first = args[0]._device
    other = next(a._device for a in args if a._device != first)
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{first} and {other}! (when checking arguments for {prim.name})"
    )


# (prim, param items, shape, dtype, device type per argument) -> [in_avals, out_avals, Application or
# None, deferral (``_deferral``; None: not yet known), saving plans by input pattern (``_plan``),
# grouped when not deferred (``_new_entry``), the replay of a one-input view (``_link_view``), the
# kernel prepared for it (``_prepared``; None: not yet known), the kernel of a call on float16 or
# bfloat16 (``half.kernel``; None for the others)]: a repeated call skips the shape rule (it has
# passed for these inputs).
_SIGNATURES: dict[tuple, list] = {}
_MAX_SIGNATURES = 4096


def _signature(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list:
    if params:
        # the params as given (a call site passes them in one order; another order is another key)
        if len(args) == 1:
            a = args[0]
            key: tuple = (prim, *params.items(), a._buf.shape, a._dtype, a._device.type)
        else:
            key = (prim, *params.items(), *[(a._buf.shape, a._dtype, a._device.type) for a in args])
        try:
            entry = _SIGNATURES.get(key)
        except TypeError:  # an unhashable param value: no caching
            return _uncached(prim, args, params)
        if entry is None and any(isinstance(v, _HELD) for v in params.values()):  # keep no tensor alive
            return _uncached(prim, args, params)
    else:
        if len(args) == 2:
            a, b = args
            key = (prim, a._buf.shape, a._dtype, a._device.type, b._buf.shape, b._dtype, b._device.type)
        else:
            key = (prim, *[(a._buf.shape, a._dtype, a._device.type) for a in args])
        entry = _SIGNATURES.get(key)
    if entry is None:
        entry = _new_entry(prim, args, params, True)
        if len(_SIGNATURES) >= _MAX_SIGNATURES:
            _SIGNATURES.clear()
        _SIGNATURES[key] = entry
    return entry


_HELD = (Literal, Tensor)
_new = object.__new__
# deferred calls are recorded in groups (core/groups.py), read as one node by the compiled
# backward, which TIDU_CACHE=0 turns off (and so this); TIDU_DEBUG prints each node
GROUPED = programs.ENABLED and not DEBUG


def _uncached(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> list:
    return _new_entry(prim, args, params, False)


def _new_entry(prim: Primitive, args: Sequence[Any], params: dict[str, Any], cached: bool) -> list:
    """A signature entry (``_SIGNATURES``): the shape rule's result, and for a cached signature
    whether a call that is not deferred joins the open group (``_record_grouped``, while
    ``GROUPED``): one floating-point output, on one device. An uncached one is never deferred
    or grouped."""
    in_avals = tuple(a.aval for a in args)
    out_avals = abstract_eval(prim, in_avals, params)
    grouped = cached and len(out_avals) == 1 and out_avals[0].dtype.is_floating_point and not prim.moves_device
    device = in_avals[0].device if in_avals else out_avals[0].device
    widened = half.kernel(prim, device, in_avals, out_avals)
    return [in_avals, out_avals, None, None if cached and widened is None else False, {}, grouped, None, None,
            widened]


def bind_eager(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    first = mixed = None
    for a in args:
        if type(a) is not Tensor and not isinstance(a, Tensor):
            i = next(i for i, b in enumerate(args) if b is a)
            raise TypeError(f"{prim.name}(): argument {i} must be a Tensor, not {type(a).__name__}")
        if first is None:
            first = a._device
        elif a._device is not first:
            mixed = True
    if mixed:
        args = _same_device(prim, args)
    grad_on = grad_mode._state.enabled
    if grad_on:
        _refresh_stale(args)
    entry = _signature(prim, args, params)
    out_avals = entry[1]
    defer = entry[3]
    if defer is None:
        defer = entry[3] = _deferral(prim, params, entry)
    arrays = [a._buf for a in args]
    if defer and deferred.ENABLED and not (deferred._exposed and deferred.reads_exposed(arrays)):
        return _defer(prim, entry, defer, args, arrays, params, grad_on)
    device = args[0]._device.type if args else out_avals[0].device
    impl = entry[8] or prim.impls.get(device)  # a half call's float32 kernel (Note [half precision])
    if impl is None:
        raise NotImplementedError(f"primitive {prim.name} has no kernel for device {device!r}")
    out_device = CPU if out_avals[0].device == "cpu" else CUDA
    if deferred.PENDING and deferred.reads_pending(arrays):
        deferred.flush(True)
    result = impl(*arrays, **params)
    if type(result) is tuple:
        outs = [_output(prim, array, aval, out_device) for array, aval in zip(result, out_avals)]
    else:
        outs = [_output(prim, result, out_avals[0], out_device)]
    for slot, t in enumerate(outs):
        if t._buf.base is not None or _returns_input(t._buf, arrays):  # cheap pre-check
            _link_view(prim, args, params, t, slot, len(outs), entry)
    if grad_on and not prim.nondiff:
        for a in args:
            if a._requires_grad:
                _record_call(prim, args, params, entry, outs)
                break
    return outs[0] if len(outs) == 1 else tuple(outs)


def _refresh_stale(args: Sequence[Any]) -> None:
    """Views among ``args`` whose base was written since they took their graph position take
    their new one (``refresh_view``)."""
    for a in args:
        if a._view is not None and a._view.version != a._version.value:
            refresh_view(a)


def _record_call(prim: Primitive, args: Sequence[Any], params: dict[str, Any], entry: list, outs: list[Any]) -> None:
    """Record a call that ran: in the open group where its signature is grouped, else as a node."""
    if entry[5] and GROUPED:
        with deferred._lock:
            _record_grouped(entry[2] or _application(prim, params, entry), args, entry, outs[0])
    else:
        _record(prim, args, params, entry, outs)


# (prim, shape, dtype, device type) -> the signature entry of a call without params on operands of
# that one aval (but a ``select``'s boolean condition): the elementwise fast path's lookup (``bind_same``)
_SAME: dict[tuple, list] = {}


def bind_same(prim: Primitive, args: tuple) -> Any:
    """``bind(prim, *args)`` for tensors of the short paths' types (``tensor.SHORT_PATH_TYPES``) of
    one shape, dtype and device and no params (the caller checked that; ``select``'s first
    operand is its boolean condition), without the general path's checks when the call is
    deferred."""
    a = args[-1]
    key = (prim, a._buf.shape, a._dtype, a._device.type)
    entry = _SAME.get(key)
    if entry is None:
        entry = _signature(prim, args, {})
        if entry[8] is not None:  # a half call: never kept here, it takes the general path
            return bind_eager(prim, args, {})
        if len(_SAME) >= _MAX_SIGNATURES:
            _SAME.clear()
        _SAME[key] = entry
    defer = entry[3]
    if defer is None:
        defer = entry[3] = _deferral(prim, {}, entry)
    if not defer or not deferred.ENABLED:
        return _call(prim, args, _NO_PARAMS, entry)
    grad_on = _grad_state.enabled
    if len(args) == 2:  # the commonest case written out: no loop, no comprehension
        b = args[0]
        if grad_on and (b._view is not None and b._view.version != b._version.value
                        or a._view is not None and a._view.version != a._version.value):
            _refresh_stale(args)
        arrays = [b._buf, a._buf]
    elif len(args) == 1:
        if grad_on and a._view is not None and a._view.version != a._version.value:
            refresh_view(a)
        arrays = [a._buf]
    else:
        if grad_on:  # _refresh_stale written out: this is every elementwise op's path
            for t in args:
                if t._view is not None and t._view.version != t._version.value:
                    refresh_view(t)
        arrays = [t._buf for t in args]
    if deferred._exposed and deferred.reads_exposed(arrays):
        return _call(prim, args, _NO_PARAMS, entry)
    return _defer(prim, entry, defer, args, arrays, _NO_PARAMS, grad_on)


_grad_state = grad_mode._state  # never rebound


_NO_PARAMS: dict[str, Any] = {}

# (shape, dtype, device type, target shape) -> (signature entry, params): ``bind_broadcast``'s lookup
_BROADCASTS: dict[tuple, tuple] = {}


def bind_broadcast(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``broadcast_in_dim`` of a tensor of the short paths' types along its trailing dims (numpy's
    rule) to ``shape``: what ``bind`` does, the view made and recorded without the general path's
    lookups.

    >>> import tidu
    >>> from tidu.core.dispatch import bind_broadcast
    >>> b = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> bind_broadcast(b, (2, 2))
    tensor([[1., 2.],
            [1., 2.]], grad_fn=<broadcast_in_dim>)
    """
    buf = x._buf
    device = x._device
    key = (buf.shape, x._dtype, device.type, shape)
    hit = _BROADCASTS.get(key)
    if hit is None:
        lead = len(shape) - buf.ndim
        params = {"shape": shape, "broadcast_dimensions": tuple(range(lead, len(shape)))}
        entry = _signature(broadcast_in_dim, (x,), params)  # the shape rule's errors
        if len(_BROADCASTS) >= _MAX_SIGNATURES:
            _BROADCASTS.clear()
        hit = _BROADCASTS[key] = (entry, params)
    entry, params = hit
    if (device is not CPU or x._view is not None or buf.__class__ is not np.ndarray or not buf.flags.c_contiguous
            or not buf.size or deferred.PENDING and deferred.reads_pending((buf,))):
        return _call_one(broadcast_in_dim, x, params, entry)
    # ``_call_one`` written out for a plain host array, whose kernel makes a view of it (W5 adds
    # its bias this way every step): linked to ``x`` as ``_link_view`` links it, and recorded
    out = _view_tensor(x, broadcast_in_dim.impls["cpu"](buf, **params))
    replay = entry[6]
    if replay is None:
        replay = entry[6] = _replay(broadcast_in_dim, (x,), params, 0, 0, 1)
    out._view = ViewInfo(x, replay, x._version.value)
    if grad_mode._state.enabled and x._requires_grad:
        _record_call(broadcast_in_dim, (x,), params, entry, [out])
    return out


def broadcast_operand(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``bind_broadcast(x, shape)`` for an operand its caller consumes at once (``ops``' binary
    ops broadcasting a bias; never handed to the user): a leaf's broadcast to one shape is recorded
    once in the open group, and later calls get a tensor of that recorded view (the same array,
    key and place in the group) while the leaf's storage and version are unchanged. W5 adds its
    bias at each of 100 steps: one broadcast recorded, its gradient summed once, instead of 100.

    >>> import tidu
    >>> from tidu.core.dispatch import broadcast_operand
    >>> b = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> broadcast_operand(b, (2, 2))  # a second call reads the same recorded view (tests/test_groups.py)
    tensor([[1., 2.],
            [1., 2.]], grad_fn=<broadcast_in_dim>)
    """
    if x._trace is not None or not x._requires_grad or groups._open is None or not grad_mode._state.enabled:
        return bind_broadcast(x, shape)
    group = groups._open()
    memo = None if group is None else group.broadcasts
    if memo is not None:
        hit = memo.get((id(x), shape))
        if hit is not None:
            buf, view, version, key, index, fn = hit
            if buf is x._buf and x._version.value == version:
                out = _view_tensor(x, view)  # the recorded view's tensor again, linked and placed
                out._view = ViewInfo(x, fn, version)
                out._requires_grad = True
                out._key = key
                trace = out._trace = _new(GroupTrace)
                trace.group = group
                trace.index = index
                return out
    out = bind_broadcast(x, shape)
    trace = out._trace
    if trace.__class__ is GroupTrace and out._view is not None and out._view.base is x:
        if module("tidu.compat")._settings["anomaly"]:  # each use keeps its own node (and its trace)
            return out
        group = trace.group
        if group.broadcasts is None:
            if group.structure is not None:  # closed
                return out
            group.broadcasts = {}
        group.broadcasts[(id(x), shape)] = (x._buf, out._buf, out._view.version, out._key, trace.index, out._view.fn)
    return out


# (prim, param items, shape, dtype, device type) -> signature entry: ``bind_one``'s lookup
_ONE_INPUT: dict[tuple, list] = {}


def bind_one(prim: Primitive, x: Any, params: dict[str, Any]) -> Any:
    """``bind(prim, x, **params)`` for a primitive of one input and one output that is never
    deferred and has a kernel on every device: the views (``reshape``, ``transpose``, ``slice``,
    which make one where they can) and the reductions. For a tensor of the short paths' types,
    the call made and recorded from a signature cached by (primitive, params, shape, dtype,
    device), without the general path's lookups; anything else takes ``bind``.

    >>> import tidu
    >>> from tidu.core.dispatch import bind_one
    >>> from tidu.primitives.structural import transpose
    >>> bind_one(transpose, tidu.tensor([[1.0, 2.0]], requires_grad=True), {"permutation": (1, 0)})
    tensor([[1.],
            [2.]], grad_fn=<transpose>)
    """
    if type(x) is not Tensor and type(x) not in SHORT_PATH_TYPES:
        return bind(prim, x, **params)
    key = (prim, *params.items(), x._buf.shape, x._dtype, x._device.type)
    entry = _ONE_INPUT.get(key)
    if entry is None:
        entry = _signature(prim, (x,), params)  # the shape rule's errors
        if entry[8] is not None:  # a half call: never kept here, it takes the general path
            return bind_eager(prim, (x,), params)
        if len(_ONE_INPUT) >= _MAX_SIGNATURES:
            _ONE_INPUT.clear()
        _ONE_INPUT[key] = entry
    return _call_one(prim, x, params, entry)


def _call_one(prim: Primitive, x: Tensor, params: dict[str, Any], entry: list) -> Tensor:
    """``_call`` of one input (views and broadcasts: W2's and W5's bias adds), written out."""
    grad_on = grad_mode._state.enabled
    if grad_on and x._view is not None and x._view.version != x._version.value:
        refresh_view(x)
    buf = x._buf
    if deferred.PENDING and deferred.reads_pending((buf,)):
        if prim is reduce_sum and (deferred.sum_deferrable(buf, params["axes"]) if x._device is CUDA
                                   else deferred.host_sum_deferrable(buf)):
            aval = entry[1][0]
            _application(prim, params, entry)  # numbered: the queue's structure names it
            deferred._sums.append(1)
            return _defer(prim, entry, (prim.impls[x._device.type], aval.shape, buf.dtype, aval.dtype, x._device),
                          (x,), [buf], params, grad_on)
        deferred.flush(True)
    result = prim.impls[x._device.type](buf, **params)
    out = wrap(result, entry[1][0].dtype, x._device)
    if result.base is not None or result is buf:
        _link_view(prim, (x,), params, out, 0, 1, entry)
    if grad_on and x._requires_grad and not prim.nondiff:
        _record_call(prim, (x,), params, entry, [out])
    return out


def _call(prim: Primitive, args: tuple, params: dict[str, Any], entry: list) -> Tensor:
    """What ``bind_eager`` does for a call that runs now, for the short paths: tensors of their
    types on one device, one output, the signature ``entry`` looked up. Stale views refreshed,
    queued work that the kernel reads flushed, the output linked as a view of an input where the
    kernel made one, and the call recorded."""
    grad_on = grad_mode._state.enabled
    if grad_on:  # _refresh_stale written out: every call that runs now after a short path's lookup
        for t in args:
            if t._view is not None and t._view.version != t._version.value:
                refresh_view(t)
    arrays = list(map(_BUF, args))
    if deferred.PENDING and deferred.reads_pending(arrays):
        deferred.flush(True)
    device = args[0]._device
    kernel = entry[7]
    if kernel is None:
        kernel = entry[7] = _prepared(prim, entry, params, device.type)
    if kernel:  # a fresh array: no view to link
        out = wrap(kernel(*arrays), entry[1][0].dtype, device)
    else:
        impl = prim.impls[device.type]
        result = impl(*arrays, **params) if params else impl(*arrays)
        out = wrap(result, entry[1][0].dtype, device)
        if (result.base is not None or result is arrays[0] or result is arrays[-1]
                or len(arrays) > 2 and _returns_input(result, arrays)):
            _link_view(prim, args, params, out, 0, 1, entry)
    if grad_on and not prim.nondiff and any(map(_REQUIRES_GRAD, args)):
        _record_call(prim, args, params, entry, [out])
    return out


_BUF, _REQUIRES_GRAD = attrgetter("_buf"), attrgetter("_requires_grad")


def _prepared(prim: Primitive, entry: list, params: dict[str, Any], device: str) -> Any:
    """The kernel that ``prim`` prepares for the signature ``entry`` on ``device``
    (``Primitive.def_prepare``), or ``False``: it has none, or the call has params."""
    prepare = prim.prepares.get(device)
    if prepare is None or params:
        return False
    return prepare(*entry[0]) or False


# (shape, shape, dtype, device type, tag of the dimension numbers) -> (signature entry, the host's kernel
# or ``False``): ``bind_product``'s lookup
_PRODUCTS: dict[tuple, tuple] = {}
_MM_PARAMS = ({"dimension_numbers": (((1,), (0,)), ((), ()))},  # a @ b
              {"dimension_numbers": (((1,), (1,)), ((), ()))})  # a @ b.T, contracting b's last dim


def bind_matmul(a: Tensor, b: Tensor, transposed: bool = False) -> Tensor:
    """``a @ b`` (``a @ b.T`` if ``transposed``: ``F.linear``'s product) for 2-D tensors of the
    short paths' types and of one non-bool dtype whose contracted sizes agree (the caller checked
    that): ``bind_product`` with a matrix product's dimension numbers.

    >>> import tidu
    >>> from tidu.core.dispatch import bind_matmul
    >>> bind_matmul(tidu.tensor([[1.0, 2.0]]), tidu.tensor([[3.0], [4.0]]))
    tensor([[11.]])
    >>> bind_matmul(tidu.tensor([[1.0, 2.0]]), tidu.tensor([[3.0, 4.0]]), transposed=True)
    tensor([[11.]])
    """
    return bind_product(a, b, _MM_PARAMS[transposed], transposed)


def bind_product(a: Tensor, b: Tensor, params: dict[str, Any], tag: Any = None, lazy: bool = False) -> Tensor:
    """``bind(dot_general, a, b, **params)`` for tensors of the short paths' types and of one
    non-bool dtype (the caller checked that): the call made and recorded from a signature cached
    by (shapes, dtype, device, dimension numbers), without the general path's lookups. ``tag``
    stands for the dimension numbers in that key (``bind_matmul``'s bool: no nested tuple to hash
    per call); by default they are their own. ``lazy``: a gradient a ``create_graph`` pass returns;
    on the host it is queued (``deferred.lazy_product``), and computed only if held or read.

    >>> import tidu
    >>> from tidu.core.dispatch import bind_product
    >>> dims = {"dimension_numbers": (((2,), (0,)), ((), ()))}  # (..., k) @ (k, n)
    >>> bind_product(tidu.ones(2, 1, 3), tidu.ones(3, 2), dims)
    tensor([[[3., 3.]],
    <BLANKLINE>
            [[3., 3.]]])
    """
    device = a._device
    if b._device is not device:
        return bind_eager(dot_general, (a, b), params)  # the general path's error, or a 0-d move
    key = (a._buf.shape, b._buf.shape, a._dtype, device.type, params["dimension_numbers"] if tag is None else tag)
    hit = _PRODUCTS.get(key)
    if hit is None:
        entry = _signature(dot_general, (a, b), params)  # the shape rule's errors
        if entry[8] is not None:  # a half call: never kept here, it takes the general path
            return bind_eager(dot_general, (a, b), params)
        if len(_PRODUCTS) >= _MAX_SIGNATURES:
            _PRODUCTS.clear()
        # on the host, ``_dot_impl`` with its plan made once for these shapes
        kernel = device is CPU and dot_kernel(a._buf.shape, b._buf.shape, params["dimension_numbers"])
        hit = _PRODUCTS[key] = (entry, kernel)
    entry, kernel = hit
    # ``_call``'s steps for two operands that make no view, written out: through ``_call`` a
    # product took 0.4 µs more (W5 binds two a step)
    args = (a, b)
    grad_on = grad_mode._state.enabled
    if grad_on and (a._view is not None or b._view is not None):
        _refresh_stale(args)
    abuf, bbuf = a._buf, b._buf
    if deferred.PENDING and deferred.reads_pending((abuf, bbuf)):
        deferred.flush(True)  # (before a lazy product too: the queued work is fused as usual)
    if lazy and device is CPU and entry[5] and deferred.lazy_product((abuf, bbuf)):
        aval = entry[1][0]
        _application(dot_general, params, entry)  # numbered: the queue's structure names it
        deferred._lazy.append(1)
        return _defer(dot_general, entry, (dot_general.impls["cpu"], aval.shape, aval.dtype.np, aval.dtype, CPU),
                      args, [abuf, bbuf], params, grad_on)
    impl = dot_general.impls[device.type]
    if kernel and impl is _dot_impl:  # (an impl replaced by a test's spy is called as registered)
        out = wrap(kernel(abuf, bbuf), entry[1][0].dtype, device)
    else:
        out = wrap(impl(abuf, bbuf, **params), entry[1][0].dtype, device)
    if grad_on and (a._requires_grad or b._requires_grad):
        _record_call(dot_general, args, params, entry, [out])
    return out


def _defer(prim: Primitive, entry: list, defer: tuple, args: Sequence[Any], arrays: list[Any],
           params: dict[str, Any], grad_on: bool) -> Tensor:
    """A deferred call (tidu/core/deferred.py): its output allocated, its work queued and, when an
    input requires grad, the call recorded in the open group (tidu/core/groups.py). ``arrays``
    must not be exposed (``deferred.reads_exposed``).

    Every elementwise op on floating-point tensors comes here, so ``wrap`` and the queue's
    append are written out (a call each cost W1 0.1 µs an op)."""
    impl, shape, np_dtype, dtype, out_device = defer
    out = np.empty(shape, np_dtype) if out_device is CPU else CudaArray.empty(shape, np_dtype)
    t = _new(Tensor)
    t._buf = out
    t._dtype = dtype
    t._requires_grad = t._retains_grad = False
    t._grad = t._key = t._trace = t._view = t._hooks = None
    t._version = counter = _new(VersionCounter)
    counter.value = 0
    t._device = out_device
    app = entry[2]
    with deferred._lock:  # one hold for queueing and recording (a group is per queue)
        # the queue's entry (deferred.PENDING): each array's slot, and the structure that keys the fused plan
        index, slots, structure = deferred._index, deferred._slots, deferred._structure
        if len(arrays) == 2:  # the commonest case written out
            a, b = arrays
            sa = index.get(id(a))
            if sa is None:
                sa = index[id(a)] = len(slots)
                slots.append(a)
                structure.append(layout_of(a))
            sb = index.get(id(b))
            if sb is None:
                sb = index[id(b)] = len(slots)
                slots.append(b)
                structure.append(layout_of(b))
            in_slots = (sa, sb)
        elif len(arrays) == 1:
            a = arrays[0]
            sa = index.get(id(a))
            if sa is None:
                sa = index[id(a)] = len(slots)
                slots.append(a)
                structure.append(layout_of(a))
            in_slots = (sa,)
        else:
            in_slots = deferred.slots_of(arrays)
        slot = index[id(out)] = len(slots)
        slots.append(out)
        deferred._pending_ids.add(id(out))
        structure.append((app._uid, in_slots))  # numbered by ``_application``
        pending = deferred.PENDING
        pending.append((app, impl, params, in_slots, slot))
        if grad_on and not prim.nondiff:
            for a in args:
                if a._requires_grad:
                    if GROUPED:
                        _record_grouped(app, args, entry, t)
                    else:
                        _record(prim, args, params, entry, [t])
                    break
    if len(pending) >= deferred.MAX_QUEUE:
        deferred.flush(True)
    return t


def _record_grouped(app: Application, args: Sequence[Any], entry: list, out: Tensor) -> None:
    """Record a call in the open group (``groups.GroupNode``): every deferred call, and the others
    of a grouped signature (``_new_entry``). The caller holds the queue's lock.

    Every recorded elementwise op comes here, so the one- and two-operand cases are written out
    (W1 and W5 record 24 and 600 calls a step)."""
    group = None if groups._open is None else groups._open()
    if group is None:
        group = groups._start()
    n = len(args)
    if n == 2:
        a, b = args
        ka = a._key or a._ensure_key()
        kb = b._key or b._ensure_key()
        ta, tb = a._trace, b._trace
        external = group.external
        if ta.__class__ is GroupTrace and ta.group is group:
            ca = ta.index
        else:
            ca = external.get(ka.key)
            ca = _external(group, a, ka, ta) if ca is None else ~ca
        if tb.__class__ is GroupTrace and tb.group is group:
            cb = tb.index
        else:
            cb = external.get(kb.key)
            cb = _external(group, b, kb, tb) if cb is None else ~cb
        in_keys: Any = (ka, kb)
        codes: Any = (ca, cb)
        group.parts.append((app._uid, ca, cb))
        plan = entry[4].get((a._requires_grad, ta is None, b._requires_grad, tb is None, ka is kb))
    elif n == 1:
        (a,) = args
        ka = a._key or a._ensure_key()
        ta = a._trace
        if ta.__class__ is GroupTrace and ta.group is group:
            ca = ta.index
        else:  # from outside (W5's bias, broadcast every step): its code found without a call
            ca = group.external.get(ka.key)
            ca = _external(group, a, ka, ta) if ca is None else ~ca
        in_keys = (ka,)
        codes = (ca,)
        group.parts.append((app._uid, ca))
        plan = entry[4].get((a._requires_grad, ta is None))
    else:
        in_keys = []
        codes = []
        for a in args:
            key = a._key or a._ensure_key()
            trace = a._trace
            in_keys.append(key)
            codes.append(trace.index if trace.__class__ is GroupTrace and trace.group is group
                         else _external(group, a, key, trace))
        group.parts.append((app._uid, *codes))
        plan = None
    if plan is None:
        plan = _plan(app, args, in_keys, entry)
    save_in, save_out, _ = plan
    saved = group.saved_data
    for i in save_in:
        raw = in_keys[i].key
        if raw not in saved:
            if codes[i] >= 0:  # a value made in the group is saved as its array: its tensor would hold the group
                saved[raw] = SavedOutput(args[i], in_keys[i])
            else:  # ``SavedInput(a)`` written out
                a = args[i]
                value = saved[raw] = _new(SavedInput)
                value.tensor = a
                value.version = a._version.value
    records = group.records
    position = len(records)
    key = _new(_Input)  # ``fresh_key()`` written out
    key.key = key._hash = raw = _count()
    if save_out:  # ``SavedOutput(out, key)`` written out
        value = saved[raw] = _new(SavedOutput)
        value.data = out._buf
        value.dtype = out._dtype
        value.device = out._device
        value.key = key
        value.counter = counter = out._version
        value.version = counter.value
        value.node = None
    records.append((app, in_keys, codes, save_in, save_out))
    group.primal_out_keys.append(key)
    out._requires_grad = True
    out._key = key
    trace = _new(GroupTrace)
    trace.group = group
    trace.index = position
    out._trace = trace
    if position + 1 >= groups.MAX_CALLS:
        group.close()


def _external(group: Any, a: Any, key: Any, trace: Any) -> int:
    """The code of an input from outside ``group`` (``~index`` in its ``input_edges``)."""
    external = group.external
    e = external.get(key.key)
    if e is None:
        e = external[key.key] = len(group.input_edges)
        group.input_edges.append((trace, key, a._requires_grad))
    return ~e


def _deferral(prim: Primitive, params: dict[str, Any], entry: list) -> tuple | bool:
    """What a deferred call of this signature needs (its kernel and output), or ``False``."""
    out_avals = entry[1]
    device = out_avals[0].device if out_avals else None
    impl = prim.impls.get(device)
    if impl is None or not deferred.queueable(_application(prim, params, entry)):
        return False
    aval = out_avals[0]
    return impl, aval.shape, aval.dtype.np, aval.dtype, CPU if device == "cpu" else CUDA


def _returns_input(array: Any, arrays: list[Any]) -> bool:
    for a in arrays:
        if a is array:
            return True
    return False


def _output(prim: Primitive, array: Any, aval: Any, device: Any) -> Tensor:
    if array.shape != aval.shape or array.dtype is not aval.dtype.np and array.dtype != aval.dtype.np:
        raise RuntimeError(
            f"internal error: kernel of {prim.name} returned {array.shape} {array.dtype}, "
            f"its shape rule says {aval.shape} {aval.dtype.name}"
        )
    return wrap(array, aval.dtype, device)


def _application(prim: Primitive, params: dict[str, Any], entry: list) -> Application:
    app = entry[2]
    if app is None:
        app = entry[2] = Application(prim, freeze(params), entry[0], entry[1])
        app.uid  # noqa: B018 - numbered now: ``_record_grouped`` reads ``app._uid``
    return app


def _record(prim: Primitive, args: Sequence[Any], params: dict[str, Any], entry: list, outs: list[Any]) -> None:
    """Record a call as a node of its own (a ``TapeNode``), closing the open group."""
    app = _application(prim, params, entry)
    in_keys = [a._key or a._ensure_key() for a in args]
    edges = [(a._trace, k, a._requires_grad) for a, k in zip(args, in_keys)]
    plan = _plan(app, args, in_keys, entry)
    if groups._open is not None:
        groups.close()  # a node reading the group's outputs: the group never reads this one's
    save_in, save_out, float_slots = plan
    saved = {}
    for i in save_in:
        saved[in_keys[i]] = SavedInput(args[i])
    keys = [fresh_key()] if len(outs) == 1 else [fresh_key() for _ in outs]
    graph = TensorRecordedGraph.of_call(app, in_keys, keys)
    node = TapeNode(graph, keys, saved, edges)
    if save_out:
        ref = weakref.ref(node)
        out_keys = graph.output_keys()
        for s in save_out:
            saved[out_keys[s]] = SavedOutput(outs[s], keys[s], ref)
    join_graph(outs, float_slots, keys, node)
    if DEBUG:
        print(f"tidu: {', '.join(f'%{k.key}' for k in keys)} = {app.name} "
              f"{' '.join(f'%{k.key}' for k in in_keys)}", file=sys.stderr)


def join_graph(outs: Sequence[Any], slots: Sequence[int], keys: Sequence[Any], node: Any) -> None:
    """The outputs in ``slots`` become the values of ``node`` (keyed ``keys``): they require grad
    and have its trace."""
    trace = Trace(node)
    for s in slots:
        t = outs[s]
        t._requires_grad = True
        t._key = keys[s]
        t._trace = trace


def _plan(app: Application, args: Sequence[Any], in_keys: list, entry: list) -> tuple:
    """The saving plan (``_saving_plan``) of a call of the signature ``entry`` on ``args`` (keyed
    ``in_keys``), cached by the pattern of its inputs: which require grad, which are leaves, which
    are the same value."""
    if len(args) == 2:
        a, b = args
        pattern: Any = (a._requires_grad, a._trace is None, b._requires_grad, b._trace is None,
                        in_keys[0] is in_keys[1])
    elif len(args) == 1:
        pattern = (args[0]._requires_grad, args[0]._trace is None)
    else:
        pattern = (*[(a._requires_grad, a._trace is None) for a in args], distinct_pattern(in_keys))
    plans = entry[4]
    plan = plans.get(pattern)
    if plan is None:
        edges = [(a._trace, k, a._requires_grad) for a, k in zip(args, in_keys)]
        plan = plans[pattern] = _saving_plan(app, in_keys, edges)
    return plan


def _saving_plan(app: Application, in_keys: list, edges: list) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """What a call of ``app`` saves, for one pattern of its inputs (which require grad, which are
    leaves, which are the same tensor): the input positions and output slots its backward reads,
    and the output slots that join the graph (the floating ones)."""
    slots = tuple(i for i, aval in enumerate(app.out_avals) if aval.dtype.is_floating_point)
    needed = saved_positions(app, in_keys, [r for _, _, r in edges], slots)
    if needed is None:
        return tuple(range(len(edges))), tuple(range(len(app.out_avals))), slots
    # a leaf that requires grad is saved even when unread, to receive ``.grad`` (and release keeps
    # it for that: Note [release] in core/tape.py)
    leaves = {i for i, (t, _, r) in enumerate(edges) if t is None and r}
    return tuple(sorted(needed[0] | leaves)), tuple(sorted(needed[1])), slots


def _link_view(prim: Primitive, args: Sequence[Any], params: dict[str, Any], out: Any, slot: int,
               n_outs: int, entry: list) -> None:
    """An output that is a numpy view of an input's storage shares its version counter and
    remembers how to replay itself from the root base (for writes through the view)."""
    owner = storage(out._buf)
    for i, a in enumerate(args):
        if storage(a._buf) is owner:
            out._version = a._version
            if not prim.nondiff:
                if len(args) == 1 and n_outs == 1:  # the replay depends on the signature alone
                    replay = entry[6]
                    if replay is None:
                        replay = entry[6] = _replay(prim, args, params, 0, 0, 1)
                else:
                    replay = _replay(prim, args, params, i, slot, n_outs)
                out._view = _view_of(a, replay)
            return


def _replay(prim: Primitive, args: Sequence[Any], params: dict[str, Any], i: int, slot: int, n_outs: int) -> Any:
    """``input -> view``: this call with the view's input swapped in."""
    rest = list(args)
    rest[i] = None  # the view must not keep its direct input alive

    def replay(base: Any) -> Any:
        call = rest.copy()
        call[i] = base
        result = prim.bind(*call, **params)
        return result[slot] if n_outs > 1 else result

    return replay


def _view_of(x: Tensor, replay: Any) -> ViewInfo:
    """A view of ``x`` made by ``replay(x)``, as replayed from the root base: ``x``'s own replay
    first when ``x`` is a view itself."""
    info = x._view
    if info is None:
        return ViewInfo(x, replay, x._version.value)
    inner = info.fn
    return ViewInfo(info.base, lambda base: replay(inner(base)), x._version.value, info.no_grad)


def plain_view(x: Tensor, array: Any, replay: Any) -> Tensor:
    """A view ``array`` of the storage of ``x`` (which does not require grad), made without a bind:
    it shares the version counter, and ``replay(x)`` (binds) rebuilds it from ``x`` where a write
    through it needs the graph (tidu/core/inplace.py), as for a bound view."""
    out = _view_tensor(x, array)
    out._view = _view_of(x, replay)
    return out


def _view_tensor(x: Tensor, array: Any) -> Tensor:
    """A tensor of ``array``, a view of ``x``'s storage: ``wrap`` sharing ``x``'s version counter
    (the caller links it: ``_view``)."""
    out = _new(Tensor)
    out._buf = array
    out._dtype = x._dtype
    out._requires_grad = out._retains_grad = False
    out._grad = out._key = out._trace = out._view = out._hooks = None
    out._device = x._device
    out._version = x._version
    return out


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


from ..backends.cuda.memory import CudaArray  # noqa: E402
from ..primitives.linalg import _dot_impl, dot_general, dot_kernel  # noqa: E402
from ..primitives.reduce import reduce_sum  # noqa: E402
from ..primitives.structural import broadcast_in_dim  # noqa: E402
from ..primitives.transfer import device_put  # noqa: E402 - primitives import this module's users
