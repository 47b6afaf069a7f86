"""Shape primitives: views where numpy gives them (reshape, transpose, broadcast)."""

from __future__ import annotations

from math import prod

import numpy as np

from ..core.aval import ShapeDtype
from ..core.dtypes import dtype
from ..core.primitive import Primitive
from ._batching import elementwise as batch_elementwise
from ._batching import unary as batch_unary

broadcast_in_dim = Primitive("broadcast_in_dim")


@broadcast_in_dim.def_abstract_eval
def _broadcast_shape(x: ShapeDtype, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> ShapeDtype:
    if len(broadcast_dimensions) != x.ndim:
        raise RuntimeError(
            f"broadcast_in_dim: operand of shape {tuple(x.shape)} needs {x.ndim} broadcast dimensions, "
            f"got {tuple(broadcast_dimensions)}"
        )
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise RuntimeError(
                f"The expanded size of the tensor ({shape[d] if 0 <= d < len(shape) else '?'}) must match the "
                f"existing size ({x.shape[i]}) at non-singleton dimension {i}.  Target sizes: {list(shape)}.  "
                f"Tensor sizes: {list(x.shape)}"
            )
    return ShapeDtype(tuple(shape), x.dtype)


def _broadcast_impl(x: np.ndarray, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_transpose(ct, x, *, shape, broadcast_dimensions):  # noqa: ANN001, ANN202
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    summed += [d for i, d in enumerate(broadcast_dimensions) if x.shape[i] == 1 and shape[d] != 1]
    out = reduce_sum_p(ct, sorted(summed)) if summed else ct
    return [reshape.bind(out, new_sizes=tuple(x.shape)) if tuple(out.shape) != tuple(x.shape) else out]


broadcast_in_dim.def_impl(_broadcast_impl)
broadcast_in_dim.def_linear(_broadcast_transpose)
broadcast_in_dim.def_batch(batch_unary(lambda x, *, shape, broadcast_dimensions: broadcast_in_dim.bind(
    x, shape=(x.shape[0], *shape), broadcast_dimensions=(0, *[d + 1 for d in broadcast_dimensions]))))

reshape = Primitive("reshape")


@reshape.def_abstract_eval
def _reshape_shape(x: ShapeDtype, *, new_sizes: tuple[int, ...]) -> ShapeDtype:
    if prod(new_sizes) != x.size:
        raise RuntimeError(f"shape '{list(new_sizes)}' is invalid for input of size {x.size}")
    return ShapeDtype(tuple(new_sizes), x.dtype)


reshape.def_impl(lambda x, *, new_sizes: x.reshape(new_sizes))
reshape.def_linear(lambda ct, x, *, new_sizes: [reshape.bind(ct, new_sizes=tuple(x.shape))])
reshape.def_batch(batch_unary(lambda x, *, new_sizes: reshape.bind(x, new_sizes=(x.shape[0], *new_sizes))))

transpose = Primitive("transpose")


@transpose.def_abstract_eval
def _transpose_shape(x: ShapeDtype, *, permutation: tuple[int, ...]) -> ShapeDtype:
    if sorted(permutation) != list(range(x.ndim)):
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not equal to "
            f"len(dims) = {len(permutation)}" if len(permutation) != x.ndim else
            f"permute: {tuple(permutation)} is not a permutation of the {x.ndim} dimensions"
        )
    return ShapeDtype(tuple(x.shape[p] for p in permutation), x.dtype)


def _transpose_transpose(ct, x, *, permutation):  # noqa: ANN001, ANN202
    inverse = tuple(int(i) for i in np.argsort(permutation))
    return [transpose.bind(ct, permutation=inverse)]


transpose.def_impl(lambda x, *, permutation: np.transpose(x, permutation))
transpose.def_linear(_transpose_transpose)
transpose.def_batch(batch_unary(
    lambda x, *, permutation: transpose.bind(x, permutation=(0, *[p + 1 for p in permutation]))))

convert_element_type = Primitive("convert_element_type")


@convert_element_type.def_abstract_eval
def _convert_shape(x: ShapeDtype, *, new_dtype: dtype) -> ShapeDtype:
    return x.update(dtype=new_dtype)


def _convert_jvp(dx, x, out, *, new_dtype):  # noqa: ANN001, ANN202
    return convert_element_type.bind(dx, new_dtype=new_dtype)


convert_element_type.def_impl(lambda x, *, new_dtype: x.astype(new_dtype.np))
convert_element_type.def_jvp(_convert_jvp)
convert_element_type.def_transpose(lambda ct, x, *, new_dtype: [convert_element_type.bind(ct, new_dtype=x.dtype)])
convert_element_type.def_batch(batch_elementwise(convert_element_type))


def reduce_sum_p(x, axes):  # noqa: ANN001, ANN201
    from .reduce import reduce_sum

    return reduce_sum.bind(x, axes=tuple(axes))
