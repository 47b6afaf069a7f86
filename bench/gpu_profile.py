"""Where a small CUDA step's time goes: cProfile of tidu's Python side, and launch-shape probes.

    python bench/gpu_profile.py      # on the device tool's machine
"""

from __future__ import annotations

import cProfile
import pstats
import time

import numpy as np

import tidu
from tidu.backends.cuda import launch
from tidu.backends.cuda.elementwise import unary_kernel
from tidu.backends.cuda.memory import CudaArray
from tidu.primitives.elementwise import _exp


def small_step() -> None:
    x = tidu.tensor(np.ones(1024, np.float32), device="cuda", requires_grad=True)
    w = tidu.tensor(np.ones(1024, np.float32), device="cuda")
    a, b = tidu.ones(1024, device="cuda"), tidu.ones(1024, device="cuda")

    def step() -> None:
        x.grad = None
        (x * w).tanh().sum().backward()

    for fn, n, name in ((lambda: a + b, 3000, "a + b"), (step, 300, "small fwd+bwd")):
        for _ in range(20):
            fn()
        tidu.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        tidu.cuda.synchronize()
        print(f"{name}: {(time.perf_counter() - t0) / n * 1e6:.1f} us")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(n):
            fn()
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(18)


def launch_shapes() -> None:
    n = 64 * 2**20
    x = CudaArray.from_host(np.random.default_rng(0).uniform(-4, 4, n).astype(np.float32))
    run = unary_kernel(_exp)
    for blocks in (1024, 4096, 16384, 65535):
        launch.MAX_BLOCKS = blocks
        run(x, np.float32)
        tidu.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            run(x, np.float32)
        tidu.cuda.synchronize()
        dt = (time.perf_counter() - t0) / 20
        print(f"exp 64M, at most {blocks} blocks: {dt * 1e3:.3f} ms, {2 * 4 * n / dt / 1e9:.0f} GB/s")


if __name__ == "__main__":
    small_step()
    launch_shapes()
