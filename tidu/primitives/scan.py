"""Scans along one axis beyond ``cumsum``: the first-order linear recurrence (``cumprod`` and every
scan's tangent are made of it), ``logcumsumexp`` and the running arg-extreme of ``cummax``.

``linear_recurrence(a, b)`` is ``y[i] = a[i] y[i-1] + b[i]`` from ``y[-1] = 0``: linear in ``b``,
its transpose the same recurrence run backwards with ``a`` shifted by one. Its derivative in ``a``
is again a recurrence, so ``cumprod`` (``a = x``, ``b = x`` at the first entry) is exact with zeros,
at every order, with no division.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backends.cpu import scan
from ..backends.cuda.host import on_host
from ..core.aval import ShapeDtype
from ..core.dtypes import FLOATS, NUMERIC, int64
from ..core.primitive import Primitive
from ._batching import at_front, batch_size
from ._batching import unary as batch_unary
from ._util import check_axes, check_dtype, ops, same_shape_dtype
from .slicing import pad, slice_p


def shift_in_zero(x: Any, axis: int, reverse: bool) -> Any:
    """``x`` moved one place along ``axis`` (towards the end, or the start when ``reverse``), a zero
    coming in: ``y[i-1]`` for each ``i`` of a forward scan."""
    n = x.shape[axis]
    starts = [0] * x.ndim
    limits = list(x.shape)
    if reverse:
        starts[axis] = 1 if n else 0
    else:
        limits[axis] = max(n - 1, 0)
    kept = slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=(1,) * x.ndim)
    config = tuple(((0, 1, 0) if reverse else (1, 0, 0)) if d == axis else (0, 0, 0) for d in range(x.ndim))
    return pad.bind(kept, padding_config=config)


linear_recurrence = Primitive("linear_recurrence")


@linear_recurrence.def_abstract_eval
def _linear_recurrence_shape(a: ShapeDtype, b: ShapeDtype, *, axis: int, reverse: bool) -> ShapeDtype:
    aval = same_shape_dtype("linear_recurrence", a, b)
    check_axes("linear_recurrence", max(a.ndim, 1), (axis,))
    check_dtype("linear_recurrence", aval, NUMERIC)
    return aval


def _linear_recurrence_batch(args: Sequence[Any], dims: Sequence[int | None], *, axis: int, reverse: bool) -> Any:
    size = batch_size(args, dims)
    a, b = (at_front(x, d, size) for x, d in zip(args, dims))
    return linear_recurrence.bind(a, b, axis=axis + 1, reverse=reverse), 0


linear_recurrence.def_impl(
    lambda a, b, *, axis, reverse: scan.linear_recurrence_axis(a, b, axis, reverse))
linear_recurrence.def_impl(on_host(scan.linear_recurrence_axis), device="cuda")
linear_recurrence.def_jvp(  # dy[i] = a[i] dy[i-1] + da[i] y[i-1] + db[i]
    lambda da, a, b, out, *, axis, reverse: linear_recurrence.bind(
        a, da * shift_in_zero(out, axis, reverse), axis=axis, reverse=reverse),
    lambda db, a, b, out, *, axis, reverse: linear_recurrence.bind(a, db, axis=axis, reverse=reverse),
)
linear_recurrence.def_transpose(
    lambda ct, a, b, *, axis, reverse: [
        None, linear_recurrence.bind(shift_in_zero(a, axis, not reverse), ct, axis=axis, reverse=not reverse)],
    linear_in=(1,),
)
linear_recurrence.def_batch(_linear_recurrence_batch)

logcumsumexp = Primitive("logcumsumexp")


@logcumsumexp.def_abstract_eval
def _logcumsumexp_shape(x: ShapeDtype, *, axis: int) -> ShapeDtype:
    check_axes("logcumsumexp", max(x.ndim, 1), (axis,))
    check_dtype("logcumsumexp", x, FLOATS)
    return x


def _logcumsumexp_jvp(dx, x, out, *, axis):  # noqa: ANN001, ANN202
    """d out[i] = w[i] d out[i-1] + exp(x[i] - out[i]) dx[i], w[i] = exp(out[i-1] - out[i]) <= 1
    (out never decreases; the clamp only touches the first entry, whose w multiplies zero)."""
    finite = ops.isfinite(out)
    w = ops.exp(ops.clamp_max(shift_in_zero(out, axis, False) - out, 0.0))
    fresh = ops.exp(x - out)
    return linear_recurrence.bind(ops.where(finite, w, 0.0), ops.where(finite, fresh, 0.0) * dx,
                                  axis=axis, reverse=False)


logcumsumexp.def_impl(lambda x, *, axis: scan.logcumsumexp_axis(x, axis))
logcumsumexp.def_impl(on_host(scan.logcumsumexp_axis), device="cuda")
logcumsumexp.def_jvp(_logcumsumexp_jvp)
logcumsumexp.def_batch(batch_unary(lambda x, *, axis: logcumsumexp.bind(x, axis=axis + 1)))

# the index of the running maximum (``largest``) or minimum: ``cummax`` gathers by it
cumulative_arg_extreme = Primitive("cumulative_arg_extreme", nondiff=True)


@cumulative_arg_extreme.def_abstract_eval
def _cumulative_arg_extreme_shape(x: ShapeDtype, *, axis: int, largest: bool) -> ShapeDtype:
    check_axes("cumulative_arg_extreme", max(x.ndim, 1), (axis,))
    check_dtype("cumulative_arg_extreme", x, NUMERIC)
    return ShapeDtype(x.shape, int64)


cumulative_arg_extreme.def_impl(
    lambda x, *, axis, largest: scan.cumulative_extreme_axis(x, axis, largest))
cumulative_arg_extreme.def_impl(on_host(scan.cumulative_extreme_axis), device="cuda")
cumulative_arg_extreme.def_batch(batch_unary(
    lambda x, *, axis, largest: cumulative_arg_extreme.bind(x, axis=axis + 1, largest=largest)))
