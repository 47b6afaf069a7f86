"""Reductions over axes (the axes are dropped; the public ops add ``keepdim``)."""

from __future__ import annotations

from ..backends.cpu import reduce as cpu
from ..backends.cpu import scan
from ..backends.cpu import sort as sort_cpu
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import NUMERIC, int64
from ..core.primitive import Primitive
from ._batching import shifted
from ._batching import unary as batch_unary
from ._util import check_axes, check_dtype, ops
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
reduce_sum.def_impl(kernel("reduce", "sum_axes"), device="cuda")
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


def _back(v, x, axes):  # noqa: ANN001, ANN202
    """A reduced value broadcast back over the reduced axes of ``x``."""
    return broadcast_in_dim.bind(v, shape=tuple(x.shape), broadcast_dimensions=kept_dims(x.ndim, axes))


def _reduce_max_jvp(dx, x, out, *, axes):  # noqa: ANN001, ANN202
    """Ties share the gradient evenly (PyTorch's ``amax``); a NaN maximum comes from the NaNs."""
    back = _back(out, x, axes)
    hit = ops.where(back != back, x != x, x == back)
    mask = ops.where(hit, 1.0, 0.0).to(x.dtype)
    count = reduce_sum.bind(mask, axes=axes)
    return reduce_sum.bind(dx * mask, axes=axes) / count


reduce_max.def_impl(cpu.max_axes)
reduce_max.def_impl(kernel("reduce", "max_axes"), device="cuda")
reduce_max.def_jvp(_reduce_max_jvp)
reduce_max.def_batch(batch_unary(lambda x, *, axes: reduce_max.bind(x, axes=shifted(axes))))

reduce_prod = Primitive("reduce_prod")


@reduce_prod.def_abstract_eval
def _reduce_prod_shape(x: ShapeDtype, *, axes: tuple[int, ...]) -> ShapeDtype:
    axes = check_axes("reduce_prod", x.ndim, axes)
    check_dtype("reduce_prod", x, NUMERIC)
    return ShapeDtype(tuple(s for d, s in enumerate(x.shape) if d not in axes), x.dtype)


def _prod_of_others(x, out, axes):  # noqa: ANN001, ANN202
    """prod_{j != i} x_j for every i, exact when x holds zeros (no division by one), and
    differentiable again: with one zero z, entry i != z gets (prod of the non-zeros / x_i) * x_z,
    which is 0 but has the right derivative in x_z."""
    zero = x == 0
    zeros = _back(reduce_sum.bind(ops.where(zero, 1.0, 0.0).to(x.dtype), axes=axes), x, axes)
    safe = ops.where(zero, 1.0, x)
    nonzero_prod = _back(reduce_prod.bind(safe, axes=axes), x, axes)
    the_zero = _back(reduce_sum.bind(ops.where(zero, x, 0.0), axes=axes), x, axes)
    one_zero = ops.where(zero, nonzero_prod, nonzero_prod / safe * the_zero)
    return ops.where(zeros == 0, _back(out, x, axes) / safe, ops.where(zeros == 1, one_zero, 0.0))


reduce_prod.def_impl(cpu.prod_axes)
reduce_prod.def_impl(kernel("reduce", "prod_axes"), device="cuda")
reduce_prod.def_jvp(lambda dx, x, out, *, axes: reduce_sum.bind(dx * _prod_of_others(x, out, axes), axes=axes))
reduce_prod.def_batch(batch_unary(lambda x, *, axes: reduce_prod.bind(x, axes=shifted(axes))))


def _arg_reduce(name: str, largest: bool) -> Primitive:
    prim = Primitive(name, nondiff=True)

    @prim.def_abstract_eval
    def _shape(x: ShapeDtype, *, axis: int) -> ShapeDtype:
        (axis,) = check_axes(name, x.ndim, (axis,))
        if x.shape[axis] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {axis} to have non-zero size (input shape {tuple(x.shape)})"
            )
        return ShapeDtype(tuple(s for d, s in enumerate(x.shape) if d != axis), int64)

    prim.def_impl(lambda x, *, axis: cpu.arg_axis(x, axis, largest))
    prim.def_impl(kernel("reduce", "arg_axis", largest=largest), device="cuda")
    prim.def_batch(batch_unary(lambda x, *, axis: prim.bind(x, axis=axis + 1)))
    return prim


argmax = _arg_reduce("argmax", largest=True)
argmin = _arg_reduce("argmin", largest=False)

# the stable sorting permutation along an axis (int64): ``sort`` gathers by it, so its values'
# gradient is gather's
argsort = Primitive("argsort", nondiff=True)


@argsort.def_abstract_eval
def _argsort_shape(x: ShapeDtype, *, axis: int, descending: bool) -> ShapeDtype:
    check_axes("argsort", max(x.ndim, 1), (axis,))
    return ShapeDtype(x.shape, int64)


argsort.def_impl(lambda x, *, axis, descending: sort_cpu.argsort_axis(x, axis, descending))
argsort.def_impl(kernel("sort", "argsort_axis"), device="cuda")
argsort.def_batch(batch_unary(lambda x, *, axis, descending: argsort.bind(x, axis=axis + 1, descending=descending)))

cumsum = Primitive("cumsum")


@cumsum.def_abstract_eval
def _cumsum_shape(x: ShapeDtype, *, axis: int, reverse: bool) -> ShapeDtype:
    check_axes("cumsum", max(x.ndim, 1), (axis,))
    check_dtype("cumsum", x, NUMERIC)
    return x


cumsum.def_impl(scan.cumsum_axis)
cumsum.def_impl(kernel("scan", "cumsum_axis"), device="cuda")
cumsum.def_linear(lambda ct, x, *, axis, reverse: [cumsum.bind(ct, axis=axis, reverse=not reverse)])
cumsum.def_batch(batch_unary(
    lambda x, *, axis, reverse: x if x.ndim == 1 else cumsum.bind(x, axis=axis + 1, reverse=reverse)))
