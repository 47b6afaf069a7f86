"""``torch.nn.attention``: choosing the kernel behind ``scaled_dot_product_attention``.

tidu has one kernel, the math one (``SDPBackend.MATH``: softmax of the scaled scores, then the
product with the values), on either device. ``sdpa_kernel`` and the ``tidu.backends.cuda``
switches say which backends may run, as PyTorch's do: with ``MATH`` not among them, the call
raises PyTorch's error for a backend set with no kernel for the inputs.

>>> import tidu
>>> from tidu.nn.attention import SDPBackend, sdpa_kernel
>>> q = tidu.ones(1, 2, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     tidu.nn.functional.scaled_dot_product_attention(q, q, q).shape
tidu.Size([1, 2, 4])
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The scaled-dot-product-attention backends PyTorch names (tidu runs ``MATH``)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = frozenset(SDPBackend) - {SDPBackend.ERROR}
ENABLED: set[SDPBackend] = set(_ALL)  # the backends allowed now (all, by default)


def check_enabled() -> None:
    """Raise PyTorch's error (its CPU one) when the math backend, tidu's only one, is switched off:
    with flash attention allowed, no kernel of it fits; without, no backend is there at all."""
    if SDPBackend.MATH in ENABLED:
        return
    if SDPBackend.FLASH_ATTENTION not in ENABLED:  # PyTorch's message when no allowed backend has a kernel here
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    raise RuntimeError("No available kernel.  Aborting execution.")


@contextlib.contextmanager
def sdpa_kernel(backends: SDPBackend | Iterable[SDPBackend], set_priority: bool = False) -> Iterator[None]:
    """Allow only ``backends`` inside the block (``set_priority`` orders them in PyTorch; tidu has
    one kernel, so order does not matter)."""
    chosen = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in chosen:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend")
    previous = set(ENABLED)
    ENABLED.clear()
    ENABLED.update(chosen)
    try:
        yield
    finally:
        ENABLED.clear()
        ENABLED.update(previous)


def _switch(backend: SDPBackend, on: Any) -> None:
    if on:
        ENABLED.add(backend)
    else:
        ENABLED.discard(backend)
