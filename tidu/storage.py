"""Storages (PyTorch's ``Tensor.untyped_storage()`` and the older ``Tensor.storage()``): read-only
handles to the memory a tensor and its views share, for the checks scripts make with them (do
two tensors share memory, how many bytes, the raw contents). tidu's storage is the array that owns
the memory (a numpy array, or a ``CudaArray`` on the GPU); writing or resizing through a storage
is not there.

>>> import tidu
>>> x = tidu.arange(6.0).reshape(2, 3)
>>> x[1].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
True
>>> x.untyped_storage().nbytes()
24
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .backends.layout import storage as _owner


class UntypedStorage:
    """The bytes of a tensor's memory."""

    def __init__(self, array: Any, device: Any) -> None:
        self._array = _owner(array)
        self.device = device

    def data_ptr(self) -> int:
        from .ops.metadata import _address

        return _address(self._array)

    def nbytes(self) -> int:
        return int(self._array.nbytes)

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    def is_shared(self) -> bool:
        return False

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def _bytes(self) -> np.ndarray:
        host = self._array.copy_to_host() if self.is_cuda else self._array
        return np.ascontiguousarray(host).reshape(-1).view(np.uint8)

    def tolist(self) -> list[int]:
        return self._bytes().tolist()

    def __getitem__(self, index: Any) -> Any:
        values = self._bytes()[index]
        return int(values) if np.ndim(values) == 0 else values.tolist()

    def __eq__(self, other: object) -> bool:  # one memory, one storage
        return isinstance(other, UntypedStorage) and other._array is self._array

    def __hash__(self) -> int:
        return id(self._array)

    def __repr__(self) -> str:
        return f"tidu.storage.UntypedStorage(device={self.device}) of size {self.nbytes()}"


_TYPED_WARNED = False


class TypedStorage:
    """The elements of a tensor's memory, of its dtype (PyTorch's deprecated ``Tensor.storage()``)."""

    def __init__(self, array: Any, dtype: Any, device: Any) -> None:
        global _TYPED_WARNED
        if not _TYPED_WARNED:
            _TYPED_WARNED = True
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                          "only storage class. To access UntypedStorage directly, use tensor.untyped_storage() instead "
                          "of tensor.storage()", UserWarning, stacklevel=4)
        self._untyped = UntypedStorage(array, device)
        self.dtype = dtype
        self.device = device

    def untyped(self) -> UntypedStorage:
        return self._untyped

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped.nbytes()

    def size(self) -> int:
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def _values(self) -> np.ndarray:
        from .tensor import Tensor

        raw = self._untyped._bytes().view(self.dtype.np)
        if self.dtype.is_half:  # bfloat16's bits, widened through tidu's conversion
            return Tensor(raw, self.dtype).float()._host()
        return raw

    def tolist(self) -> list:
        return self._values().tolist()

    def __getitem__(self, index: Any) -> Any:
        values = self._values()[index]
        return values.item() if np.ndim(values) == 0 else values.tolist()

    def __repr__(self) -> str:
        body = "\n".join(f" {v}" for v in self.tolist())
        return f"{body}\n[tidu.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size {self.size()}]"


def untyped_storage(tensor: Any) -> UntypedStorage:
    """``tensor.untyped_storage()``: the storage it shares with its views."""
    return UntypedStorage(tensor._data, tensor.device)


def typed_storage(tensor: Any) -> TypedStorage:
    """``tensor.storage()``: its storage as elements of its dtype (deprecated in PyTorch; it warns)."""
    return TypedStorage(tensor._data, tensor.dtype, tensor.device)
