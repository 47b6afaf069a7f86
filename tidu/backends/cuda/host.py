"""Kernels that run on the host for the device: the operands are copied there, the CPU kernel
runs, the result is copied back (scans whose rows run sequentially)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def on_host(cpu_kernel: Callable[..., Any]) -> Callable[..., Any]:
    def run(*arrays: Any, **params: Any) -> Any:
        from .memory import CudaArray

        return CudaArray.from_host(cpu_kernel(*[a.copy_to_host() for a in arrays], **params))

    return run
