"""``Parameter``: a leaf tensor that a ``Module`` registers as one of its weights."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..core import dtypes
from ..tensor import SHORT_PATH_TYPES, Tensor, of_array


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
            data = of_array(np.empty((0,), dtypes.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a Tensor, not {type(data).__name__}")
        super().__init__(data._data, data._dtype, requires_grad=requires_grad, device=data._device,
                         _version=data._version)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce__(self) -> Any:
        return (Parameter, (self.detach(), self.requires_grad))


SHORT_PATH_TYPES.add(Parameter)  # a leaf that requires grad by default, the same tensor to every op


_PERSISTENT: dict[int, bool] = {}  # id(Buffer or UninitializedBuffer) -> persistent (their layout is Tensor's)


class Buffer(Tensor):
    """A tensor that is module state but not a parameter: assigning it to a ``Module`` attribute
    registers it as a buffer (PyTorch 2.5's ``nn.Buffer``), in the state dict unless
    ``persistent=False``. It shares the storage of ``data``.

    >>> import tidu
    >>> class Scaled(tidu.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = tidu.nn.Buffer(tidu.tensor([2.0]))
    ...         self.cache = tidu.nn.Buffer(tidu.zeros(1), persistent=False)
    >>> m = Scaled()
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['scale', 'cache'], ['scale'])
    """

    __slots__ = ()  # Tensor's layout: a module turns it into a plain Tensor when it registers it

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        if data is None:
            data = of_array(np.empty((0,), dtypes.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): data must be a Tensor, not {type(data).__name__}")
        super().__init__(data._data, data._dtype, requires_grad=data.requires_grad, device=data._device,
                         _version=data._version)
        _PERSISTENT[id(self)] = persistent
        weakref.finalize(self, _PERSISTENT.pop, id(self), None)

    @property
    def persistent(self) -> bool:
        return _PERSISTENT.get(id(self), True)

    def __deepcopy__(self, memo: dict) -> Buffer:
        new = Buffer(Tensor(self._data.copy(), self._dtype, device=self._device), persistent=self.persistent)
        new._requires_grad = self._requires_grad
        memo[id(self)] = new
        return new

    def __reduce__(self) -> Any:
        return (_rebuild_buffer, (self.detach(), self.persistent))


def _rebuild_buffer(data: Tensor, persistent: bool) -> Buffer:
    return Buffer(data, persistent=persistent)


SHORT_PATH_TYPES.add(Buffer)  # changes no op


class UninitializedTensorMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share: no shape until
    ``materialize(shape)``, which gives them storage and turns them into ``cls_to_become``."""

    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor storage of ``shape`` (uninitialized values), in its own device and dtype
        unless given, and make it a ``cls_to_become`` (``Parameter`` or ``Tensor``) in place."""
        from ..ops.creation import empty

        data = empty(tuple(shape), dtype=dtype if dtype is not None else self.dtype,
                     device=device if device is not None else self.device)
        self.data = data
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an ``UninitializedParameter`` or an ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


def _empty_of(device: Any, dtype: Any) -> Tensor:
    from ..ops.creation import empty

    return empty(0, device=device, dtype=dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (the weights of a lazy module): it can change
    dtype and device, and ``materialize(shape)`` makes it an ordinary ``Parameter``, in place
    (so an optimizer made before that holds the materialized parameter).

    >>> import tidu
    >>> p = tidu.nn.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, tuple(p.shape), p.requires_grad
    ('Parameter', (2, 3), True)
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(_empty_of(device, dtype), requires_grad)

    def __deepcopy__(self, memo: dict) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]

    def __reduce__(self) -> Any:
        return (type(self), (self.requires_grad,))


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy BatchNorm's running statistics);
    ``materialize(shape)`` makes it an ordinary ``Tensor``, in place.

    >>> import tidu
    >>> b = tidu.nn.UninitializedBuffer()
    >>> b.materialize((3,), dtype=tidu.float64)
    >>> type(b).__name__, tuple(b.shape), b.dtype
    ('Tensor', (3,), tidu.float64)
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        data = _empty_of(device, dtype)
        super().__init__(data._data, data._dtype, requires_grad=requires_grad, device=data._device)
        _PERSISTENT[id(self)] = persistent
        weakref.finalize(self, _PERSISTENT.pop, id(self), None)

    @property
    def persistent(self) -> bool:
        return _PERSISTENT.get(id(self), True)

    def __deepcopy__(self, memo: dict) -> UninitializedBuffer:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype, self.persistent)
        return memo[id(self)]
