"""``use_deterministic_algorithms`` and the debug mode against PyTorch's flags and errors; the CUDA
``scatter_add`` under it adds without atomics, in the CPU's order (the same bits)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error
from tidu.backends.cuda import index as cuda_index


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    for lib in (torch, tidu):
        lib.use_deterministic_algorithms(False)


@pytest.mark.parametrize("mode,warn_only", [(True, False), (True, True), (False, True), (False, False)])
def test_flags_match_torch(mode: bool, warn_only: bool) -> None:
    for lib in (torch, tidu):
        lib.use_deterministic_algorithms(mode, warn_only=warn_only)
    assert tidu.are_deterministic_algorithms_enabled() is torch.are_deterministic_algorithms_enabled() is mode
    assert tidu.is_deterministic_algorithms_warn_only_enabled() is torch.is_deterministic_algorithms_warn_only_enabled()
    assert tidu.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()


@pytest.mark.parametrize("level", ["default", "warn", "error", 0, 1, 2, True])
def test_debug_mode_matches_torch(level: object) -> None:
    for lib in (torch, tidu):
        lib.set_deterministic_debug_mode(level)
    assert tidu.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert tidu.are_deterministic_algorithms_enabled() is torch.are_deterministic_algorithms_enabled()
    assert tidu.is_deterministic_algorithms_warn_only_enabled() is torch.is_deterministic_algorithms_warn_only_enabled()


@pytest.mark.parametrize("call", [
    "L.use_deterministic_algorithms(1)", "L.use_deterministic_algorithms(True, warn_only=1)",
    "L.use_deterministic_algorithms(None)", "L.set_deterministic_debug_mode('x')",
    "L.set_deterministic_debug_mode(5)", "L.set_deterministic_debug_mode(1.0)",
])
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def _scatter_programs(device: str) -> list[tidu.Tensor]:
    """Float sums into repeated targets: index_add, the gradients of gather and embedding."""
    rng = np.random.default_rng(0)
    target = tidu.zeros(4, 3, device=device)
    index = tidu.tensor(rng.integers(0, 4, 50), device=device)
    values = tidu.tensor(rng.standard_normal((50, 3)).astype(np.float32), device=device)
    added = target.index_add(0, index, values)
    x = tidu.tensor(rng.standard_normal((5, 6)).astype(np.float32), device=device, requires_grad=True)
    picks = tidu.tensor(rng.integers(0, 6, (5, 40)), device=device)
    (x.gather(1, picks) * tidu.tensor(rng.standard_normal((5, 40)).astype(np.float32), device=device)).sum().backward()
    weight = tidu.tensor(rng.standard_normal((3, 2)), device=device, requires_grad=True)
    tidu.nn.functional.embedding(tidu.tensor(rng.integers(0, 3, (7, 9)), device=device), weight).pow(2).sum().backward()
    return [added, x.grad, weight.grad]


def test_cuda_scatter_add_is_ordered_under_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    ordered = cuda_index._scatter_add_in_order
    monkeypatch.setattr(cuda_index, "_scatter_add_in_order", lambda *a: calls.append(1) or ordered(*a))
    cpu = _scatter_programs("cpu")
    _scatter_programs("cuda")
    assert not calls  # atomics by default
    tidu.use_deterministic_algorithms(True)
    for _ in range(2):
        for ours, ref in zip(_scatter_programs("cuda"), cpu):
            assert ours.device.type == "cuda"
            np.testing.assert_array_equal(ours.cpu().numpy(), ref.numpy())  # the same bits as the CPU's
    assert len(calls) == 6


def test_integer_scatter_add_keeps_atomics(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(cuda_index, "_scatter_add_in_order", lambda *a: calls.append(1))
    tidu.use_deterministic_algorithms(True)
    out = tidu.zeros(3, dtype=tidu.int64, device="cuda").index_add(
        0, tidu.tensor([0, 2, 2, 0], device="cuda"), tidu.tensor([1, 2, 3, 4], device="cuda"))
    assert out.cpu().tolist() == [5, 0, 5] and not calls  # exact in any order
