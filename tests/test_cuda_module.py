"""``tidu.cuda``'s answers match a CPU build of PyTorch, so device-picking scripts run on the CPU."""

from __future__ import annotations

import torch

import tidu


def test_device_queries_match_a_cpu_build_of_torch() -> None:
    assert tidu.cuda.is_available() is False and torch.cuda.is_available() is False
    assert tidu.cuda.device_count() == torch.cuda.device_count() == 0


def test_seeding_calls_are_accepted() -> None:
    tidu.cuda.manual_seed(0)
    tidu.cuda.manual_seed_all(0)
    torch.cuda.manual_seed_all(0)


def test_a_device_picking_script_runs_on_the_cpu() -> None:
    device = tidu.device("cuda" if tidu.cuda.is_available() else "cpu")
    x = tidu.ones(3, device=device, requires_grad=True)
    (x * 2).sum().backward()
    assert x.device == tidu.device("cpu") and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_the_tf32_flag_has_pytorchs_name() -> None:
    flag = tidu.backends.cuda.matmul
    before = flag.allow_tf32
    assert before is False and torch.backends.cuda.matmul.allow_tf32 is False
    flag.allow_tf32 = True
    try:
        assert tidu.backends.cuda.matmul.allow_tf32 is True
    finally:
        flag.allow_tf32 = before
