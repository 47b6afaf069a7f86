"""``slice`` and ``pad``: each the other's transpose (XLA's strided slice and interior padding)."""

from __future__ import annotations

import numpy as np

from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.primitive import Primitive
from ._batching import unary as batch_unary

slice_p = Primitive("slice")


def _sliced_len(start: int, limit: int, stride: int) -> int:
    return max(0, (limit - start + stride - 1) // stride)


@slice_p.def_abstract_eval
def _slice_shape(x: ShapeDtype, *, start_indices: tuple, limit_indices: tuple, strides: tuple) -> ShapeDtype:
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise RuntimeError(f"slice: expected {x.ndim} start, limit and stride values for shape {tuple(x.shape)}")
    for d, (s, e, k) in enumerate(zip(start_indices, limit_indices, strides)):
        if not (0 <= s <= e <= x.shape[d]) or k < 1:
            raise IndexError(f"slice: [{s}:{e}:{k}] is out of range for dimension {d} of size {x.shape[d]}")
    shape = tuple(_sliced_len(s, e, k) for s, e, k in zip(start_indices, limit_indices, strides))
    return ShapeDtype(shape, x.dtype)


def _slice_impl(x: np.ndarray, *, start_indices: tuple, limit_indices: tuple, strides: tuple) -> np.ndarray:
    return x[tuple(slice(s, e, k) for s, e, k in zip(start_indices, limit_indices, strides))]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):  # noqa: ANN001, ANN202
    config = []
    for n, s, m, k in zip(x.shape, start_indices, ct.shape, strides):
        used = s + (m - 1) * k + 1 if m else s
        config.append((s, n - used, k - 1))
    return [pad.bind(ct, padding_config=tuple(config))]


slice_p.def_impl(_slice_impl)
slice_p.def_impl(kernel("views", "slice_view"), device="cuda",
                 takes_views=True)
slice_p.moves_elements = True  # Note [half precision]
slice_p.def_linear(_slice_transpose)
slice_p.def_batch(batch_unary(lambda x, *, start_indices, limit_indices, strides: slice_p.bind(
    x, start_indices=(0, *start_indices), limit_indices=(x.shape[0], *limit_indices), strides=(1, *strides))))

pad = Primitive("pad")


def _padded_len(n: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + n + max(0, n - 1) * interior


@pad.def_abstract_eval
def _pad_shape(x: ShapeDtype, *, padding_config: tuple) -> ShapeDtype:
    if len(padding_config) != x.ndim:
        raise RuntimeError(f"pad: expected {x.ndim} (low, high, interior) triples, got {len(padding_config)}")
    for lo, hi, interior in padding_config:
        if lo < 0 or hi < 0 or interior < 0:
            raise RuntimeError(f"pad: negative padding {(lo, hi, interior)} is not supported")
    shape = tuple(_padded_len(n, *c) for n, c in zip(x.shape, padding_config))
    return ShapeDtype(shape, x.dtype)


def _pad_impl(x: np.ndarray, *, padding_config: tuple) -> np.ndarray:
    shape = tuple(_padded_len(n, *c) for n, c in zip(x.shape, padding_config))
    out = np.zeros(shape, x.dtype)
    index = tuple(slice(lo, lo + (n - 1) * (i + 1) + 1 if n else lo, i + 1)
                  for n, (lo, _, i) in zip(x.shape, padding_config))
    out[index] = x
    return out


def _pad_transpose(ct, x, *, padding_config):  # noqa: ANN001, ANN202
    starts = tuple(lo for lo, _, _ in padding_config)
    limits = tuple(lo + (n - 1) * (i + 1) + 1 if n else lo for n, (lo, _, i) in zip(x.shape, padding_config))
    strides = tuple(i + 1 for _, _, i in padding_config)
    return [slice_p.bind(ct, start_indices=starts, limit_indices=limits, strides=strides)]


pad.def_impl(_pad_impl)
pad.def_impl(kernel("structural", "pad"), device="cuda")
pad.def_linear(_pad_transpose)
pad.def_batch(batch_unary(lambda x, *, padding_config: pad.bind(x, padding_config=((0, 0, 0), *padding_config))))
