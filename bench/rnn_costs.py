"""Where W5's time goes: its RNN's forward, recording and backward, tidu beside PyTorch and numpy
(CPU, one thread).

    python bench/rnn_costs.py            # about a minute
    python bench/rnn_costs.py --quick    # a few seconds, noisier

W5 (bench/peers.py) runs ``h = tanh(x[t] @ Wx + h @ Wh + b)`` for 100 steps, then backward. This
script splits one pass into the forward with grad (what the user's loop pays, recording
included), the forward under ``no_grad`` (the same binds and kernels, nothing recorded) and the
backward, for tidu and PyTorch, beside numpy's hand-written forward and backpropagation through
time (``peers.w5_rnn``'s floor). It runs the loop twice: at W5's size (hidden 128, batch 32),
and shrunk to hidden 4, batch 1, where the arithmetic is next to nothing and each figure is the
host's cost of a time step: its Python (tidu's) or C++ (PyTorch's) per op. Figures are the
median over interleaved passes: milliseconds a pass at W5's size, microseconds a time step
shrunk.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ``bench`` importable as a package
import tidu
from bench import peers

LIBS = {"tidu": tidu, "torch": torch}
STEPS = 100


def rnn(lib: Any, hidden: int, batch: int) -> dict[str, Callable[[], Any]]:
    """The pieces of one W5 pass on ``lib`` (``peers.rnn_loop``): ``forward`` (grad),
    ``no_grad`` (the forward, nothing recorded) and ``backward`` (of the last ``forward``,
    returning ``Wh``'s gradient)."""
    run, (Wx, Wh, b) = peers.rnn_loop(lib, *peers.rnn_data(STEPS, hidden, batch))
    loss: list[Any] = []

    def forward() -> None:
        loss[:] = [run()]

    def no_grad() -> None:
        with lib.no_grad():
            run()

    def backward() -> Any:
        loss.pop().backward()
        g = Wh.grad
        Wx.grad = Wh.grad = b.grad = None
        return g

    return {"no_grad": no_grad, "forward": forward, "backward": backward}


def by_hand(hidden: int, batch: int) -> dict[str, Callable[[], Any]]:
    """numpy's forward and backpropagation through time (``peers.rnn_by_hand``)."""
    forward, backward = peers.rnn_by_hand(*peers.rnn_data(STEPS, hidden, batch))
    return {"forward": forward, "backward": backward}


def timed(pieces: dict[str, dict[str, Callable[[], Any]]], budget: float) -> dict[str, dict[str, float]]:
    """Median seconds of each piece, the libraries' passes interleaved: each pass runs ``no_grad``,
    then ``forward`` and ``backward``."""
    samples: dict[str, dict[str, list[float]]] = {lib: {k: [] for k in p} for lib, p in pieces.items()}
    for p in pieces.values():  # compiled and cached before timing
        for _ in range(5):
            for fn in p.values():
                fn()
    clock = time.perf_counter
    end = clock() + budget
    while clock() < end or min(len(s["forward"]) for s in samples.values()) < 5:
        for lib, p in pieces.items():
            for name, fn in p.items():
                start = clock()
                fn()
                samples[lib][name].append(clock() - start)
    return {lib: {k: statistics.median(v) for k, v in s.items()} for lib, s in samples.items()}


def table(hidden: int, batch: int, budget: float, scale: float, unit: str) -> str:
    pieces = {name: rnn(lib, hidden, batch) for name, lib in LIBS.items()}
    pieces["numpy (by hand)"] = by_hand(hidden, batch)
    grads = []
    for p in pieces.values():  # the same gradient of Wh from each, before timing
        p["forward"]()
        grads.append(p["backward"]())
    for g in grads[1:]:
        peers.close(grads[0], g, rtol=1e-3, atol=1e-3)
    t = timed(pieces, budget)
    rows = [f"| hidden {hidden}, batch {batch} ({unit}) | tidu | PyTorch | numpy (by hand) | tidu / PyTorch |",
            "| --- | ---: | ---: | ---: | ---: |"]

    def row(label: str, of: Callable[[dict[str, float]], float | None]) -> None:
        values = [of(t[lib]) for lib in ("tidu", "torch", "numpy (by hand)")]
        cells = ["" if v is None else f"{v * scale:.2f}" for v in values]
        rows.append(f"| {label} | {' | '.join(cells)} | {values[0] / values[1]:.2f} |")

    row("forward (grad on)", lambda s: s["forward"])
    row("forward under no_grad", lambda s: s.get("no_grad"))
    row("recording (the difference)", lambda s: s["forward"] - s["no_grad"] if "no_grad" in s else None)
    row("backward", lambda s: s["backward"])
    row("pass (forward + backward)", lambda s: s["forward"] + s["backward"])
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short budgets (noisier)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    tidu.set_num_threads(1)  # numpy's BLAS too
    budget = 2.0 if args.quick else 20.0
    print(f"machine: {platform.processor() or platform.machine()}, one thread; python {platform.python_version()}, "
          f"torch {torch.__version__}, numpy {np.__version__}")
    print(table(128, 32, budget, 1e3, "ms a pass"))
    print()
    print(table(4, 1, budget / 2, 1e6 / STEPS, "µs a time step"))


if __name__ == "__main__":
    main()
