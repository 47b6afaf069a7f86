"""The cost of ``tidu.profiler``'s hook on the op path: ``a * b`` on 16-element tensors, in
nanoseconds of process time per call (the least of several batches), before the profiler is
imported, after, while it records, and after it stops.

    python bench/profiler_hook.py
"""

import time

import tidu

a, b = tidu.ones(16), tidu.ones(16)


def per_call(n: int = 20000, batches: int = 7) -> float:
    best = float("inf")
    for _ in range(batches):
        start = time.process_time()
        for _ in range(n):
            a * b
        best = min(best, (time.process_time() - start) / n * 1e9)
    return best


per_call(2000, 2)  # warm-up: signatures cached, kernels compiled
print(f"{'not imported':>14}: {per_call():7.0f} ns")
import tidu.profiler  # noqa: E402

print(f"{'imported':>14}: {per_call():7.0f} ns")
with tidu.profiler.profile():
    print(f"{'recording':>14}: {per_call():7.0f} ns")
print(f"{'stopped':>14}: {per_call():7.0f} ns")
