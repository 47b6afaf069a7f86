"""The C heap under tidu's CPU arrays: freed memory is kept for the next array.

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
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds (see the module docstring); whether it applied."""
    if os.environ.get("TIDU_MALLOC", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
