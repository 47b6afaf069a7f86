"""The on-disk kernel cache follows edits of the scalar functions kernels are made from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tidu.backends.cpu.elementwise import code_token

ROOT = Path(__file__).resolve().parents[2]


def _plus_one(x):  # noqa: ANN001, ANN202
    return x + 1.0


def _plus_two(x):  # noqa: ANN001, ANN202
    return x + 2.0


def _also_plus_one(x):  # noqa: ANN001, ANN202
    return x + 1.0


def test_code_token_follows_the_code_not_the_name() -> None:
    assert code_token(_plus_one) != code_token(_plus_two)
    assert code_token(_plus_one) == code_token(_also_plus_one)


@pytest.mark.slow
def test_edited_scalar_function_recompiles_its_cached_kernel(tmp_path: Path) -> None:
    """Two processes share a cache directory; the second sees the edited scalar function."""
    (tmp_path / "scalar_fns.py").write_text("def f(x):\n    return x + 1.0\n")
    script = (
        "import numpy as np, scalar_fns\n"
        "from tidu.backends.cpu.elementwise import unary_kernel\n"
        "print(unary_kernel(scalar_fns.f)(np.zeros(1), np.dtype('float64'))[0])\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert run() == "1.0"
    (tmp_path / "scalar_fns.py").write_text("def f(x):\n    return x + 2.0\n")
    assert run() == "2.0"
