"""tidu tensors on the GPU against PyTorch CUDA eager, in one run (issue 6's table).

    python bench/gpu_tensor.py            # on the device tool's machine

Each workload is written once against the PyTorch API and run with ``lib = tidu`` and
``lib = torch`` on ``device='cuda'``; results are compared before timing. Times are
medians of interleaved batches, each batch ending in the library's synchronize, so a
figure is what a loop of that work costs in steady state.

    per-op     ``a + b`` on 1024 float32 (no grad, tidu's deferral off for the row): launch to result, per op
    small      3 ops on 1024 floats, forward + backward (``(x * w).tanh().sum().backward()``)
    exp 64M    ``x.exp()`` on 64M float32 (deferral off: the unary kernel), GB/s against a device copy
    fused 64M  ``(a * b + c).tanh()`` on 64M float32, deferral on (one fused kernel), GB/s
    matmul     4096^3 float32: tidu.matmul, cuBLAS called directly, torch.matmul
    MLP        bench/peers.py's W2 on the GPU: 784-512-512-10 SGD step, batch 128
    block      bench/peers.py's W6 on the GPU: transformer block forward + backward (8, 64, 128, 4 heads)
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # ``bench`` importable as a package
import torch

import tidu
from bench import peers
from tidu.core import deferred

LIBS = {"tidu": tidu, "torch": torch}


def sync(name: str) -> None:
    """Wait for the work of the function named ``name`` (PyTorch's streams or tidu's)."""
    (torch if name.startswith("torch") else tidu).cuda.synchronize()


def timeit(fns: dict[str, Callable[[], Any]], budget: float = 1.0) -> dict[str, float]:
    """Median seconds per call of each function (interleaved batches, synchronized)."""
    for name, fn in fns.items():
        for _ in range(3):
            fn()
        sync(name)
    per = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        sync(name)
        per[name] = max(1, min(2000, int(0.02 / max(time.perf_counter() - t0, 1e-7))))
    samples: dict[str, list[float]] = {n: [] for n in fns}
    end = time.perf_counter() + budget
    while time.perf_counter() < end or min(len(s) for s in samples.values()) < 5:
        for name, fn in fns.items():
            sync(name)
            t0 = time.perf_counter()
            for _ in range(per[name]):
                fn()
            sync(name)
            samples[name].append((time.perf_counter() - t0) / per[name])
    return {n: statistics.median(s) for n, s in samples.items()}


def host(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def check(a: Any, b: Any, rtol: float = 2e-3, atol: float = 2e-4) -> None:
    np.testing.assert_allclose(host(a), host(b), rtol=rtol, atol=atol)


@contextmanager
def deferral_off() -> Iterator[None]:
    """tidu's deferral (tidu/core/deferred.py) off inside the block: each op launches when called.
    A deferred op whose result nobody reads would never run, so the eager rows would time
    nothing."""
    switch, deferred.ENABLED = deferred.ENABLED, False
    try:
        yield
    finally:
        deferred.ENABLED = switch


def eager(fn: Callable[[], Any]) -> Any:
    """``fn()`` with deferral off (``deferral_off``)."""
    with deferral_off():
        return fn()


EAGER_ROWS = {"per-op"}  # timed with deferral off throughout: the op alone, no switch per call


def per_op() -> tuple[dict, Callable[[], None]]:
    rng = np.random.default_rng(0)
    arrays = rng.standard_normal((2, 1024)).astype(np.float32)
    made = {n: [lib.tensor(a, device="cuda") for a in arrays] for n, lib in LIBS.items()}

    def make(name: str) -> Callable[[], Any]:
        a, b = made[name]

        def op() -> Any:
            return a + b

        return op

    fns = {n: make(n) for n in LIBS}
    return fns, lambda: check(fns["tidu"](), fns["torch"]())


def small_fwd_bwd() -> tuple[dict, Callable[[], None]]:
    rng = np.random.default_rng(1)
    xs, ws = rng.standard_normal((2, 1024)).astype(np.float32)

    def make(lib: Any) -> Callable[[], Any]:
        x = lib.tensor(xs, device="cuda", requires_grad=True)
        w = lib.tensor(ws, device="cuda")

        def step() -> Any:
            x.grad = None
            (x * w).tanh().sum().backward()
            return x.grad

        return step

    fns = {n: make(lib) for n, lib in LIBS.items()}
    return fns, lambda: check(fns["tidu"](), fns["torch"]())


def large_exp(n: int = 64 * 2**20) -> tuple[dict, Callable[[], None]]:
    data = np.random.default_rng(2).uniform(-4, 4, n).astype(np.float32)
    xs = {name: lib.tensor(data, device="cuda") for name, lib in LIBS.items()}
    fns = {"tidu": lambda: eager(xs["tidu"].exp), "torch": lambda: xs["torch"].exp(),
           "tidu copy": lambda: eager(xs["tidu"].clone), "torch copy": lambda: xs["torch"].clone()}
    return fns, lambda: check(fns["tidu"](), fns["torch"](), rtol=1e-6, atol=0)


def fused_chain(n: int = 64 * 2**20) -> tuple[dict, Callable[[], None]]:
    """``tanh(a * b + c)`` with tidu's deferral on (one fused kernel, its result held so that it is
    stored) against PyTorch's three kernels, and both libraries' copy of one operand. A loop that
    queues chains without reading them would let a flush store the last one only."""
    rng = np.random.default_rng(4)
    data = [rng.uniform(-2, 2, n).astype(np.float32) for _ in range(3)]
    ops = {name: [lib.tensor(d, device="cuda") for d in data] for name, lib in LIBS.items()}
    held: list[Any] = []

    def tidu_chain() -> Any:  # its result read at once, as a program's next op would: one flush a chain
        a, b, c = ops["tidu"]
        held[:] = [(a * b + c).tanh()]
        deferred.flush()
        return held[0]

    def torch_chain() -> Any:
        a, b, c = ops["torch"]
        return (a * b + c).tanh()

    fns = {"tidu": tidu_chain, "torch": torch_chain, "tidu copy": lambda: eager(ops["tidu"][0].clone),
           "torch copy": lambda: ops["torch"][0].clone()}
    return fns, lambda: check(fns["tidu"](), fns["torch"](), rtol=2e-6, atol=1e-6)


def matmul(n: int = 4096) -> tuple[dict, Callable[[], None]]:
    from tidu.backends.cuda import blas

    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    ts = {name: (lib.tensor(a, device="cuda"), lib.tensor(b, device="cuda")) for name, lib in LIBS.items()}
    da, db = ts["tidu"][0]._data, ts["tidu"][1]._data
    fns = {
        "tidu": lambda: tidu.matmul(*ts["tidu"]),
        "cuBLAS direct": lambda: blas.gemm(da, db),
        "torch": lambda: torch.matmul(*ts["torch"]),
    }
    return fns, lambda: check(fns["tidu"](), fns["torch"](), rtol=2e-3, atol=2e-2)


def mlp() -> tuple[dict, Callable[[], None]]:
    steps, verify, *_ = peers.w2_mlp(device="cuda")
    return steps, verify


def block() -> tuple[dict, Callable[[], None]]:
    steps, verify, *_ = peers.w6_transformer(device="cuda")
    return steps, verify


WORKLOADS = {"per-op": (per_op, "us", 1e6), "small": (small_fwd_bwd, "us", 1e6), "exp 64M": (large_exp, "ms", 1e3),
             "fused 64M": (fused_chain, "ms", 1e3), "matmul": (matmul, "ms", 1e3), "MLP": (mlp, "ms", 1e3),
             "block": (block, "ms", 1e3)}


def main() -> int:
    only = sys.argv[1].split(",") if len(sys.argv) > 1 else list(WORKLOADS)
    print(f"device: {tidu.cuda.get_device_name()}  torch {torch.__version__}  tidu {tidu.__version__}")
    rows = []
    failed = False
    for name in only:
        make, unit, scale = WORKLOADS[name]
        try:
            with deferral_off() if name in EAGER_ROWS else nullcontext():
                fns, verify = make()
                verify()
                times = timeit(fns)
        except Exception as exc:  # noqa: BLE001 - report every workload, then fail
            failed = True
            print(f"{name}: FAILED {type(exc).__name__}: {exc}")
            continue
        extra = ""
        if name in ("exp 64M", "fused 64M"):  # bytes read once and written once; copies: one operand
            n_bytes = (2 if name == "exp 64M" else 4) * 4 * 64 * 2**20
            gbs = {k: (2 * 4 * 64 * 2**20 if "copy" in k else n_bytes) / v / 1e9 for k, v in times.items()}
            extra = (f"tidu {gbs['tidu']:.0f} GB/s = {gbs['tidu'] / gbs['torch copy']:.0%} of torch's copy "
                     f"({gbs['tidu'] / gbs['tidu copy']:.0%} of its own); torch {gbs['torch']:.0f} GB/s")
        if name == "matmul":
            flops = 2 * 4096**3
            extra = "  ".join(f"{k} {flops / v / 1e12:.1f} TFLOP/s" for k, v in times.items())
            extra += f"  tidu/cuBLAS {times['cuBLAS direct'] / times['tidu']:.0%}"
        rows.append((name, times["tidu"] * scale, times["torch"] * scale, unit, extra))
    print(f"\n{'workload':<10}{'tidu':>12}{'torch':>12}  unit  tidu/torch  notes")
    for name, a, b, unit, extra in rows:
        print(f"{name:<10}{a:>12.2f}{b:>12.2f}  {unit:<4}  {a / b:>9.2f}  {extra}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
