"""Fractional max pooling (Graham, 2014), PyTorch's ``fractional_max_pool2d``/``3d``: windows of a
fixed size whose starts are spread pseudo-randomly over the input, one random offset per plane
and dimension (``_random_samples`` in [0, 1), drawn when not given). The windows' starts follow
PyTorch's sequence, computed in the input's precision, so the same samples pick the same windows;
the maxima are gathered by index, so the gradient reaches each window's maximum (the last NaN, if
any, as in PyTorch)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ops
from ..core import dtypes


def _starts(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """Window starts (planes, out) for one dimension: PyTorch's ``generate_intervals``."""
    starts = np.empty((samples.shape[0], out), np.int64)
    if out > 1:
        alpha = samples.dtype.type(size - pool) / samples.dtype.type(out - 1)
        i = np.arange(out - 1, dtype=samples.dtype)
        starts[:, :-1] = ((i[None, :] + samples[:, None]) * alpha).astype(np.int64) - (samples * alpha).astype(
            np.int64)[:, None]
    if out > 0:
        starts[:, -1] = size - pool
    return starts


# which of a plane's samples each spatial dim reads, as PyTorch's kernels do: 2-D (width, height),
# 3-D (time, height, width)
_SAMPLE_OF = {2: (1, 0), 3: (0, 1, 2)}


def _sizes(value: Any, n: int, name: str) -> tuple:
    if isinstance(value, int | float):
        return (value,) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError(f"{name} must be a single number or a tuple of {n} numbers, got {value}")
    return value


def fractional_max_pool(input: Any, kernel_size: Any, output_size: Any, output_ratio: Any,  # noqa: A002
                        return_indices: bool, samples: Any, n: int) -> Any:
    """``fractional_max_pool{n}d`` over the last ``n`` dims of ``(N, C, *)`` or ``(C, *)``."""
    name = f"fractional_max_pool{n}d"
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got: {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented(name, input.dtype)
    batched = input.ndim == n + 2
    x = input if batched else input.unsqueeze(0)
    spatial = tuple(x.shape[2:])
    pool = tuple(int(k) for k in _sizes(kernel_size, n, "kernel_size"))
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _sizes(output_ratio, n, "output_ratio")
        if not all(0 < r < 1 for r in ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        output_size = tuple(int(s * r) for s, r in zip(spatial, ratio))
    out = tuple(int(o) for o in _sizes(output_size, n, "output_size"))
    names = ("time", "height", "width")[3 - n:]
    for dim_name, size, o, k in zip(names, spatial, out, pool):
        if o + k - 1 > size:
            raise RuntimeError(f"{name}(): pool {dim_name} {k} too large relative to input {dim_name} {size}")
    planes = x.shape[0] * x.shape[1]
    if samples is None:
        samples = ops.rand(x.shape[0], x.shape[1], n, dtype=x.dtype)
    elif tuple(samples.shape) != (x.shape[0], x.shape[1], n):
        raise RuntimeError(f"{name}(): expected _random_samples of shape {[x.shape[0], x.shape[1], n]}, "
                           f"got {list(samples.shape)}")
    host = np.asarray(samples.detach().to(dtypes.float32 if x.dtype.is_half else x.dtype)._host()).reshape(planes, n)
    starts = [_starts(host[:, _SAMPLE_OF[n][d]], spatial[d], out[d], pool[d]) for d in range(n)]
    values = np.asarray(x.detach().to(dtypes.float32 if x.dtype.is_half else x.dtype)._host()).reshape(planes, -1)
    strides = [math.prod(spatial[d + 1:]) for d in range(n)]
    # flat input index of each (plane, output position, window position)
    index = np.zeros((planes, *out, *pool), np.int64)
    for d in range(n):
        shape = [planes] + [1] * (2 * n)
        shape[1 + d] = out[d]
        offset_shape = [1] * (1 + 2 * n)
        offset_shape[1 + n + d] = pool[d]
        index += (starts[d].reshape(shape) + np.arange(pool[d]).reshape(offset_shape)) * strides[d]
    windows = np.take_along_axis(values, index.reshape(planes, -1), axis=1).reshape(planes, math.prod(out), -1)
    flat = index.reshape(planes, math.prod(out), -1)
    nan = np.isnan(windows)
    last_nan = windows.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
    pick = np.where(nan.any(-1), last_nan, np.argmax(windows, axis=-1))
    chosen = np.take_along_axis(flat, pick[..., None], axis=-1)[..., 0]
    chosen_t = ops.tensor(chosen.reshape(x.shape[0], x.shape[1], -1), dtype=dtypes.int64, device=x.device)
    result = ops.gather(x.reshape(x.shape[0], x.shape[1], -1), 2, chosen_t).reshape(*x.shape[:2], *out)
    indices = chosen_t.reshape(*x.shape[:2], *out)
    if not batched:
        result, indices = result.squeeze(0), indices.squeeze(0)
    return (result, indices) if return_indices else result
