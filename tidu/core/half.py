"""float16 and bfloat16 kernels: every primitive's float32 kernel, on widened operands.

Note [half precision]: Numba compiles no float16 on the CPU and numpy has no bfloat16, so no
kernel computes in either. A call that reads or makes a half value (``float16``, or ``bfloat16``
stored as the upper 16 bits of a float32 in a uint16 array: tidu/core/dtypes.py) runs the
primitive's own kernel on its half operands widened to float32 (exact), with any half dtype in
its params read as float32, and rounds each half output once to nearest even: what PyTorch's
CPU kernels do (they load half, compute in float, store half). ``kernel`` gives that function;
``core/dispatch.py`` keeps it in the call's signature entry, so it is chosen once per signature
and float32 and float64 calls never look at it. The AD rules see half avals and bind primitives
like any other code, so their calls are widened the same way.

Primitives that only move elements (the views, ``device_put``, ``literal``: ``moves_elements``)
run on the half storage itself, so a view of a half tensor stays a view. The forward's fusion
and the compiled backward's leave half calls out (``fusion._kind``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import dtypes
from .aval import ShapeDtype


def kernel(prim: Any, device: str, in_avals: Sequence[ShapeDtype], out_avals: Sequence[ShapeDtype]) -> Callable | None:
    """The kernel of ``prim`` for calls on ``in_avals`` making ``out_avals`` where any of them is
    of a half dtype (float32 inside, rounded once at the end); ``None`` for the others, and for a
    primitive that only moves elements (its own kernel runs on the half storage).

    >>> import numpy as np, tidu
    >>> from tidu.core import half
    >>> from tidu.primitives.elementwise import exp
    >>> x = tidu.ShapeDtype((2,), tidu.float16)
    >>> run = half.kernel(exp, "cpu", [x], [x])
    >>> run(np.array([0.0, 1.0], np.float16))
    array([1.   , 2.719], dtype=float16)
    >>> half.kernel(exp, "cpu", [x.update(dtype=tidu.float32)], [x.update(dtype=tidu.float32)]) is None
    True
    """
    if prim.moves_elements or in_avals is None or not any(a.dtype.is_half for a in (*in_avals, *out_avals)):
        return None
    impl = prim.impls.get(device)
    if impl is None:
        return None  # dispatch's "no kernel for device" error
    widen, narrow = (_cpu_widen, dtypes.cast) if device == "cpu" else _cuda_converters()
    wide_in = tuple(a.dtype if a.dtype.is_half else None for a in in_avals)
    narrow_out = tuple(a.dtype if a.dtype.is_half else None for a in out_avals)
    several = len(out_avals) > 1

    def run(*arrays: Any, **params: Any) -> Any:
        if params:
            params = {k: dtypes.float32 if v.__class__ is dtypes.dtype and v.is_half else v for k, v in params.items()}
        result = impl(*[a if d is None else widen(a, d) for a, d in zip(arrays, wide_in)], **params)
        if several:
            return tuple(r if d is None else narrow(r, d) for r, d in zip(result, narrow_out))
        d = narrow_out[0]
        return result if d is None else narrow(result, d)

    run.__qualname__ = run.__name__ = f"{prim.name}_via_float32"
    return run


def _cpu_widen(array: Any, dt: dtypes.dtype) -> Any:
    return dtypes.to_float32(array, dt)


def _cuda_converters() -> tuple[Callable, Callable]:
    from ..backends.cuda.half import narrow, widen  # numba.cuda only once a CUDA call needs it

    return widen, narrow


_VALUE_TYPES: tuple = ()  # (Tensor, Var), read at the first call (this module is imported before them)


def _value_types() -> tuple:
    global _VALUE_TYPES
    from ..tensor import Tensor
    from .primitive import Var

    _VALUE_TYPES = (Tensor, Var)
    return _VALUE_TYPES


def _half_of(values: Any) -> Any:
    """The half dtype of the first half floating tensor among ``values`` (and lists of them)."""
    types = _VALUE_TYPES or _value_types()
    for v in values:
        if isinstance(v, types):
            dt = v.dtype
            if dt.is_half:
                return dt
        elif type(v) is list or type(v) is tuple:
            found = _half_of(v)
            if found is not None:
                return found
    return None


def _widened(v: Any) -> Any:
    if type(v) is list or type(v) is tuple:
        return type(v)(_widened(x) for x in v)
    return v.float() if isinstance(v, _VALUE_TYPES) and v.dtype.is_half else v


def _narrowed(v: Any, dt: Any) -> Any:
    if type(v) is list or type(v) is tuple:
        return type(v)(_narrowed(x, dt) for x in v)
    return v.to(dt) if isinstance(v, _VALUE_TYPES) and v.dtype is dtypes.float32 else v


def _mixed(values: Any, dt: Any) -> bool:
    """Whether a floating tensor among ``values`` is of another dtype than ``dt``."""
    for v in values:
        if isinstance(v, _VALUE_TYPES):
            if v.dtype.is_floating_point and v.dtype is not dt:
                return True
        elif (type(v) is list or type(v) is tuple) and _mixed(v, dt):
            return True
    return False


def computed_in_float32(fn: Callable[..., Any] | None = None, *, mixed: bool = False) -> Any:
    """``fn`` (a composition of several ops) with its half operands widened to float32 and its
    float32 results rounded back to the first one's dtype: one rounding for the whole function,
    as PyTorch's kernels compute half inputs in float (a sum of squares that would overflow
    float16, a mean of large values, a bias that cancels the product, an activation's
    derivative). Other calls, calls that name a ``dtype``, and (unless ``mixed``: the norm layers'
    float32 parameters with a half input, as PyTorch takes them) calls whose floating operands
    differ in dtype go straight through, to ``fn``'s own checks.

    >>> import tidu
    >>> tidu.tensor([300.0, 400.0], dtype=tidu.float16).norm()  # 300**2 overflows float16
    tensor(500., dtype=tidu.float16)
    """
    import functools

    if fn is None:
        return functools.partial(computed_in_float32, mixed=mixed)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        dt = _half_of(args) or (_half_of(kwargs.values()) if kwargs else None)
        if dt is None or kwargs.get("dtype") is not None or not mixed and (
                _mixed(args, dt) or _mixed(kwargs.values(), dt)):
            return fn(*args, **kwargs)
        out = fn(*_widened(args), **{k: _widened(v) for k, v in kwargs.items()})
        return _narrowed(out, dt)

    return call
