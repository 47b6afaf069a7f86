"""``repr`` of tensors as PyTorch prints them (4 decimals, shared width, suffixes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes

LINEWIDTH = 80


def _formatter(values: np.ndarray, dtype: dtypes.dtype) -> Any:
    if dtype is dtypes.bool_:
        return lambda v: "True" if v else "False"
    if not dtype.is_floating_point:
        return lambda v: str(int(v))
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    int_mode = bool(np.all(finite == np.ceil(finite)))
    sci = False
    if nonzero.size:
        lo, hi = float(nonzero.min()), float(nonzero.max())
        sci = hi > 1e8 if int_mode else (hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4)
    if sci:
        return lambda v: _special(v) or f"{v:.4e}"
    if int_mode:
        return lambda v: _special(v) or f"{v:.0f}."
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v: float) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _width(flat: np.ndarray, fmt: Any, dtype: dtypes.dtype) -> int:
    """PyTorch pads to the widest *nonzero* value of a float tensor (``-0.`` is not padded for)."""
    values = flat.tolist()
    if dtype.is_floating_point:
        counted = [v for v in values if v != 0 or not np.isfinite(v)] or [0.0]
        return max(len(fmt(v)) for v in counted)
    return max(len(fmt(v)) for v in values)


def _body(data: np.ndarray, fmt: Any, width: int, indent: int) -> str:
    if data.ndim == 0:
        return fmt(data.item())
    if data.ndim == 1:
        items = [fmt(v).rjust(width) for v in data.tolist()]
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_body(row, fmt, width, indent + 1) for row in data]
    sep = "," + "\n" * (data.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t: Any) -> str:
    data = t._data
    dtype = t.dtype
    suffixes = []
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
    else:
        flat = data.reshape(-1)
        fmt = _formatter(flat, dtype)
        width = _width(flat, fmt, dtype)
        body = _body(data, fmt, width, len("tensor("))
    if dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_) or (
        data.size == 0 and dtype is not dtypes.get_default_dtype()
    ):
        suffixes.append(f"dtype={dtype!r}")
    if t._trace is not None:
        suffixes.append(f"grad_fn=<{t._trace.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *suffixes]) + ")"
