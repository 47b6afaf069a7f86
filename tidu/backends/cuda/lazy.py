"""CUDA kernels registered at import, compiled on first use.

``import tidu`` must not import numba.cuda (it costs import time, and most
programs never touch the GPU); a primitive's CUDA impl is a ``lazy(factory)``
that builds the real function the first time it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def lazy(factory: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    built: list[Callable[..., Any]] = []

    def impl(*args: Any, **params: Any) -> Any:
        if not built:
            built.append(factory())
        return built[0](*args, **params)

    return impl
