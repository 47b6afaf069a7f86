"""tidu's CUDA reductions, cumsum and softmax on a GPU: checks against numpy, then timings
side by side with PyTorch, in one run.

    python bench/gpu_kernels.py      # prints a table last; exits non-zero if a check fails

Every case runs the kernel a primitive registered for 'cuda' (``prim.impls["cuda"]``, as the
dispatcher calls it: allocation included) on a ``CudaArray``, compares the result with numpy
(float tolerance by dtype, ints exact), then times it: the median over rounds of the mean
time per call, synchronized at the end of each round, after a warm-up. GB/s counts the
bytes read once plus the bytes written. The same op in PyTorch on the same data is timed
the same way (both streams synchronized). A case that fails is reported and the run goes on.
Under Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) the shapes shrink and the timings
mean nothing: that is a smoke test of this script.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
from gputiming import median_per_call

from tidu.backends.cuda import synchronize
from tidu.backends.cuda.memory import CudaArray
from tidu.backends.cuda.runtime import simulated
from tidu.primitives import nn
from tidu.primitives import reduce as red

SIM = simulated()


def _softmax(a: np.ndarray, axis: int) -> np.ndarray:
    z = a.astype(np.float64) - a.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(a: np.ndarray, axis: int) -> np.ndarray:
    z = a.astype(np.float64) - a.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _sum(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    return a.sum(axis=axes, dtype=np.float64 if a.dtype.kind == "f" else np.int64)


def _cumsum(a: np.ndarray, axis: int) -> np.ndarray:
    return np.cumsum(a, axis=axis, dtype=np.float64 if a.dtype.kind == "f" else a.dtype)


def _torch_op(name: str) -> Callable[..., Any]:
    import torch

    return {
        "sum": lambda t, axes: t.sum(dim=axes),
        "prod": lambda t, axes: t.prod(dim=axes[0]),
        "max": lambda t, axes: t.amax(dim=axes),
        "argmax": lambda t, axis: t.argmax(dim=axis),
        "argmin": lambda t, axis: t.argmin(dim=axis),
        "cumsum": lambda t, axis: t.cumsum(dim=axis),
        "softmax": lambda t, axis: torch.softmax(t, dim=axis),
        "log_softmax": lambda t, axis: torch.log_softmax(t, dim=axis),
    }[name]


# op -> (primitive, numpy reference taking the primitive's params)
OPS: dict[str, tuple[Any, Callable[..., np.ndarray]]] = {
    "sum": (red.reduce_sum, lambda a, axes: _sum(a, axes)),
    "prod": (red.reduce_prod, lambda a, axes: np.prod(a, axis=axes, dtype=np.float64 if a.dtype.kind == "f" else None)),
    "max": (red.reduce_max, lambda a, axes: a.max(axis=axes)),
    "argmax": (red.argmax, lambda a, axis: a.argmax(axis=axis)),
    "argmin": (red.argmin, lambda a, axis: a.argmin(axis=axis)),
    "cumsum": (red.cumsum, lambda a, axis: _cumsum(a, axis)),
    "softmax": (nn.softmax, lambda a, axis: _softmax(a, axis)),
    "log_softmax": (nn.log_softmax, lambda a, axis: _log_softmax(a, axis)),
}

M = 4096
CASES: list[tuple[str, tuple[int, ...], str, dict[str, Any]]] = [
    # the timed table: float32 4096x4096 (64 MiB) along rows and columns, full reductions, odd shapes
    ("sum", (M, M), "float32", {"axes": (1,)}),
    ("sum", (M, M), "float32", {"axes": (0,)}),
    ("sum", (M, M), "float32", {"axes": (0, 1)}),
    ("sum", (1 << 26,), "float32", {"axes": (0,)}),
    ("sum", (64, 256, 1024), "float32", {"axes": (0, 2)}),
    ("sum", (65536, 16), "float32", {"axes": (1,)}),
    ("max", (M, M), "float32", {"axes": (1,)}),
    ("max", (M, M), "float32", {"axes": (0,)}),
    ("max", (M, M), "float32", {"axes": (0, 1)}),
    ("prod", (M, M), "float32", {"axes": (1,)}),
    ("argmax", (M, M), "float32", {"axis": 1}),
    ("argmax", (M, M), "float32", {"axis": 0}),
    ("argmin", (1 << 24,), "float32", {"axis": 0}),
    ("cumsum", (M, M), "float32", {"axis": 1, "reverse": False}),
    ("cumsum", (M, M), "float32", {"axis": 0, "reverse": False}),
    ("cumsum", (4, 1 << 22), "float32", {"axis": 1, "reverse": False}),
    ("softmax", (M, M), "float32", {"axis": 1}),
    ("softmax", (M, M), "float32", {"axis": 0}),
    ("softmax", (1 << 18, 64), "float32", {"axis": 1}),
    ("softmax", (64, 1 << 18), "float32", {"axis": 1}),
    ("log_softmax", (M, M), "float32", {"axis": 1}),
    ("log_softmax", (32, 50257), "float32", {"axis": 1}),  # cross-entropy over a vocabulary
    # small: per-call cost (allocation + launch), steady state
    ("sum", (1024,), "float32", {"axes": (0,)}),
    ("softmax", (8, 128), "float32", {"axis": 1}),
    # other dtypes (checked and timed, smaller)
    ("sum", (1024, 1024), "int32", {"axes": (1,)}),
    ("sum", (1024, 1024), "bool", {"axes": (0,)}),
    ("sum", (1024, 1024), "float64", {"axes": (1,)}),
    ("max", (1024, 1024), "int64", {"axes": (0, 1)}),
    ("argmax", (1024, 1024), "int32", {"axis": 1}),
    ("argmin", (1024, 1024), "bool", {"axis": 0}),
    ("cumsum", (1024, 1024), "int64", {"axis": 1, "reverse": True}),
    ("cumsum", (1024, 1024), "float64", {"axis": 0, "reverse": True}),
    ("log_softmax", (1024, 1024), "float64", {"axis": 1}),
]


def make(shape: tuple[int, ...], dtype: str, op: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        high = 2 if op == "cumsum" else 1000
        return rng.integers(-high, high, shape).astype(dtype)
    if op == "prod":
        return rng.uniform(0.999, 1.001, shape).astype(dtype)
    return rng.standard_normal(shape, dtype=np.float32).astype(dtype)


def expected(op: str, a: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """numpy's result, in float64 for floats; cumsum reversed by flipping."""
    rest = {k: v for k, v in params.items() if k != "reverse"}
    if op == "cumsum" and params["reverse"]:
        axis = params["axis"]
        return np.flip(OPS[op][1](np.flip(a, axis), **rest), axis)
    return OPS[op][1](a, **rest)


def agrees(op: str, got: np.ndarray, want: np.ndarray, a: np.ndarray, params: dict[str, Any]) -> str:
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if got.dtype.kind != "f":
        bad = np.count_nonzero(got != want.astype(got.dtype))
        return f"{bad} of {got.size} differ" if bad else ""
    n = a.size // max(want.size, 1) if op not in ("cumsum", "softmax", "log_softmax") else a.shape[params["axis"]]
    eps = np.finfo(got.dtype).eps
    scale = {"softmax": 1.0, "log_softmax": 4.0, "max": 0.0}.get(op, np.sqrt(max(n, 1)) * (1 if op == "prod" else 4))
    tol = 8 * eps * (1 + scale) * (np.abs(want) + 1)
    err = np.abs(got.astype(np.float64) - want)
    bad = np.count_nonzero(~(err <= tol))
    return f"{bad} of {got.size} off (max error {err.max():.3g})" if bad else ""


def sync_all() -> None:
    synchronize()
    if not SIM:
        import torch

        torch.cuda.synchronize()


def per_call_us(fn: Callable[[], Any], budget_s: float = 0.25, rounds: int = 5) -> float:
    fn()
    sync_all()
    t0 = time.perf_counter()
    fn()
    sync_all()
    once = max(time.perf_counter() - t0, 1e-6)
    repeat = max(1, min(1000, int(budget_s / rounds / once)))
    return median_per_call(fn, sync_all, repeat=repeat, rounds=rounds, warmup=0) * 1e6


def label(op: str, shape: tuple[int, ...], dtype: str, params: dict[str, Any]) -> str:
    args = " ".join(f"{k}={v}" for k, v in params.items() if k != "reverse" or v)
    return f"{op} {'x'.join(map(str, shape))} {dtype} {args}".rstrip()


def run_case(i: int, op: str, shape: tuple[int, ...], dtype: str, params: dict[str, Any]) -> dict[str, Any]:
    if SIM:
        shape = tuple(min(d, 40) for d in shape)
    prim = OPS[op][0]
    a = make(shape, dtype, op, seed=i)
    x = CudaArray.from_host(a)
    impl = prim.impls["cuda"]
    out = impl(x, **params)
    got = out.copy_to_host()
    problem = agrees(op, got, expected(op, a, params), a, params)
    gbytes = (a.nbytes + got.nbytes) / 1e9
    row = {"case": label(op, shape, dtype, params), "check": problem or "ok", "gbytes": gbytes}
    if SIM:  # a smoke test: the simulator's timings mean nothing
        return row
    row["tidu_us"] = per_call_us(lambda: impl(x, **params))
    if not params.get("reverse"):
        import torch

        try:  # PyTorch lacks some (argmin of bool): no comparison then
            t = torch.as_tensor(a, device="cuda")
            fn = _torch_op(op)
            args = [v for k, v in params.items() if k != "reverse"]
            row["torch_us"] = per_call_us(lambda: fn(t, *args))
        except RuntimeError as exc:
            print(f"  torch: {exc}"[:120])
    return row


def main() -> int:
    if not SIM:
        import numba
        import torch

        from tidu.backends.cuda.numba_bridge import numba_cuda_version

        print(f"{torch.cuda.get_device_name()}, numba {numba.__version__}, numba-cuda {numba_cuda_version()}, "
              f"torch {torch.__version__}, numpy {np.__version__}")
    rows, failed = [], 0
    for i, (op, shape, dtype, params) in enumerate(CASES):
        try:
            row = run_case(i, op, shape, dtype, params)
        except Exception as exc:  # noqa: BLE001 - report and go on: GPU time is scarce
            traceback.print_exc()
            row = {"case": label(op, shape, dtype, params), "check": f"ERROR {type(exc).__name__}: {exc}"[:90]}
        failed += row["check"] != "ok"
        print(row, flush=True)
        rows.append(row)
    print(f"\n{'case':<46}{'check':>8}{'tidu us':>10}{'GB/s':>8}{'torch us':>10}{'GB/s':>8}{'tidu/torch':>11}")
    for r in rows:
        tidu, torch_us, gb = r.get("tidu_us"), r.get("torch_us"), r.get("gbytes", 0.0)
        line = f"{r['case'][:45]:<46}{r['check'][:7]:>8}"
        line += f"{tidu:10.1f}{gb / tidu * 1e6:8.0f}" if tidu else f"{'':>18}"
        if torch_us:
            line += f"{torch_us:10.1f}{gb / torch_us * 1e6:8.0f}{tidu / torch_us:11.2f}"
        print(line)
    for r in rows:
        if r["check"] != "ok":
            print(f"FAILED {r['case']}: {r['check']}")
    print(f"{len(rows) - failed} of {len(rows)} cases agree with numpy")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
