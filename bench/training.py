"""A training step of an MLP 784-512-512-10: tidu side by side with PyTorch (CPU), in one process.

    python bench/training.py              # about 30 seconds
    python bench/training.py --quick      # a few seconds, noisier
    python bench/training.py --threads 2  # both frameworks (and BLAS) on 2 threads

The model is Linear(784, 512) - ReLU - Linear(512, 512) - ReLU - Linear(512, 10) with
CrossEntropyLoss on a batch of 128 float32 samples; both frameworks start from the same weights
(PyTorch's initialization copied into tidu) and the script checks that they compute the same
loss, gradients and updated weights before timing. Rows (milliseconds per call, median over
interleaved batches, and the ratio tidu / PyTorch):

    SGD training step     zero_grad, forward, loss, backward, SGD(lr=0.01).step()
    forward (no_grad)     the forward pass and the loss under no_grad()
    forward + backward    forward, loss and backward (no update)
    SGD.step() alone      the update of the 669,706 parameters from existing gradients
    Adam.step() alone     the same with Adam

Threads: ``--threads N`` sets torch.set_num_threads, numba.set_num_threads and (through
threadpoolctl, installed with scikit-learn) numpy's BLAS threads to N (default 1).
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

SIZES = (784, 512, 512, 10)
BATCH = 128


def set_threads(n: int) -> str:
    torch.set_num_threads(n)
    import numba

    numba.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        blas = "numpy BLAS default (threadpoolctl not installed)"
    else:
        threadpool_limits(limits=n, user_api="blas")
        blas = f"numpy BLAS {n} (threadpoolctl)"
    return f"torch.set_num_threads({n}), numba.set_num_threads({n}), {blas}"


def build(lib, state=None):
    nn = lib.nn
    model = nn.Sequential(
        nn.Linear(SIZES[0], SIZES[1]), nn.ReLU(), nn.Linear(SIZES[1], SIZES[2]), nn.ReLU(), nn.Linear(SIZES[2], SIZES[3])
    )
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    return model


def batch(lib):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    return lib.tensor(x), lib.tensor(y)


class Setup:
    """One framework's model, batch, loss and optimizers."""

    def __init__(self, lib, state):
        self.lib = lib
        self.model = build(lib, state)
        self.x, self.y = batch(lib)
        self.loss_fn = lib.nn.CrossEntropyLoss()
        self.sgd = lib.optim.SGD(self.model.parameters(), lr=0.01)
        self.adam = lib.optim.Adam(self.model.parameters(), lr=1e-4)

    def train_step(self):
        self.sgd.zero_grad()
        loss = self.loss_fn(self.model(self.x), self.y)
        loss.backward()
        self.sgd.step()
        return loss

    def forward(self):
        with self.lib.no_grad():
            return self.loss_fn(self.model(self.x), self.y)

    def forward_backward(self):
        self.sgd.zero_grad()
        loss = self.loss_fn(self.model(self.x), self.y)
        loss.backward()
        return loss


def check_same_results(state) -> None:
    ours, theirs = Setup(tidu, state), Setup(torch, state)
    losses = [s.train_step().item() for s in (ours, theirs)]
    if not np.isclose(*losses, rtol=1e-5):
        sys.exit(f"training.py: tidu and torch disagree on the loss: {losses}")
    for (name, a), (_, b) in zip(ours.model.named_parameters(), theirs.model.named_parameters()):
        for what, u, v in (("grad", a.grad, b.grad), ("updated weight", a, b)):
            u, v = u.detach().numpy(), v.detach().numpy()
            if not np.allclose(u, v, rtol=1e-4, atol=1e-6):
                sys.exit(f"training.py: tidu and torch disagree on {name} {what}: max |diff| {np.abs(u - v).max():.3g}")


def measure(fns: dict[str, Callable[[], object]], batches: int, target_s: float) -> dict[str, float]:
    """Median milliseconds per call for each fn; batches interleaved across fns."""
    counts = {}
    for name, fn in fns.items():
        start = time.perf_counter()
        fn()
        counts[name] = max(1, int(target_s / max(time.perf_counter() - start, 1e-6)))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(batches):
        for name, fn in fns.items():
            n = counts[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(s) * 1e3 for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter batches (a few seconds)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    batches, target_s = (3, 0.1) if args.quick else (9, 0.5)
    threads = set_threads(args.threads)

    torch.manual_seed(0)
    state = {k: v.detach().numpy().copy() for k, v in build(torch).state_dict().items()}
    start = time.perf_counter()
    Setup(tidu, state).train_step()  # first call: Numba kernels compile or load from the cache
    first_ms = (time.perf_counter() - start) * 1e3
    check_same_results(state)

    ours, theirs = Setup(tidu, state), Setup(torch, state)
    for s in (ours, theirs):  # gradients for the optimizer-only rows; warm up
        s.forward_backward()
        s.adam.step()
        for _ in range(3):
            s.train_step()
    rows = [
        ("SGD training step", lambda s: s.train_step),
        ("forward (no_grad)", lambda s: s.forward),
        ("forward + backward", lambda s: s.forward_backward),
        ("SGD.step() alone", lambda s: s.sgd.step),
        ("Adam.step() alone", lambda s: s.adam.step),
    ]
    results = {title: measure({"tidu": make(ours), "torch": make(theirs)}, batches, target_s) for title, make in rows}

    cmd = "python bench/training.py" + (" --quick" if args.quick else "") + (
        f" --threads {args.threads}" if args.threads != 1 else "")
    n_params = sum(p.numel() for p in ours.model.parameters())
    print(f"### MLP {'-'.join(map(str, SIZES))} ({n_params:,} parameters), batch {BATCH}, float32, milliseconds")
    print()
    print(f"command: `{cmd}`  ")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_implementation()} "
          f"{platform.python_version()}  ")
    print(f"versions: tidu {importlib.metadata.version('tidu')}, torch {torch.__version__}, numpy {np.__version__}  ")
    print(f"threads: {threads}  ")
    print(f"median of {batches} batches of ~{target_s * 1e3:.0f} ms each; tidu's first step {first_ms:.0f} ms")
    print()
    print("| work | PyTorch | tidu | tidu / PyTorch |")
    print("| --- | ---: | ---: | ---: |")
    for title, r in results.items():
        print(f"| {title} | {r['torch']:.3f} | {r['tidu']:.3f} | {r['tidu'] / r['torch']:.2f}x |")


if __name__ == "__main__":
    main()
