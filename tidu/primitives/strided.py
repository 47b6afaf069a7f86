"""``as_strided``: a layout of its own over its input's storage; ``as_strided_transpose``.

``as_strided(x)`` is a view of the storage ``x`` lies in (``view=True``, as ``tidu.as_strided``
binds it): element ``i`` of the output is the storage element at ``storage_offset + i . stride``.
Its params also record ``x``'s own layout in that storage (``input_stride``, ``input_offset``),
which makes it a function of ``x``'s values: the output reads, at each location, the elements of
``x`` that lie there (their mean, should ``x`` overlap itself, as an expanded tensor does), and a
location ``x`` does not cover reads the storage (a constant). Bound with ``view=False`` (its JVP
and its transpose's transpose do), or given an array not at that layout, it builds that function
on any array, the uncovered locations reading 0. PyTorch's ``as_strided_backward`` is this
function's transpose: the cotangent summed into each location, divided there among the elements
of ``x`` at it.

Both read through ``strided_sources`` (tidu/backends/layout.py): each output element sums its
sources in a fixed order, with no atomics, on either device.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..backends.cpu.index import strided_read
from ..backends.cuda.lazy import kernel
from ..backends.layout import element_geometry, overlapping, storage, strided_sources
from ..core.aval import ShapeDtype
from ..core.primitive import Primitive

as_strided = Primitive("as_strided")


def _check_layout(name: str, size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> None:
    if len(size) != len(stride) or min((*size, *stride, offset), default=0) < 0:
        raise RuntimeError(f"{name}: invalid layout: sizes {list(size)}, strides {list(stride)}, offset {offset}")


@as_strided.def_abstract_eval
def _as_strided_shape(x: ShapeDtype, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                      input_stride: tuple[int, ...], input_offset: int, view: bool) -> ShapeDtype:
    _check_layout("as_strided", size, stride, storage_offset)
    _check_layout("as_strided", tuple(x.shape), input_stride, input_offset)
    return ShapeDtype(tuple(size), x.dtype)


def _as_strided_cpu(x: np.ndarray, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                    input_stride: tuple[int, ...], input_offset: int, view: bool) -> np.ndarray:
    if view and element_geometry(x) == (tuple(input_stride), input_offset):
        root = storage(x)
        memory = root if root.flags.c_contiguous else root.ravel(order="K")  # a view: a dense owner
        item = x.dtype.itemsize
        start = storage_offset if 0 not in size else min(storage_offset, memory.size)  # nothing is read
        out = np.ndarray(tuple(size), x.dtype, buffer=memory, offset=start * item,
                         strides=tuple(s * item for s in stride))
        if overlapping(tuple(size), tuple(stride)) or not root.flags.writeable:
            out.setflags(write=False)  # as an expanded tensor's: elements alias one another
        return out
    sources = strided_sources((tuple(x.shape), tuple(input_stride), input_offset),
                              (tuple(size), tuple(stride), storage_offset), "src")
    return strided_read(x, sources, tuple(size))


def _as_strided_jvp(dx, x, out, *, size, stride, storage_offset, input_stride, input_offset, view):  # noqa: ANN001, ANN202
    return as_strided.bind(dx, size=size, stride=stride, storage_offset=storage_offset, input_stride=input_stride,
                           input_offset=input_offset, view=False)


def _as_strided_transpose(ct, x, *, size, stride, storage_offset, input_stride, input_offset, view):  # noqa: ANN001, ANN202
    return [as_strided_transpose.bind(ct, size=size, stride=stride, storage_offset=storage_offset,
                                      input_shape=tuple(x.shape), input_stride=input_stride,
                                      input_offset=input_offset)]


as_strided.def_impl(_as_strided_cpu)
as_strided.def_impl(kernel("views", "as_strided"), device="cuda", takes_views=True)
as_strided.moves_elements = True  # Note [half precision]
as_strided.def_jvp(_as_strided_jvp)
as_strided.def_transpose(_as_strided_transpose)

as_strided_transpose = Primitive("as_strided_transpose")


@as_strided_transpose.def_abstract_eval
def _as_strided_transpose_shape(ct: ShapeDtype, *, size: tuple[int, ...], stride: tuple[int, ...],
                                storage_offset: int, input_shape: tuple[int, ...], input_stride: tuple[int, ...],
                                input_offset: int) -> ShapeDtype:
    if tuple(ct.shape) != tuple(size):
        raise RuntimeError(f"as_strided_transpose: cotangent of shape {tuple(ct.shape)} for an output of {tuple(size)}")
    _check_layout("as_strided_transpose", size, stride, storage_offset)
    _check_layout("as_strided_transpose", input_shape, input_stride, input_offset)
    return ShapeDtype(tuple(input_shape), ct.dtype)


def _as_strided_transpose_cpu(ct: np.ndarray, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                              input_shape: tuple[int, ...], input_stride: tuple[int, ...],
                              input_offset: int) -> np.ndarray:
    sources = strided_sources((tuple(size), tuple(stride), storage_offset),
                              (tuple(input_shape), tuple(input_stride), input_offset), "dst")
    return strided_read(ct, sources, tuple(input_shape))


def _transpose_back(ct: Any, x: Any, *, size: tuple[int, ...], stride: tuple[int, ...], storage_offset: int,
                    input_shape: tuple[int, ...], input_stride: tuple[int, ...], input_offset: int) -> list[Any]:
    return [as_strided.bind(ct, size=size, stride=stride, storage_offset=storage_offset, input_stride=input_stride,
                            input_offset=input_offset, view=False)]


as_strided_transpose.def_impl(_as_strided_transpose_cpu)
as_strided_transpose.def_impl(kernel("views", "as_strided_transpose"), device="cuda")
as_strided_transpose.def_linear(_transpose_back)
