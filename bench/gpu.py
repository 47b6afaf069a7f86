"""tidu's CUDA backend on a GPU: checks, then timings side by side with PyTorch in one run.

    python bench/gpu.py          # prints tables; exits non-zero if a check fails

Checks: kernels made from tidu's scalar functions against numpy, cuBLAS gemm (transposes,
batches) against numpy, zero-copy exchange with PyTorch both ways, a clear out-of-memory
error after which the process still works. Timings: a 1024-float add launched by tidu
(prepacked cuLaunchKernel), by numba's dispatcher and by PyTorch; the allocation of a
4 KB buffer; tidu's op (allocate + launch) end to end; 4096^3 matmul (fp32, TF32) against
torch.mm; a 64M-float elementwise op against a device copy's bandwidth.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from gputiming import median_per_call
from numba import cuda

from tidu.backends.cuda import blas, driver, launch, runtime, synchronize
from tidu.backends.cuda.elementwise import binary_kernel, unary_kernel
from tidu.backends.cuda.launch import Kernel
from tidu.backends.cuda.memory import CudaArray, allocate


def add_kernel(a, b, out, n):  # noqa: ANN001, ANN201
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]


SIG = "void(float32[::1], float32[::1], float32[::1], int64)"


def sync_all() -> None:
    """Wait for tidu's stream and PyTorch's."""
    import torch

    synchronize()
    torch.cuda.synchronize()


def per_call_us(fn, repeat: int = 2000, rounds: int = 7) -> float:  # noqa: ANN001
    """Median over rounds of the mean time per call, synchronized at the end of each round."""
    return median_per_call(fn, sync_all, repeat=repeat, rounds=rounds, warmup=min(200, repeat)) * 1e6


class ew:  # noqa: N801 - scalar functions as tidu's primitives declare them (math.*: both targets compile it)
    @staticmethod
    def _exp(x):  # noqa: ANN001, ANN205
        return math.exp(x)

    @staticmethod
    def _tanh(x):  # noqa: ANN001, ANN205
        return math.tanh(x)

    @staticmethod
    def _erf(x):  # noqa: ANN001, ANN205
        return math.erf(x)

    @staticmethod
    def _log(x):  # noqa: ANN001, ANN205
        return math.log(x)

    @staticmethod
    def _mul(x, y):  # noqa: ANN001, ANN205
        return x * y

    @staticmethod
    def _div(x, y):  # noqa: ANN001, ANN205
        return x / y

    @staticmethod
    def _maximum(x, y):  # noqa: ANN001, ANN205
        return x if (x > y or x != x) else y


def check_elementwise() -> bool:
    rng = np.random.default_rng(1)
    ok = True
    for dtype, rtol in (("float32", 1e-6), ("float64", 1e-14)):
        x = rng.uniform(-2, 2, 10_000).astype(dtype)
        y = rng.uniform(0.5, 2, 10_000).astype(dtype)
        dx, dy = CudaArray.from_host(x), CudaArray.from_host(y)
        erf = np.vectorize(math.erf)
        for name, fn, ref in (("exp", ew._exp, np.exp(x)), ("tanh", ew._tanh, np.tanh(x)),
                              ("erf", ew._erf, erf(x).astype(dtype)), ("log", ew._log, np.log(y))):
            arg = dy if name == "log" else dx
            got = unary_kernel(fn)(arg, dtype).copy_to_host()
            good = np.allclose(got, ref, rtol=rtol * 8, atol=rtol)
            ok &= good
            print(f"  {name:<8}{dtype:<9}{'ok' if good else 'MISMATCH'}")
        for name, fn, ref in (("mul", ew._mul, x * y), ("div", ew._div, x / y), ("maximum", ew._maximum, np.maximum(x, y))):
            got = binary_kernel(fn)(dx, dy, dtype).copy_to_host()
            good = np.allclose(got, ref, rtol=rtol * 8, atol=rtol)
            ok &= good
            print(f"  {name:<8}{dtype:<9}{'ok' if good else 'MISMATCH'}")
    return ok


def check_gemm() -> bool:
    rng = np.random.default_rng(2)
    ok = True
    for dtype, tol in (("float32", 1e-4), ("float64", 1e-12)):
        for batch in (None, 3):
            for ta in (False, True):
                for tb in (False, True):
                    m, k, n = 37, 19, 23
                    sa = (k, m) if ta else (m, k)
                    sb = (n, k) if tb else (k, n)
                    if batch:
                        sa, sb = (batch, *sa), (batch, *sb)
                    a, b = rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
                    ref = (np.swapaxes(a, -1, -2) if ta else a) @ (np.swapaxes(b, -1, -2) if tb else b)
                    got = blas.gemm(CudaArray.from_host(a), CudaArray.from_host(b), trans_a=ta, trans_b=tb)
                    err = np.linalg.norm(got.copy_to_host() - ref) / np.linalg.norm(ref)
                    ok &= bool(err < tol)
    print(f"  gemm float32/float64, batched, all transposes: {'ok' if ok else 'MISMATCH'}")
    return ok


def bench_large() -> list[tuple[str, float, str]]:
    import torch

    rows = []
    size = 4096
    a = CudaArray.from_host(np.random.default_rng(3).standard_normal((size, size)).astype(np.float32))
    b = CudaArray.from_host(np.random.default_rng(4).standard_normal((size, size)).astype(np.float32))
    ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
    flops = 2 * size**3
    for tf32 in (False, True):
        blas.matmul.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        tidu_us = per_call_us(lambda: blas.gemm(a, b), repeat=20, rounds=5)
        torch_us = per_call_us(lambda: torch.mm(ta, tb), repeat=20, rounds=5)
        mode = "tf32" if tf32 else "fp32"
        rows.append((f"matmul {size}^3 {mode} tidu (cuBLAS)", flops / tidu_us / 1e6, "TFLOP/s"))
        rows.append((f"matmul {size}^3 {mode} torch.mm", flops / torch_us / 1e6, "TFLOP/s"))
        rows.append((f"  ratio tidu/torch throughput ({mode})", torch_us / tidu_us, "x"))
    blas.matmul.allow_tf32 = False
    n = 64 * 2**20
    x = CudaArray.from_host(np.random.default_rng(5).standard_normal(n).astype(np.float32))
    tx = torch.as_tensor(x, device="cuda")
    exp = unary_kernel(ew._exp)
    copy_us = per_call_us(lambda: tx.clone(), repeat=20, rounds=5)
    exp_us = per_call_us(lambda: exp(x, np.float32), repeat=20, rounds=5)
    torch_exp_us = per_call_us(lambda: torch.exp(tx), repeat=20, rounds=5)
    gbytes = 2 * 4 * n / 1e9
    rows.append(("device copy 64M float32 (torch clone)", gbytes / copy_us * 1e6, "GB/s"))
    rows.append(("tidu exp 64M float32", gbytes / exp_us * 1e6, "GB/s"))
    rows.append(("torch exp 64M float32", gbytes / torch_exp_us * 1e6, "GB/s"))
    rows.append(("  tidu exp / copy bandwidth", copy_us / exp_us, "x"))
    return rows


def main() -> int:
    import torch

    n = 1024
    rng = np.random.default_rng(0)
    ha, hb = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a, b = CudaArray.from_host(ha), CudaArray.from_host(hb)
    out = CudaArray.empty((n,), np.float32)
    kernel = Kernel(add_kernel, SIG)
    kernel(n, a, b, out, n)
    ok = np.array_equal(out.copy_to_host(), ha + hb)
    print(f"check add vs numpy: {ok}")

    # zero-copy both ways
    t = torch.arange(n, dtype=torch.float32, device="cuda")
    wrapped = CudaArray.from_interface(t)
    kernel(n, wrapped, wrapped, out, n)
    torch.cuda.synchronize()
    back = torch.as_tensor(out, device="cuda")
    zero_copy = back.data_ptr() == out.ptr and wrapped.ptr == t.data_ptr()
    ok_interop = zero_copy and torch.equal(back.cpu(), (t * 2).cpu())
    print(f"check zero-copy exchange with torch: {ok_interop}")

    try:
        allocate(1 << 50)
        ok_oom = False
    except driver.OutOfMemoryError as exc:
        print(f"out of memory raises: {type(exc).__name__}: {exc}")
        ok_oom = isinstance(exc, RuntimeError)
    kernel(n, a, b, out, n)
    ok_oom = ok_oom and np.array_equal(out.copy_to_host(), ha + hb)
    print(f"check usable after OOM: {ok_oom}")
    print("check elementwise kernels from tidu's scalar functions vs numpy:")
    ok_ew = check_elementwise()
    print("check cuBLAS gemm vs numpy:")
    ok_gemm = check_gemm()

    numba_kernel = cuda.jit(SIG)(add_kernel)
    da, db, dout = cuda.to_device(ha), cuda.to_device(hb), cuda.device_array(n, np.float32)
    ta, tb = torch.tensor(ha, device="cuda"), torch.tensor(hb, device="cuda")
    tout = torch.empty_like(ta)

    def tidu_op() -> None:
        o = CudaArray.empty((n,), np.float32)
        kernel(n, a, b, o, n)

    def launch_only() -> None:
        kernel(n, a, b, out, n)

    k = kernel
    driver_launch, stream = launch._driver_launch(), runtime.runtime().stream

    def raw_driver_call() -> None:
        driver_launch(k.handle, 4, 256, 0, stream, k.params)

    rows = [
        ("driver cuLaunchKernel alone (args packed once)", per_call_us(raw_driver_call)),
        ("tidu launch (prepacked cuLaunchKernel)", per_call_us(launch_only)),
        ("tidu op: pool alloc + launch + free", per_call_us(tidu_op)),
        ("tidu CudaArray 4 KB alloc + free", per_call_us(lambda: CudaArray.empty((1024,), np.float32))),
        ("numba dispatcher launch", per_call_us(lambda: numba_kernel[4, 256](da, db, dout, n), repeat=300)),
        ("torch a + b", per_call_us(lambda: ta + tb)),
        ("torch.add(a, b, out=)", per_call_us(lambda: torch.add(ta, tb, out=tout))),
    ]
    torch.cuda.synchronize()
    print(f"\n{'per call, 1024 float32, steady state':<44}{'us':>8}")
    for name, us in rows:
        print(f"{name:<44}{us:8.2f}")
    print(f"\n{'large work':<44}{'value':>10}")
    for name, value, unit in bench_large():
        print(f"{name:<44}{value:10.2f} {unit}")
    return 0 if ok and ok_interop and ok_oom and ok_ew and ok_gemm else 1


if __name__ == "__main__":
    sys.exit(main())
