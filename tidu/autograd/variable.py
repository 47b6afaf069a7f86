"""``tidu.autograd.Variable``: PyTorch's old wrapper, now a tensor (as in PyTorch since 0.4)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data, requires_grad=False)``: a tensor sharing ``data``'s storage, detached from
    its graph, that requires grad if asked; every tensor is an instance of ``Variable``.

    >>> import tidu
    >>> from tidu.autograd import Variable
    >>> x = tidu.ones(2)
    >>> v = Variable(x, requires_grad=True)
    >>> v.requires_grad, isinstance(x, Variable), type(v).__name__
    (True, True, 'Tensor')
    """

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:  # type: ignore[misc]
        if data is None:
            from ..ops.creation import tensor

            return tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
