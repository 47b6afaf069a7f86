"""The process's memory managers, set for training loops when tidu is imported.

The C heap under tidu's CPU arrays: freed memory is kept for the next array.

glibc's ``malloc`` serves a large request (128 KiB at first, adapting upwards) with a fresh
``mmap`` and returns it to the system on ``free``; the heap's top is also handed back once
128 KiB of it is free. A training step frees and reallocates the same large arrays every
iteration, so each new array is faulted in again page by page: on the benchmark machine a
fresh 1 MiB output costs ~0.4 ms of page faults, and a transformer block's step spent a third
of its time there (``python bench/peers.py`` hides it: PyTorch's allocations in the same
process happen to raise glibc's adaptive threshold).

``keep_freed_memory()`` (called when tidu is imported) sets glibc's thresholds to keep that
memory: arrays below 32 MiB (glibc's own upper bound for its adaptive threshold) come from the
heap, and up to 256 MiB of free heap top stays with the process. Set ``TIDU_MALLOC=0`` to leave
malloc alone. Linux with glibc only; elsewhere nothing changes.

Python's cyclic collector: a step records a graph of small objects (tape nodes, keys, saved
values) that lives until its backward. With the default first-generation threshold (700
allocations) the collector runs every few ops and promotes the live graph to the oldest
generation, whose full collections then rescan it. ``collect_less()`` raises that threshold to
10000 when it is still Python's default (W5, an RNN of 600 recorded ops a step: 1.70-1.73 to
1.57-1.59 of PyTorch's time); ``TIDU_GC=0`` leaves the collector alone. tidu also freezes
the objects alive at import (``gc.freeze``, in tidu/__init__.py).
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def glibc() -> bool:
    """Whether this process runs on glibc (whose ``mallopt`` parameters these are)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        return False


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds (see the module docstring); whether it applied."""
    if os.environ.get("TIDU_MALLOC", "1") == "0" or not glibc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


DEFAULT_THRESHOLD = (700, 10, 10)  # CPython's, before 3.13
FIRST_GENERATION = 10000


def collect_less() -> bool:
    """Raise the collector's first-generation threshold (see the module docstring) when it is
    CPython's default; whether it applied."""
    if os.environ.get("TIDU_GC", "1") == "0" or gc.get_threshold() != DEFAULT_THRESHOLD:
        return False
    gc.set_threshold(FIRST_GENERATION, *DEFAULT_THRESHOLD[1:])
    return True
