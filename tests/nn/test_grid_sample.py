"""``F.affine_grid`` and ``F.grid_sample`` (2-D and 3-D) against PyTorch: values, gradients with respect
to the input, the grid and ``theta``, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: list[Any], ref: list[Any]) -> None:
    for a, b in zip(ours, ref, strict=True):
        assert _np(a).shape == _np(b).shape
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 3, 4, 5, 3), (1, 2, 1, 3, 2)])
def test_affine_grid_matches_torch(align_corners: bool, size: tuple[int, ...]) -> None:
    k = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((size[0], k, k + 1))
    results = []
    for lib in (torch, tidu):
        t = lib.tensor(theta, requires_grad=True)
        grid = lib.nn.functional.affine_grid(t, size, align_corners=align_corners)
        (grid * lib.linspace(-1, 1, grid.numel(), dtype=lib.float64).reshape(grid.shape)).sum().backward()
        results.append([grid, t.grad])
    _close(results[1], results[0])


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_matches_torch(mode: str, padding_mode: str, align_corners: bool) -> None:
    rng = np.random.default_rng(1)
    image = rng.standard_normal((2, 3, 4, 5))
    grid = rng.uniform(-2.7, 2.7, (2, 6, 7, 2))  # well outside [-1, 1] too, for the padding modes
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(image, requires_grad=True)
        g = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        (out * lib.linspace(-1, 1, out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        results.append([out, x.grad] + ([g.grad] if mode == "bilinear" else []))
    _close(results[1], results[0])


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d_matches_torch(mode: str, padding_mode: str, align_corners: bool) -> None:
    """A volume (N, C, D, H, W) at a grid (N, D', H', W', 3): trilinear ('bilinear') or nearest."""
    rng = np.random.default_rng(3)
    volume = rng.standard_normal((2, 2, 3, 4, 5))
    grid = rng.uniform(-2.7, 2.7, (2, 2, 3, 4, 3))
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(volume, requires_grad=True)
        g = lib.tensor(grid, requires_grad=True)
        out = lib.nn.functional.grid_sample(x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        (out * lib.linspace(-1, 1, out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        results.append([out, x.grad] + ([g.grad] if mode == "bilinear" else []))
    _close(results[1], results[0])


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d_gradcheck(padding_mode: str) -> None:
    """Finite differences of the trilinear sampling in the volume and the grid, to second order
    (the grid's second derivative through the weights' products)."""
    rng = np.random.default_rng(4)
    x = tidu.tensor(rng.standard_normal((1, 2, 2, 3, 3)), requires_grad=True)
    g = tidu.tensor(rng.uniform(-1.3, 1.3, (1, 2, 2, 1, 3)), requires_grad=True)

    def fn(x: Any, g: Any) -> Any:
        return tidu.nn.functional.grid_sample(x, g, padding_mode=padding_mode, align_corners=False)

    assert tidu.autograd.gradcheck(fn, (x, g))
    assert tidu.autograd.gradgradcheck(fn, (x, g))


def test_grid_sample_3d_on_cuda_matches_cpu() -> None:
    rng = np.random.default_rng(5)
    volume, theta = rng.standard_normal((1, 2, 3, 3, 4)), rng.standard_normal((1, 3, 4)) * 0.5
    results = []
    for device in ("cpu", "cuda"):
        x = tidu.tensor(volume, device=device, requires_grad=True)
        t = tidu.tensor(theta, device=device, requires_grad=True)
        grid = tidu.nn.functional.affine_grid(t, (1, 2, 2, 3, 2), align_corners=True)
        out = tidu.nn.functional.grid_sample(x, grid, padding_mode="border", align_corners=True)
        out.square().sum().backward()
        assert out.device.type == device
        results.append([out.cpu(), x.grad.cpu(), t.grad.cpu()])
    _close(results[1], results[0])


def test_grid_sample_of_an_affine_grid_matches_torch() -> None:
    image = np.random.default_rng(2).standard_normal((1, 2, 5, 5))
    theta = np.array([[[0.8, -0.3, 0.1], [0.4, 0.9, -0.2]]])
    results = []
    for lib in (torch, tidu):
        x, t = lib.tensor(image, requires_grad=True), lib.tensor(theta, requires_grad=True)
        out = lib.nn.functional.grid_sample(x, lib.nn.functional.affine_grid(t, (1, 2, 4, 6), align_corners=False),
                                            align_corners=False)
        out.square().sum().backward()
        results.append([out, x.grad, t.grad])
    _close(results[1], results[0])


ERRORS: dict[str, Callable[[Any], Any]] = {
    "theta-shape": lambda L: L.nn.functional.affine_grid(L.ones(2, 3), (1, 1, 2, 3), align_corners=False),
    "mode": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), mode="bicubix",
                                                  align_corners=False),
    "padding-mode": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2), L.zeros(1, 1, 1, 2), padding_mode="x",
                                                          align_corners=False),
    "batch": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2), L.zeros(2, 1, 1, 2), align_corners=False),
    "theta-shape-3d": lambda L: L.nn.functional.affine_grid(L.ones(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
    "size-dims": lambda L: L.nn.functional.affine_grid(L.ones(1, 3, 4), (1, 1, 2, 2, 2, 2), align_corners=False),
    "grid-last-3d": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 2, 2, 2),
                                                          align_corners=False),
    "grid-dims": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 2, 2, 3),
                                                       align_corners=False),
    "bicubic-3d": lambda L: L.nn.functional.grid_sample(L.ones(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 2, 3),
                                                        mode="bicubic", align_corners=False),
    "batch-3d": lambda L: L.nn.functional.grid_sample(L.ones(2, 1, 2, 2, 2), L.zeros(1, 1, 2, 2, 3),
                                                      align_corners=False),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    with pytest.raises(Exception) as ref:
        ERRORS[name](torch)
    with pytest.raises(type(ref.value)) as ours:
        ERRORS[name](tidu)
    assert str(ours.value) == str(ref.value).replace("torch.", "tidu.")


def test_default_align_corners_warns_like_torch() -> None:
    for lib in (torch, tidu):
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            lib.nn.functional.grid_sample(lib.ones(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))
