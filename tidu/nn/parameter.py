"""``Parameter``: a leaf tensor that a ``Module`` registers as one of its weights."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..tensor import SHORT_PATH_TYPES, Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning it to a ``Module`` attribute registers it.

    It shares the storage of ``data`` and requires grad by default.

    >>> import tidu
    >>> p = tidu.nn.Parameter(tidu.tensor([1.0, 2.0]))
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    >>> isinstance(p, tidu.Tensor), p.is_leaf
    (True, True)
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor(np.empty((0,), dtypes.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        super().__init__(data._data, data._dtype, requires_grad=requires_grad, device=data._device,
                         _version=data._version)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce__(self) -> Any:
        return (Parameter, (self.detach(), self.requires_grad))


SHORT_PATH_TYPES.add(Parameter)  # a leaf that requires grad by default, the same tensor to every op
