"""Shared test setup: import paths for the examples and the engine's scalar test op set."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "examples", ROOT / "tests" / "ad"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "smoke: fast subset for the edit loop (python -m pytest -m smoke)")
