"""numpy's keyword names that PyTorch's argument parser takes for ``dim`` and ``keepdim``:
``axis`` and ``keepdims`` (``x.sum(axis=0)``, ``torch.mean(x, axis=1, keepdims=True)``).

``install`` wraps every public function and ``Tensor`` method with a ``dim`` or ``keepdim``
parameter, except those PyTorch defines in Python (its parser is not on their path, so they
refuse ``axis``): ``norm`` (but not ``linalg.norm``), ``split``, ``unique``, ``unique_consecutive`` and ``Tensor.unflatten``.
Elementwise ops have no ``dim`` and stay unwrapped; a wrapped call pays one frame and a
dictionary check. tidu's own code calls the unwrapped functions.

>>> import tidu
>>> x = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> x.sum(axis=0), tidu.mean(x, axis=1, keepdims=True).shape
(tensor([4., 6.]), tidu.Size([2, 1]))
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# PyTorch's Python-level functions, which take no numpy names
PYTHON_LEVEL = {"norm", "split", "unique", "unique_consecutive"}
PYTHON_LEVEL_METHODS = PYTHON_LEVEL | {"unflatten"}


def _rename(fn: Callable, kwargs: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in kwargs.items():
        name = ALIASES.get(key, key)
        if name in out or (name != key and name in kwargs):  # both spellings: PyTorch's error
            raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{key}'")
        out[name] = value
    return out


def numpy_names(fn: Callable) -> Callable:
    """``fn`` taking ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``.

    >>> from tidu.ops.aliases import numpy_names
    >>> numpy_names(lambda x, dim=None, keepdim=False: (dim, keepdim))(1, axis=0, keepdims=True)
    (0, True)
    """

    @functools.wraps(fn)
    def aliased(*args: Any, **kwargs: Any) -> Any:
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            kwargs = _rename(fn, kwargs)
        return fn(*args, **kwargs)

    aliased.__numpy_names__ = True  # type: ignore[attr-defined]
    return aliased


def takes_dim(fn: Any) -> bool:
    """Whether ``fn`` is a Python function with a ``dim`` or ``keepdim`` parameter."""
    if not inspect.isfunction(fn) or getattr(fn, "__numpy_names__", False):
        return False
    params = inspect.signature(fn).parameters
    return "dim" in params or "keepdim" in params


def install(namespace: dict[str, Any], classes: tuple[type, ...], modules: tuple[Any, ...]) -> None:
    """Wrap the functions of the ``namespace`` dict and of ``modules``, and the methods of
    ``classes`` (each method wrapped once, shared by the classes that hold it)."""
    for name, fn in list(namespace.items()):
        if not name.startswith("_") and name not in PYTHON_LEVEL and takes_dim(fn):
            namespace[name] = numpy_names(fn)
    for module in modules:
        for name, fn in list(vars(module).items()):
            if not name.startswith("_") and takes_dim(fn):  # linalg.norm is PyTorch's parser's
                setattr(module, name, numpy_names(fn))
    done: dict[int, Callable] = {}
    for cls in classes:
        for name, fn in list(vars(cls).items()):
            if not name.startswith("_") and name not in PYTHON_LEVEL_METHODS and takes_dim(fn):
                if id(fn) not in done:
                    done[id(fn)] = numpy_names(fn)
                setattr(cls, name, done[id(fn)])
