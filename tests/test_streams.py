"""``tidu.Event`` and ``tidu.Stream`` (device-generic), ``tidu.cpu``, ``tidu.accelerator`` and
``tidu.get_device_module``, against PyTorch's where PyTorch does the same."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
import torch

import tidu


def test_cpu_events_time_on_the_host_clock() -> None:
    start, end = tidu.Event("cpu", enable_timing=True), tidu.Event("cpu", enable_timing=True)
    assert start.query() and start.device == tidu.device("cpu")
    start.record()
    time.sleep(0.002)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0.0  # PyTorch's CPU events cannot record (see the differences guide)
    assert end.elapsed_time(start) < 0.0


def test_recording_runs_the_queued_work_first() -> None:
    from tidu.core import deferred

    before = deferred.ENABLED
    deferred.ENABLED = True
    try:
        y = tidu.ones(32, requires_grad=True) * 2 + 1
        tidu.Event("cpu").record()
        assert not deferred.PENDING
    finally:
        deferred.ENABLED = before
    assert y.tolist() == [3.0] * 32


def test_event_errors_match_pytorchs() -> None:
    timed, untimed = tidu.Event("cpu", enable_timing=True), tidu.Event("cpu")
    with pytest.raises(ValueError, match="must be recorded"):
        timed.elapsed_time(tidu.Event("cpu", enable_timing=True))
    with pytest.raises(ValueError, match="must be recorded"):
        torch.Event(enable_timing=True).elapsed_time(torch.Event(enable_timing=True))
    timed.record()
    untimed.record()
    with pytest.raises(ValueError, match="enable_timing=True"):
        timed.elapsed_time(untimed)
    with pytest.raises(TypeError, match="must be an Event"):
        timed.elapsed_time(3)
    with pytest.raises(NotImplementedError, match="interprocess"):
        tidu.Event("cpu", interprocess=True)


def test_generic_stream_as_pytorchs() -> None:
    ours, theirs = tidu.Stream("cpu"), torch.Stream("cpu")
    assert (ours.device_type, ours.device_index, ours.stream_id) == (theirs.device_type, theirs.device_index,
                                                                     theirs.stream_id)
    assert ours.query() is theirs.query() is True
    assert ours.synchronize() is theirs.synchronize() is None
    assert ours.wait_stream(tidu.Stream("cpu")) is None and ours == tidu.Stream("cpu")
    event = ours.record_event()
    assert isinstance(event, tidu.Event) and event.query()
    with ours as entered:
        assert entered is ours
    with pytest.raises(ValueError, match="does not match"):
        tidu.Event("cuda").record(ours)


def test_default_device_is_the_accelerators() -> None:
    kind = "cuda" if tidu.cuda.is_available() else "cpu"
    assert tidu.Event().device.type == tidu.Stream().device.type == kind


def test_cpu_module_as_pytorchs() -> None:
    for name in ("is_available", "is_initialized", "device_count", "current_device"):
        assert getattr(tidu.cpu, name)() == getattr(torch.cpu, name)()
    assert tidu.cpu.set_device("cpu") is torch.cpu.set_device("cpu") is None
    assert tidu.cpu.synchronize() is torch.cpu.synchronize() is None
    s = tidu.cpu.Stream()
    assert tidu.cpu.current_stream() is not s
    with tidu.cpu.stream(s):
        assert tidu.cpu.current_stream() is s
        with tidu.cpu.stream(None):
            assert tidu.cpu.current_stream() is s
    assert tidu.cpu.current_stream() is not s
    e = tidu.cpu.Event()
    e.record(s)
    assert e.query() and torch.cpu.Event().query()


def test_get_device_module() -> None:
    assert tidu.get_device_module("cpu") is tidu.cpu and tidu.get_device_module("cuda:0") is tidu.cuda
    assert tidu.get_device_module(tidu.device("cuda")) is tidu.cuda
    assert tidu.get_device_module() is (tidu.cuda if tidu.cuda.is_available() else tidu.cpu)
    for bad in (3, "foo"):
        with pytest.raises(RuntimeError) as ours:
            tidu.get_device_module(bad)
        with pytest.raises(RuntimeError) as theirs:
            torch.get_device_module(bad)
        assert str(bad) in str(ours.value) and str(bad) in str(theirs.value)


def test_out_of_memory_error_is_the_cuda_one_and_a_runtime_error() -> None:
    assert tidu.OutOfMemoryError is tidu.cuda.OutOfMemoryError
    assert issubclass(tidu.OutOfMemoryError, RuntimeError) and issubclass(torch.OutOfMemoryError, RuntimeError)


def test_accelerator_is_the_cuda_device() -> None:
    assert tidu.accelerator.is_available() is tidu.cuda.is_available() is True  # the simulator (conftest)
    assert tidu.accelerator.current_accelerator() == tidu.device("cuda")
    assert tidu.accelerator.device_count() == 1 and tidu.accelerator.current_device_index() == 0
    assert tidu.accelerator.current_stream() == tidu.cuda.current_stream()
    tidu.accelerator.synchronize()
    assert tidu.accelerator.memory_allocated() == tidu.cuda.memory_allocated()


def test_without_an_accelerator_as_a_cpu_build() -> None:
    if tidu.backends.cuda.driver.device_count() > 0:  # a GPU: it is the accelerator
        assert tidu.accelerator.current_accelerator() == tidu.device("cuda")
        return
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    code = ("import tidu, torch\n"
            "assert tidu.accelerator.current_accelerator() is torch.accelerator.current_accelerator() is None\n"
            "assert tidu.accelerator.device_count() == torch.accelerator.device_count() == 0\n"
            "assert tidu.get_device_module() is tidu.cpu and tidu.Event().device.type == 'cpu'\n"
            "for lib in (tidu, torch):\n"
            "    try:\n        lib.accelerator.synchronize()\n"
            "    except RuntimeError as e:\n        print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.count("Cannot access accelerator device when none is available.") == 2
