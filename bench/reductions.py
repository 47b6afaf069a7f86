"""Large reductions on 1 and 2 threads: tidu's kernels vs numpy and PyTorch.

    python bench/reductions.py      # ms, best of 30, 4M float32
"""

from __future__ import annotations

import time

import numpy as np
import torch

import tidu
from tidu.backends.cpu import reduce as cpu

SHAPE = (1024, 4096)


def _best(fn, repeat: int = 30) -> float:  # noqa: ANN001
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main() -> None:
    x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
    xt = torch.from_numpy(x)
    rows = {
        "sum, last axis": (lambda: cpu.sum_axes(x, (1,)), lambda: x.sum(axis=1), lambda: xt.sum(1)),
        "sum, full": (lambda: cpu.sum_axes(x, (0, 1)), lambda: x.sum(), lambda: xt.sum()),
        "max, last axis": (lambda: cpu.max_axes(x, (1,)), lambda: x.max(axis=1), lambda: xt.amax(1)),
        "max, full": (lambda: cpu.max_axes(x, (0, 1)), lambda: x.max(), lambda: xt.max()),
        "sum, first axis": (lambda: cpu.sum_axes(x, (0,)), lambda: x.sum(axis=0), lambda: xt.sum(0)),
        "argmax, last axis": (lambda: cpu.arg_axis(x, 1, True), lambda: x.argmax(axis=1), lambda: xt.argmax(1)),
    }
    print(f"ms, best of 30, float32 {SHAPE} (4M elements); numpy is single-threaded")
    print(f"{'':20}{'tidu 1T':>9}{'tidu 2T':>9}{'numpy':>9}{'torch 1T':>9}{'torch 2T':>9}")
    for name, (ours, np_fn, torch_fn) in rows.items():
        cols = []
        for threads in (1, 2):
            tidu.set_num_threads(threads)
            cols.append(_best(ours))
        cols.append(_best(np_fn))
        for threads in (1, 2):
            torch.set_num_threads(threads)
            cols.append(_best(torch_fn))
        print(f"{name:20}" + "".join(f"{t:9.3f}" for t in cols))


if __name__ == "__main__":
    main()
