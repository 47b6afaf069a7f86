"""The host's cost of the ops a transformer block binds: tidu beside PyTorch (CPU, one thread).

    python bench/host_cost.py            # about 40 seconds
    python bench/host_cost.py --quick    # a few seconds, noisier

On a GPU the host's Python is most of a small model's step (bench/gpu_tensor.py): each bind's
checks, lookups, output and record are paid before its kernel is launched. This script times the
same work on the CPU, on shapes so small that the kernels take next to nothing: the ops
bench/peers.py's W6 binds (views, products, a masked fill, a layer norm, a softmax, a sum), each
on a (2, 4, 8) float32 input that requires grad, and W6's block itself (``peers.w6_transformer``)
shrunk to (2, 8, 16), forward and forward + backward. Figures are microseconds per call (the median over interleaved
batches) and the ratio tidu / PyTorch; tidu's and PyTorch's results are compared first.
"""

from __future__ import annotations

import argparse
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


def per_call(fns: dict[str, Callable[[], Any]], budget: float) -> dict[str, float]:
    """Median microseconds per call of each function, over interleaved batches."""
    per_batch = {}
    for name, fn in fns.items():
        for _ in range(20):
            fn()
        start = time.perf_counter()
        fn()
        per_batch[name] = max(1, int(0.01 / max(time.perf_counter() - start, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    end = time.perf_counter() + budget
    while time.perf_counter() < end or min(len(s) for s in samples.values()) < 5:
        for name, fn in fns.items():
            n = per_batch[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n * 1e6)
    return {name: statistics.median(s) for name, s in samples.items()}


def op_cases(lib: Any) -> dict[str, Callable[[], Any]]:
    rng = np.random.default_rng(0)
    F = lib.nn.functional
    x = lib.tensor(rng.standard_normal((2, 4, 8)).astype(np.float32), requires_grad=True)
    w = lib.tensor(rng.standard_normal((16, 8)).astype(np.float32), requires_grad=True)
    scores = lib.tensor(rng.standard_normal((2, 4, 4)).astype(np.float32), requires_grad=True)
    g, b = lib.ones(8, requires_grad=True), lib.zeros(8, requires_grad=True)
    mask = lib.triu(lib.ones(4, 4, dtype=lib.bool), diagonal=1)
    return {
        "x.transpose(1, 2)": lambda: x.transpose(1, 2),
        "x.reshape(2, 4, 2, 4)": lambda: x.reshape(2, 4, 2, 4),
        "x[:, :, :4]": lambda: x[:, :, :4],
        "x @ w.t()": lambda: x @ w.t(),
        "x @ x.transpose(-2, -1)": lambda: x @ x.transpose(-2, -1),
        "scores.masked_fill(mask, -inf)": lambda: scores.masked_fill(mask, float("-inf")),
        "F.softmax(x, -1)": lambda: F.softmax(x, dim=-1),
        "F.layer_norm(x, (8,), g, b)": lambda: F.layer_norm(x, (8,), g, b),
        "x.sum()": lambda: x.sum(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing, noisier")
    args = parser.parse_args()
    budget = 0.2 if args.quick else 1.5
    torch.set_num_threads(1)
    tidu.set_num_threads(1)
    cases = {name: op_cases(lib) for name, lib in LIBS.items()}
    blocks, check, *_ = peers.w6_transformer(batch=2, seq=8, d=16, heads=4)
    for name, fn in cases["tidu"].items():  # the same values as PyTorch's
        np.testing.assert_allclose(fn().detach().numpy(), cases["torch"][name]().detach().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=name)
    check()
    rows = [(name, per_call({lib: cases[lib][name] for lib in LIBS}, budget / 4)) for name in cases["tidu"]]
    rows.append(("small block (2, 8, 16): forward", per_call({lib: blocks[lib].forward for lib in LIBS}, budget)))
    rows.append(("small block (2, 8, 16): forward + backward", per_call(blocks, budget)))
    print(f"command: python bench/{' '.join(sys.argv[0].split('/')[-1:] + sys.argv[1:])}")
    print(f"versions: tidu {tidu.__version__}, torch {torch.__version__}, numpy {np.__version__}; one thread each\n")
    print("| work (inputs require grad) | tidu µs | PyTorch µs | tidu / PyTorch |")
    print("| --- | ---: | ---: | ---: |")
    for name, times in rows:
        print(f"| {name} | {times['tidu']:.2f} | {times['torch']:.2f} | {times['tidu'] / times['torch']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
