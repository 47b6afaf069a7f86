"""``skip_init``: make a module without initializing its parameters."""

from __future__ import annotations

import inspect
from typing import Any

from ... import random as _random


def skip_init(module_cls: type, *args: Any, **kwargs: Any) -> Any:
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialized (their
    values are whatever the memory held), so a script that loads weights next skips the work. As
    in PyTorch, the class must take a ``device`` argument, and the random stream is not advanced
    (tidu runs the initializers and then restores the generator's state).

    >>> import tidu
    >>> layer = tidu.nn.utils.skip_init(tidu.nn.Linear, 5, 1)
    >>> layer.weight.shape, layer.weight.requires_grad
    (tidu.Size([1, 5]), True)
    """
    from ..modules.module import Module

    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    with _random.fork_rng():
        module = module_cls(*args, **kwargs)
    module._apply(lambda t: t.new_empty(t.shape))  # PyTorch's to_empty
    return module.to(device)
