"""tidu against PyTorch (CPU, same thread count) and numpy on training-shaped workloads, in one run.

    python bench/peers.py              # a few minutes on 2 cores
    python bench/peers.py --quick      # fewer repeats, noisier
    python bench/peers.py --only W2,W6 # some workloads

Every workload is written once against the PyTorch API and run with ``lib = tidu`` and
``lib = torch`` (that it runs unchanged is part of the test); numpy is the floor where a
hand-written numpy version makes sense. Before timing, tidu's result is compared with
PyTorch's from the same inputs. Figures are medians over interleaved batches (noise hits
both frameworks alike) and the ratio tidu / PyTorch (below 1: tidu is faster).

    W1  per-op dispatch: a 20-op elementwise chain on 16 floats, forward + backward, against
        the same chain and its derivative written by hand in numpy
    W2  MLP 784-512-512-10, SGD step (batch 128): zero_grad, forward, cross-entropy, backward, step
    W3  4M-element elementwise chain forward + backward, against the time of one numpy copy
    W4  matmul 1024^3 forward + backward (three products), GFLOP/s against numpy's BLAS
    W5  RNN, 100 steps (hidden 128, batch 32), forward + backward, against backpropagation
        through time written by hand in numpy
    W6  transformer block forward + backward (batch 8, seq 64, d 128, 4 heads)
    W7  Hessian-vector product by double backward (n = 1000)
    plus ``import`` time and the first training step (W2) on a cold and on a warm Numba cache,
    each in a fresh process importing from cached bytecode (as a user's Python does: the
    environment's ``PYTHONDONTWRITEBYTECODE`` is dropped), and the peak memory of a W2 and a W6
    step.

Peak memory: in a fresh process per framework and workload, after 5 warm-up steps, the peak
resident set during 5 more steps (``VmHWM``, reset through ``/proc/self/clear_refs``) minus the
resident set before them. glibc's mmap threshold is pinned at 64 KiB (``MALLOC_MMAP_THRESHOLD_``)
and numpy's huge pages are off, so every buffer of 64 KiB or more, numpy's and PyTorch's alike,
is its own mapping, resident while alive and returned when freed: the growth is the peak of the
bytes alive during a step beyond what lives between steps (parameters, gradients, optimizer
state, inputs). tracemalloc cannot compare the two (it sees numpy's buffers, not PyTorch's); for
tidu it measures the same peak from numpy's own reports, printed as a cross-check.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import tidu

LIBS = {"tidu": tidu, "torch": torch}


def timeit(fns: dict[str, Callable[[], Any]], *, budget: float, min_batches: int = 5) -> dict[str, float]:
    """Median seconds per call of each function; batches of the functions are interleaved."""
    for fn in fns.values():  # warm-up: compiles, allocator caches
        fn()
        fn()
    per_batch = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        per_batch[name] = max(1, int(0.05 / max(time.perf_counter() - t0, 1e-7)))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    deadline = time.perf_counter() + budget
    while min(len(s) for s in samples.values()) < min_batches or time.perf_counter() < deadline:
        for name, fn in fns.items():
            n = per_batch[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - t0) / n)
        if time.perf_counter() > deadline + 4 * budget:
            break
    return {name: statistics.median(s) for name, s in samples.items()}


def leaf(lib: Any, array: np.ndarray, grad: bool = True, device: str = "cpu") -> Any:
    return lib.tensor(array, requires_grad=grad, device=device)


def close(a: Any, b: Any, rtol: float = 2e-3, atol: float = 2e-4) -> None:
    a = a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().cpu().numpy() if hasattr(b, "detach") else np.asarray(b)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


# --- workloads: each returns {"tidu": step, "torch": step, maybe "numpy": step}, plus a check ---
def w1_dispatch() -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(0)
    xs, ys = rng.uniform(-1, 1, 16).astype(np.float32), rng.uniform(-1, 1, 16).astype(np.float32)

    def make(lib: Any) -> Callable[[], Any]:
        x, y = leaf(lib, xs), lib.tensor(ys)

        def step() -> Any:
            h = x
            for _ in range(2):
                h = lib.tanh(h * 0.5 + y) * y
                h = lib.exp(lib.sin(h)) + 1.0
                h = lib.tanh(h * y) + y
                h = h * 0.5 + y
            h.sum().backward()
            g = x.grad
            x.grad = None
            return g

        return step

    def numpy_chain() -> np.ndarray:  # the forward's values kept, the backward by hand
        h, saved = xs, []
        for _ in range(2):
            t1 = np.tanh(h * np.float32(0.5) + ys)
            h1 = t1 * ys
            e = np.exp(np.sin(h1))
            t2 = np.tanh((e + np.float32(1.0)) * ys)
            h = (t2 + ys) * np.float32(0.5) + ys
            saved.append((t1, h1, e, t2))
        g = np.ones_like(xs)
        for t1, h1, e, t2 in reversed(saved):
            g = g * np.float32(0.5) * (1 - t2 * t2) * ys * e * np.cos(h1) * ys * (1 - t1 * t1) * np.float32(0.5)
        return g

    steps = {name: make(lib) for name, lib in LIBS.items()}
    steps["numpy (by hand)"] = numpy_chain

    def check() -> None:
        close(steps["tidu"](), steps["torch"]())
        close(numpy_chain(), steps["torch"]())

    return steps, check, "us/op", 1e6 / 20


def w2_mlp(batch: int = 128, device: str = "cpu") -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((batch, 784)).astype(np.float32)
    labels = rng.integers(0, 10, batch)
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                              torch.nn.ReLU(), torch.nn.Linear(512, 10))
    state = {k: v.detach().numpy().copy() for k, v in ref.state_dict().items()}

    def make(lib: Any) -> Callable[[], Any]:
        nn = lib.nn
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        model.to(device)
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        x, y = lib.tensor(data, device=device), lib.tensor(labels, device=device)
        loss_fn = nn.CrossEntropyLoss()

        def step() -> Any:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        return step

    steps = {name: make(lib) for name, lib in LIBS.items()}
    return steps, lambda: close(steps["tidu"](), steps["torch"]()), "ms", 1e3


def w3_elementwise(n: int = 4 * 2**20) -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(2)
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    ws = rng.uniform(-1, 1, n).astype(np.float32)

    def make(lib: Any) -> Callable[[], Any]:
        x, w = leaf(lib, xs), lib.tensor(ws)

        def step() -> Any:
            y = lib.tanh(x * w + 0.5) * w + x * x
            y.sum().backward()
            g = x.grad
            x.grad = None
            return g

        return step

    steps = {name: make(lib) for name, lib in LIBS.items()}
    src = np.empty_like(xs)
    steps["numpy copy"] = lambda: np.copyto(src, xs)
    return steps, lambda: close(steps["tidu"](), steps["torch"]()), "ms", 1e3


def w4_matmul(n: int = 1024) -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(3)
    a_np, b_np = rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)

    def make(lib: Any) -> Callable[[], Any]:
        a, b = leaf(lib, a_np), leaf(lib, b_np)

        def step() -> Any:
            (a @ b).sum().backward()
            g = a.grad
            a.grad = b.grad = None
            return g

        return step

    steps = {name: make(lib) for name, lib in LIBS.items()}
    ones = np.ones((n, n), np.float32)
    steps["numpy BLAS"] = lambda: (a_np @ b_np, ones @ b_np.T, a_np.T @ ones)
    return steps, lambda: close(steps["tidu"](), steps["torch"](), rtol=1e-3, atol=1e-2), "ms", 1e3


def rnn_data(steps_n: int = 100, hidden: int = 128, batch: int = 32) -> tuple[np.ndarray, ...]:
    """W5's inputs ``(steps_n, batch, hidden)`` and weights (the bias zero), from one seed."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((steps_n, batch, hidden)).astype(np.float32) * 0.5
    wx = rng.standard_normal((hidden, hidden)).astype(np.float32) / math.sqrt(hidden)
    wh = rng.standard_normal((hidden, hidden)).astype(np.float32) / math.sqrt(hidden)
    return xs, wx, wh, np.zeros(hidden, np.float32)


def rnn_loop(lib: Any, xs: np.ndarray, wx: np.ndarray, wh: np.ndarray, bias: np.ndarray) -> tuple[Callable[[], Any], tuple]:
    """W5's recurrence on ``lib``: ``run()``, ``h = tanh(x[t] @ Wx + h @ Wh + b)`` over the steps
    from ``h = 0``, returning ``h.sum()``; and its leaves ``(Wx, Wh, b)``."""
    x = lib.tensor(xs)
    Wx, Wh, b = leaf(lib, wx), leaf(lib, wh), leaf(lib, bias)
    steps_n, batch, hidden = xs.shape

    def run() -> Any:
        h = lib.zeros(batch, hidden)
        for t in range(steps_n):
            h = lib.tanh(x[t] @ Wx + h @ Wh + b)
        return h.sum()

    return run, (Wx, Wh, b)


def rnn_by_hand(xs: np.ndarray, wx: np.ndarray, wh: np.ndarray,
                bias: np.ndarray) -> tuple[Callable[[], None], Callable[[], np.ndarray]]:
    """numpy's W5, written by hand: ``forward()`` (the states kept) and ``backward()``
    (backpropagation through time of ``h.sum()``, returning ``Wh``'s gradient)."""
    steps_n, batch, hidden = xs.shape
    hs = np.empty((steps_n + 1, batch, hidden), np.float32)
    dpre = np.empty_like(xs)

    def forward() -> None:
        hs[0] = 0
        for t in range(steps_n):
            hs[t + 1] = np.tanh(xs[t] @ wx + hs[t] @ wh + bias)

    def backward() -> np.ndarray:
        dh = np.ones((batch, hidden), np.float32)
        for t in range(steps_n - 1, -1, -1):
            dpre[t] = dh * (1 - hs[t + 1] * hs[t + 1])
            dh = dpre[t] @ wh.T
        flat = dpre.reshape(-1, hidden)
        xs.reshape(-1, hidden).T @ flat, flat.sum(0)  # the input weights' and the bias's gradients
        return hs[:-1].reshape(-1, hidden).T @ flat

    return forward, backward


def w5_rnn(steps_n: int = 100, hidden: int = 128, batch: int = 32) -> tuple[dict, Callable[[], None], str, float]:
    data = rnn_data(steps_n, hidden, batch)

    def make(lib: Any) -> Callable[[], Any]:
        run, (Wx, Wh, b) = rnn_loop(lib, *data)

        def step() -> Any:
            run().backward()
            g = Wh.grad
            Wx.grad = Wh.grad = b.grad = None
            return g

        return step

    forward, backward = rnn_by_hand(*data)

    def numpy_rnn() -> np.ndarray:  # the states kept, backpropagation through time by hand
        forward()
        return backward()

    steps = {name: make(lib) for name, lib in LIBS.items()}
    steps["numpy (by hand)"] = numpy_rnn

    def check() -> None:
        close(steps["tidu"](), steps["torch"](), rtol=1e-3, atol=1e-3)
        close(numpy_rnn(), steps["torch"](), rtol=1e-3, atol=1e-3)

    return steps, check, "ms", 1e3


def w6_transformer(batch: int = 8, seq: int = 64, d: int = 128, heads: int = 4,
                   device: str = "cpu") -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((batch, seq, d)).astype(np.float32)
    torch.manual_seed(0)
    shapes = {"wqkv": (3 * d, d), "wo": (d, d), "w1": (4 * d, d), "w2": (d, 4 * d)}
    weights = {k: (rng.standard_normal(s) / math.sqrt(s[1])).astype(np.float32) for k, s in shapes.items()}

    def make(lib: Any) -> Callable[[], Any]:
        F = lib.nn.functional
        w = {k: leaf(lib, v, device=device) for k, v in weights.items()}
        ln1, ln2 = lib.nn.LayerNorm(d).to(device), lib.nn.LayerNorm(d).to(device)
        x = lib.tensor(xs, device=device)
        mask = lib.triu(lib.ones(seq, seq, dtype=lib.bool, device=device), diagonal=1)

        def block() -> Any:
            h = ln1(x)
            q, k, v = (h @ w["wqkv"].t()).split(d, dim=-1)
            q, k, v = (t.reshape(batch, seq, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
            scores = scores.masked_fill(mask, float("-inf"))
            att = F.softmax(scores, dim=-1) @ v
            y = x + att.transpose(1, 2).reshape(batch, seq, d) @ w["wo"].t()
            return y + F.gelu(ln2(y) @ w["w1"].t()) @ w["w2"].t()

        def step() -> Any:
            block().sum().backward()
            g = w["wqkv"].grad
            for t in w.values():
                t.grad = None
            return g

        step.forward = block  # the forward alone (bench/host_cost.py)
        return step

    steps = {name: make(lib) for name, lib in LIBS.items()}
    return steps, lambda: close(steps["tidu"](), steps["torch"](), rtol=2e-3, atol=2e-3), "ms", 1e3


def w7_hvp(n: int = 1000) -> tuple[dict, Callable[[], None], str, float]:
    rng = np.random.default_rng(6)
    a_np = (rng.standard_normal((n, n)) / math.sqrt(n)).astype(np.float32)
    x_np, v_np = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    def make(lib: Any) -> Callable[[], Any]:
        A, v = lib.tensor(a_np), lib.tensor(v_np)
        x = leaf(lib, x_np)

        def step() -> Any:
            loss = lib.tanh(A @ x).sum()
            (g,) = lib.autograd.grad(loss, x, create_graph=True)
            (hv,) = lib.autograd.grad((g * v).sum(), x)
            return hv

        return step

    def numpy_hvp() -> np.ndarray:
        # f = sum(tanh(A x)); grad = A^T (1 - t^2); H v = A^T (-2 t (1 - t^2) * (A v))
        t = np.tanh(a_np @ x_np)
        return a_np.T @ (-2 * t * (1 - t * t) * (a_np @ v_np))

    steps = {name: make(lib) for name, lib in LIBS.items()}
    steps["numpy (by hand)"] = numpy_hvp
    return steps, lambda: close(steps["tidu"](), numpy_hvp(), rtol=1e-3, atol=1e-4), "ms", 1e3


WORKLOADS = {"W1": ("per-op dispatch, 20-op chain fwd+bwd", w1_dispatch),
             "W2": ("MLP 784-512-512-10 SGD step, batch 128", w2_mlp),
             "W3": ("4M-element chain fwd+bwd", w3_elementwise),
             "W4": ("matmul 1024^3 fwd+bwd", w4_matmul),
             "W5": ("RNN 100 steps, hidden 128, batch 32", w5_rnn),
             "W6": ("transformer block fwd+bwd (8, 64, 128, 4 heads)", w6_transformer),
             "W7": ("Hessian-vector product, n = 1000", w7_hvp)}


def fresh_process_seconds(code: str, env: dict[str, str] | None = None, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


FIRST_STEP = """
import time, numpy as np
t0 = time.perf_counter()
import {lib} as lib
nn = lib.nn
model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
opt = lib.optim.SGD(model.parameters(), lr=0.01)
x = lib.tensor(np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32))
y = lib.tensor(np.random.default_rng(1).integers(0, 10, 128))
loss = nn.CrossEntropyLoss()(model(x), y); loss.backward(); opt.step()
"""


def startup_rows(threads: int) -> list[tuple[str, str, str, str]]:
    # as a user's Python imports: from cached bytecode (PYTHONDONTWRITEBYTECODE, set by CI and by
    # some sandboxes, would compile tidu's sources on every import, where PyTorch's wheel ships
    # its bytecode), written by one untimed import first
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    rows = []
    for lib in ("tidu", "torch"):
        fresh_process_seconds(f"import {lib}", env, repeats=1)
    imp = {lib: fresh_process_seconds(f"import {lib}", env) for lib in ("tidu", "torch")}
    rows.append(("import", f"{imp['tidu']:.2f} s", f"{imp['torch']:.2f} s", f"{imp['tidu'] / imp['torch']:.2f}"))
    with tempfile.TemporaryDirectory() as cache:
        cold_env = dict(env, NUMBA_CACHE_DIR=cache)
        cold = fresh_process_seconds(FIRST_STEP.format(lib="tidu"), cold_env, repeats=1)
        warm = fresh_process_seconds(FIRST_STEP.format(lib="tidu"), cold_env, repeats=3)
    ref = fresh_process_seconds(FIRST_STEP.format(lib="torch"), env)
    rows.append(("first W2 step, cold Numba cache (incl. import)", f"{cold:.2f} s", f"{ref:.2f} s", f"{cold / ref:.2f}"))
    rows.append(("first W2 step, warm Numba cache (incl. import)", f"{warm:.2f} s", f"{ref:.2f} s", f"{warm / ref:.2f}"))
    return rows


# every array of 64 KiB or more is its own mapping, returned on free, so RSS follows the live
# arrays; TIDU_MALLOC=0 keeps tidu from raising the threshold again when imported
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "NUMPY_MADVISE_HUGEPAGE": "0", "TIDU_MALLOC": "0"}


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def memory_child(key: str, lib: str, threads: int) -> None:
    """Runs in a fresh process (``--memory-child``): prints the peak growths as JSON."""
    torch.set_num_threads(threads)
    tidu.set_num_threads(threads)
    step = WORKLOADS[key][1]()[0][lib]
    for _ in range(5):
        step()
    gc.collect()
    base = _status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # VmHWM := VmRSS
    for _ in range(5):
        step()
    out = {"rss": _status_mb("VmHWM") - base}
    if lib == "tidu":
        tracemalloc.start()
        step()
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(5):
            step()
        out["tracemalloc"] = (tracemalloc.get_traced_memory()[1] - base) / 2**20
    print(json.dumps(out))


def memory_rows(keys: list[str], threads: int) -> list[tuple[str, str, str, str, str]]:
    env = dict(os.environ, **MEMORY_ENV, OMP_NUM_THREADS=str(threads))
    rows = []
    for key in keys:
        peaks = {}
        for lib in LIBS:
            done = subprocess.run([sys.executable, __file__, "--memory-child", key, lib, "--threads", str(threads)],
                                  check=True, env=env, capture_output=True, text=True)
            peaks[lib] = json.loads(done.stdout.strip().splitlines()[-1])
        tidu_mb, torch_mb = peaks["tidu"]["rss"], peaks["torch"]["rss"]
        rows.append((f"{key} peak memory of a step (RSS growth)", f"{tidu_mb:.1f} MB", f"{torch_mb:.1f} MB",
                     f"tidu by tracemalloc: {peaks['tidu']['tracemalloc']:.1f} MB", f"{tidu_mb / torch_mb:.2f}"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter timing budget (noisier)")
    parser.add_argument("--only", default="", help="comma-separated workload names (W1,...,W7)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-startup", action="store_true", help="skip the import / first-step rows")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory rows")
    parser.add_argument("--memory-child", nargs=2, metavar=("WORKLOAD", "LIB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(*args.memory_child, args.threads)
        return
    torch.set_num_threads(args.threads)
    if hasattr(tidu, "set_num_threads"):
        tidu.set_num_threads(args.threads)
    budget = 0.6 if args.quick else 3.0
    chosen = [w.strip() for w in args.only.split(",") if w.strip()] or list(WORKLOADS)

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, {args.threads} threads; "
          f"python {platform.python_version()}, torch {torch.__version__}, numpy {np.__version__}")
    print(f"command: python bench/peers.py {' '.join(sys.argv[1:])}\n")
    print("| workload | tidu | PyTorch | floor | tidu / PyTorch |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for key in chosen:
        title, build = WORKLOADS[key]
        try:
            steps, check, unit, scale = build()
            check()
        except Exception as exc:  # a workload tidu cannot run yet is reported, not hidden
            print(f"| {key} {title} | failed: {type(exc).__name__}: {str(exc)[:80]} | | | |")
            continue
        t = timeit(steps, budget=budget)
        floor_name = next((n for n in t if n not in LIBS), None)
        if key == "W4":
            gflop = 3 * 2 * 1024**3 / 1e9
            cells = [f"{gflop / t[n]:.0f} GFLOP/s" for n in ("tidu", "torch")]
            floor = f"{gflop / t[floor_name]:.0f} GFLOP/s (BLAS)"
        else:
            cells = [f"{t[n] * scale:.2f} {unit}" for n in ("tidu", "torch")]
            floor = f"{t[floor_name] * scale:.2f} {unit} ({floor_name})" if floor_name else ""
        print(f"| {key} {title} | {cells[0]} | {cells[1]} | {floor} | {t['tidu'] / t['torch']:.2f} |")
    if not args.no_memory:
        for name, a, b, floor, ratio in memory_rows([k for k in ("W2", "W6") if k in chosen], args.threads):
            print(f"| {name} | {a} | {b} | {floor} | {ratio} |")
    if not args.no_startup and not args.only:
        for name, a, b, ratio in startup_rows(args.threads):
            print(f"| {name} | {a} | {b} | | {ratio} |")


if __name__ == "__main__":
    main()
