"""dtypes and PyTorch's type promotion (dimensioned tensors > 0-d tensors > Python scalars)."""

from __future__ import annotations

from typing import Any

import numpy as np


class dtype:  # noqa: N801 - PyTorch's name
    """A tensor element type (``tidu.float32``, ``tidu.int64``, ...)."""

    __slots__ = ("name", "np", "rank", "is_floating_point", "itemsize", "is_signed", "is_half")
    is_complex = False

    def __init__(self, name: str, np_dtype: Any, rank: int, is_floating_point: bool) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.rank = rank
        self.is_floating_point = is_floating_point
        self.itemsize = self.np.itemsize
        self.is_signed = name not in ("bool", "uint8")
        self.is_half = name in ("float16", "bfloat16")  # stored in 16 bits, computed in float32

    @property
    def category(self) -> int:
        """0 bool, 1 integer, 2 floating point."""
        return 2 if self.is_floating_point else (0 if self.name == "bool" else 1)

    def __repr__(self) -> str:
        return f"tidu.{self.name}"

    def __reduce__(self) -> str:
        return self.name


bool_ = dtype("bool", np.bool_, 0, False)
uint8 = dtype("uint8", np.uint8, 1, False)
int8 = dtype("int8", np.int8, 1, False)
int16 = dtype("int16", np.int16, 2, False)
int32 = dtype("int32", np.int32, 3, False)
int64 = dtype("int64", np.int64, 4, False)
# Note [half precision]: float16 stores numpy float16 arrays; bfloat16 (float32's upper 16 bits)
# stores its bits in uint16 arrays, numpy having no bfloat16. Kernels compute both in float32 and
# round each result once (tidu/core/half.py), as PyTorch's CPU kernels do.
float16 = dtype("float16", np.float16, 5, True)
bfloat16 = dtype("bfloat16", np.uint16, 5, True)
float32 = dtype("float32", np.float32, 6, True)
float64 = dtype("float64", np.float64, 7, True)
ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
HALF = (float16, bfloat16)
FLOATS = (float16, bfloat16, float32, float64)
INTEGERS = (uint8, int8, int16, int32, int64)  # without bool
SMALL_INTEGERS = (uint8, int8, int16)  # the integer dtypes narrower than int32
NUMERIC = (*INTEGERS, *FLOATS)
_BY_NP = {d.np: d for d in ALL if d is not bfloat16}  # a uint16 array is no bfloat16 tensor
_BY_NAME = {d.name: d for d in ALL} | {"bool_": bool_, "float": float32, "double": float64, "long": int64, "int": int32,
                                       "short": int16, "half": float16}


TORCH_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
               "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double"}


def _promote(a: dtype, b: dtype) -> dtype:
    if a.is_floating_point or b.is_floating_point:  # a float wins over any integer, as in PyTorch
        if a.is_floating_point and b.is_floating_point:
            if a.rank == b.rank and a is not b:  # float16 with bfloat16: neither holds the other
                return float32
            return a if a.rank >= b.rank else b
        return a if a.is_floating_point else b
    return _BY_NP[np.promote_types(a.np, b.np)]  # bool < integers; uint8 with int8 is int16


_PROMOTE = {(a, b): _promote(a, b) for a in ALL for b in ALL}


def not_implemented(kernel: str, dt: dtype) -> NotImplementedError:
    """PyTorch's error for a kernel that has no ``dt`` version, naming PyTorch's kernel.

    >>> from tidu.core import dtypes
    >>> print(dtypes.not_implemented("softmax_lastdim_kernel_impl", dtypes.int64))
    "softmax_lastdim_kernel_impl" not implemented for 'Long'
    """
    return NotImplementedError(f'"{kernel}" not implemented for \'{TORCH_NAMES[dt.name]}\'')


C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "long",
           "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}
# the largest finite value of each floating dtype (``fits``)
FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
             "float64": 1.7976931348623157e308}
# PyTorch's legacy tensor type names ('torch.ByteTensor'), which ``Tensor.type()`` returns and messages use
LEGACY_TYPES = {"float16": "HalfTensor", "bfloat16": "BFloat16Tensor", "float32": "FloatTensor", "float64": "DoubleTensor", "int64": "LongTensor", "int32": "IntTensor",
                "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}
# the C type names other PyTorch messages use ("... got mask with dtype unsigned char")
C_TYPES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
           "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
           "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def fits(value: Any, dt: dtype) -> bool:
    """Whether PyTorch converts the number ``value`` to ``dt`` without an overflow error
    (c10's ``overflows``): integer dtypes take values in their range, and an unsigned one also
    takes negative integers down to ``-max`` (two's complement: ``-1`` is 255 in uint8).

    >>> from tidu.core import dtypes
    >>> dtypes.fits(-1, dtypes.uint8), dtypes.fits(-1.0, dtypes.uint8), dtypes.fits(128, dtypes.int8)
    (True, False, False)
    >>> dtypes.fits(65520.0, dtypes.float16), dtypes.fits(float("inf"), dtypes.float16)  # float16's largest is 65504
    (False, True)
    """
    if dt is bool_ or isinstance(value, bool | np.bool_):
        return True
    if dt.is_floating_point:  # inf and NaN fit; a finite number beyond the largest finite value does not
        try:
            v = float(value)
        except OverflowError:  # an int beyond every float
            return False
        except TypeError:  # not a real number: the conversion's own error says so
            return True
        return v != v or abs(v) == float("inf") or abs(v) <= FLOAT_MAX[dt.name]
    if dt is int64 and isinstance(value, int | np.integer):
        return True  # beyond int64 numpy's OverflowError says it, as PyTorch's own error does
    info = np.iinfo(dt.np)
    if isinstance(value, float | np.floating):
        return info.min <= value <= info.max  # NaN and inf fail
    if info.min == 0 and value < 0:
        return -value <= info.max
    return info.min <= value <= info.max


def check_fits(value: Any, dt: dtype, name: str | None = None) -> None:
    """PyTorch's error for a number that ``dt`` cannot hold; ``name`` is the type's name in it
    (``tensor()`` names the dtype, ``full``/``fill_`` the C type).

    >>> from tidu.core import dtypes
    >>> dtypes.check_fits(300, dtypes.uint8)
    Traceback (most recent call last):
    ...
    RuntimeError: value cannot be converted to type uint8_t without overflow
    """
    if not fits(value, dt):
        raise RuntimeError(f"value cannot be converted to type {name or C_NAMES[dt.name]} without overflow")


def wrap(value: Any, dt: dtype) -> Any:
    """A Python integer as an integer dtype holds it, wrapped modulo ``2**bits`` as PyTorch casts
    the scalar operand of an op (``uint8`` 250 + 300 is 38); other values unchanged.

    >>> from tidu.core import dtypes
    >>> dtypes.wrap(300, dtypes.uint8), dtypes.wrap(200, dtypes.int8), dtypes.wrap(5, dtypes.int8)
    (44, -56, 5)
    """
    if dt.is_floating_point or dt is bool_ or not isinstance(value, int | np.integer) or isinstance(value, bool):
        return value
    info = np.iinfo(dt.np)
    if info.min <= value <= info.max:
        return value
    if not -(1 << 63) <= value < (1 << 64):
        raise OverflowError("int too big to convert")  # PyTorch's: a scalar must fit 64 bits
    return (int(value) - int(info.min)) % (1 << int(info.bits)) + int(info.min)


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
    """The smallest dtype both ``a`` and ``b`` convert to, PyTorch's table: bool < integers <
    float16, bfloat16 < float32 < float64; among integers the wider wins, ``uint8`` with ``int8``
    gives ``int16``, and ``float16`` with ``bfloat16`` gives ``float32``.

    >>> from tidu.core import dtypes
    >>> dtypes.promote_types(dtypes.uint8, dtypes.int8), dtypes.promote_types(dtypes.int64, dtypes.float32)
    (tidu.int16, tidu.float32)
    >>> dtypes.promote_types(dtypes.float16, dtypes.bfloat16), dtypes.promote_types(dtypes.int64, dtypes.bfloat16)
    (tidu.float32, tidu.bfloat16)
    """
    return _PROMOTE[a, b]


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


def to_float32(array: Any, dt: dtype) -> np.ndarray:
    """The values of a host ``array`` that stores ``dt`` (Note [half precision]) as float32:
    exact for ``float16`` and ``bfloat16`` (a bfloat16 is a float32 with its low 16 bits zero).

    >>> import numpy as np
    >>> from tidu.core import dtypes
    >>> dtypes.to_float32(np.array([0x3F80, 0xC040], np.uint16), dtypes.bfloat16)
    array([ 1., -3.], dtype=float32)
    """
    if dt is bfloat16:
        return np.asarray(np.asarray(array).astype(np.uint32) << 16).view(np.float32)
    return np.asarray(array).astype(np.float32)


def cast(values: Any, dt: dtype) -> np.ndarray:
    """Host ``values`` (any numeric numpy array or number) as an array storing ``dt``. A half
    dtype takes them through float32 and rounds to nearest even once there, as PyTorch converts
    (so a float64 is rounded twice, as in PyTorch); bfloat16 keeps inf and makes every NaN
    PyTorch's ``0x7FC0``.

    >>> import numpy as np
    >>> from tidu.core import dtypes
    >>> [hex(b) for b in dtypes.cast(np.array([1.0, 1.00390625, 1.01171875, np.nan]), dtypes.bfloat16)]
    ['0x3f80', '0x3f80', '0x3f82', '0x7fc0']
    """
    with np.errstate(over="ignore"):  # beyond the dtype's range is inf, as PyTorch converts
        return _cast(values, dt)


def _cast(values: Any, dt: dtype) -> np.ndarray:
    if dt is bfloat16:
        f = np.asarray(values).astype(np.float32)
        bits = f.view(np.uint32)
        out = np.asarray((bits + ((bits >> 16) & 1) + np.uint32(0x7FFF)) >> 16).astype(np.uint16)
        nan = np.isnan(f)
        if nan.any():
            out[nan] = 0x7FC0
        return out
    if dt is float16:
        return np.asarray(values).astype(np.float32).astype(np.float16)
    return np.asarray(values).astype(dt.np)
