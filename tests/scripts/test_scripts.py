"""Typical PyTorch training scripts, each run as ``torch`` and as ``tidu`` with the same weights
and data, their losses, gradients and parameters compared step by step (see ``harness.py``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import tidu

from .harness import compare_runs

SCRIPTS = ["vae", "dcgan", "actor_critic", "char_lstm", "timeseries", "resnet", "transformer", "contrastive"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_matches_pytorch(name: str) -> None:
    script = importlib.import_module(f"tests.scripts.{name}")
    data = script.make_data(np.random.default_rng(0))
    compare_runs(script.main, data, **getattr(script, "TOLERANCE", {}))


def test_the_comparison_sees_a_difference() -> None:
    """The harness fails on a value off by 1e-3, and on a log that differs in its names."""

    def off_by_a_little(torch_like, run) -> None:  # noqa: ANN001
        run.log("x", torch_like.tensor([1.0, 2.0]) * (2.002 if torch_like is tidu else 2.0))

    def other_names(torch_like, run) -> None:  # noqa: ANN001
        run.log("tidu" if torch_like is tidu else "torch", 1.0)

    with pytest.raises(AssertionError, match="x"):
        compare_runs(off_by_a_little, {})
    with pytest.raises(AssertionError, match="logged names differ"):
        compare_runs(other_names, {})
