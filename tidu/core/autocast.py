"""The state of ``tidu.amp.autocast``: the dtype each device type's products run in, if any, and
PyTorch's CPU cast policies.

``ON`` is read by the ops that autocast lowers (``matmul`` and its kin, ``linear``, the
convolutions) before anything else, so that outside an autocast region they pay one global read.
Other functions of PyTorch's lists take a ``policy`` decorator: ``"lower"`` (their floating-point
operands in the autocast dtype), ``"fp32"`` (half operands in float32: the losses, ``prod``,
``cdist``, the decompositions...) or ``"keep"`` (their operands as they are: ``mv``, ``dot``,
whose products would otherwise be lowered inside). Inside such a function autocast is off, as
PyTorch's dispatcher excludes it below an autocast kernel.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .dtypes import bfloat16, dtype, float16, float32

ON = False  # whether any device type has an autocast dtype now
DTYPES: dict[str, dtype | None] = {"cpu": None, "cuda": None}


def set_dtype(device_type: str, dt: dtype | None) -> dtype | None:
    """Set ``device_type``'s autocast dtype (``None``: off); gives the one it replaces."""
    global ON
    previous = DTYPES.get(device_type)
    DTYPES[device_type] = dt
    ON = any(d is not None for d in DTYPES.values())
    return previous


def lower(*xs: Any) -> tuple[Any, ...]:
    """``xs`` with each floating-point tensor converted to its device's autocast dtype, as
    PyTorch's autocast casts the operands of the ops it lists as lower precision (``None``s and
    tensors of other devices or dtypes pass through).

    >>> import tidu
    >>> from tidu.core import autocast
    >>> with tidu.autocast("cpu", dtype=tidu.bfloat16):
    ...     a, b = autocast.lower(tidu.ones(2), tidu.arange(2))
    >>> a.dtype, b.dtype
    (tidu.bfloat16, tidu.int64)
    """
    return tuple(lowered(x) for x in xs)


def lowered(x: Any) -> Any:
    if type(x) is list or type(x) is tuple:
        return type(x)(lowered(v) for v in x)
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, dtype) or not dt.is_floating_point:
        return x
    target = DTYPES.get(x.device.type)
    return x if target is None or dt is target else x.to(target)


def widened(x: Any) -> Any:
    if type(x) is list or type(x) is tuple:
        return type(x)(widened(v) for v in x)
    dt = getattr(x, "dtype", None)
    if (dt is float16 or dt is bfloat16) and DTYPES.get(x.device.type) is not None:
        return x.to(float32)
    return x


_CASTS: dict[str, Callable[[Any], Any] | None] = {"lower": lowered, "fp32": widened, "keep": None}


def policy(kind: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a function of PyTorch's CPU autocast lists with its cast ``kind`` (``"lower"``,
    ``"fp32"`` or ``"keep"``); outside autocast the call goes straight through.

    >>> import tidu
    >>> with tidu.autocast("cpu", dtype=tidu.bfloat16):
    ...     loss = tidu.nn.functional.mse_loss(tidu.ones(2, dtype=tidu.bfloat16), tidu.zeros(2))
    ...     y = tidu.addmm(tidu.zeros(2), tidu.ones(2, 2), tidu.ones(2, 2))
    >>> loss.dtype, y.dtype
    (tidu.float32, tidu.bfloat16)
    """
    cast = _CASTS[kind]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if not ON:
                return fn(*args, **kwargs)
            return run(cast, fn, args, kwargs)

        return call

    return decorate


def run(cast: Callable[[Any], Any] | None, fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> Any:
    """``fn`` on its operands cast by ``cast`` (``None``: as they are), autocast off inside."""
    global ON
    if cast is not None:
        args = tuple(cast(a) for a in args)
        kwargs = {k: cast(v) for k, v in kwargs.items()}
    ON = False
    try:
        return fn(*args, **kwargs)
    finally:
        ON = any(d is not None for d in DTYPES.values())
