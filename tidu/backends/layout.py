"""Array layouts the kernels of both backends read in place."""

from __future__ import annotations

from functools import lru_cache
from math import prod
from typing import Any


def storage(array: Any) -> Any:
    """The array that owns ``array``'s memory (numpy's and ``CudaArray``'s views chain to it
    through ``.base``)."""
    kind = type(array)
    while type(array.base) is kind:
        array = array.base
    return array


def repeat_period(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> int | None:
    """``p`` when a layout's row-major element ``i`` is ``vector[i % p]`` for a dense vector at its
    start (zero strides or size-1 dims first, then dims laid out densely), else ``None``.

    >>> repeat_period((4, 3), (0, 8), 8), repeat_period((4, 3), (24, 8), 8), repeat_period((3, 4), (8, 24), 8)
    (3, 12, None)
    """
    k = 0
    while k < len(shape) and (strides[k] == 0 or shape[k] == 1):
        k += 1
    step = period = 1
    for n, st in zip(reversed(shape[k:]), reversed(strides[k:])):
        if n != 1 and st != step * itemsize:
            return None
        step *= n
        period *= n
    return period


@lru_cache(maxsize=4096)  # asked per queued operand: a broadcast bias meets it every step
def in_place_layout(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> str | None:
    """How a fused loop reads a non-contiguous operand in place: ``"scalar"`` (zero strides),
    ``"row"`` (one dense row repeated: element ``c`` of every row), ``"col"`` (the last dimension
    broadcast over dense rows: one value per row), else ``None`` (copied first).

    >>> in_place_layout((4, 3), (0, 0), 8), in_place_layout((4, 3), (0, 8), 8), in_place_layout((4, 3), (8, 0), 8)
    ('scalar', 'row', 'col')
    """
    if not any(strides):
        return "scalar"
    if repeat_period(shape, strides, itemsize) == shape[-1]:
        return "row"
    if strides[-1] == 0 and repeat_period(shape[:-1], strides[:-1], itemsize) == prod(shape[:-1]):
        return "col"
    return None
