"""Constants: ``full`` (a value of a given shape) and ``literal`` (a captured tensor)."""

from __future__ import annotations

import numpy as np

from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import dtype, wrap
from ..core.primitive import Literal, Primitive

full = Primitive("full", nondiff=True)


@full.def_abstract_eval
def _full_shape(*, shape: tuple[int, ...], value: float, dtype: dtype, device: str = "cpu") -> ShapeDtype:
    return ShapeDtype(tuple(shape), dtype, device)


full.def_impl(lambda *, shape, value, dtype, device="cpu": np.full(shape, wrap(value, dtype), dtype.np))
full.def_impl(kernel("elementwise", "fill"), device="cuda")

literal = Primitive("literal", nondiff=True)


@literal.def_abstract_eval
def _literal_shape(*, value: Literal) -> ShapeDtype:
    return value.tensor.aval


literal.def_impl(lambda *, value: value.tensor._data)
literal.def_impl(lambda *, value: value.tensor._data, device="cuda", takes_views=True)
literal.moves_elements = True  # Note [half precision]
