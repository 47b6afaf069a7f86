"""dtypes and PyTorch's type promotion (dimensioned tensors > 0-d tensors > Python scalars)."""

from __future__ import annotations

from typing import Any

import numpy as np


class dtype:  # noqa: N801 - PyTorch's name
    """A tensor element type (``tidu.float32``, ``tidu.int64``, ...)."""

    __slots__ = ("name", "np", "rank", "is_floating_point", "itemsize")

    def __init__(self, name: str, np_dtype: Any, rank: int, is_floating_point: bool) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.rank = rank
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize

    @property
    def category(self) -> int:
        """0 bool, 1 integer, 2 floating point."""
        return 2 if self.is_floating_point else (0 if self.name == "bool" else 1)

    def __repr__(self) -> str:
        return f"tidu.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool_ = dtype("bool", np.bool_, 0, False)
int32 = dtype("int32", np.int32, 1, False)
int64 = dtype("int64", np.int64, 2, False)
float32 = dtype("float32", np.float32, 3, True)
float64 = dtype("float64", np.float64, 4, True)
ALL = (bool_, int32, int64, float32, float64)
FLOATS = (float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL} | {"bool_": bool_, "float": float32, "double": float64, "long": int64, "int": int32}


TORCH_NAMES = {"bool": "Bool", "int32": "Int", "int64": "Long", "float32": "Float", "float64": "Double"}


def not_implemented(kernel: str, dt: dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no ``dt`` version, naming PyTorch's kernel.

    >>> from tidu.core import dtypes
    >>> print(dtypes.not_implemented("softmax_lastdim_kernel_impl", dtypes.int64))
    "softmax_lastdim_kernel_impl" not implemented for 'Long'
    """
    return NotImplementedError(f'"{kernel}" not implemented for \'{TORCH_NAMES[dt.name]}\'')


def from_numpy_dtype(np_dtype: Any) -> dtype:
    found = _BY_NP.get(np.dtype(np_dtype))
    if found is None:
        supported = ", ".join(d.name for d in ALL)
        raise TypeError(f"can't convert numpy array of type {np.dtype(np_dtype)}; tidu supports {supported}")
    return found


def as_dtype(value: Any) -> dtype:
    """``tidu.float32``, ``'float32'``, ``np.float32`` or Python ``float``/``int``/``bool``."""
    if isinstance(value, dtype):
        return value
    if value is float:
        return get_default_dtype()
    if value is int:
        return int64
    if value is bool:
        return bool_
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        return from_numpy_dtype(value)
    except TypeError:
        raise TypeError(f"unsupported dtype {value!r}") from None


class _DefaultDtype:
    value: dtype = float32


_default = _DefaultDtype()  # global, as PyTorch's is


def get_default_dtype() -> dtype:
    """The dtype of floating-point tensors made from Python floats (``float32`` unless set).

    >>> import tidu
    >>> tidu.get_default_dtype()
    tidu.float32
    """
    return _default.value


def set_default_dtype(d: dtype) -> None:
    """Set the dtype Python floats become (``tidu.float32`` or ``tidu.float64`` only).

    >>> import tidu
    >>> tidu.set_default_dtype(tidu.float64); tidu.tensor([1.5]).dtype
    tidu.float64
    >>> tidu.set_default_dtype(tidu.float32)
    """
    if not isinstance(d, dtype):
        raise TypeError(f"set_default_dtype(): argument 'd' must be tidu.dtype, not {type(d).__name__}")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to (bool < int32 < int64 < float32 < float64)."""
    return a if a.rank >= b.rank else b


def scalar_dtype(value: Any) -> dtype:
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return get_default_dtype()
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    if higher is None:
        return lower
    if lower is None or higher.is_floating_point:
        return higher
    if higher is bool_ or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> dtype:
    """PyTorch's ``torch.result_type`` over tensors and Python scalars.

    A Python scalar or 0-d tensor changes the result only when it is of a higher
    category (bool < integer < floating point) than the dimensioned tensors.
    """
    dims = zeros = scalars = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim > 0:
                dims = d if dims is None else promote_types(dims, d)
            else:
                zeros = d if zeros is None else promote_types(zeros, d)
        else:
            s = scalar_dtype(x)
            scalars = s if scalars is None else promote_types(scalars, s)
    out = _combine(dims, _combine(zeros, scalars))
    if out is None:
        raise TypeError("result_type needs at least one operand")
    return out
