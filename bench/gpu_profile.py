"""Where a small CUDA step's time goes: cProfile of tidu's Python side, and launch-shape probes.

    python bench/gpu_profile.py      # on the device tool's machine
    python bench/gpu_profile.py --micro | --train | --program
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np
from gputiming import median_per_call

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ``bench`` importable as a package

import tidu
from tidu.backends.cuda import launch
from tidu.backends.cuda.elementwise import unary_kernel
from tidu.backends.cuda.memory import CudaArray
from tidu.core import deferred
from tidu.primitives.elementwise import _exp


def per_call(fn, n: int, warmup: int = 20) -> float:  # noqa: ANN001
    """Seconds per call of ``fn`` in one synchronized loop of ``n``, after ``warmup`` calls."""
    return median_per_call(fn, tidu.cuda.synchronize, repeat=n, rounds=1, warmup=warmup)


def profiled(fn, n: int, order: str, rows: int) -> None:  # noqa: ANN001
    """cProfile of ``n`` calls of ``fn``, the top ``rows`` by ``order``."""
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(n):
        fn()
    tidu.cuda.synchronize()
    profile.disable()
    pstats.Stats(profile).sort_stats(order).print_stats(rows)


def small_step() -> None:
    x = tidu.tensor(np.ones(1024, np.float32), device="cuda", requires_grad=True)
    w = tidu.tensor(np.ones(1024, np.float32), device="cuda")
    a, b = tidu.ones(1024, device="cuda"), tidu.ones(1024, device="cuda")

    def step() -> None:
        x.grad = None
        (x * w).tanh().sum().backward()

    for fn, n, name in ((lambda: a + b, 3000, "a + b"), (step, 300, "small fwd+bwd")):
        print(f"{name}: {per_call(fn, n) * 1e6:.1f} us")
        profiled(fn, n, "tottime", 18)


def launch_shapes() -> None:
    n = 64 * 2**20
    x = CudaArray.from_host(np.random.default_rng(0).uniform(-4, 4, n).astype(np.float32))
    run = unary_kernel(_exp)
    for blocks in (1024, 4096, 16384, 65535):
        launch.MAX_BLOCKS = blocks
        dt = per_call(lambda: run(x, np.float32), 20, warmup=1)
        print(f"exp 64M, at most {blocks} blocks: {dt * 1e3:.3f} ms, {2 * 4 * n / dt / 1e9:.0f} GB/s")


def training_steps() -> None:
    import bench.gpu_tensor as workloads

    for name in ("MLP", "block"):
        fns, _ = workloads.WORKLOADS[name][0]()
        step = fns["tidu"]
        print(f"{name}: {per_call(step, 20, warmup=5) * 1e3:.2f} ms per step")
        profiled(step, 20, "cumulative", 30)
        per_kernel(step)


def per_kernel(step) -> None:  # noqa: ANN001
    """Each launch timed alone (synchronized): GPU time by kernel, and how often it runs."""
    from tidu.backends.cuda import blas, linalg

    totals: dict[str, list[float]] = {}
    original, original_call, original_gemm = launch.Kernel.launch, launch.Kernel.__call__, blas.gemm_strided

    def timed(name: str, fn, *args, **kwargs):  # noqa: ANN001, ANN202
        tidu.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        tidu.cuda.synchronize()
        totals.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    launch.Kernel.launch = lambda self, *a, **k: timed(self.fn.__name__, original, self, *a, **k)
    launch.Kernel.__call__ = lambda self, *a: timed(self.fn.__name__, original_call, self, *a)
    blas.gemm_strided = linalg.gemm_strided = lambda *a, **k: timed("gemm", original_gemm, *a, **k)
    try:
        for _ in range(3):
            step()
        totals.clear()
        prepares = launch.Kernel._prepare
        seen = []
        launch.Kernel._prepare = lambda self: (seen.append(self.fn.__name__), prepares(self))[1]
        step()
        launch.Kernel._prepare = prepares
    finally:
        launch.Kernel.launch, launch.Kernel.__call__ = original, original_call
        blas.gemm_strided = linalg.gemm_strided = original_gemm
    print(f"kernels compiled during a warm step: {seen}")
    for name, times in sorted(totals.items(), key=lambda kv: -sum(kv[1])):
        print(f"  {name:<28} x{len(times):<4} {sum(times) * 1e6:9.1f} us synchronized")


def micro() -> None:
    """The pieces of one small op, each timed alone (per call)."""
    from tidu.backends.cuda.elementwise import binary_kernel
    from tidu.primitives.elementwise import _add

    a = tidu.ones(1024, device="cuda")
    b = tidu.ones(1024, device="cuda")
    run = binary_kernel(_add)
    out = CudaArray.empty((1024,), np.float32)
    run(a._data, b._data, np.float32)
    cases = {
        "CudaArray.empty + free": lambda: CudaArray.empty((1024,), np.float32),
        "kernel run (alloc + launch)": lambda: run(a._data, b._data, np.float32),
        "bind(add) on tensors": lambda: a + b,
        "Tensor() around an array": lambda: tidu.Tensor(out, tidu.float32),
    }
    deferred.ENABLED = False  # each op launches when bound (deferred, an unread result never runs)
    for name, fn in cases.items():
        print(f"{name:<40} {per_call(fn, 5000, warmup=200) * 1e6:7.2f} us")
    deferred.ENABLED = True
    c = tidu.ones(1024, device="cuda")
    held = []

    def chain() -> None:
        held.append(((a + b) * c).exp())  # deferred: held, so computed, in fused launches
    per_call(chain, 3000, warmup=0)  # every phase of the 3-op chain against the 32-entry queue compiles once
    held.clear()
    print(f"{'3-op chain, deferred, per op':<40} {per_call(chain, 3000, warmup=200) / 3 * 1e6:7.2f} us")


def backward_programs() -> None:
    """Host time of each instruction of the MLP's and the block's compiled backward step (the
    step's generated function calls ``f0``, ``f1``, ...: each is wrapped with a timer)."""
    import statistics

    import bench.gpu_tensor as workloads
    from tidu.autograd import compiled

    for name in ("MLP", "block"):
        compiled.clear()
        fns, _ = workloads.WORKLOADS[name][0]()
        step = fns["tidu"]
        for _ in range(10):
            step()
        program = list(compiled._steps.values())[-1]
        namespace = program.fn.__globals__
        times: dict[str, list[float]] = {}
        for n, instr in enumerate(program.program):
            label = f"{n:2d} {instr.app.name if instr.app is not None else 'fused'}"[:72]

            def timed(*args, fn=namespace[f"f{n}"], label=label, times=times):  # noqa: ANN002, ANN202
                t0 = time.perf_counter()
                out = fn(*args)
                times.setdefault(label, []).append(time.perf_counter() - t0)
                return out

            namespace[f"f{n}"] = timed
        for _ in range(100):
            step()
        tidu.cuda.synchronize()
        print(f"{name}: {len(times)} instructions, host us (median of 100 steps)")
        for label, ts in times.items():
            print(f"  {label:<72} {statistics.median(ts) * 1e6:7.1f}")
        compiled.clear()  # the wrapped step is not kept


if __name__ == "__main__":
    import sys

    if "--micro" in sys.argv:
        micro()
    elif "--train" in sys.argv:
        training_steps()
    elif "--program" in sys.argv:
        backward_programs()
    else:
        small_step()
        launch_shapes()
