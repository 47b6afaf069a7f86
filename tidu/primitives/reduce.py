"""Reductions over axes (the axes are dropped; the public ops add ``keepdim``)."""

from __future__ import annotations

from ..backends.cpu import reduce as cpu
from ..core.aval import ShapeDtype
from ..core.dtypes import int64
from ..core.primitive import Primitive
from ._batching import shifted
from ._batching import unary as batch_unary
from ._util import check_axes, ops
from .structural import broadcast_in_dim

reduce_sum = Primitive("reduce_sum")


@reduce_sum.def_abstract_eval
def _reduce_sum_shape(x: ShapeDtype, *, axes: tuple[int, ...]) -> ShapeDtype:
    axes = check_axes("reduce_sum", x.ndim, axes)
    shape = tuple(s for d, s in enumerate(x.shape) if d not in axes)
    return ShapeDtype(shape, int64 if x.dtype.name == "bool" else x.dtype)


def kept_dims(ndim: int, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in range(ndim) if d not in axes)


reduce_sum.def_impl(cpu.sum_axes)
reduce_sum.def_linear(
    lambda ct, x, *, axes: [
        broadcast_in_dim.bind(ct, shape=tuple(x.shape), broadcast_dimensions=kept_dims(x.ndim, axes))
    ]
)
reduce_sum.def_batch(batch_unary(lambda x, *, axes: reduce_sum.bind(x, axes=shifted(axes))))

reduce_max = Primitive("reduce_max")


@reduce_max.def_abstract_eval
def _reduce_max_shape(x: ShapeDtype, *, axes: tuple[int, ...]) -> ShapeDtype:
    axes = check_axes("reduce_max", x.ndim, axes)
    for a in axes:
        if x.shape[a] == 0:
            raise IndexError(
                f"max(): Expected reduction dim {a} to have non-zero size (input shape {tuple(x.shape)})"
            )
    return ShapeDtype(tuple(s for d, s in enumerate(x.shape) if d not in axes), x.dtype)


def _reduce_max_jvp(dx, x, out, *, axes):  # noqa: ANN001, ANN202
    """Ties share the gradient evenly (PyTorch's ``amax``)."""
    back = broadcast_in_dim.bind(out, shape=tuple(x.shape), broadcast_dimensions=kept_dims(x.ndim, axes))
    mask = ops.where(x == back, 1.0, 0.0).to(x.dtype)
    count = reduce_sum.bind(mask, axes=axes)
    return reduce_sum.bind(dx * mask, axes=axes) / count


reduce_max.def_impl(cpu.max_axes)
reduce_max.def_jvp(_reduce_max_jvp)
reduce_max.def_batch(batch_unary(lambda x, *, axes: reduce_max.bind(x, axes=shifted(axes))))
