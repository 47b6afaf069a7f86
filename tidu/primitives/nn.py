"""Fused nn primitives: ``softmax`` and ``log_softmax`` along one axis, ``layer_norm`` over
trailing axes.

Composed from ``exp``/``reduce_sum``/``log`` these would overflow (no max shift) or
lose precision (``log(softmax)`` underflows to ``-inf``), and cost four kernel launches
and four tape entries; fused, the kernel shifts by the row maximum once. Their JVP
rules are the textbook ones, written with tidu ops:

    d softmax(x)     = s * (dx - sum(s * dx))          s = softmax(x)
    d log_softmax(x) = dx - sum(softmax(x) * dx)
    d layer_norm(x)  = r * (dx - mean(dx) - y * mean(y * dx))    y = layer_norm(x)

where ``r = 1 / sqrt(var(x) + eps)`` is recomputed from ``x`` with tidu ops (so the rule
differentiates again) and the means run over the normalized axes. The weight and bias of
``nn.functional.layer_norm`` are an ordinary multiply and add after it.
"""

from __future__ import annotations

import numpy as np

from ..backends.cpu import softmax as cpu_softmax
from ..backends.cpu.norm import layer_norm as cpu_layer_norm
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import FLOATS
from ..core.primitive import Primitive
from ._batching import unary as batch_unary
from ._util import check_dtype, ops


def _check_axis(name: str, x: ShapeDtype, axis: int) -> ShapeDtype:
    check_dtype(name, x, FLOATS)
    if not 0 <= axis < max(x.ndim, 1):
        raise IndexError(f"{name}: axis {axis} is out of range for a tensor of dimension {x.ndim}")
    return x


def _shifted(x: np.ndarray, axis: int) -> np.ndarray:
    """``x - max(x)`` along ``axis`` (a row of ``-inf`` stays ``-inf - -inf = nan``, as PyTorch)."""
    if x.ndim == 0:
        return x - x
    if x.size == 0:
        return x.copy()
    with np.errstate(invalid="ignore"):
        return x - x.max(axis=axis, keepdims=True)


def _softmax_impl(x: np.ndarray, *, axis: int) -> np.ndarray:
    if axis == x.ndim - 1:
        out = cpu_softmax.last_axis(x, log=False)
        if out is not None:
            return out
    e = np.exp(_shifted(x, axis))
    if x.ndim == 0:
        return e / e
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax_impl(x: np.ndarray, *, axis: int) -> np.ndarray:
    if axis == x.ndim - 1:
        out = cpu_softmax.last_axis(x, log=True)
        if out is not None:
            return out
    z = _shifted(x, axis)
    if x.ndim == 0:
        return z
    with np.errstate(divide="ignore"):
        return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _row_sum(v, axis: int):  # noqa: ANN001, ANN202
    return ops.sum(v, dim=axis, keepdim=True) if v.ndim else v


softmax = Primitive("softmax")
softmax.def_abstract_eval(lambda x, *, axis: _check_axis("softmax", x, axis))
softmax.def_impl(_softmax_impl)
softmax.def_impl(kernel("softmax", "softmax"), device="cuda")
softmax.def_jvp(lambda dx, x, out, *, axis: out * (dx - _row_sum(out * dx, axis)))

log_softmax = Primitive("log_softmax")
log_softmax.def_abstract_eval(lambda x, *, axis: _check_axis("log_softmax", x, axis))
log_softmax.def_impl(_log_softmax_impl)
log_softmax.def_impl(kernel("softmax", "log_softmax"), device="cuda")
log_softmax.def_jvp(lambda dx, x, out, *, axis: dx - _row_sum(ops.exp(out) * dx, axis))


def _batch_along_axis(prim: Primitive):  # noqa: ANN202
    return batch_unary(lambda x, *, axis: prim.bind(x, axis=axis + 1))


softmax.def_batch(_batch_along_axis(softmax))
log_softmax.def_batch(_batch_along_axis(log_softmax))


def _check_layer_norm(x: ShapeDtype, *, k: int, eps: float) -> ShapeDtype:
    check_dtype("layer_norm", x, FLOATS)
    if not 1 <= k <= x.ndim:
        raise IndexError(f"layer_norm: {k} normalized dimensions for a tensor of dimension {x.ndim}")
    return x


def _layer_norm_jvp(dx, x, y, *, k: int, eps: float):  # noqa: ANN001, ANN202
    axes = tuple(range(x.ndim - k, x.ndim))

    def mean(v):  # noqa: ANN001, ANN202
        return ops.mean(v, dim=axes, keepdim=True)

    centered = x - mean(x)
    r = ops.rsqrt(mean(centered * centered) + eps)
    return r * (dx - mean(dx) - y * mean(y * dx))


layer_norm = Primitive("layer_norm")
layer_norm.def_abstract_eval(_check_layer_norm)
layer_norm.def_impl(cpu_layer_norm)
layer_norm.def_impl(kernel("norm", "layer_norm"), device="cuda")
layer_norm.def_jvp(_layer_norm_jvp)
layer_norm.def_batch(batch_unary(lambda x, *, k, eps: layer_norm.bind(x, k=k, eps=eps)))
