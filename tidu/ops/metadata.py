"""What a tensor is, as PyTorch reports it: ``is_tensor``, ``numel``, strides, offsets, sizes in
bytes, ``finfo``/``iinfo``. Strides and offsets count elements, as PyTorch's do (numpy's count
bytes); a view reports its place in the storage it shares.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.layout import storage
from ..core import dtypes
from ..core.aval import wrap_dim
from ..tensor import Tensor

__all__ = ["can_cast", "finfo", "get_device", "iinfo", "is_floating_point", "is_inference", "is_nonzero", "is_same_size",
           "is_signed", "is_storage", "is_tensor", "numel", "result_type", "typename"]


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a tidu tensor (a ``Parameter`` is one).

    >>> import tidu
    >>> tidu.is_tensor(tidu.ones(1)), tidu.is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s dtype is a floating-point one.

    >>> import tidu
    >>> tidu.is_floating_point(tidu.ones(1)), tidu.is_floating_point(tidu.arange(2))
    (True, False)
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"is_floating_point(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.dtype.is_floating_point


def numel(input: Tensor) -> int:  # noqa: A002
    """The number of elements of ``input``.

    >>> import tidu
    >>> tidu.numel(tidu.zeros(2, 3))
    6
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"numel(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.numel()


def _tensor_argument(x: Any, op: str, name: str, position: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")


def is_inference(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input`` is an inference tensor: never in tidu, whose ``inference_mode`` makes
    ordinary tensors (docs/guides/pytorch-differences.md).

    >>> import tidu
    >>> with tidu.inference_mode():
    ...     x = tidu.ones(1)
    >>> tidu.is_inference(x)
    False
    """
    _tensor_argument(input, "is_inference", "input", 1)
    return False


def get_device(input: Tensor) -> int:  # noqa: A002
    """The GPU's index for a CUDA tensor, ``-1`` for a CPU one (``input.get_device()``).

    >>> import tidu
    >>> tidu.get_device(tidu.ones(1))
    -1
    """
    _tensor_argument(input, "get_device", "input", 1)
    return _get_device(input)


def typename(obj: Any) -> str:
    """A tensor's legacy type name (``'torch.FloatTensor'``, as ``Tensor.type()``), else the
    dotted name of ``obj``'s class or of ``obj`` itself (PyTorch's ``torch.typename``).

    >>> import tidu
    >>> tidu.typename(tidu.ones(1)), tidu.typename(1.5), tidu.typename(tidu.nn.Linear)
    ('torch.FloatTensor', 'float', 'tidu.nn.modules.linear.Linear')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        name = obj.__qualname__
    elif hasattr(obj, "__name__"):
        name = obj.__name__
    else:
        module, name = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage object: tidu exposes none (a tensor's storage is its array),
    so ``False``.

    >>> import tidu
    >>> tidu.is_storage(tidu.ones(1))
    False
    """
    return False


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether the one element of ``input`` is not zero (PyTorch's errors for more or none).

    >>> import tidu
    >>> tidu.is_nonzero(tidu.tensor([0.5])), tidu.is_nonzero(tidu.tensor(False))
    (True, False)
    """
    _tensor_argument(input, "is_nonzero", "input", 1)
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """Whether the two tensors have the same shape.

    >>> import tidu
    >>> tidu.is_same_size(tidu.zeros(2, 3), tidu.ones(2, 3)), tidu.zeros(2).is_same_size(tidu.zeros(3))
    (True, False)
    """
    _tensor_argument(input, "is_same_size", "input", 1)
    _tensor_argument(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input: Tensor) -> bool:  # noqa: A002
    """Whether ``input``'s dtype is signed: all but ``bool`` and ``uint8``.

    >>> import tidu
    >>> tidu.is_signed(tidu.ones(1)), tidu.is_signed(tidu.ones(1, dtype=tidu.uint8))
    (True, False)
    """
    _tensor_argument(input, "is_signed", "input", 1)
    return input.dtype.is_signed


def result_type(tensor1: Any, tensor2: Any) -> dtypes.dtype:
    """The dtype an arithmetic op on the two operands (tensors or numbers) would give.

    >>> import tidu
    >>> tidu.result_type(tidu.tensor([1, 2]), 1.0), tidu.result_type(tidu.tensor([1]), tidu.tensor([1.0], dtype=tidu.float64))
    (tidu.float32, tidu.float64)
    >>> tidu.result_type(tidu.tensor([1], dtype=tidu.uint8), tidu.tensor([1], dtype=tidu.int8))
    tidu.int16
    """
    return dtypes.result_type(tensor1, tensor2)


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's type promotion casts ``from_`` to ``to``: never to a lower category
    (floating point to integer, anything but bool to bool); within a category, always.

    >>> import tidu
    >>> tidu.can_cast(tidu.float64, tidu.float32), tidu.can_cast(tidu.float32, tidu.int32)
    (True, False)
    """
    return dtypes.as_dtype(from_).category <= dtypes.as_dtype(to).category


def _address(array: Any) -> int:
    return array.ctypes.data if type(array) is np.ndarray else array.ptr


def _stride(self: Tensor, dim: int | None = None) -> Any:
    """Steps between neighbours along each dimension, in elements (``dim``: one dimension's).

    >>> import tidu
    >>> x = tidu.zeros(2, 3)
    >>> x.stride(), x.t().stride(), x.expand(4, 2, 3).stride(0)
    ((3, 1), (1, 3), 0)
    """
    buf = self._buf
    steps = tuple(s // buf.dtype.itemsize for s in buf.strides)
    return steps if dim is None else steps[wrap_dim(dim, buf.ndim)]


def _storage_offset(self: Tensor) -> int:
    """Where the tensor starts in the storage it shares, in elements.

    >>> import tidu
    >>> tidu.arange(6).reshape(2, 3)[1:, 1].storage_offset()
    4
    """
    buf = self._buf
    return (_address(buf) - _address(storage(buf))) // buf.dtype.itemsize


def _data_ptr(self: Tensor) -> int:
    """The address of the first element (host or device memory)."""
    return _address(self._data)


def _get_device(self: Tensor) -> int:
    """The GPU's index for a CUDA tensor, ``-1`` for a CPU one.

    >>> import tidu
    >>> tidu.ones(1).get_device()
    -1
    """
    return -1 if self._device.type == "cpu" else (self._device.index or 0)


class finfo:  # noqa: N801 - PyTorch's name
    """Limits of a floating-point dtype (the default dtype when none is given).

    >>> import tidu
    >>> tidu.finfo(tidu.float32).eps, tidu.finfo().bits
    (1.1920928955078125e-07, 32)
    >>> tidu.finfo(tidu.float16).max, tidu.finfo(tidu.bfloat16).eps
    (65504.0, 0.0078125)
    """

    def __init__(self, type: dtypes.dtype | None = None) -> None:  # noqa: A002 - PyTorch's name
        dt = dtypes.get_default_dtype() if type is None else dtypes.as_dtype(type)
        if not dt.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        self.dtype = dt.name
        if dt is dtypes.bfloat16:  # numpy has no bfloat16: float32's range with 8 significant bits
            self.bits, self.eps, self.tiny, self.resolution = 16, 2.0**-7, 2.0**-126, 0.01
            self.max = float.fromhex("0x1.FEp127")
            self.min = -self.max
            self.smallest_normal = self.tiny
            return
        info = np.finfo(dt.np)
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's name
    """Limits of an integer dtype.

    >>> import tidu
    >>> tidu.iinfo(tidu.int32).max, tidu.iinfo(tidu.int64).bits
    (2147483647, 64)
    """

    def __init__(self, type: dtypes.dtype) -> None:  # noqa: A002 - PyTorch's name
        dt = dtypes.as_dtype(type)
        if dt.is_floating_point:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if dt is dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(dt.np)
        self.bits, self.dtype = int(info.bits), dt.name
        self.max, self.min = int(info.max), int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


METHODS: dict = {}
# methods that read a tensor's array (not a ``Var``'s, inside ``vmap``)
def _dim_order(self: Any) -> tuple[int, ...]:
    """The dims from the largest stride to the smallest (ties in order): PyTorch's ``dim_order()``."""
    strides = self.stride()
    return tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))


TENSOR_METHODS = {
    "stride": _stride,
    "dim_order": _dim_order,
    "storage_offset": _storage_offset,
    "data_ptr": _data_ptr,
    "get_device": _get_device,
    "nelement": lambda self: self.numel(),
    "ndimension": lambda self: self.ndim,
    "nbytes": property(lambda self: self.numel() * self.dtype.itemsize),
    "itemsize": property(lambda self: self.dtype.itemsize),
    "is_signed": is_signed,
    "is_nonzero": is_nonzero,
    "is_same_size": is_same_size,
    "is_inference": is_inference,
    # the layouts and backends tidu has none of (strided dense tensors on 'cpu' or 'cuda' only): read by
    # library code that branches on them (``if x.is_sparse: ...``)
    **{name: property(lambda self: False) for name in (
        "is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_nested", "is_mkldnn", "is_mps", "is_xla",
        "is_xpu", "is_vulkan", "is_ipu", "is_maia", "is_mtia")},
}
