"""CUDA kernels registered at import, compiled on first use.

``import tidu`` must not import numba.cuda (it costs import time, and most
programs never touch the GPU); a primitive's CUDA impl is a ``lazy(factory)``
that builds the real function the first time it runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy(factory: Callable[[], Callable[..., Any]]) -> Callable[..., Any]:
    """A function that calls ``factory()``'s function, built on its first call. Its ``build``
    is the factory: ``Primitive.def_impl`` registers in its place the built function itself,
    once built, so that a kernel call does not pass through this one."""
    built: list[Callable[..., Any]] = []

    def impl(*args: Any, **params: Any) -> Any:
        if not built:
            built.append(factory())
        return built[0](*args, **params)

    impl.build = factory  # type: ignore[attr-defined]
    return impl


def kernel(module: str, name: str, **bound: Any) -> Callable[..., Any]:
    """``tidu.backends.cuda.<module>.<name>`` (with ``bound`` keywords), imported on first call."""

    def build() -> Callable[..., Any]:
        fn = getattr(import_module(f"tidu.backends.cuda.{module}"), name)
        return functools.partial(fn, **bound) if bound else fn

    return lazy(build)
