"""The copying structural primitives on the device: ``pad``, ``rev`` and ``concatenate``.

Each is one strided copy per operand (``strided.copy``): ``rev`` reads with negated strides,
``pad`` writes the (cropped, for negative padding) input into a zeroed output with strides
spread by the interior padding, and ``concatenate`` writes each operand into its block.
"""

from __future__ import annotations

import functools

from .memory import CudaArray
from .strided import copy, element_strides, zeros


def rev(x: CudaArray, *, dimensions: tuple[int, ...]) -> CudaArray:
    out = CudaArray.empty(x.shape, x.dtype)
    strides = element_strides(x.shape)
    start = sum((x.shape[d] - 1) * strides[d] for d in dimensions if x.shape[d])
    src = tuple(-st if d in dimensions else st for d, st in enumerate(strides))
    copy(x, out, x.shape, src, strides, start)
    return out


@functools.lru_cache(maxsize=4096)
def _pad_plan(shape: tuple[int, ...], padding_config: tuple) -> tuple:
    """(output shape, copied region, its source and destination strides and starts)."""
    out_shape = tuple(lo + hi + n + max(0, n - 1) * i for n, (lo, hi, i) in zip(shape, padding_config))
    src_strides, out_strides = element_strides(shape), element_strides(out_shape)
    region, src_start, dst_start, dst_strides = [], 0, 0, []
    for n, (lo, _, interior), size, s_st, o_st in zip(shape, padding_config, out_shape, src_strides, out_strides):
        step = interior + 1
        first = (-lo + step - 1) // step if lo < 0 else 0  # the first element landing inside the output
        last = min(n, (size - 1 - lo) // step + 1) if size - 1 - lo >= 0 else 0
        region.append(max(last - first, 0))
        src_start += first * s_st
        dst_start += (lo + first * step) * o_st
        dst_strides.append(step * o_st)
    return out_shape, tuple(region), src_strides, tuple(dst_strides), src_start, dst_start


def pad(x: CudaArray, *, padding_config: tuple) -> CudaArray:
    out_shape, region, src_strides, dst_strides, src_start, dst_start = _pad_plan(x.shape, padding_config)
    out = zeros(out_shape, x.dtype)
    if all(region):
        copy(x, out, region, src_strides, dst_strides, src_start, dst_start)
    return out


def concatenate(*xs: CudaArray, dimension: int) -> CudaArray:
    shape = list(xs[0].shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    out = CudaArray.empty(tuple(shape), xs[0].dtype)
    out_strides = element_strides(tuple(shape))
    offset = 0
    for x in xs:
        copy(x, out, x.shape, element_strides(x.shape), out_strides, 0, offset * out_strides[dimension])
        offset += x.shape[dimension]
    return out
