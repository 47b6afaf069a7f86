"""tidu's vectorizable float32 transcendentals (tidu/backends/cpu/fastmath.py): speed and accuracy.

    python bench/fastmath.py               # ns per element over 1M float32, one thread:
                                           # fastmath vs the libm kernel vs numpy vs torch
    python bench/fastmath.py --exhaustive  # max ULP error over all 2^32 float32 inputs vs libm float64
    python bench/fastmath.py --exhaustive sin,cos   # only these
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import torch
from numba import njit

import tidu
from tidu.backends.cpu import elementwise as cpu
from tidu.backends.cpu import fastmath
from tidu.primitives import elementwise as prims

F32 = np.dtype(np.float32)


def _logistic(x):  # noqa: ANN001, ANN202
    return 1.0 / (1.0 + math.exp(-x))


# name: (fast, libm scalar function, numpy, torch, exact float64 reference, sample range)
FUNCTIONS = {
    "exp": (fastmath.exp_f32, prims._exp, np.exp, torch.exp, math.exp, (-80, 80)),
    "tanh": (fastmath.tanh_f32, prims._tanh, np.tanh, torch.tanh, math.tanh, (-5, 5)),
    "logistic": (fastmath.logistic_f32, prims._logistic, None, torch.sigmoid, _logistic, (-20, 20)),
    "log": (fastmath.log_f32, prims._log, np.log, torch.log, math.log, (1e-3, 1e3)),
    "log1p": (fastmath.log1p_f32, prims._log1p, np.log1p, torch.log1p, math.log1p, (-0.9, 10)),
    "expm1": (fastmath.expm1_f32, prims._expm1, np.expm1, torch.expm1, math.expm1, (-10, 10)),
    "sin": (fastmath.sin_f32, prims._sin, np.sin, torch.sin, math.sin, (-100, 100)),
    "cos": (fastmath.cos_f32, prims._cos, np.cos, torch.cos, math.cos, (-100, 100)),
    "tan": (fastmath.tan_f32, prims._tan, np.tan, torch.tan, math.tan, (-1.5, 1.5)),
    "erf": (fastmath.erf_f32, prims._erf, None, torch.erf, math.erf, (-4, 4)),
}


def _best(fn, *args, repeat: int = 30) -> float:  # noqa: ANN001, ANN002
    if fn is None:
        return math.nan
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def speed() -> None:
    tidu.set_num_threads(1)
    torch.set_num_threads(1)
    n = 1 << 20
    print(f"ns per element, {n} float32, one thread (best of 30)")
    print(f"{'':10}{'fastmath':>10}{'libm':>10}{'numpy':>10}{'torch':>10}")
    for name, (fast, libm, np_fn, torch_fn, _, (lo, hi)) in FUNCTIONS.items():
        x = np.random.default_rng(0).uniform(lo, hi, n).astype(np.float32)
        xt = torch.from_numpy(x)
        fast_k, libm_k = cpu.unary_kernel(fast), cpu.unary_kernel(libm)
        cols = [_best(fast_k, x, F32), _best(libm_k, x, F32), _best(np_fn, x), _best(torch_fn, xt)]
        print(f"{name:10}" + "".join(f"{t / n * 1e9:10.2f}" for t in cols))


def _exhaustive_loop(fast, exact):  # noqa: ANN001, ANN202
    f = cpu.scalar(fast)
    g = cpu.scalar(exact)

    @njit(error_model="numpy")
    def loop(lo, hi):  # max ULP distance and NaN disagreements over bit patterns [lo, hi)
        worst = 0
        at = lo
        nan_bad = 0
        for bits in range(lo, hi):
            x = np.uint32(bits).view(np.float32)
            got = np.float32(f(x))
            ref = np.float32(g(np.float64(x)))
            nan_bad += (got != got) != (ref != ref)
            a = np.int64(got.view(np.int32))
            b = np.int64(ref.view(np.int32))
            a = -(a & 0x7FFFFFFF) if a < 0 else a
            b = -(b & 0x7FFFFFFF) if b < 0 else b
            d = abs(a - b) if ref == ref and got == got else 0
            at = bits if d > worst else at
            worst = max(worst, d)
        return worst, at, nan_bad

    return loop


def _exact_domain(name: str):  # noqa: ANN202
    """math.* raises (in Python) or returns NaN (compiled) outside the domain; numpy's convention inside."""
    exact = FUNCTIONS[name][4]
    if name == "log":
        return lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)
    if name == "log1p":
        return lambda x: math.log1p(x) if x > -1 else (-math.inf if x == -1 else math.nan)
    if name in ("sin", "cos", "tan"):
        return lambda x: exact(x) if abs(x) < math.inf else math.nan
    if name in ("exp", "expm1"):
        return lambda x: exact(min(x, 100.0)) if x == x else x
    return exact


def exhaustive(names: list[str]) -> None:
    print("max ULP error over all 2^32 float32 inputs vs libm float64 rounded to float32")
    for name in names:
        loop = _exhaustive_loop(FUNCTIONS[name][0], _exact_domain(name))
        start = time.perf_counter()
        worst, at, nan_bad = loop(0, 1 << 32)
        x = np.uint32(at).view(np.float32)
        print(f"{name:10} max {worst} ULP (at {x!r}), NaN disagreements {nan_bad}, "
              f"{time.perf_counter() - start:.0f} s", flush=True)


if __name__ == "__main__":
    if "--exhaustive" in sys.argv:
        rest = [a for a in sys.argv[1:] if a != "--exhaustive"]
        exhaustive(rest[0].split(",") if rest else list(FUNCTIONS))
    else:
        speed()
