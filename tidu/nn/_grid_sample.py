"""``affine_grid`` and ``grid_sample`` (2-D and 3-D), composed from recorded ops: sampling positions are
unnormalised and padded with differentiable arithmetic, and each tap is a gather of the input
weighted by a function of the position, so gradients reach both the input and the grid."""

from __future__ import annotations

import itertools
import warnings
from math import prod
from typing import Any

import numpy as np

from .. import ops
from ..core.autocast import policy as autocast_policy
from ..tensor import Tensor

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners: bool | None) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _base(steps: int, align_corners: bool, like: Tensor) -> Tensor:
    if steps == 1:
        return ops.zeros(1, dtype=like.dtype, device=like.device)
    coords = ops.linspace(-1.0, 1.0, steps, dtype=like.dtype, device=like.device)
    return coords if align_corners else coords * ((steps - 1) / steps)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of positions in ``[-1, 1]`` that the affine maps ``theta`` give for an
    output of ``size``: ``(N, H, W, 2)`` of ``(x, y)`` for a 2-D ``size`` ``(N, C, H, W)`` and ``theta``
    ``(N, 2, 3)``; ``(N, D, H, W, 3)`` of ``(x, y, z)`` for a 3-D ``size`` ``(N, C, D, H, W)`` and
    ``theta`` ``(N, 3, 4)``.

    >>> import tidu
    >>> identity = tidu.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> tidu.nn.functional.affine_grid(identity, (1, 1, 1, 2), align_corners=True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    >>> volume = tidu.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.5]]])
    >>> tidu.nn.functional.affine_grid(volume, (1, 1, 1, 1, 2), align_corners=True)
    tensor([[[[[-1.0000,  0.0000,  0.5000],
               [ 1.0000,  0.0000,  0.5000]]]]])
    """
    align = _align(align_corners)
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got torch.{theta.dtype.name}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    k = len(size) - 2  # spatial dims
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (k, k + 1):
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for size {size}. "
                         f"Got {theta.shape}.")
    n, spatial = size[0], size[2:]
    # the base grid (..., k + 1): x along the last dim, then y, then z; a 1 for the translation
    coords = [_base(steps, align, theta) for steps in reversed(spatial)]
    columns = []
    for i, line in enumerate(coords):
        shape = [1] * k
        shape[k - 1 - i] = spatial[k - 1 - i]
        columns.append(line.reshape(*shape).expand(*spatial))
    columns.append(ops.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = ops.stack(columns, -1)
    points = prod(spatial)
    return ops.matmul(base.reshape(1, points, k + 1), theta.transpose(1, 2)).reshape(n, *spatial, k)


def _reflect(coord: Tensor, low: float, high: float) -> Tensor:
    """``coord`` reflected back and forth into ``[low, high]``."""
    span = high - low
    if span <= 0:
        return ops.zeros_like(coord)
    distance = ops.abs(coord - low)
    flips = np.floor(distance._values() / span)
    extra = distance - ops.tensor(flips * span, dtype=coord.dtype, device=coord.device)
    even = ops.tensor(flips % 2 == 0, device=coord.device)
    return ops.where(even, extra + low, span - extra + low)


def _source_coord(coord: Tensor, size: int, padding_mode: str, align: bool) -> Tensor:
    coord = (coord + 1) / 2 * (size - 1) if align else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        coord = _reflect(coord, 0.0, size - 1.0) if align else _reflect(coord, -0.5, size - 0.5)
    if padding_mode in ("border", "reflection"):
        # clamped with PyTorch's derivative: zero on the border itself, not only beyond it
        inside = (coord > 0) & (coord < size - 1)
        coord = ops.where(inside, coord, ops.clamp(coord, 0, size - 1).detach())
    return coord


def _tap(flat: Tensor, positions: list[np.ndarray], spatial: tuple[int, ...]) -> tuple[Tensor, np.ndarray]:
    """Input values at the integer ``positions`` ``(x, y[, z])`` (each ``(N, P)``; ``spatial`` the
    input's ``(H, W)`` or ``(D, H, W)``), zero-weighted outside."""
    inside = np.ones(positions[0].shape, bool)
    index = np.zeros(positions[0].shape, np.int64)
    stride = 1
    for p, size in zip(positions, reversed(spatial)):
        inside &= (p >= 0) & (p < size)
        index += p * stride
        stride *= size
    index = np.where(inside, index, 0)
    index_t = ops.tensor(index, device=flat.device).unsqueeze(1).expand(flat.shape[0], flat.shape[1], index.shape[1])
    return ops.gather(flat, 2, index_t), inside


@autocast_policy("fp32")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` at the ``grid`` ``(N, H_out, W_out, 2)`` of ``(x, y)``
    positions in ``[-1, 1]``, or a volume ``(N, C, D, H, W)`` at ``(N, D_out, H_out, W_out, 3)`` of
    ``(x, y, z)`` (``mode`` bilinear, trilinear for a volume, or nearest; ``padding_mode`` zeros,
    border or reflection for positions outside). Differentiable in ``input`` and ``grid``.

    >>> import tidu
    >>> image = tidu.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> tidu.nn.functional.grid_sample(image, tidu.tensor([[[[0.0, 0.0], [1.0, -1.0]]]]), align_corners=True)
    tensor([[[[1.5000, 1.0000]]]])
    >>> volume = tidu.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> tidu.nn.functional.grid_sample(volume, tidu.tensor([[[[[0.0, 0.0, 0.0]]]]]), align_corners=True)
    tensor([[[[[3.5000]]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align = _align(align_corners)
    k = input.ndim - 2
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    expected = 4 if input.ndim == 4 else 5
    if input.ndim != expected or grid.ndim != expected:
        raise RuntimeError(f"grid_sampler(): expected {expected}D input and grid with same number of dimensions, but "
                           f"got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if mode == "bicubic":
        if k == 3:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("grid_sample supports modes 'bilinear' and 'nearest' (bicubic is not implemented)")
    n, c, spatial = input.shape[0], input.shape[1], tuple(input.shape[2:])
    out_spatial = tuple(grid.shape[1:-1])
    points = grid.reshape(n, prod(out_spatial), k)
    # grid coordinate i (x, y, z) runs along the input's spatial dim k - 1 - i (W, H, D)
    coords = [_source_coord(points[..., i], spatial[k - 1 - i], padding_mode, align) for i in range(k)]
    flat = input.reshape(n, c, prod(spatial))
    host = [coord._values() for coord in coords]
    if mode == "nearest":
        values, inside = _tap(flat, [np.rint(h).astype(np.int64) for h in host], spatial)
        out = values * ops.tensor(inside, dtype=input.dtype, device=input.device).unsqueeze(1)
    else:  # bilinear, trilinear: the 2**k corners, each weighted by its distances
        lows = [np.floor(h) for h in host]
        fracs = [(coord - ops.tensor(low, dtype=coord.dtype, device=coord.device)).unsqueeze(1)
                 for coord, low in zip(coords, lows)]
        out = None
        for corner in itertools.product((0, 1), repeat=k):
            weight = None
            for bit, frac in zip(corner, fracs):
                factor = frac if bit else 1 - frac
                weight = factor if weight is None else weight * factor
            values, inside = _tap(flat, [low.astype(np.int64) + bit for low, bit in zip(lows, corner)], spatial)
            mask = ops.tensor(inside, dtype=input.dtype, device=input.device).unsqueeze(1)
            term = values * (weight * mask)
            out = term if out is None else out + term
    return out.reshape(n, c, *out_spatial)
