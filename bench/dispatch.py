"""Per-op eager dispatch: tidu side by side with PyTorch (CPU) and numpy, in one process.

    python bench/dispatch.py            # about 20 seconds
    python bench/dispatch.py --quick    # a few seconds, noisier

The work is a chain of 20 elementwise ops (mul, add, tanh, exp, sin, with scalars and
tensors) on tiny float32 tensors of 16 elements, so the time is almost all per-op overhead:
argument checks, dispatch, allocation and, with autograd, recording the tape. Each framework
runs the same chain on the same inputs, on one thread:

    forward, no_grad       the chain under no_grad()
    forward, recording     the chain on inputs that require grad (the tape is recorded)
    forward + backward     the recorded chain, then .sum().backward()

numpy is the floor (forward only). Times are microseconds per op of the chain: a chain's time
divided by 20 (for forward + backward this includes the sum and the whole backward pass).
Each figure is the median over batches; batches of the frameworks are interleaved so that
machine noise hits all of them alike. The values and gradients of tidu and PyTorch are
compared first, so both time the same computation. The output is a markdown table for
bench/RESULTS.md; nothing is written to disk.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import torch

import tidu

SIZE = 16


def chain(lib, x, y):
    """20 elementwise ops; values stay in a small range for any inputs."""
    for _ in range(2):
        x = x * 0.5
        x = x + y
        x = lib.tanh(x)
        x = x * y
        x = lib.sin(x)
        x = lib.exp(x)
        x = x + 1.0
        x = x * y
        x = lib.tanh(x)
        x = x + y
    return x


N_OPS = 20


def inputs(lib, requires_grad: bool):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(SIZE).astype(np.float32) for _ in range(2))
    if lib is np:
        return x, y
    return lib.tensor(x, requires_grad=requires_grad), lib.tensor(y, requires_grad=requires_grad)


def forward_no_grad(lib) -> Callable[[], object]:
    x, y = inputs(lib, requires_grad=False)

    def run():
        with lib.no_grad():
            return computed(lib, chain(lib, x, y))

    return run


def forward_recording(lib) -> Callable[[], object]:
    x, y = inputs(lib, requires_grad=True)
    return lambda: computed(lib, chain(lib, x, y))


def computed(lib, out):
    """``out`` with its value computed: tidu defers elementwise work until a value is needed
    (tidu/core/deferred.py), and a result nobody reads would never be computed at all."""
    if lib is tidu:
        tidu.core.deferred.flush()
    return out


def forward_backward(lib) -> Callable[[], object]:
    x, y = inputs(lib, requires_grad=True)

    def run():
        x.grad = y.grad = None
        chain(lib, x, y).sum().backward()
        return x

    return run


def forward_numpy(_lib) -> Callable[[], object]:
    x, y = inputs(np, requires_grad=False)
    return lambda: chain(np, x, y)


def check_same_results() -> None:
    """tidu and PyTorch compute the same values and gradients (float32 tolerance)."""
    results = []
    for lib in (tidu, torch):
        x, y = inputs(lib, requires_grad=True)
        chain(lib, x, y).sum().backward()
        with lib.no_grad():
            value = chain(lib, x, y)
        results.append([np.asarray(t.numpy()) for t in (value, x.grad, y.grad)])
    for name, a, b in zip(("value", "x.grad", "y.grad"), *results):
        if not np.allclose(a, b, rtol=1e-4, atol=1e-5):
            sys.exit(f"dispatch.py: tidu and torch disagree on {name}: max |diff| {np.abs(a - b).max():.3g}")
    numpy_value = chain(np, *inputs(np, requires_grad=False))
    if not np.allclose(results[1][0], numpy_value, rtol=1e-4, atol=1e-5):
        sys.exit("dispatch.py: numpy and torch disagree on the forward value")


def set_one_thread() -> str:
    torch.set_num_threads(1)
    if hasattr(tidu, "set_num_threads"):
        tidu.set_num_threads(1)
        return "torch.set_num_threads(1), tidu.set_num_threads(1)"
    import numba

    numba.set_num_threads(1)
    return "torch.set_num_threads(1), numba.set_num_threads(1) (tidu has no set_num_threads yet)"


def calibrate(fn: Callable[[], object], target_s: float) -> int:
    """Calls per batch so that one batch takes about target_s."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= target_s / 4 or n >= 1 << 20:
            return max(1, int(n * target_s / max(elapsed, 1e-9)))
        n *= 4


def measure(fns: dict[str, Callable[[], object]], batches: int, target_s: float) -> dict[str, float]:
    """Median microseconds per chain op for each fn; batches interleaved across fns."""
    counts = {name: calibrate(fn, target_s) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(batches):
        for name, fn in fns.items():
            n = counts[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(s) / N_OPS * 1e6 for name, s in samples.items()}


def first_call_ms(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter batches (a few seconds)")
    args = parser.parse_args()
    batches, target_s = (3, 0.02) if args.quick else (9, 0.2)

    threads = set_one_thread()
    rows = [
        ("forward, no_grad", forward_no_grad),
        ("forward, recording", forward_recording),
        ("forward + backward", forward_backward),
    ]

    # The first tidu calls compile Numba kernels (or load them from NUMBA_CACHE_DIR).
    first = {title: first_call_ms(make(tidu)) for title, make in rows}
    check_same_results()

    results = {}
    for title, make in rows:
        fns = {"tidu": make(tidu), "torch": make(torch)}
        if make is forward_no_grad:
            fns["numpy"] = forward_numpy(np)
        for fn in fns.values():  # warm up
            for _ in range(20):
                fn()
        results[title] = measure(fns, batches, target_s)

    cmd = "python bench/dispatch.py" + (" --quick" if args.quick else "")
    print(f"## dispatch: {N_OPS} elementwise ops on float32[{SIZE}], microseconds per op")
    print()
    print(f"command: `{cmd}`  ")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}  "
    )
    print(
        f"versions: tidu {importlib.metadata.version('tidu')}, torch {torch.__version__}, numpy {np.__version__}  "
    )
    print(f"threads: {threads}  ")
    print(f"median of {batches} batches of ~{target_s * 1e3:.0f} ms each")
    print()
    print("| work | numpy | PyTorch | tidu | tidu / PyTorch | tidu first call (ms) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for title, _ in rows:
        r = results[title]
        floor = f"{r['numpy']:.2f}" if "numpy" in r else "-"
        print(
            f"| {title} | {floor} | {r['torch']:.2f} | {r['tidu']:.2f} | "
            f"{r['tidu'] / r['torch']:.2f}x | {first[title]:.1f} |"
        )


if __name__ == "__main__":
    main()
