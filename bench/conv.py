"""Convolution and pooling: tidu side by side with PyTorch (CPU), in one process.

    python bench/conv.py            # about 30 seconds
    python bench/conv.py --quick    # a few seconds, noisier

The work is PyTorch's small-CNN layer: a float32 batch of 32 images of 3 x 32 x 32 through
``conv2d`` with 16 filters of 3 x 3 (padding 1, bias), and 2 x 2 max and average pooling of
the 32 x 16 x 32 x 32 result:

    conv2d, no_grad            the forward pass under no_grad()
    conv2d, forward + backward forward, then .sum().backward() into input, weight and bias
    max_pool2d, fwd + bwd      2 x 2 max pooling, forward and backward
    avg_pool2d, fwd + bwd      2 x 2 average pooling, forward and backward

Both run on one thread (BLAS included). Values and gradients are compared first. Times are
CPU milliseconds per call (``time.process_time``: on the shared 2-core machine the wall clock
mostly measures the other processes), the best and the median of interleaved batches; the
output is a markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's tidu
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tidu  # noqa: E402

BATCH, C_IN, SIZE, C_OUT, K = 32, 3, 32, 16, 3


def conv_inputs(lib, requires_grad: bool) -> tuple:
    rng = np.random.default_rng(0)
    arrays = (rng.standard_normal((BATCH, C_IN, SIZE, SIZE)), rng.standard_normal((C_OUT, C_IN, K, K)) * 0.2,
              rng.standard_normal(C_OUT))
    return tuple(lib.tensor(a.astype(np.float32), requires_grad=requires_grad) for a in arrays)


def conv(lib) -> Callable:
    return tidu.conv2d if lib is tidu else F.conv2d


def conv_forward(lib) -> Callable[[], object]:
    x, w, b = conv_inputs(lib, requires_grad=False)

    def run():
        with lib.no_grad():
            return conv(lib)(x, w, b, padding=1)

    return run


def conv_forward_backward(lib) -> Callable[[], object]:
    x, w, b = conv_inputs(lib, requires_grad=True)

    def run():
        x.grad = w.grad = b.grad = None
        conv(lib)(x, w, b, padding=1).sum().backward()
        return x.grad, w.grad, b.grad

    return run


def pool_forward_backward(name: str) -> Callable:
    def make(lib) -> Callable[[], object]:
        data = np.random.default_rng(1).standard_normal((BATCH, C_OUT, SIZE, SIZE)).astype(np.float32)
        x = lib.tensor(data, requires_grad=True)
        fn = getattr(tidu if lib is tidu else F, name)

        def run():
            x.grad = None
            fn(x, 2).sum().backward()
            return x.grad

        return run

    return make


def check_same_results() -> None:
    outs = [conv_forward_backward(lib)() for lib in (tidu, torch)]
    for name, a, b in zip(("x.grad", "w.grad", "b.grad"), *outs):
        a, b = a.numpy(), b.numpy()
        if not np.allclose(a, b, rtol=1e-4, atol=1e-3):
            sys.exit(f"conv.py: tidu and torch disagree on {name}: max |diff| {np.abs(a - b).max():.3g}")
    values = [conv_forward(lib)().numpy() for lib in (tidu, torch)]
    if not np.allclose(*values, rtol=1e-4, atol=1e-4):
        sys.exit("conv.py: tidu and torch disagree on the forward value")


def calibrate(fn: Callable[[], object], target_s: float) -> int:
    n = 1
    while True:
        start = time.process_time()
        for _ in range(n):
            fn()
        elapsed = time.process_time() - start
        if elapsed >= target_s / 4:
            return max(1, int(n * target_s / max(elapsed, 1e-9)))
        n *= 4


def measure(fns: dict[str, Callable[[], object]], batches: int, target_s: float) -> dict[str, tuple[float, float]]:
    """(best, median) CPU milliseconds per call of each fn; batches interleaved across fns."""
    counts = {name: calibrate(fn, target_s) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(batches):
        for name, fn in fns.items():
            start = time.process_time()
            for _ in range(counts[name]):
                fn()
            samples[name].append((time.process_time() - start) / counts[name])
    return {name: (min(s) * 1e3, statistics.median(s) * 1e3) for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter batches (a few seconds)")
    args = parser.parse_args()
    batches, target_s = (3, 0.1) if args.quick else (9, 0.5)
    torch.set_num_threads(1)
    rows = [
        ("conv2d, no_grad", conv_forward),
        ("conv2d, forward + backward", conv_forward_backward),
        ("max_pool2d, forward + backward", pool_forward_backward("max_pool2d")),
        ("avg_pool2d, forward + backward", pool_forward_backward("avg_pool2d")),
    ]
    check_same_results()
    results = {}
    for title, make in rows:
        fns = {"tidu": make(tidu), "torch": make(torch)}
        for fn in fns.values():  # warm up (Numba kernels, program cache)
            for _ in range(3):
                fn()
        results[title] = measure(fns, batches, target_s)

    cmd = "python bench/conv.py" + (" --quick" if args.quick else "")
    print(f"### conv2d {BATCH}x{C_IN}x{SIZE}x{SIZE} * {C_OUT}x{C_IN}x{K}x{K} (padding 1, bias), float32, "
          "milliseconds per call")
    print()
    print(f"command: `{cmd}`  ")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
          f"{platform.python_version()}  ")
    print(f"versions: tidu {importlib.metadata.version('tidu')}, torch {torch.__version__}, numpy {np.__version__}  ")
    print("threads: one (torch.set_num_threads(1); OMP/OpenBLAS/MKL/Numba threads 1)  ")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}  ")
    print(f"CPU time (time.process_time) of {batches} interleaved batches of ~{target_s * 1e3:.0f} ms each: the best "
          "batch, and the median in brackets (the machine is shared, so its wall clock is noise)")
    print()
    print("| work | PyTorch | tidu | tidu / PyTorch |")
    print("| --- | ---: | ---: | ---: |")
    for title, r in results.items():
        (tb, tm), (ob, om) = r["torch"], r["tidu"]
        print(f"| {title} | {tb:.3f} ({tm:.3f}) | {ob:.3f} ({om:.3f}) | {ob / tb:.2f}x ({om / tm:.2f}x) |")

if __name__ == "__main__":
    main()
