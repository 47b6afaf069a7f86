"""tidu keeps freed C-heap memory for the next array (tidu/backends/cpu/memory.py): a loop
reallocating a 2 MiB array does not fault its pages in again; the collector's first threshold
is raised only from CPython's default."""

from __future__ import annotations

import gc
import resource

import numpy as np
import pytest

import tidu  # noqa: F401 - importing tidu sets the thresholds
from tidu.backends.cpu import memory


@pytest.mark.skipif(not memory.glibc(), reason="glibc's malloc parameters")
def test_a_reallocated_array_reuses_its_pages(monkeypatch):
    monkeypatch.delenv("TIDU_MALLOC", raising=False)
    assert memory.keep_freed_memory()
    np.ones(1 << 19, np.float32)  # 2 MiB: below numpy's huge-page size, above glibc's default 128 KiB
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        np.ones(1 << 19, np.float32)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
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
