"""Shape primitives: views where numpy gives them (reshape, transpose, broadcast); concatenate, rev."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from math import prod
from typing import Any

import numpy as np

from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import dtype
from ..core.imports import module
from ..core.primitive import Primitive
from ._batching import at_front, batch_size, shifted
from ._batching import elementwise as batch_elementwise
from ._batching import unary as batch_unary
from ._util import ops
from .slicing import pad, slice_p

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


_BROADCAST_STRIDES: dict[tuple, tuple[int, ...]] = {}  # the view's strides, by the call's shapes


def _broadcast_impl(x: np.ndarray, *, shape: tuple[int, ...], broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    if x.flags.c_contiguous and x.size:  # the view made directly: a tenth of np.broadcast_to's cost
        key = (x.shape, x.itemsize, shape, broadcast_dimensions)
        strides = _BROADCAST_STRIDES.get(key)
        if strides is None:  # a C-contiguous array's strides are its shape's (a size-1 dim's are 0 here)
            found = [0] * len(shape)
            for i, d in enumerate(broadcast_dimensions):
                if x.shape[i] != 1:
                    found[d] = x.strides[i]
            if len(_BROADCAST_STRIDES) >= 4096:
                _BROADCAST_STRIDES.clear()
            strides = _BROADCAST_STRIDES[key] = tuple(found)
        out = np.ndarray(shape, x.dtype, x, 0, strides)
        # as np.broadcast_to's: its elements alias one another (``setflags``: ``out.flags`` makes an
        # object numpy's allocator keeps, a slowly saturating growth in a traced training loop)
        out.setflags(write=False)
        return out
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
broadcast_in_dim.def_impl(kernel("views", "broadcast_in_dim"), device="cuda", takes_views=True)
broadcast_in_dim.moves_elements = True  # Note [half precision]
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
reshape.def_impl(kernel("views", "reshape"), device="cuda", takes_views=True)
reshape.moves_elements = True  # Note [half precision]
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


transpose.def_impl(lambda x, *, permutation: x.transpose(permutation))  # (``np.transpose`` is Python-level)
transpose.def_impl(kernel("views", "transpose"), device="cuda", takes_views=True)
transpose.moves_elements = True  # Note [half precision]
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
convert_element_type.def_impl(kernel("elementwise", "convert"), device="cuda")
convert_element_type.def_jvp(_convert_jvp)
convert_element_type.def_transpose(lambda ct, x, *, new_dtype: [convert_element_type.bind(ct, new_dtype=x.dtype)])
convert_element_type.def_batch(batch_elementwise(convert_element_type))


concatenate = Primitive("concatenate")


@concatenate.def_abstract_eval
def _concatenate_shape(*xs: ShapeDtype, dimension: int) -> ShapeDtype:
    if not xs:
        raise ValueError("concatenate: expected a non-empty list of operands")
    first = xs[0]
    if not 0 <= dimension < max(first.ndim, 1) or first.ndim == 0:
        raise IndexError(f"concatenate: dimension {dimension} is out of range for operands of shape {first.shape}")
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != first.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {first.ndim} and {x.ndim}"
            )
        if x.dtype is not first.dtype:
            raise TypeError(f"concatenate: operand dtypes must match, got {first.dtype.name} and {x.dtype.name}")
        for d, (a, b) in enumerate(zip(first.shape, x.shape)):
            if d != dimension and a != b:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dimension}. Expected size {a} but got "
                    f"size {b} for tensor number {i} in the list."
                )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapeDtype(tuple(shape), first.dtype)


class _PerPosition:
    """JVP rules of a variadic primitive: rule ``i`` is ``rule(i, ...)``; the engine zips them
    with however many inputs an application has."""

    def __init__(self, rule: Callable[..., Any]) -> None:
        self.rule = rule

    def __iter__(self) -> Iterator[Callable[..., Any]]:
        return (functools.partial(self.rule, i) for i in itertools.count())


def _concatenate_jvp(i, dx, *primals_and_out, dimension):  # noqa: ANN001, ANN202
    """The tangent of operand ``i`` lands in its block: zeros padded around it."""
    xs = primals_and_out[:-1]
    before = sum(x.shape[dimension] for x in xs[:i])
    after = sum(x.shape[dimension] for x in xs[i + 1:])
    config = tuple((before, after, 0) if d == dimension else (0, 0, 0) for d in range(dx.ndim))
    return pad.bind(dx, padding_config=config)


def _concatenate_transpose(ct, *xs, dimension):  # noqa: ANN001, ANN202
    cts, offset = [], 0
    for x in xs:
        n = x.shape[dimension]
        if ops.is_linear(x):
            starts = tuple(offset if d == dimension else 0 for d in range(ct.ndim))
            limits = tuple(offset + n if d == dimension else s for d, s in enumerate(ct.shape))
            cts.append(slice_p.bind(ct, start_indices=starts, limit_indices=limits, strides=(1,) * ct.ndim))
        else:
            cts.append(None)
        offset += n
    return cts


concatenate.def_impl(lambda *xs, dimension: np.concatenate(xs, axis=dimension))
concatenate.def_impl(kernel("structural", "concatenate"), device="cuda")
concatenate.jvp_rules = _PerPosition(_concatenate_jvp)  # type: ignore[assignment]
concatenate.def_transpose(_concatenate_transpose)


def _concatenate_batch(args, dims, *, dimension):  # noqa: ANN001, ANN202
    size = batch_size(args, dims)
    return concatenate.bind(*[at_front(a, d, size) for a, d in zip(args, dims)], dimension=dimension + 1), 0


concatenate.def_batch(_concatenate_batch)

rev = Primitive("rev")


@rev.def_abstract_eval
def _rev_shape(x: ShapeDtype, *, dimensions: tuple[int, ...]) -> ShapeDtype:
    for d in dimensions:
        if not 0 <= d < x.ndim:
            raise IndexError(f"rev: dimension {d} is out of range for a tensor of shape {tuple(x.shape)}")
    if len(set(dimensions)) != len(dimensions):
        raise RuntimeError(f"rev: dims {tuple(dimensions)} repeat a dimension")
    return x


rev.def_impl(lambda x, *, dimensions: np.flip(x, dimensions).copy())
rev.def_impl(kernel("structural", "rev"), device="cuda")
rev.def_linear(lambda ct, x, *, dimensions: [rev.bind(ct, dimensions=dimensions)])
rev.def_batch(batch_unary(lambda x, *, dimensions: rev.bind(x, dimensions=shifted(dimensions))))


def reduce_sum_p(x, axes):  # noqa: ANN001, ANN201
    return module("tidu.primitives.reduce").reduce_sum.bind(x, axes=tuple(axes))  # (reduce imports this module)
