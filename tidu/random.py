"""``tidu.random``: the default random stream, by PyTorch's names (``manual_seed``, ``seed``,
``initial_seed``, ``get_rng_state``, ``set_rng_state``) and ``fork_rng``, which restores it
afterwards.

>>> import tidu
>>> with tidu.random.fork_rng():
...     _ = tidu.rand(3)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .compat import get_rng_state, set_rng_state
from .ops.creation import initial_seed, manual_seed, seed

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str = "cuda") -> Iterator[None]:
    """Draws inside leave the default stream where it was before (tidu has one stream for every
    device, so ``devices`` and ``device_type`` select nothing).

    >>> import tidu
    >>> tidu.manual_seed(1)
    <tidu.Generator seed=1>
    >>> with tidu.random.fork_rng():
    ...     inside = tidu.rand(2)
    >>> bool((tidu.rand(2) == inside).all())
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
