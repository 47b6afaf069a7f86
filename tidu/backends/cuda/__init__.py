"""The CUDA backend: numba.cuda compiles, tidu launches (``launch``) and owns memory (``memory``).

``tidu.backends.cuda.matmul.allow_tf32`` (False by default) lets float32 matrix products use
TF32 tensor cores, as PyTorch's flag of the same name does.
"""

import contextlib
import warnings
from collections.abc import Iterator

from .blas import matmul
from .runtime import is_available, simulated, synchronize

__all__ = ["cudnn_sdp_enabled", "enable_cudnn_sdp", "enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
           "flash_sdp_enabled", "is_available", "math_sdp_enabled", "matmul", "mem_efficient_sdp_enabled",
           "sdp_kernel", "simulated", "synchronize"]


def _backends():  # noqa: ANN202 - imported when used: nn is not loaded by the backends
    from ...nn import attention

    return attention


def flash_sdp_enabled() -> bool:
    """Whether ``scaled_dot_product_attention`` may use the flash backend (``nn.attention``).

    >>> import tidu
    >>> tidu.backends.cuda.flash_sdp_enabled()
    True
    """
    a = _backends()
    return a.SDPBackend.FLASH_ATTENTION in a.ENABLED


def mem_efficient_sdp_enabled() -> bool:
    a = _backends()
    return a.SDPBackend.EFFICIENT_ATTENTION in a.ENABLED


def math_sdp_enabled() -> bool:
    a = _backends()
    return a.SDPBackend.MATH in a.ENABLED


def cudnn_sdp_enabled() -> bool:
    a = _backends()
    return a.SDPBackend.CUDNN_ATTENTION in a.ENABLED


def enable_flash_sdp(enabled: bool) -> None:
    """Allow or forbid the flash backend (tidu's attention runs the math one)."""
    a = _backends()
    a._switch(a.SDPBackend.FLASH_ATTENTION, enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    a = _backends()
    a._switch(a.SDPBackend.EFFICIENT_ATTENTION, enabled)


def enable_math_sdp(enabled: bool) -> None:
    """Allow or forbid the math backend, tidu's only one: off, attention raises PyTorch's error.

    >>> import tidu
    >>> tidu.backends.cuda.enable_math_sdp(True)
    """
    a = _backends()
    a._switch(a.SDPBackend.MATH, enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    a = _backends()
    a._switch(a.SDPBackend.CUDNN_ATTENTION, enabled)


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> Iterator[None]:
    """PyTorch's older ``nn.attention.sdpa_kernel`` (it warns the same way)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    a = _backends()
    chosen = [b for b, on in ((a.SDPBackend.FLASH_ATTENTION, enable_flash), (a.SDPBackend.MATH, enable_math),
                              (a.SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                              (a.SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with a.sdpa_kernel(chosen):
        yield
