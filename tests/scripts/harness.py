"""Run one training script twice, as ``torch`` and as ``tidu``, and compare what it logs.

A script is a function ``main(torch, run)``: ``torch`` is the library module (PyTorch or tidu,
so one text serves both), and ``run`` is the :class:`Run` that connects it to the comparison:

- ``run.data`` holds the script's numpy inputs, the same arrays on both sides;
- ``run.sync(name, module)`` right after a model is built: on the PyTorch side it keeps the
  model's initial ``state_dict`` (as numpy arrays), on the tidu side it loads those values
  into the tidu model with ``load_state_dict`` (and checks that the keys are PyTorch's);
- ``run.noise(t)`` replaces a tensor drawn inside the script (``randn_like``, ...) by the same
  numpy draw on both sides, after checking its shape and dtype;
- ``run.log(name, value)`` records a loss, a gradient or a parameter, step by step.

:func:`compare_runs` runs PyTorch first, then tidu, and asserts that the two logs have the
same names in the same order and values within float32 tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tidu


def as_numpy(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "cpu"):
        value = value.cpu()
    if hasattr(value, "numpy"):
        return np.array(value.numpy(), copy=True)
    return np.asarray(value)


class Run:
    """One side of the comparison; ``reference`` is the PyTorch side's ``Run`` (None on it)."""

    def __init__(self, lib: Any, data: dict[str, np.ndarray], reference: Run | None = None) -> None:
        self.lib = lib
        self.data = data
        self.reference = reference
        self.states: dict[str, dict[str, np.ndarray]] = {}
        self.entries: list[tuple[str, np.ndarray]] = []
        self.noise_rng = np.random.default_rng(1234)

    def sync(self, name: str, module: Any) -> None:
        if self.reference is None:
            self.states[name] = {k: as_numpy(v) for k, v in module.state_dict().items()}
            return
        state = self.reference.states[name]
        keys = list(module.state_dict().keys())
        assert keys == list(state.keys()), f"{name}: state_dict keys differ\n tidu:  {keys}\n torch: {list(state)}"
        module.load_state_dict({k: self.lib.tensor(v) for k, v in state.items()})

    def noise(self, drawn: Any) -> Any:
        """The same standard normal draw on both sides, in place of ``drawn`` (same shape and dtype)."""
        assert drawn.dtype == self.lib.float32, drawn.dtype
        sample = self.noise_rng.standard_normal(tuple(drawn.shape)).astype(np.float32)
        return self.lib.tensor(sample)

    def log(self, name: str, value: Any) -> None:
        self.entries.append((name, as_numpy(value).astype(np.float64)))


def compare_runs(
    main: Callable[[Any, Run], None], data: dict[str, np.ndarray], rtol: float = 1e-4, atol: float = 1e-5
) -> tuple[Run, Run]:
    ref = Run(torch, data)
    main(torch, ref)
    got = Run(tidu, data, reference=ref)
    main(tidu, got)
    ref_names = [n for n, _ in ref.entries]
    got_names = [n for n, _ in got.entries]
    assert got_names == ref_names, f"logged names differ:\n tidu:  {got_names}\n torch: {ref_names}"
    assert ref.entries, "the script logged nothing"
    for (name, want), (_, have) in zip(ref.entries, got.entries):
        assert have.shape == want.shape, f"{name}: shape {have.shape} vs PyTorch's {want.shape}"
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=name)
    return ref, got
