"""Fused nn primitives: ``softmax`` and ``log_softmax`` along one axis, ``layer_norm`` over
trailing axes.

Composed from ``exp``/``reduce_sum``/``log`` these would overflow (no max shift) or
lose precision (``log(softmax)`` underflows to ``-inf``), and cost four kernel launches
and four tape entries; fused, the kernel shifts by the row maximum once. Their JVP
rules are the textbook ones:

    d softmax(x)     = s * (dx - sum(s * dx))          s = softmax(x)
    d log_softmax(x) = dx - sum(exp(y) * dx)            y = log_softmax(x)
    d layer_norm(x)  = r * (dx - mean(dx) - y * mean(y * dx))    y = layer_norm(x)

where the sums run along the softmax axis, the means over the normalized axes and
``r = 1 / sqrt(var(x) + eps)``. Each map is a primitive of its own, linear in ``dx``, so a
backward runs one row kernel per call instead of a chain of them:

- ``softmax_tangent(dx, s)`` is its own transpose (the Jacobian ``diag(s) - s s^T`` is symmetric);
- ``log_softmax_tangent(dx, y, transposed)``: its transpose is ``dx - exp(y) * sum(dx)``, the
  same primitive with ``transposed`` flipped;
- ``layer_norm_tangent(dx, x, y)`` recomputes ``r`` from ``x``; its transpose is itself (``r``
  is one number per row and the projection is symmetric).

Their JVPs in the saved operands, for higher orders, are written with tidu ops.

``layer_norm_affine(x, w, b) = layer_norm(x) * w + b`` (the weight and bias of
``nn.functional.layer_norm``, of the normalized shape) is one kernel and one tape entry where the
composition was five binds (two of them broadcasts). Its JVP is the composition's: the rules
recompute ``layer_norm(x)`` (once: the engine's graph builder shares a repeated operation), so
the forward saves no normalized copy.
"""

from __future__ import annotations

import numpy as np

from ..backends import softmax_tangents as tangents
from ..backends.cpu import softmax as cpu_softmax
from ..backends.cpu.norm import layer_norm as cpu_layer_norm
from ..backends.cpu.norm import layer_norm_affine as cpu_layer_norm_affine
from ..backends.cpu.norm import layer_norm_tangent as cpu_layer_norm_tangent
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import FLOATS
from ..core.primitive import Primitive
from ._batching import along_axis, at_front, batch_size
from ._batching import elementwise as batch_elementwise
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


def _same_operands(name: str, d: ShapeDtype, *others: ShapeDtype) -> None:
    """A tangent's operands: one shape and dtype."""
    for other in others:
        if other.shape != d.shape or other.dtype != d.dtype:
            raise RuntimeError(
                f"{name}: operands {tuple(d.shape)} {d.dtype.name} and {tuple(other.shape)} {other.dtype.name} differ"
            )


def _check_pair(name: str, d: ShapeDtype, w: ShapeDtype, axis: int) -> ShapeDtype:
    _same_operands(name, d, w)
    return _check_axis(name, d, axis)


# s * (dx - sum(s * dx)): linear in dx, and its own transpose (the Jacobian diag(s) - s s^T is symmetric)
softmax_tangent = Primitive("softmax_tangent")
softmax_tangent.def_abstract_eval(lambda dx, s, *, axis: _check_pair("softmax_tangent", dx, s, axis))
softmax_tangent.def_impl(lambda dx, s, *, axis: cpu_softmax.tangent(dx, s, axis, tangents.SOFTMAX))
softmax_tangent.def_impl(kernel("softmax", "softmax_tangent"), device="cuda")
softmax_tangent.def_jvp(
    lambda t, dx, s, out, *, axis: softmax_tangent.bind(t, s, axis=axis),
    lambda t, dx, s, out, *, axis: t * (dx - _row_sum(s * dx, axis)) - s * _row_sum(t * dx, axis),
)
softmax_tangent.def_transpose(
    lambda ct, dx, s, *, axis: [softmax_tangent.bind(ct, s, axis=axis), None], linear_in=(0,)
)
softmax_tangent.def_batch(along_axis(softmax_tangent))


# dx - sum(exp(y) * dx), or transposed dx - exp(y) * sum(dx): linear in dx; each the other's transpose
def _log_softmax_tangent_y(t, dx, y, out, *, axis, transposed):  # noqa: ANN001, ANN202
    p = ops.exp(y) * t
    return -(p * _row_sum(dx, axis)) if transposed else ops.broadcast_to(-_row_sum(p * dx, axis), dx.shape)


log_softmax_tangent = Primitive("log_softmax_tangent")
log_softmax_tangent.def_abstract_eval(
    lambda dx, y, *, axis, transposed: _check_pair("log_softmax_tangent", dx, y, axis))
log_softmax_tangent.def_impl(lambda dx, y, *, axis, transposed: cpu_softmax.tangent(
    dx, y, axis, tangents.LOG_SOFTMAX_TRANSPOSED if transposed else tangents.LOG_SOFTMAX))
log_softmax_tangent.def_impl(kernel("softmax", "log_softmax_tangent"), device="cuda")
log_softmax_tangent.def_jvp(
    lambda t, dx, y, out, *, axis, transposed: log_softmax_tangent.bind(t, y, axis=axis, transposed=transposed),
    _log_softmax_tangent_y,
)
log_softmax_tangent.def_transpose(
    lambda ct, dx, y, *, axis, transposed: [
        log_softmax_tangent.bind(ct, y, axis=axis, transposed=not transposed), None],
    linear_in=(0,),
)
log_softmax_tangent.def_batch(along_axis(log_softmax_tangent))

softmax = Primitive("softmax")
softmax.def_abstract_eval(lambda x, *, axis: _check_axis("softmax", x, axis))
softmax.def_impl(_softmax_impl)
softmax.def_impl(kernel("softmax", "softmax"), device="cuda")
softmax.def_jvp(lambda dx, x, out, *, axis: softmax_tangent.bind(dx, out, axis=axis))

log_softmax = Primitive("log_softmax")
log_softmax.def_abstract_eval(lambda x, *, axis: _check_axis("log_softmax", x, axis))
log_softmax.def_impl(_log_softmax_impl)
log_softmax.def_impl(kernel("softmax", "log_softmax"), device="cuda")
log_softmax.def_jvp(lambda dx, x, out, *, axis: log_softmax_tangent.bind(dx, out, axis=axis, transposed=False))


def _batch_along_axis(prim: Primitive):  # noqa: ANN202
    return batch_unary(lambda x, *, axis: prim.bind(x, axis=axis + 1))


softmax.def_batch(_batch_along_axis(softmax))
log_softmax.def_batch(_batch_along_axis(log_softmax))


def _check_layer_norm(x: ShapeDtype, *, k: int, eps: float) -> ShapeDtype:
    check_dtype("layer_norm", x, FLOATS)
    if not 1 <= k <= x.ndim:
        raise IndexError(f"layer_norm: {k} normalized dimensions for a tensor of dimension {x.ndim}")
    return x


def _row_mean(v, k: int):  # noqa: ANN001, ANN202
    return ops.mean(v, dim=tuple(range(v.ndim - k, v.ndim)), keepdim=True)


def _inv_std(x, k: int, eps: float):  # noqa: ANN001, ANN202
    """``r`` and ``x - mean(x)``, with tidu ops."""
    centered = x - _row_mean(x, k)
    return ops.rsqrt(_row_mean(centered * centered, k) + eps), centered


def _check_tangent(dx: ShapeDtype, x: ShapeDtype, y: ShapeDtype, *, k: int, eps: float) -> ShapeDtype:
    _same_operands("layer_norm_tangent", dx, x, y)
    return _check_layer_norm(x, k=k, eps=eps)


# r * P(dx), P(v) = v - mean(v) - y mean(y v): d/dx through r (dr = -r^3 mean(c dx'), c = x - mean x,
# and r P(dx) = out), d/dy through P
def _tangent_jvp_x(t, dx, x, y, out, *, k: int, eps: float):  # noqa: ANN001, ANN202
    r, centered = _inv_std(x, k, eps)
    return out * (-(r * r) * _row_mean(centered * t, k))


def _tangent_jvp_y(t, dx, x, y, out, *, k: int, eps: float):  # noqa: ANN001, ANN202
    r, _ = _inv_std(x, k, eps)
    return -(r * (t * _row_mean(y * dx, k) + y * _row_mean(t * dx, k)))


layer_norm_tangent = Primitive("layer_norm_tangent")
layer_norm_tangent.def_abstract_eval(_check_tangent)
layer_norm_tangent.def_impl(cpu_layer_norm_tangent)
layer_norm_tangent.def_impl(kernel("norm", "layer_norm_tangent"), device="cuda")
layer_norm_tangent.def_jvp(
    lambda t, dx, x, y, out, *, k, eps: layer_norm_tangent.bind(t, x, y, k=k, eps=eps),
    _tangent_jvp_x,
    _tangent_jvp_y,
)
layer_norm_tangent.def_transpose(
    lambda ct, dx, x, y, *, k, eps: [layer_norm_tangent.bind(ct, x, y, k=k, eps=eps), None, None],
    linear_in=(0,),
)
layer_norm_tangent.def_batch(batch_elementwise(layer_norm_tangent))  # k counts trailing dims

layer_norm = Primitive("layer_norm")
layer_norm.def_abstract_eval(_check_layer_norm)
layer_norm.def_impl(cpu_layer_norm)
layer_norm.def_impl(kernel("norm", "layer_norm"), device="cuda")
# the rule recomputes y from x rather than read the output, as PyTorch's saves the input (and
# its statistics): writing the normalized output in place leaves its backward intact
layer_norm.def_jvp(lambda dx, x, y, *, k, eps: layer_norm_tangent.bind(dx, x, layer_norm.bind(x, k=k, eps=eps),
                                                                       k=k, eps=eps))
layer_norm.def_batch(batch_unary(lambda x, *, k, eps: layer_norm.bind(x, k=k, eps=eps)))


def _check_affine(x: ShapeDtype, w: ShapeDtype, b: ShapeDtype, *, k: int, eps: float) -> ShapeDtype:
    _check_layer_norm(x, k=k, eps=eps)
    normalized = x.shape[x.ndim - k:]
    for name, p in (("weight", w), ("bias", b)):
        if p.shape != normalized:
            raise RuntimeError(f"layer_norm_affine: expected {name} of shape {list(normalized)} (the normalized "
                               f"shape of input {list(x.shape)}), got {list(p.shape)}")
        if p.dtype != x.dtype:
            raise RuntimeError(f"layer_norm_affine: {name} has dtype {p.dtype.name}, input {x.dtype.name}")
    return x


# out = y * w + b with y = layer_norm(x); the rules of x and w bind the same layer_norm(x), one
# operation in the linearized graph (the engine's graph builder keys operations by their inputs)
def _affine_jvp_x(dx, x, w, b, out, *, k: int, eps: float):  # noqa: ANN001, ANN202
    return layer_norm_tangent.bind(dx, x, layer_norm.bind(x, k=k, eps=eps), k=k, eps=eps) * w


def _affine_jvp_w(dw, x, w, b, out, *, k: int, eps: float):  # noqa: ANN001, ANN202
    return layer_norm.bind(x, k=k, eps=eps) * dw


def _batch_affine(args: list, dims: list, *, k: int, eps: float) -> tuple:
    size = batch_size(args, dims)
    x = at_front(args[0], dims[0], size)
    if dims[1] is None and dims[2] is None:
        return layer_norm_affine.bind(x, args[1], args[2], k=k, eps=eps), 0
    w, b = (ops.reshape(at_front(p, d, size), (size, *[1] * (x.ndim - 1 - k), *p.shape[p.ndim - k:]))
            for p, d in zip(args[1:], dims[1:]))
    return layer_norm.bind(x, k=k, eps=eps) * w + b, 0


layer_norm_affine = Primitive("layer_norm_affine")
layer_norm_affine.def_abstract_eval(_check_affine)
layer_norm_affine.def_impl(cpu_layer_norm_affine)
layer_norm_affine.def_impl(kernel("norm", "layer_norm_affine"), device="cuda")
layer_norm_affine.def_jvp(_affine_jvp_x, _affine_jvp_w, lambda db, x, w, b, out, *, k, eps: ops.broadcast_to(db, out.shape))
layer_norm_affine.def_batch(_batch_affine)
