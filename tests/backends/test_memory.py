"""tidu keeps freed C-heap memory for the next array (tidu/backends/cpu/memory.py): a loop
reallocating a 2 MiB array does not fault its pages in again; the collector's first threshold
is raised only from CPython's default."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest

import tidu  # noqa: F401 - importing tidu sets the thresholds
from tidu.backends.cpu import memory

# a process whose malloc returns freed memory at once, before tidu is imported: glibc's default
# 128 KiB mmap threshold, fixed (mallopt stops glibc from adapting it), and no free heap top kept
_REALLOCATE = """
import ctypes, resource, numpy as np
ctypes.CDLL(None).mallopt(-3, 128 * 1024)
ctypes.CDLL(None).mallopt(-1, 0)
import tidu
np.ones(1 << 19, np.float32)  # 2 MiB: below numpy's huge-page size, above glibc's default 128 KiB
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    np.ones(1 << 19, np.float32)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


@pytest.mark.skipif(not memory.glibc(), reason="glibc's malloc parameters")
def test_a_reallocated_array_reuses_its_pages():
    """In a fresh process: the heap's state after other tests would decide the count here. (Without
    tidu's parameters, ``TIDU_MALLOC=0``, the same process faults in every page, 10260, on the
    project's machine; glibc builds differ in what they do there, so that is not asserted.)"""
    env = {k: v for k, v in os.environ.items() if k != "TIDU_MALLOC"}
    faults = int(subprocess.run([sys.executable, "-c", _REALLOCATE], env=env, capture_output=True, text=True,
                                check=True).stdout.split()[-1])
    assert faults < 20 * 512 // 4, f"{faults} page faults for 20 arrays of 512 pages"


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("TIDU_MALLOC", "0")
    assert not memory.keep_freed_memory()


def test_the_collector_threshold_is_raised_only_from_the_default(monkeypatch):
    monkeypatch.delenv("TIDU_GC", raising=False)
    before = gc.get_threshold()
    try:
        gc.set_threshold(*memory.DEFAULT_THRESHOLD)
        assert memory.collect_less()
        assert gc.get_threshold() == (memory.FIRST_GENERATION, 10, 10)
        gc.set_threshold(500, 5, 5)  # the user's own: kept
        assert not memory.collect_less()
        assert gc.get_threshold() == (500, 5, 5)
        gc.set_threshold(*memory.DEFAULT_THRESHOLD)
        monkeypatch.setenv("TIDU_GC", "0")
        assert not memory.collect_less()
        assert gc.get_threshold() == memory.DEFAULT_THRESHOLD
    finally:
        gc.set_threshold(*before)
