"""DLPack exchange with other array libraries (numpy, PyTorch, JAX, CuPy): ``from_dlpack`` and
``to_dlpack``, zero-copy for host memory. CUDA tensors are exchanged through
``__cuda_array_interface__`` instead (``tidu.as_tensor`` reads it; ``from_dlpack`` uses it when
a CUDA producer has it)."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.deferred import expose
from ..tensor import Tensor

__all__ = ["from_dlpack", "to_dlpack"]

_CPU, _CUDA, _CUDA_MANAGED = 1, 2, 13


class _Capsule:
    """A legacy ``"dltensor"`` capsule as a DLPack producer on the host (numpy reads only those)."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_CPU, 0)


def _capsule_device(capsule: Any) -> int:
    """The DLPack device type of a legacy capsule (``DLManagedTensor``: the data pointer, then the device)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    valid = ctypes.pythonapi.PyCapsule_IsValid
    valid.restype, valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    if not valid(capsule, b"dltensor"):
        raise RuntimeError("from_dlpack: expected a DLPack capsule named 'dltensor' that was not consumed yet")
    return ctypes.c_int32.from_address(get(capsule, b"dltensor") + ctypes.sizeof(ctypes.c_void_p)).value


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with ``ext_tensor``: any object with ``__dlpack__`` (a numpy array,
    a PyTorch or JAX array) or a DLPack capsule (``torch.utils.dlpack.to_dlpack``'s).

    >>> import numpy as np, tidu
    >>> a = np.arange(3.0)
    >>> t = tidu.from_dlpack(a)
    >>> a[0] = 7.0
    >>> t
    tensor([7., 1., 2.], dtype=tidu.float64)
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor.detach()
    if type(ext_tensor).__name__ == "PyCapsule":
        device = _capsule_device(ext_tensor)
        producer: Any = _Capsule(ext_tensor)
    elif hasattr(ext_tensor, "__dlpack__"):
        device = int(ext_tensor.__dlpack_device__()[0])
        producer = ext_tensor
    else:
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    if device in (_CUDA, _CUDA_MANAGED):
        if hasattr(ext_tensor, "__cuda_array_interface__"):
            from ..ops.creation import as_tensor

            return as_tensor(ext_tensor)
        raise RuntimeError("from_dlpack: tidu reads CUDA memory through __cuda_array_interface__, which this "
                           f"{type(ext_tensor).__name__} does not have")
    if device != _CPU:
        raise RuntimeError(f"from_dlpack: unsupported DLPack device type {device} (tidu has CPU and CUDA)")
    array = np.from_dlpack(producer)
    found = dtypes.from_numpy_dtype(array.dtype)  # tidu's dtypes only: a clear error for others
    expose(array)  # the producer may write it at any time
    return Tensor(array, found)


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of ``tensor``'s memory (host tensors), for ``from_dlpack`` elsewhere.

    >>> import numpy as np, tidu
    >>> capsule = tidu.utils.dlpack.to_dlpack(tidu.ones(2))
    >>> type(capsule).__name__
    'PyCapsule'
    """
    return tensor.__dlpack__()
