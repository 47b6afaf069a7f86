"""Typical PyTorch training scripts, each run as ``torch`` and as ``tidu`` with the same weights
and data, their losses, gradients and parameters compared step by step (see ``harness.py``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from .harness import compare_runs

SCRIPTS = ["vae", "dcgan", "actor_critic", "char_lstm", "timeseries", "resnet", "transformer", "contrastive"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_matches_pytorch(name: str) -> None:
    script = importlib.import_module(f"tests.scripts.{name}")
    data = script.make_data(np.random.default_rng(0))
    compare_runs(script.main, data, **getattr(script, "TOLERANCE", {}))
