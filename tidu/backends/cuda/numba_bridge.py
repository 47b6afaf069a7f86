"""The one place tidu reaches into numba-cuda's internals.

numba.cuda is tidu's CUDA compiler; tidu launches what it compiles itself. From a
kernel compiled for one signature we need the driver handle of the compiled function
and numba's argument types (their ABI gives the parameter layout). Supported
numba-cuda versions are pinned in ``SUPPORTED``; anything else fails here with a clear
error rather than somewhere deep in a launch.
"""

from __future__ import annotations

from typing import Any

SUPPORTED = ("0.30",)  # numba-cuda minor versions whose internals this module was checked against


def numba_cuda_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("numba-cuda")
    except PackageNotFoundError:
        return ""


def check_version() -> None:
    found = numba_cuda_version()
    if not any(found.startswith(v + ".") or found == v for v in SUPPORTED):
        raise RuntimeError(
            f"tidu's CUDA launch path supports numba-cuda {', '.join(v + '.x' for v in SUPPORTED)}; found "
            f"{found or 'no numba-cuda'} (pip install 'tidu[cuda]')"
        )


def compile_kernel(dispatcher: Any, signature: str) -> tuple[int, list[Any]]:
    """``(function handle, numba argument types)`` of ``dispatcher`` compiled for ``signature``."""
    import ctypes

    from . import driver

    kernel = dispatcher.compile(signature)
    kernel.bind()
    cufunc = kernel._codelibrary.get_cufunc()
    # numba loads code as a library: its handle is a CUkernel, which the driver would resolve to the
    # current context's CUfunction on every launch; resolve it once.
    function = ctypes.c_void_p()
    driver.call("cuKernelGetFunction", ctypes.byref(function), int(cufunc.handle))
    return function.value, list(kernel.argument_types)
