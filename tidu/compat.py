"""Calls PyTorch scripts make at their start or around their training loop, answered as tidu
can: ``compile`` (tidu compiles and fuses by itself, so it returns what it is given),
``set_float32_matmul_precision`` (TF32 products on the GPU, as PyTorch), and the default random
stream's state (``get_rng_state``/``set_rng_state``).

>>> import tidu
>>> model = tidu.nn.Linear(2, 2)
>>> tidu.compile(model) is model
True
"""

from __future__ import annotations

import warnings
from typing import Any

from .backends.cuda.blas import matmul
from .ops import creation

__all__ = ["compile", "get_float32_matmul_precision", "get_rng_state", "set_float32_matmul_precision",
           "set_rng_state"]


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None, backend: Any = "inductor",  # noqa: A001
            mode: Any = None, options: Any = None, disable: bool = False) -> Any:
    """``model`` itself (or, without one, a decorator that returns the function it decorates).

    PyTorch's ``compile`` traces a model into a faster graph with the same results. tidu already
    does the parts of that it can at run time: each training step's backward is a cached program,
    and chains of elementwise work run as fused Numba kernels. So there is nothing to call, and the
    options are accepted and ignored.

    >>> import tidu
    >>> @tidu.compile(mode="max-autotune")
    ... def f(x):
    ...     return x * 2
    >>> f(tidu.tensor([1.0]))
    tensor([2.])
    """
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"compile(): the model must be callable, got {type(model).__name__}")
    return model


_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """``'highest'``: float32 products in full float32; ``'high'`` or ``'medium'``: TF32 products
    on the GPU (``tidu.backends.cuda.matmul.allow_tf32``), as PyTorch sets it.

    >>> import tidu
    >>> tidu.set_float32_matmul_precision("high")
    >>> tidu.backends.cuda.matmul.allow_tf32
    True
    >>> tidu.set_float32_matmul_precision("highest")
    """
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "set_float32_matmul_precision call has no effect.", UserWarning, stacklevel=2)
        return
    matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    """``'highest'`` unless TF32 products are allowed (then ``'high'``).

    >>> import tidu
    >>> tidu.get_float32_matmul_precision()
    'highest'
    """
    return "high" if matmul.allow_tf32 else "highest"


def get_rng_state() -> dict:
    """The default random stream's state, to give back to ``set_rng_state`` (a dict of numpy's
    stream state, where PyTorch's is a byte tensor).

    >>> import tidu
    >>> state = tidu.get_rng_state()
    >>> a = tidu.rand(2)
    >>> tidu.set_rng_state(state)
    >>> bool((tidu.rand(2) == a).all())
    True
    """
    return creation.default_generator.get_state()


def set_rng_state(new_state: dict) -> None:
    """Put the default random stream back to a state ``get_rng_state`` returned."""
    creation.default_generator.set_state(new_state)

