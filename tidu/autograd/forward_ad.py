"""Forward-mode AD on dual tensors (PyTorch's ``torch.autograd.forward_ad``).

Inside ``dual_level()``, ``make_dual(primal, tangent)`` gives a tensor that carries a tangent;
every primitive bound on such a tensor also computes its output's tangent, eagerly, with the
primitive's own JVP rule: the call's ``Application.jvp_rule`` emits into an
``ExecutingBuilder`` (tidu/autograd/executor.py), which runs each emitted operation at once.
These are the rules ``tidu.func.jvp`` and ``backward`` linearize with; there is no per-op
tangent code here.

Note [dual level swap]
Nothing on the binding path checks for tangents. Entering a level replaces the binding entry
points (``dispatch.bind_eager`` and its short paths, ``plain_view``, ``inplace.assign_``) in
every ``tidu`` module that holds them with wrappers that look for a dual operand; exiting
the level puts the originals back and drops every tangent. Outside a level an op pays nothing.

>>> import tidu
>>> import tidu.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 0.0]))
...     fwAD.unpack_dual((x * x).sum()).tangent
tensor(2.)
"""

from __future__ import annotations

import sys
import weakref
from collections import namedtuple
from typing import Any

from ..core import dispatch, grad_mode, inplace
from ..core.primitive import Application, freeze
from ..core.swaps import restore_globals, swap_globals
from ..ops import indexing
from ..ops.creation import zeros_like
from ..tensor import Tensor
from .executor import ExecutingBuilder

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

_level: int | None = None  # the one active level (PyTorch supports one)
# id(tensor) -> (weak reference to the tensor, its tangent, the tensor's version then, whether the
# tangent is its own: ``make_dual``'s views of their primal, PyTorch's too); an entry leaves with
# its tensor
_TANGENTS: dict[int, tuple[weakref.ref, Tensor, int, bool]] = {}
_suspended = False  # while a rule or a primal call runs: binds take the original paths


def _drop(key: int, ref: weakref.ref) -> None:
    entry = _TANGENTS.get(key)
    if entry is not None and entry[0] is ref:
        del _TANGENTS[key]


def _tangent(t: Any) -> Tensor | None:
    """``t``'s tangent. A view's follows its base's (Note [tangents of views])."""
    entry = _TANGENTS.get(id(t))
    if entry is not None and entry[0]() is not t:
        entry = None
    view = getattr(t, "_view", None)
    if view is None or entry is not None and (entry[3] or entry[2] == t._version.value):
        return None if entry is None else entry[1]
    base = _tangent(view.base)  # written since (or made before its base had a tangent): the base's, viewed
    if base is None:
        return None if entry is None or id(view.base) in _TANGENTS else entry[1]
    with _originals():
        tangent = view.fn(base)
    _set_tangent(t, tangent)
    return tangent


def _set_tangent(t: Tensor, tangent: Tensor, own: bool = False) -> None:
    key = id(t)
    _TANGENTS[key] = (weakref.ref(t, lambda ref: _drop(key, ref)), tangent, t._version.value, own)


def _any_dual(args: Any) -> bool:
    if _suspended:
        return False
    for a in args:
        if id(a) in _TANGENTS or a.__class__ is Tensor and a._view is not None and id(a._view.base) in _TANGENTS:
            return True
    return False


class _originals:
    """Binds inside take the original paths (no tangents)."""

    def __enter__(self) -> None:
        global _suspended
        self.was, _suspended = _suspended, True

    def __exit__(self, *exc: Any) -> None:
        global _suspended
        _suspended = self.was


# Note [tangents of views]
# As in PyTorch, a view's tangent is the view of its base's: written in place through a view, the
# base's tangent takes the written value's in the view's region (``_assign``), and a view whose
# version moved since its tangent was set (its base was written), or one made before its base had
# a tangent, reads its base's tangent through its own view function. ``make_dual``'s result is a
# view of its primal with a tangent of its own, as PyTorch's.


def _bind_dual(prim: Any, args: Any, params: dict[str, Any]) -> Any:
    """``bind_eager(prim, args, params)`` on primals, then the outputs' tangents from the
    primitive's JVP rule, run eagerly (``ExecutingBuilder``)."""
    global _suspended
    tangents = [_tangent(a) for a in args]
    _suspended = True
    try:
        out = _ORIGINALS["bind_eager"](prim, args, params)
        if prim.nondiff:
            return out
        outs = list(out) if isinstance(out, tuple) else [out]
        if not any(o.dtype.is_floating_point for o in outs):
            return out
        app = Application(prim, freeze(params), tuple(a.aval for a in args), tuple(o.aval for o in outs))
        external = {("in", i): a for i, a in enumerate(args)}
        external.update({("out", j): o for j, o in enumerate(outs)})
        builder = ExecutingBuilder(external)
        # a tangent of an input of another dtype (an integer index) is inactive
        ids = app.jvp_rule(builder, [("in", i) for i in range(len(args))], [("out", j) for j in range(len(outs))],
                           [None if t is None or not a.dtype.is_floating_point else builder.push(t)
                            for a, t in zip(args, tangents)], None)
    finally:
        _suspended = False
    for o, i in zip(outs, ids):
        if i is not None and o.dtype.is_floating_point:
            _set_tangent(o, builder.values[i])
    return out


def _bind_eager(prim: Any, args: Any, params: dict[str, Any]) -> Any:
    if _any_dual(args):
        return _bind_dual(prim, args, params)
    return _ORIGINALS["bind_eager"](prim, args, params)


def _bind_same(prim: Any, args: tuple) -> Any:
    if _any_dual(args):
        return _bind_dual(prim, args, {})
    return _ORIGINALS["bind_same"](prim, args)


def _bind_one(prim: Any, x: Any, params: dict[str, Any]) -> Any:
    if _any_dual((x,)):
        return _bind_dual(prim, (x,), params)
    return _ORIGINALS["bind_one"](prim, x, params)


def _bind_broadcast(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    if _any_dual((x,)):
        lead = len(shape) - x.ndim
        return _bind_dual(dispatch.broadcast_in_dim, (x,),
                          {"shape": shape, "broadcast_dimensions": tuple(range(lead, len(shape)))})
    return _ORIGINALS["bind_broadcast"](x, shape)


def _broadcast_operand(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    if _any_dual((x,)):
        return _bind_broadcast(x, shape)
    return _ORIGINALS["broadcast_operand"](x, shape)


def _bind_matmul(a: Tensor, b: Tensor, transposed: bool = False) -> Tensor:
    if _any_dual((a, b)):
        return _bind_dual(dispatch.dot_general, (a, b), dispatch._MM_PARAMS[transposed])
    return _ORIGINALS["bind_matmul"](a, b, transposed)


def _bind_product(a: Tensor, b: Tensor, params: dict[str, Any], tag: Any = None) -> Tensor:
    if _any_dual((a, b)):
        return _bind_dual(dispatch.dot_general, (a, b), params)
    return _ORIGINALS["bind_product"](a, b, params, tag)


def _plain_view(x: Tensor, array: Any, replay: Any) -> Tensor:
    if _any_dual((x,)):
        return replay(x)  # the bound view, whose tangent the view primitive's rule gives
    return _ORIGINALS["plain_view"](x, array, replay)


def _assign(target: Any, value: Any, **kwargs: Any) -> Any:
    """An in-place write: the target takes the value's tangent (none if it has none); through a
    view, its base's tangent takes it in the view's region (Note [tangents of views])."""
    if _suspended:
        return _ORIGINALS["assign_"](target, value, **kwargs)
    tangent = _tangent(value)
    view = target._view
    entry = _TANGENTS.get(id(target))
    if view is not None and not (entry is not None and entry[3] and entry[0]() is target):
        base = view.base
        base_tangent = _tangent(base)
        out = _ORIGINALS["assign_"](target, value, **kwargs)
        _TANGENTS.pop(id(target), None)
        if tangent is not None or base_tangent is not None:
            with _originals(), grad_mode.no_grad():
                written = zeros_like(base) if base_tangent is None else base_tangent.clone()
                region = view.fn(written)
                if tangent is None:
                    region.zero_()
                else:
                    region.copy_(tangent)
            _set_tangent(base, written)
        return out
    out = _ORIGINALS["assign_"](target, value, **kwargs)
    if tangent is not None:
        _set_tangent(target, tangent)
    else:
        _TANGENTS.pop(id(target), None)
    return out


def _no_tangents(input: Any, value: Any) -> bool:  # noqa: A002
    return not _any_dual((input, value) if isinstance(value, Tensor) else (input,))


_ORIGINALS: dict[str, Any] = {
    "bind_eager": dispatch.bind_eager, "bind_same": dispatch.bind_same, "bind_one": dispatch.bind_one,
    "bind_broadcast": dispatch.bind_broadcast, "bind_matmul": dispatch.bind_matmul,
    "bind_product": dispatch.bind_product, "plain_view": dispatch.plain_view, "assign_": inplace.assign_,
    "broadcast_operand": dispatch.broadcast_operand, "no_tangents": indexing.no_tangents,
}
_WRAPPERS: dict[str, Any] = {
    "bind_eager": _bind_eager, "bind_same": _bind_same, "bind_one": _bind_one, "bind_broadcast": _bind_broadcast,
    "bind_matmul": _bind_matmul, "bind_product": _bind_product, "plain_view": _plain_view, "assign_": _assign,
    "broadcast_operand": _broadcast_operand, "no_tangents": _no_tangents,
}
_swapped: list[tuple[dict, str, Any, Any]] = []


def _swap_in() -> None:
    """Note [dual level swap]: every ``tidu`` module's reference to an entry point, replaced (``core/swaps.py``)."""
    replacements = {id(original): (original, _WRAPPERS[name]) for name, original in _ORIGINALS.items()}
    _swapped.extend(swap_globals(replacements, skip=sys.modules[__name__]))


def _swap_out() -> None:
    restore_globals(_swapped)


def enter_dual_level() -> int:
    """Enter a dual level (only one at a time, as in PyTorch) and return it.

    >>> import tidu.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level()
    >>> level
    0
    >>> fwAD.exit_dual_level(level=level)
    """
    global _level
    if _level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _swap_in()
    _level = 0
    return _level


def exit_dual_level(*, level: int | None = None) -> None:
    """Exit the dual level ``level`` (the current one by default); every tangent is dropped.

    >>> import tidu, tidu.autograd.forward_ad as fwAD
    >>> fwAD.enter_dual_level()
    0
    >>> x = fwAD.make_dual(tidu.tensor(1.0), tidu.tensor(2.0))
    >>> fwAD.exit_dual_level()
    >>> fwAD.unpack_dual(x).tangent is None
    True
    """
    global _level
    if level is None:
        level = -1 if _level is None else _level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _swap_out()
    _TANGENTS.clear()
    _level = None


def _check_level(level: int | None, what: str) -> None:
    if level is not None and level != _level:
        raise RuntimeError(f"Invalid level given to {what}")


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` carrying ``tangent`` as its forward gradient, inside a dual level.

    Reverse mode sees the result as a view of ``tensor``. A ``tangent`` of another floating
    dtype is converted to ``tensor``'s (PyTorch keeps its dtype).

    >>> import tidu, tidu.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(tidu.tensor([0.0, 1.0]), tidu.tensor([1.0, 1.0])).exp()
    ...     fwAD.unpack_dual(y).tangent
    tensor([1.0000, 2.7183])
    """
    if _level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_level(level, "_make_dual")
    if not tensor.dtype.is_floating_point:
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.dtype.is_floating_point:
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the original Tensor, this is "
            f"not supported. Tensor is of size {list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    if _tangent(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the same level{_level} is "
                           "not supported.")
    if _tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {_level} is not supported.")
    if tangent.device is not tensor.device:
        raise RuntimeError(f"Expected tangent on {tensor.device}, the primal's device, but got {tangent.device}")
    out = _alias(tensor)
    _set_tangent(out, tangent if tangent.dtype is tensor.dtype else tangent.to(tensor.dtype), own=True)
    return out


def _alias(tensor: Tensor) -> Tensor:
    """A view of ``tensor`` (a recorded reshape to its own shape), without its tangent."""
    global _suspended
    from ..primitives.structural import reshape

    _suspended = True
    try:
        return _ORIGINALS["bind_one"](reshape, tensor, {"new_sizes": tuple(tensor.shape)})
    finally:
        _suspended = False


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """``unpack_dual``'s result: ``primal`` (a view) and ``tangent`` (``None`` if none).

>>> import tidu, tidu.autograd.forward_ad as fwAD
>>> fwAD.UnpackedDualTensor(tidu.tensor(1.0), None)
UnpackedDualTensor(primal=tensor(1.), tangent=None)
"""


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor``: the primal a view without the tangent, the tangent
    ``None`` where the tensor has none at ``level`` (or no level is active).

    >>> import tidu, tidu.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(tidu.tensor(3.0), tidu.tensor(1.0))
    ...     primal, tangent = fwAD.unpack_dual(x * x)
    >>> primal, tangent
    (tensor(9.), tensor(6.))
    """
    if _level is None or (level is not None and level != _level):
        return UnpackedDualTensor(tensor, None)
    tangent = _tangent(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level:  # noqa: N801 - PyTorch's name
    """A context manager for one dual level: entered on ``with``, exited (tangents dropped) after.

    >>> import tidu, tidu.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(tidu.tensor(2.0), tidu.tensor(1.0))
    ...     fwAD.unpack_dual(x.sin()).tangent
    tensor(-0.4161)
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()
