"""``affine_grid`` and ``grid_sample`` (2-D), composed from recorded ops: sampling positions are
unnormalised and padded with differentiable arithmetic, and each tap is a gather of the input
weighted by a function of the position, so gradients reach both the input and the grid."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import ops
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
    """The sampling grid ``(N, H, W, 2)`` of ``(x, y)`` positions in ``[-1, 1]`` that the affine
    maps ``theta`` ``(N, 2, 3)`` give for an output of ``size`` ``(N, C, H, W)``.

    >>> import tidu
    >>> identity = tidu.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> tidu.nn.functional.affine_grid(identity, (1, 1, 1, 2), align_corners=True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    align = _align(align_corners)
    size = tuple(int(s) for s in size)
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D sizes, for 2D affine transforms; got size {size}.")
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                         f"Got {theta.shape}.")
    n, _, h, w = size
    ys, xs = _base(h, align, theta), _base(w, align, theta)
    base = ops.stack([xs.reshape(1, w).expand(h, w), ys.reshape(h, 1).expand(h, w), ops.ones_like(xs).reshape(1, w)
                      .expand(h, w)], -1)
    return ops.matmul(base.reshape(1, h * w, 3), theta.transpose(1, 2)).reshape(n, h, w, 2)


def _reflect(coord: Tensor, low: float, high: float) -> Tensor:
    """``coord`` reflected back and forth into ``[low, high]``."""
    span = high - low
    if span <= 0:
        return ops.zeros_like(coord)
    distance = ops.abs(coord - low)
    flips = np.floor(distance.detach().cpu().numpy() / span)
    extra = distance - ops.tensor(flips * span, dtype=coord.dtype, device=coord.device)
    even = ops.tensor(flips % 2 == 0, device=coord.device)
    return ops.where(even, extra + low, span - extra + low)


def _source_coord(coord: Tensor, size: int, padding_mode: str, align: bool) -> Tensor:
    coord = (coord + 1) / 2 * (size - 1) if align else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        coord = _reflect(coord, 0.0, size - 1.0) if align else _reflect(coord, -0.5, size - 0.5)
    if padding_mode in ("border", "reflection"):
        coord = ops.clamp(coord, 0, size - 1)
    return coord


def _tap(flat: Tensor, xs: np.ndarray, ys: np.ndarray, height: int, width: int) -> tuple[Tensor, np.ndarray]:
    """Input values at integer positions ``(xs, ys)`` (each ``(N, P)``), zero-weighted outside."""
    inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
    index = np.where(inside, ys * width + xs, 0).astype(np.int64)
    index_t = ops.tensor(index, device=flat.device).unsqueeze(1).expand(flat.shape[0], flat.shape[1], index.shape[1])
    return ops.gather(flat, 2, index_t), inside


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",  # noqa: A002
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` at the ``grid`` ``(N, H_out, W_out, 2)`` of ``(x, y)``
    positions in ``[-1, 1]`` (``mode`` bilinear or nearest; ``padding_mode`` zeros, border or
    reflection for positions outside).

    >>> import tidu
    >>> image = tidu.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> tidu.nn.functional.grid_sample(image, tidu.tensor([[[[0.0, 0.0], [1.0, -1.0]]]]), align_corners=True)
    tensor([[[[1.5000, 1.0000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" or input.ndim != 4:
        raise NotImplementedError("grid_sample supports 4-D inputs with modes 'bilinear' and 'nearest'")
    align = _align(align_corners)
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    n, c, height, width = input.shape
    out_h, out_w = grid.shape[1], grid.shape[2]
    points = grid.reshape(n, out_h * out_w, 2)
    x = _source_coord(points[..., 0], width, padding_mode, align)
    y = _source_coord(points[..., 1], height, padding_mode, align)
    flat = input.reshape(n, c, height * width)
    x_np, y_np = x.detach().cpu().numpy(), y.detach().cpu().numpy()
    if mode == "nearest":
        values, inside = _tap(flat, np.rint(x_np).astype(np.int64), np.rint(y_np).astype(np.int64), height, width)
        out = values * ops.tensor(inside, dtype=input.dtype, device=input.device).unsqueeze(1)
    else:
        x0, y0 = np.floor(x_np), np.floor(y_np)
        fx = (x - ops.tensor(x0, dtype=x.dtype, device=x.device)).unsqueeze(1)
        fy = (y - ops.tensor(y0, dtype=y.dtype, device=y.device)).unsqueeze(1)
        out = None
        for dx, wx in ((0, 1 - fx), (1, fx)):
            for dy, wy in ((0, 1 - fy), (1, fy)):
                values, inside = _tap(flat, x0.astype(np.int64) + dx, y0.astype(np.int64) + dy, height, width)
                mask = ops.tensor(inside, dtype=input.dtype, device=input.device).unsqueeze(1)
                term = values * (wx * wy * mask)
                out = term if out is None else out + term
    return out.reshape(n, c, out_h, out_w)
