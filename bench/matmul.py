"""A 1024^3 float32 matmul, forward and forward + backward: tidu, PyTorch and numpy's BLAS.

    python bench/matmul.py                 # about 15 seconds, one thread
    python bench/matmul.py --threads 2     # every library on 2 threads

The work is ``C = A @ B`` with ``A``, ``B`` of shape (n, n) (n = 1024), then ``loss = C.sum()``
and the gradients of ``A`` and ``B``. Forward is one product (2 n^3 flops); forward + backward
is three (``dC @ B^T`` and ``A^T @ dC`` too, 6 n^3 flops). numpy is the floor: the same three
products on its BLAS, with no autodiff. Every library runs on the same number of threads
(BLAS through the environment variables set before numpy is imported, torch.set_num_threads,
numba.set_num_threads). Figures are GFLOP/s of the median of interleaved repeats, and the
ratios to numpy and to PyTorch (higher is faster). tidu's and PyTorch's values and gradients
are compared first. The output is a markdown table for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys

ARGS = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ARGS.add_argument("--threads", type=int, default=1)
ARGS.add_argument("--n", type=int, default=1024)
ARGS.add_argument("--repeats", type=int, default=7)
OPTS = ARGS.parse_args()
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = str(OPTS.threads)

import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

import tidu  # noqa: E402


def numpy_forward(a: np.ndarray, b: np.ndarray) -> None:
    a @ b


def numpy_backward(a: np.ndarray, b: np.ndarray) -> None:
    c = a @ b
    dc = np.ones_like(c)
    dc @ b.T, a.T @ dc  # noqa: B018


def framework(lib: object, a: np.ndarray, b: np.ndarray) -> tuple[Callable[[], None], Callable[[], None]]:
    ta = lib.tensor(a, requires_grad=True)
    tb = lib.tensor(b, requires_grad=True)

    def forward() -> None:
        with lib.no_grad():
            ta @ tb

    def backward() -> None:
        ta.grad = tb.grad = None
        (ta @ tb).sum().backward()

    return forward, backward


def check(a: np.ndarray, b: np.ndarray) -> None:
    grads = []
    for lib in (tidu, torch):
        ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        c = ta @ tb
        c.sum().backward()
        grads.append([c.detach().numpy(), ta.grad.numpy(), tb.grad.numpy()])
    for ours, theirs, what in zip(*grads, ("C", "dA", "dB")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-3, err_msg=what)


def main() -> None:
    n, threads = OPTS.n, OPTS.threads
    torch.set_num_threads(threads)
    numba.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    check(a, b)
    tidu_fwd, tidu_bwd = framework(tidu, a, b)
    torch_fwd, torch_bwd = framework(torch, a, b)
    cases = {
        ("forward", "numpy"): lambda: numpy_forward(a, b),
        ("forward", "PyTorch"): torch_fwd,
        ("forward", "tidu"): tidu_fwd,
        ("forward + backward", "numpy"): lambda: numpy_backward(a, b),
        ("forward + backward", "PyTorch"): torch_bwd,
        ("forward + backward", "tidu"): tidu_bwd,
    }
    times: dict[tuple[str, str], list[float]] = {k: [] for k in cases}
    for fn in cases.values():  # warm up (kernels, caches, allocator)
        fn()
    for _ in range(OPTS.repeats):  # interleaved, so machine noise hits every library alike
        for key, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)

    flops = {"forward": 2 * n**3, "forward + backward": 6 * n**3}
    print(f"### float32 matmul {n}x{n} @ {n}x{n}, GFLOP/s (higher is faster)\n")
    print(f"command: `python bench/matmul.py{' --threads ' + str(threads) if threads != 1 else ''}`  ")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}  ")
    print(
        f"versions: tidu {importlib.metadata.version('tidu')}, torch {torch.__version__}, numpy {np.__version__}  "
    )
    print(f"threads: {threads} (BLAS env vars, torch.set_num_threads, numba.set_num_threads)  ")
    print(f"median of {OPTS.repeats} interleaved repeats\n")
    print("| work | numpy (BLAS) | PyTorch | tidu | tidu / numpy | tidu / PyTorch | tidu ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for work in flops:
        rate = {lib: flops[work] / statistics.median(times[(work, lib)]) / 1e9 for lib in ("numpy", "PyTorch", "tidu")}
        ms = statistics.median(times[(work, "tidu")]) * 1e3
        print(
            f"| {work} | {rate['numpy']:.1f} | {rate['PyTorch']:.1f} | {rate['tidu']:.1f} | "
            f"{rate['tidu'] / rate['numpy']:.2f}x | {rate['tidu'] / rate['PyTorch']:.2f}x | {ms:.1f} |"
        )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
