"""Swapping tidu's entry points while a mode is on (the profiler's timers, forward AD's dual
tensors): each module that did ``from ..core.dispatch import bind_same`` holds its own global, so
a swap sets every loaded ``tidu`` module's global that is the original, and a restore puts each
back. Off, the entry points are the plain functions: a mode costs nothing until it is entered."""

from __future__ import annotations

import sys
from typing import Any


def swap_globals(replacements: dict[int, tuple[Any, Any]], skip: Any = None) -> list[tuple[dict, str, Any, Any]]:
    """Set each global of the loaded ``tidu`` modules (but the module ``skip``) that is one of the
    originals in ``replacements`` (``id(original) -> (original, wrapper)``), or a wrapper of one
    (``functools.wraps``'s ``__wrapped__``: another mode's swap, on now), to its wrapper; returns what
    ``restore_globals`` puts back.

    >>> import tidu.core.dispatch as dispatch
    >>> original = dispatch.bind_one
    >>> swapped = swap_globals({id(original): (original, len)})
    >>> dispatch.bind_one is len
    True
    >>> restore_globals(swapped)
    >>> dispatch.bind_one is original
    True
    """
    swapped = []
    for name, module in list(sys.modules.items()):
        if module is None or module is skip or not (name == "tidu" or name.startswith("tidu.")):
            continue
        space = vars(module)
        for key, value in list(space.items()):
            if not callable(value):
                continue
            inner = value
            while inner is not None:
                hit = replacements.get(id(inner))
                if hit is not None and hit[0] is inner:
                    swapped.append((space, key, value, hit[1]))
                    space[key] = hit[1]
                    break
                inner = getattr(inner, "__wrapped__", None)
    return swapped


def restore_globals(swapped: list[tuple[dict, str, Any, Any]]) -> None:
    """Undo ``swap_globals`` (in reverse order), emptying ``swapped``; a global that another swap
    has set since keeps that one's value (modes may end in any order)."""
    while swapped:
        space, key, original, installed = swapped.pop()
        if space.get(key) is installed:
            space[key] = original
