"""``repr`` of tensors as PyTorch prints them: one shared element width, 4 decimals,
scientific notation for wide ranges, summaries with ``...`` above 1000 elements, suffixes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes


class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTS = PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print (PyTorch's options; ``sci_mode=None`` chooses automatically).

    >>> import tidu
    >>> tidu.set_printoptions(precision=2)
    >>> tidu.tensor([1.23456])
    tensor([1.23])
    >>> tidu.set_printoptions(profile="default")
    """
    if profile is not None:
        OPTS.precision, OPTS.threshold, OPTS.edgeitems, OPTS.linewidth = _PROFILES[profile]
    if precision is not None:
        OPTS.precision = precision
    if threshold is not None:
        OPTS.threshold = threshold
    if edgeitems is not None:
        OPTS.edgeitems = edgeitems
    if linewidth is not None:
        OPTS.linewidth = linewidth
    OPTS.sci_mode = sci_mode


class _Formatter:
    """Chooses one format for all printed elements (from the summarized values)."""

    def __init__(self, values: np.ndarray, dtype: dtypes.dtype) -> None:
        self.floating = dtype.is_floating_point
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        p = OPTS.precision
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max([self.width, *(len(str(v)) for v in flat.tolist())])
        else:
            finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
            if finite.size:
                lo, hi = float(np.abs(finite).min()), float(np.abs(finite).max())
                self.int_mode = bool(np.all(finite == np.ceil(finite)))
                items = finite.tolist()
                auto = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                self.sci_mode = auto if OPTS.sci_mode is None else OPTS.sci_mode
                if self.sci_mode:
                    self.width = max(len(f"{v:.{p}e}") for v in items)
                elif self.int_mode:
                    self.width = max(len(f"{v:.0f}") + 1 for v in items)
                else:
                    self.width = max(len(f"{v:.{p}f}") for v in items)

    def format(self, value: Any) -> str:
        p = OPTS.precision
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{p}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{p}f}"
        return text.rjust(self.width)


def _summarized(data: np.ndarray) -> np.ndarray:
    """The elements that will be printed (the edges of every long dimension)."""
    e = OPTS.edgeitems
    if data.ndim == 0:
        return data
    if data.ndim == 1:
        return np.concatenate([data[:e], data[-e:]]) if data.shape[0] > 2 * e else data
    if not e:
        return data[(slice(0, 0),) * data.ndim]
    rows = list(range(e)) + list(range(data.shape[0] - e, data.shape[0])) if data.shape[0] > 2 * e else range(
        data.shape[0])
    return np.stack([_summarized(data[i]) for i in rows])


def _vector(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    e = OPTS.edgeitems
    per_line = max(1, math.floor((OPTS.linewidth - indent) / (fmt.width + 2)))
    if summarize and not e:
        items = ["..."]
    elif summarize and data.shape[0] > 2 * e:
        items = [fmt.format(v) for v in data[:e].tolist()] + [" ..."] + [fmt.format(v) for v in data[-e:].tolist()]
    else:
        items = [fmt.format(v) for v in data.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(data: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if data.ndim == 0:
        return fmt.format(data.item())
    if data.ndim == 1:
        return _vector(data, indent, summarize, fmt)
    e = OPTS.edgeitems
    n = data.shape[0]
    if summarize and n > 2 * e:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(e)] + ["..."] + [
            _nested(data[i], indent + 1, summarize, fmt) for i in range(n - e, n)]
    else:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _with_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        width = len(suffix.replace("tidu.", "torch."))  # wrap where PyTorch wraps its "torch." suffix
        if last + width + 2 > OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + width
        else:
            parts.append(", " + suffix)
            last += width + 2
    return "".join(parts) + ")"


def tensor_repr(t: Any) -> str:
    dtype = t.dtype
    data = dtypes.to_float32(t._host(), dtype) if dtype.is_half else t._host()
    prefix = "tensor("
    indent = len(prefix)
    suffixes = [] if t.device.type == "cpu" else [f"device='{t.device}'"]
    default = dtypes.get_default_dtype()
    if data.size == 0:
        body = "[]"
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
    else:
        if not OPTS.edgeitems:
            suffixes.append(f"size={tuple(data.shape)}")
        if dtype not in (default, dtypes.int64, dtypes.bool_):
            suffixes.append(f"dtype={dtype!r}")
        summarize = data.size > OPTS.threshold
        fmt = _Formatter(_summarized(data) if summarize else data, dtype)
        body = _nested(data, indent, summarize, fmt)
    if t._trace is not None:
        suffixes.append(f"grad_fn=<{t._trace.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    from ..autograd.forward_ad import _TANGENTS, _tangent

    if _TANGENTS and _tangent(t) is not None:
        suffixes.append(f"tangent={tensor_repr(_tangent(t))}")
    return _with_suffixes(prefix + body, suffixes, indent)
