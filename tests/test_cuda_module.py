"""``tidu.cuda``'s queries: a GPU or the simulator makes the device available; without either
the answers match a CPU build of PyTorch, so device-picking scripts run on the CPU."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
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


def test_cuda_events_time_work_on_the_stream() -> None:
    start, end = tidu.cuda.Event(enable_timing=True), tidu.cuda.Event(enable_timing=True)
    assert start.query() and isinstance(start, tidu.Event) and start.device == tidu.device("cuda", 0)
    start.record()
    y = tidu.ones(64, device="cuda") * 2
    end.record(tidu.cuda.current_stream())
    end.wait()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    assert y.sum().item() == 128.0


def test_cuda_event_errors_are_runtime_errors_as_pytorchs() -> None:
    timed, untimed = tidu.cuda.Event(enable_timing=True), tidu.cuda.Event()
    with pytest.raises(RuntimeError, match="must be recorded"):
        timed.elapsed_time(tidu.cuda.Event(enable_timing=True))
    timed.record()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        timed.elapsed_time(untimed)


def test_cuda_streams_are_generic_streams() -> None:
    s = tidu.cuda.Stream()
    assert isinstance(s, tidu.Stream) and s.device_type == 1 and s.device_index == 0
    assert s == tidu.cuda.current_stream() == tidu.cuda.default_stream()
    event = s.record_event()
    assert isinstance(event, tidu.Event) and event.device.type == "cuda" and event.query()
    s.wait_event(event)
    assert s.query()
    assert tidu.Stream("cuda").device == s.device
