"""``tidu.testing.assert_close``: PyTorch's closeness check for tensors, numbers and their
sequences and mappings.

>>> import tidu
>>> tidu.testing.assert_close(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 2.0 + 1e-7]))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..tensor import Size, Tensor

__all__ = ["assert_close"]

# PyTorch's default tolerances by dtype (rtol, atol); exact for integers and bool
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def _as_array(x: Any) -> tuple[np.ndarray, Any]:
    if isinstance(x, Tensor):
        return x._values(), x.dtype  # a bfloat16 tensor's widened (its storage holds bits)
    return np.asarray(x), None


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise ``AssertionError`` unless ``|actual - expected| <= atol + rtol * |expected|`` everywhere,
    with the same shapes (and dtypes and devices, unless told not to check them). The default
    tolerances are PyTorch's for the dtype; give both ``rtol`` and ``atol`` or neither.

    >>> import tidu
    >>> tidu.testing.assert_close(tidu.tensor([1.0]), tidu.tensor([1.1]))
    Traceback (most recent call last):
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 1 (100.0%)
    Greatest absolute difference: 0.10000002384185791 at index (0,) (up to 1e-05 allowed)
    Greatest relative difference: 0.09090910851955414 at index (0,) (up to 1.3e-06 allowed)
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(msg or f"The keys of the mappings do not match: {sorted(map(str, actual))} and "
                                        f"{sorted(map(str, expected))}")
        for key in expected:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(expected, Sequence) and not isinstance(expected, str) and isinstance(actual, Sequence) \
            and not isinstance(actual, str) and not isinstance(expected, Tensor):
        if len(actual) != len(expected):
            raise AssertionError(msg or f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                         check_dtype=check_dtype, msg=msg)
        return
    a, a_dtype = _as_array(actual)
    e, e_dtype = _as_array(expected)
    if isinstance(actual, Tensor) != isinstance(expected, Tensor):
        raise AssertionError(msg or f"Comparing a {type(actual).__name__} with a {type(expected).__name__}")
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {Size(a.shape)} != "
                                    f"{Size(e.shape)}.")
    if isinstance(actual, Tensor):
        if check_dtype and a_dtype is not e_dtype:
            raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {a_dtype} != {e_dtype}.")
        if check_device and actual.device != expected.device:
            raise AssertionError(msg or f"The values for attribute 'device' do not match: {actual.device} != "
                                        f"{expected.device}.")
    exact = e.dtype.kind not in "fc"
    if rtol is None:
        rtol, atol = _TOLERANCES.get((e_dtype.name if e_dtype is not None else e.dtype.name), (0.0, 0.0))
    work = np.float64 if exact else e.dtype
    a_w, e_w = a.astype(work), e.astype(work)
    close = np.isclose(a_w, e_w, rtol=rtol, atol=atol, equal_nan=equal_nan) | (a_w == e_w)
    if close.all():
        return
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.where(close, 0, np.abs(a_w - e_w))
        rel = np.where(close, 0, diff / np.abs(e_w))
    if exact:  # PyTorch divides integers in float32
        rel = rel.astype(np.float32)

    def worst(values: np.ndarray) -> tuple:
        flat = values.reshape(-1)
        at = int(np.flatnonzero(np.isnan(flat))[0]) if np.isnan(flat).any() else int(np.argmax(flat))
        return flat[at], tuple(int(i) for i in np.unravel_index(at, values.shape))

    (d, d_at), (r, r_at) = worst(diff), worst(rel)
    bad = int((~close).sum())
    if exact:
        text = (f"Tensor-likes are not equal!\n\nMismatched elements: {bad} / {close.size} ({100 * bad / close.size:.1f}%)\n"
                f"Greatest absolute difference: {int(d)} at index {d_at}\nGreatest relative difference: {r} at index "
                f"{r_at}")
    else:
        text = (f"Tensor-likes are not close!\n\nMismatched elements: {bad} / {close.size} ({100 * bad / close.size:.1f}%)\n"
                f"Greatest absolute difference: {d} at index {d_at} (up to {atol} allowed)\n"
                f"Greatest relative difference: {r} at index {r_at} (up to {rtol} allowed)")
    raise AssertionError(msg or text)


# PyTorch's default ranges of make_tensor: floats in [-9, 9), integers in [-9, 10), uint8 in [0, 10)
_DEFAULT_RANGE = (-9, 9)


def make_tensor(*shape: Any, dtype: Any, device: Any, low: float | None = None, high: float | None = None,
                requires_grad: bool = False, noncontiguous: bool = False, exclude_zero: bool = False,
                memory_format: Any = None) -> Tensor:
    """A tensor of ``shape`` filled with values drawn uniformly from ``[low, high)`` (integers:
    ``[low, high)`` too; bool: either value), as PyTorch's test helper: ``low``/``high`` default to
    -9/9 for floats and -9/10 for integers (0/10 for uint8), clamped to the dtype;
    ``exclude_zero`` replaces zeros (by the smallest normal number, or 1 for integers);
    ``noncontiguous`` gives the same values in a strided view.

    >>> import tidu
    >>> t = tidu.testing.make_tensor(2, 3, dtype=tidu.float32, device="cpu", low=-1, high=1)
    >>> t.shape, bool((t >= -1).all() and (t < 1).all())
    (tidu.Size([2, 3]), True)
    """
    from .. import ops
    from ..core import dtypes
    from ..core.formats import check_memory_format
    from ..ops.creation import _stream

    size = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else tuple(shape)
    dt = dtypes.as_dtype(dtype)
    for bound in (low, high):
        if bound is not None and math.isnan(bound):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    stream = _stream(None)
    if dt is dtypes.bool_:
        values = np.ones(size, np.bool_) if exclude_zero else stream.integers(0, 2, size).astype(np.bool_)
    elif dt.is_floating_point:
        lo, hi = _bounds(low, high, _DEFAULT_RANGE, float(np.finfo(np.float32 if dt.is_half else dt.np).min),
                         float(np.finfo(np.float32 if dt.is_half else dt.np).max))
        values = stream.uniform(lo, hi, size)
        if exclude_zero:
            values[values == 0] = float(np.finfo(np.float16 if dt is dtypes.float16 else
                                                 np.float32 if dt.is_half else dt.np).tiny)
    else:
        info = np.iinfo(dt.np)
        lo, hi = _bounds(low, high, (0, 10) if dt is dtypes.uint8 else (-9, 10), info.min, info.max)
        values = stream.integers(math.ceil(lo), math.ceil(hi), size, dtype=np.int64, endpoint=False)
        if exclude_zero:
            values[values == 0] = 1
    t = ops.tensor(values, dtype=dt, device=device)
    if memory_format is not None:
        check_memory_format(memory_format, t.ndim, "make_tensor")
    if noncontiguous and t.numel() > 1:
        t = ops.repeat_interleave(t, 2, dim=-1)[..., ::2]
    if requires_grad:
        if not dt.is_floating_point:
            raise RuntimeError("Only Tensors of floating point dtype can require gradients")
        t.requires_grad_(True)
    return t


def _bounds(low: float | None, high: float | None, default: tuple, smallest: float, largest: float) -> tuple:
    lo = default[0] if low is None else low
    hi = default[1] if high is None else high
    if lo >= hi:
        raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
    return max(lo, smallest), min(hi, largest)


__all__ += ["make_tensor"]
