"""The CUDA launch path and memory against numba's dispatcher and PyTorch (run on a GPU).

    python bench/gpu_launch.py          # prints a table; exits non-zero if a check fails

Checks first (results against numpy, zero-copy exchange with PyTorch both ways, a clear
out-of-memory error after which the process still works), then times in one run: a
1024-float add launched by tidu (prepacked cuLaunchKernel), by numba's dispatcher and by
PyTorch, the allocation of a 4 KB buffer, and tidu's op (allocate + launch) end to end.
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from numba import cuda

from tidu.backends.cuda import driver, synchronize
from tidu.backends.cuda.launch import Kernel
from tidu.backends.cuda.memory import CudaArray, DeviceBuffer


def add_kernel(a, b, out, n):  # noqa: ANN001, ANN201
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]


SIG = "void(float32[::1], float32[::1], float32[::1], int64)"


def per_call_us(fn, repeat: int = 2000, rounds: int = 7) -> float:  # noqa: ANN001
    """Median over rounds of the mean time per call, synchronized at the end of each round."""
    for _ in range(200):
        fn()
    synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        synchronize()
        times.append((time.perf_counter() - t0) / repeat * 1e6)
    return statistics.median(times)


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
        DeviceBuffer(1 << 50)
        ok_oom = False
    except driver.OutOfMemoryError as exc:
        print(f"out of memory raises: {type(exc).__name__}: {exc}")
        ok_oom = isinstance(exc, RuntimeError)
    kernel(n, a, b, out, n)
    ok_oom = ok_oom and np.array_equal(out.copy_to_host(), ha + hb)
    print(f"check usable after OOM: {ok_oom}")

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
    fixed = (k.handle, 4, 1, 1, 256, 1, 1, 0, k.stream, k.params, None)

    def raw_driver_call() -> None:
        k.launch_fn(*fixed)

    rows = [
        ("driver cuLaunchKernel alone (args packed once)", per_call_us(raw_driver_call)),
        ("tidu launch (prepacked cuLaunchKernel)", per_call_us(launch_only)),
        ("tidu op: pool alloc + launch + free", per_call_us(tidu_op)),
        ("tidu DeviceBuffer 4 KB alloc + free", per_call_us(lambda: DeviceBuffer(4096))),
        ("numba dispatcher launch", per_call_us(lambda: numba_kernel[4, 256](da, db, dout, n), repeat=300)),
        ("torch a + b", per_call_us(lambda: ta + tb)),
        ("torch.add(a, b, out=)", per_call_us(lambda: torch.add(ta, tb, out=tout))),
    ]
    torch.cuda.synchronize()
    print(f"\n{'per call, 1024 float32, steady state':<44}{'us':>8}")
    for name, us in rows:
        print(f"{name:<44}{us:8.2f}")
    return 0 if ok and ok_interop and ok_oom else 1


if __name__ == "__main__":
    sys.exit(main())
