"""PyTorch's legacy constructors: ``Tensor([1, 2])``, ``Tensor(2, 3)``, the typed classes
``FloatTensor``, ``LongTensor``, ... and ``Tensor.new``.

``tidu.Tensor(...)`` called with anything but tidu's own ``(array, dtype)`` pair lands here
(``Tensor.__init__``). The forms are PyTorch's: no argument (an empty tensor), sizes (ints or a
``Size``: an uninitialized tensor), a sequence or numpy array (a copy, converted), or a tensor
(an alias sharing its storage, whose dtype must be the class's).

>>> import tidu
>>> tidu.Tensor([1, 2]), tidu.Tensor(2, 3).shape, tidu.LongTensor([1.7, 2])
(tensor([1., 2.]), tidu.Size([2, 3]), tensor([1, 2]))
>>> isinstance(tidu.zeros(2), tidu.FloatTensor), isinstance(tidu.zeros(2), tidu.LongTensor)
(True, False)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .core import dtypes
from .core.device import CPU, as_device
from .tensor import _NO_DATA, Size, Tensor

_SIGNATURES = """ * (*, torch.device device = None)
 * (torch.Storage storage)
 * (Tensor other)
 * (tuple of ints size, *, torch.device device = None)
 * (object data, *, torch.device device = None)
"""


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    got = ", ".join([_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + _SIGNATURES)


def _type_name(value: Any) -> str:
    kind = type(value)
    return "tidu.dtype" if kind is dtypes.dtype else kind.__name__


def _options(dt: dtypes.dtype, device: Any) -> str:
    return (f"TensorOptions(dtype={dtypes.C_TYPES[dt.name]}, device={device}, layout=Strided, requires_grad=false "
            "(default), pinned_memory=false (default), memory_format=(nullopt))")


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def new(dt: dtypes.dtype | None, device: Any, args: tuple, kwargs: dict) -> Tensor:
    """The tensor that PyTorch's legacy constructor of type ``dt`` on ``device`` (``None``: the
    base ``Tensor``, of the default dtype, which takes a tensor of any dtype) makes of ``args``."""
    from .ops.creation import empty, tensor

    kwargs = dict(kwargs)
    where = kwargs.pop("device", None)
    if "size" in kwargs and not args:
        args = (Size(kwargs.pop("size")),)
    elif "data" in kwargs and not args:
        args = (kwargs.pop("data"),)
    if kwargs:
        raise _invalid(args, kwargs)
    place = device if where is None else as_device(where)
    want = dtypes.get_default_dtype() if dt is None else dt
    if not args:
        return empty(0, dtype=want, device=place)
    first = args[0]
    if all(_is_int(a) for a in args) or (len(args) == 1 and isinstance(first, Size)):
        sizes = tuple(first) if isinstance(first, Size) else args
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        return empty(sizes, dtype=want, device=place)
    if len(args) > 1:
        if _is_int(first):
            bad = next(a for a in args if not _is_int(a))
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {args.index(bad) + 1} with "
                            f"error \"type must be tuple of ints,but got {type(bad).__name__}\"")
        raise _invalid(args, kwargs)
    if isinstance(first, Tensor):
        if dt is not None and first.dtype is not dt or where is not None and first.device != place:
            raise TypeError(f"expected {_options(want, place)} (got {_options(first.dtype, first.device)})")
        return first.unsqueeze(0).squeeze(0)  # a new view of the same storage, as PyTorch's alias
    if isinstance(first, str):
        raise TypeError(f"new(): invalid data type '{type(first).__name__}'")
    if not isinstance(first, list | tuple | np.ndarray):
        raise TypeError(f"new(): data must be a sequence (got {type(first).__module__ + '.' if isinstance(first, np.generic) else ''}"
                        f"{type(first).__name__})")
    return tensor(first, dtype=want, device=place)


def legacy_init(self: Tensor, data: Any, dtype: Any, size: tuple, requires_grad: bool, device: Any,
                version: Any, kwargs: dict) -> None:
    """``Tensor.__init__`` for the legacy forms: build the tensor, then take its state."""
    args = () if data is _NO_DATA else (data,) if dtype is None and not size else (data, dtype, *size)
    if requires_grad is not False:
        kwargs = {**kwargs, "requires_grad": requires_grad}
    if version is not None:
        kwargs = {**kwargs, "_version": version}
    if device is not CPU:
        kwargs = {**kwargs, "device": device}
    out = new(None, CPU, args, kwargs)
    for slot in _STATE:
        setattr(self, slot, getattr(out, slot))


_STATE = [slot for slot in Tensor.__slots__ if slot != "__weakref__"]


class LegacyType(type):
    """The metaclass of ``FloatTensor`` and its kin: calling one makes a ``tidu.Tensor`` of its
    dtype; ``isinstance`` checks a tensor's dtype and device, as PyTorch's ``tensortype`` does."""

    dtype: dtypes.dtype
    is_cuda: bool

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        return new(cls.dtype, as_device("cuda") if cls.is_cuda else CPU, args, kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda == cls.is_cuda

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _types(cuda: bool, module: str) -> dict[str, LegacyType]:
    return {name: LegacyType(name, (), {"dtype": dtypes.as_dtype(dt), "is_cuda": cuda, "__module__": module,
                                        "__slots__": ()})
            for dt, name in dtypes.LEGACY_TYPES.items()}


TYPES = _types(False, "tidu")
CUDA_TYPES = _types(True, "tidu.cuda")


def tensor_new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """PyTorch's ``Tensor.new``: the legacy constructor of ``self``'s dtype and device.

    >>> import tidu
    >>> x = tidu.tensor([1, 2])
    >>> x.new([1.5, 2]), x.new(2, 3).shape, x.new().shape
    (tensor([1, 2]), tidu.Size([2, 3]), tidu.Size([0]))
    """
    return new(self.dtype, self.device, args, kwargs)
