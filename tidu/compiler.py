"""``tidu.compiler``: PyTorch's compiler controls. tidu compiles nothing ahead (``tidu.compile``
returns what it is given; fusion and cached backward programs happen at run time), so code never
runs "under compilation" and there is nothing to exclude from it or reset.

>>> import tidu
>>> tidu.compiler.is_compiling()
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .compat import compile  # noqa: A004, F401 - PyTorch's name

__all__ = ["allow_in_graph", "compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset"]


def is_compiling() -> bool:
    """False: tidu never traces code into a compiled graph."""
    return False


def is_dynamo_compiling() -> bool:
    """False, as ``is_compiling``."""
    return False


def is_exporting() -> bool:
    """False: tidu has no ``export``."""
    return False


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, *, reason: str | None = None) -> Any:
    """Keep ``fn`` out of compilation: tidu compiles nothing, so ``fn`` itself (without ``fn``, a
    decorator that returns what it decorates).

    >>> import tidu
    >>> @tidu.compiler.disable
    ... def f(x):
    ...     return x + 1
    >>> f(1), tidu.compiler.disable(recursive=False)(f) is f
    (2, True)
    """
    if fn is None:
        return lambda f: f
    if not callable(fn):
        raise AssertionError(f"fn must be callable, got {type(fn).__name__}")
    return fn


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself: there is no graph to put it in."""
    return fn


def reset() -> None:
    """Clear the compiler's caches: ``tidu.compile`` keeps none, so this does nothing. (tidu's own
    run-time caches, of fused kernels and backward programs, are kept: they give the same results.)"""
