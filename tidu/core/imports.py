"""Modules imported where first used, once.

An ``import`` statement inside a function runs importlib's Python-level name resolution at
every call (0.85 µs on the project's machine): too much on a step's path (``Tensor.backward``,
a device pass, an optimizer's update). Where a module cannot be imported at the top (an import
cycle, or the CUDA backend that a CPU program never loads), ``module(name)`` gives it through
one C-level cache lookup after the first call. Its attributes are read at each use, so a test
that replaces one (``monkeypatch.setattr``) is seen.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.cache
def module(name: str) -> ModuleType:
    """The module of absolute name ``name``, imported on the first call.

    >>> from tidu.core.imports import module
    >>> module("tidu.ops").__name__
    'tidu.ops'
    """
    return importlib.import_module(name)
