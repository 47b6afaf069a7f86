"""The state of ``tidu.amp.autocast``: the dtype each device type's products run in, if any.

``ON`` is read by the ops that autocast lowers (``matmul`` and its kin, ``linear``, the
convolutions) before anything else, so that outside an autocast region they pay one global read.
"""

from __future__ import annotations

from typing import Any

from .dtypes import dtype

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
    out = []
    for x in xs:
        dt = None if x is None else DTYPES.get(x.device.type)
        out.append(x if dt is None or not x.dtype.is_floating_point or x.dtype is dt else x.to(dt))
    return tuple(out)
