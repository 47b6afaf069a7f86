"""``tidu.cuda``'s queries: a GPU or the simulator makes the device available; without either
the answers match a CPU build of PyTorch, so device-picking scripts run on the CPU."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

import tidu
from tidu.backends.cuda import driver


def test_device_queries_follow_the_runtime() -> None:
    simulated = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    expected = simulated or driver.device_count() > 0
    assert tidu.cuda.is_available() is expected
    assert tidu.cuda.device_count() == int(expected)


def test_without_gpu_or_simulator_it_is_a_cpu_build() -> None:
    if driver.device_count() > 0:
        assert tidu.cuda.is_available()
        return
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = ("import tidu, torch; assert tidu.cuda.is_available() is torch.cuda.is_available() is False; "
            "assert tidu.cuda.device_count() == 0\n"
            "try:\n    tidu.zeros(1, device='cuda')\nexcept RuntimeError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "Found no NVIDIA driver" in out.stdout


def test_seeding_calls_are_accepted() -> None:
    tidu.cuda.manual_seed(0)
    tidu.cuda.manual_seed_all(0)
    torch.cuda.manual_seed_all(0)


def test_a_device_picking_script_runs_where_it_picked() -> None:
    device = tidu.device("cuda" if tidu.cuda.is_available() else "cpu")
    x = tidu.ones(3, device=device, requires_grad=True)
    (x * 2).backward(tidu.ones(3, device=device))
    assert x.device.type == device.type and x.grad.device.type == device.type
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_the_tf32_flag_has_pytorchs_name() -> None:
    flag = tidu.backends.cuda.matmul
    before = flag.allow_tf32
    assert before is False and torch.backends.cuda.matmul.allow_tf32 is False
    flag.allow_tf32 = True
    try:
        assert tidu.backends.cuda.matmul.allow_tf32 is True
    finally:
        flag.allow_tf32 = before
