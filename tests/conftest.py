"""Shared test setup: import paths for the examples and the engine's scalar test op set."""

import ctypes
import os
import sys
from pathlib import Path

import pytest


def _has_cuda_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


# Without a GPU, the CUDA code paths run on Numba's simulator (set before numba is imported).
if not _has_cuda_driver():
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "examples", ROOT / "tests" / "ad"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "smoke: fast subset for the edit loop (python -m pytest -m smoke)")
