"""The payoff of fusion on W3 of bench/peers.py: a 4M-element elementwise chain.

    python bench/fusion.py             # ~1 minute on 2 cores
    python bench/fusion.py --n 65536   # another size

Backward: the chain ``tanh(x * w + 0.5) * w + x * x`` is written as an ``Instr`` program,
and its backward program is assembled from the per-node cached programs of
tidu/core/programs.py (each node's residual ops and its transposed program, cotangents
summed with ``add``), the way a whole-step backward program would be. It runs unfused
(``instructions.run``) and after ``fusion.fuse``; PyTorch's backward of the same chain
(gradient of ``x`` from the same forward values, so only the backward is timed) and one
numpy copy of an input are the references. Forward: the chain itself, unfused and fused,
against PyTorch's forward.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's tidu
import tidu  # noqa: E402
from tidu.backends.cpu import fusion
from tidu.core import instructions, programs
from tidu.core.aval import ShapeDtype
from tidu.core.dtypes import from_numpy_dtype
from tidu.core.instructions import Instr, impl_instr
from tidu.core.primitive import Application, Primitive, freeze
from tidu.primitives import creation, structural
from tidu.primitives import elementwise as ew


class Builder:
    """Builds an ``Instr`` program over numbered slots, one application at a time."""

    def __init__(self) -> None:
        self.program: list[Instr] = []
        self.avals: list[ShapeDtype] = []

    def input(self, aval: ShapeDtype) -> int:
        self.avals.append(aval)
        return len(self.avals) - 1

    def apply(self, app: Application, ins: Sequence[int]) -> list[int]:
        outs = [self.input(a) for a in app.out_avals]
        self.program.append(impl_instr(app, ins, outs, app.out_avals[0].device))
        return outs

    def emit(self, prim: Primitive, *ins: int, **params: Any) -> int:
        app = Application(prim, freeze(params), tuple(self.avals[i] for i in ins))
        return self.apply(app, ins)[0]


def backward(b: Builder, forward: Sequence[Instr], wrt: set[int], out: int, seed: int) -> dict[int, int]:
    """Append the backward program of ``forward`` (from ``seed``, the cotangent of ``out``)
    to ``b``; returns the cotangent slot of every slot in ``wrt`` reached."""
    needs = set(wrt)
    for instr in forward:
        if needs.intersection(instr.ins):
            needs.update(instr.outs)
    cts = {out: seed}
    for instr in reversed(forward):
        ct = cts.get(instr.outs[0])
        distinct = list(dict.fromkeys(instr.ins))
        active = tuple(p for p, s in enumerate(distinct) if s in needs)
        if ct is None or not active:
            continue
        pattern = tuple(distinct.index(s) for s in instr.ins)
        prog = programs._program(instr.app, (0,), pattern, active, None)
        env = dict(zip(prog.in_keys, distinct))
        env[prog.out_keys[0]] = instr.outs[0]
        linear = prog.linear.as_graph()
        for node in linear.operations:  # the residuals: primal work of the linear graph
            if not (node.role.is_linearized() and any(node.role.active_mask)):
                outs = b.apply(node.operation, [env[linear.values[i].key] for i in node.inputs])
                env.update((linear.values[v].key, s) for v, s in zip(node.outputs, outs))
        tg = prog.transposed.as_graph()
        local = {prog.transposed.tangent_inputs[0][1]: ct}
        for v in tg.inputs:
            local.setdefault(v, env.get(tg.values[v].key))
        for node in tg.operations:
            ins = [local[i] for i in node.inputs]
            op = node.operation
            if op.in_avals is None:  # the engine's accumulation add
                op = Application(op.prim, (), tuple(b.avals[i] for i in ins))
            local.update(zip(node.outputs, b.apply(op, ins)))
        for (raw, _), v in zip(prog.linear.tangent_inputs, prog.transposed.tangent_outputs):
            if v is None:
                continue
            slot = distinct[raw[1]]
            cts[slot] = local[v] if slot not in cts else b.emit(ew.add, cts[slot], local[v])
    return {s: cts[s] for s in wrt if s in cts}


def w3_chain(n: int, dtype: Any = np.float32) -> tuple[Builder, list[Instr], dict[str, int]]:
    """The W3 chain ``y = tanh(x * w + 0.5) * w + x * x; s = y.sum()`` and its backward."""
    b = Builder()
    aval = ShapeDtype((n,), from_numpy_dtype(dtype))
    x, w = b.input(aval), b.input(aval)
    half = b.emit(creation.full, shape=(), value=0.5, dtype=aval.dtype)
    t = b.emit(ew.tanh, b.emit(ew.add, b.emit(ew.mul, x, w), b.emit(structural.broadcast_in_dim, half, shape=(n,),
                                                                      broadcast_dimensions=())))
    y = b.emit(ew.add, b.emit(ew.mul, t, w), b.emit(ew.mul, x, x))
    forward = list(b.program)
    s = b.emit(tidu.primitives.reduce.reduce_sum, y, axes=(0,))
    forward.append(b.program[-1])
    b.program = []
    seed = b.input(b.avals[s])
    grads = backward(b, forward, {x}, s, seed)
    return b, forward, {"x": x, "w": w, "y": y, "seed": seed, "dx": grads[x]}


def tanh_fma(n: int) -> tuple[Builder, dict[str, int]]:
    """The forward chain ``tanh(a * b + c)``."""
    b = Builder()
    aval = ShapeDtype((n,), from_numpy_dtype(np.float32))
    a, w, c = (b.input(aval) for _ in range(3))
    return b, {"a": a, "b": w, "c": c, "out": b.emit(ew.tanh, b.emit(ew.add, b.emit(ew.mul, a, w), c))}


def timed(fn: Callable[[], Any], budget: float) -> tuple[float, float]:
    """Median wall and process-CPU seconds of ``fn`` (after two warm-up calls); on a shared
    machine the CPU time shows the work where the wall time shows the wait as well."""
    fn()
    fn()
    walls, cpus = [], []
    deadline = time.perf_counter() + budget
    while len(walls) < 5 or time.perf_counter() < deadline:
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4 * 2**20)
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per timed variant")
    parser.add_argument("--threads", type=int, default=tidu.get_num_threads())
    args = parser.parse_args()
    n = args.n
    tidu.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    xs, ws = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(2))

    b, forward, slot = w3_chain(n)
    seed = np.ones((), np.float32)
    slots: list[Any] = [None] * len(b.avals)
    slots[slot["x"]], slots[slot["w"]] = xs, ws
    instructions.run(forward, slots)
    saved = list(slots)
    saved[slot["seed"]] = seed
    keep = {slot["dx"]}
    fused_bwd = fusion.fuse(b.program, keep)
    fused_fwd = fusion.fuse(forward[:-1], {slot["y"]})

    def run_bwd(program: list[Instr]) -> np.ndarray:
        s = list(saved)
        instructions.run(program, s)
        return s[slot["dx"]]

    def run_fwd(program: list[Instr]) -> np.ndarray:
        s = list(saved)
        instructions.run(program, s)
        return s[slot["y"]]

    xt, wt = torch.tensor(xs, requires_grad=True), torch.tensor(ws)

    def torch_bwd() -> Any:
        y = torch.tanh(xt * wt + 0.5) * wt + xt * xt
        return torch.autograd.grad(y.sum(), xt)[0]

    y_t = torch.tanh(xt * wt + 0.5) * wt + xt * xt

    def torch_bwd_only() -> Any:
        return torch.autograd.grad(y_t.sum(), xt, retain_graph=True)[0]

    def torch_fwd() -> Any:
        with torch.no_grad():
            return torch.tanh(xt * wt + 0.5) * wt + xt * xt

    fma, fma_slot = tanh_fma(n)
    fused_fma = fusion.fuse(fma.program, {fma_slot["out"]})
    cs = rng.uniform(-1, 1, n).astype(np.float32)
    ct = torch.tensor(cs)

    def run_fma(program: list[Instr]) -> np.ndarray:
        s = [xs, ws, cs, *[None] * (len(fma.avals) - 3)]
        instructions.run(program, s)
        return s[fma_slot["out"]]

    def torch_fma() -> Any:
        with torch.no_grad():
            return torch.tanh(xt * wt + ct)

    np.testing.assert_array_equal(run_fma(fused_fma), run_fma(fma.program))
    np.testing.assert_array_equal(run_bwd(fused_bwd), run_bwd(b.program))
    np.testing.assert_allclose(run_bwd(fused_bwd), torch_bwd().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(run_fwd(fused_fwd), run_fwd(forward[:-1]))

    dst = np.empty_like(xs)
    budget = args.budget
    copy = timed(lambda: np.copyto(dst, xs), budget)
    rows = [
        ("numpy copy (one 4-byte read + write per element)", copy),
        (f"backward unfused ({len(b.program)} instructions)", timed(lambda: run_bwd(b.program), budget)),
        (f"backward fused ({len(fused_bwd)} instructions)", timed(lambda: run_bwd(fused_bwd), budget)),
        ("backward PyTorch (autograd.grad, graph retained)", timed(torch_bwd_only, budget)),
        ("forward+backward PyTorch", timed(torch_bwd, budget)),
        (f"forward unfused ({len(forward) - 1} instructions)", timed(lambda: run_fwd(forward[:-1]), budget)),
        (f"forward fused ({len(fused_fwd)} instructions)", timed(lambda: run_fwd(fused_fwd), budget)),
        ("forward PyTorch (no_grad)", timed(torch_fwd, budget)),
        ("tanh(a * b + c) unfused (3 instructions)", timed(lambda: run_fma(fma.program), budget)),
        (f"tanh(a * b + c) fused ({len(fused_fma)} instruction)", timed(lambda: run_fma(fused_fma), budget)),
        ("tanh(a * b + c) PyTorch (no_grad)", timed(torch_fma, budget)),
    ]
    print(f"W3 chain, n = {n}, float32, {args.threads} threads (tidu and PyTorch), load {os.getloadavg()[0]:.1f}")
    print(f"  {'':<52} {'wall ms':>8} {'x copy':>7} {'cpu ms':>8} {'x copy':>7}")
    for name, (wall, cpu) in rows:
        print(f"  {name:<52} {wall * 1e3:8.2f} {wall / copy[0]:7.2f} {cpu * 1e3:8.2f} {cpu / max(copy[1], 1e-9):7.2f}")


if __name__ == "__main__":
    main()
