"""Operators and methods shared by ``Tensor`` and ``Var`` (values inside AD rules)."""

from __future__ import annotations

from typing import Any

from ..core import dtypes, grad_mode
from ..core.device import as_device
from ..core.primitive import Var
from ..tensor import Tensor
from . import activation, conv, creation, indexing, linalg, math, reduce, shape
from ._operands import convert


def _to(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(tensor)``."""
    target = kwargs.pop("dtype", None)
    for a in args:
        if isinstance(a, Tensor):
            target = a.dtype
        elif isinstance(a, dtypes.dtype) or a in (float, int, bool):
            target = a
        else:
            as_device(a)
    if "device" in kwargs:
        as_device(kwargs.pop("device"))
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    return self if target is None else convert(self, dtypes.as_dtype(target))


CONVERSIONS = {
    "to": _to,
    "float": lambda self: convert(self, dtypes.float32), "double": lambda self: convert(self, dtypes.float64),
    "long": lambda self: convert(self, dtypes.int64), "int": lambda self: convert(self, dtypes.int32),
    "bool": lambda self: convert(self, dtypes.bool_),
}
COMMON = {**CONVERSIONS}
for _module in (conv, creation, indexing, linalg, activation, math, reduce, shape):
    COMMON.update(_module.METHODS)


def _backward(self: Tensor, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
              inputs: Any = None) -> None:
    """Accumulate the gradient of this tensor into the ``.grad`` of the leaves it depends on."""
    from ..autograd.backward import backward

    backward(self, gradient, retain_graph, create_graph, inputs)


def _inplace(fn: Any, name: str) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if grad_mode.is_grad_enabled() and self._requires_grad:
            if self._trace is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad is being used in an in-place operation."
                )
            raise RuntimeError(
                f"{name}: in-place operations on tensors that are part of a graph are not supported yet; "
                "use the out-of-place form"
            )
        with grad_mode.no_grad():
            value = fn(self, *args, **kwargs)
        value = value._data if isinstance(value, Tensor) else value
        if not self._data.flags.writeable:
            raise RuntimeError(f"{name}: this tensor's storage is a read-only (expanded) view")
        self._data[...] = value
        self._version.value += 1
        return self

    method.__name__ = name
    return method


def _data_get(self: Tensor) -> Tensor:
    return self.detach()


def _data_set(self: Tensor, value: Tensor) -> None:
    self._data = value._data
    self._dtype = value._dtype


TENSOR_ONLY = {
    "backward": _backward,
    "add_": _inplace(lambda s, o, alpha=1: math.add(s, o, alpha=alpha), "add_"),
    "sub_": _inplace(lambda s, o, alpha=1: math.sub(s, o, alpha=alpha), "sub_"),
    "mul_": _inplace(math.mul, "mul_"),
    "div_": _inplace(math.div, "div_"),
    "zero_": _inplace(lambda s: 0, "zero_"),
    "fill_": _inplace(lambda s, v: v, "fill_"),
    "__iadd__": _inplace(math.add, "__iadd__"),
    "__isub__": _inplace(math.sub, "__isub__"),
    "__imul__": _inplace(math.mul, "__imul__"),
    "__itruediv__": _inplace(math.div, "__itruediv__"),
    "data": property(_data_get, _data_set),
    **creation.TENSOR_METHODS,
}


def install() -> None:
    for name, fn in COMMON.items():
        setattr(Tensor, name, fn)
        setattr(Var, name, fn)
    for name, fn in TENSOR_ONLY.items():
        setattr(Tensor, name, fn)
    Tensor.__hash__ = lambda self: id(self)  # type: ignore[method-assign]
    Var.__hash__ = lambda self: id(self)  # type: ignore[method-assign]
