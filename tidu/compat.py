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

import os
import warnings
from typing import Any

from .backends.cuda.blas import matmul
from .ops import creation

__all__ = ["compile", "get_float32_matmul_precision", "get_num_interop_threads", "get_rng_state",
           "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_warn_always_enabled", "set_anomaly_enabled",
           "set_float32_matmul_precision", "set_num_interop_threads", "set_rng_state", "set_warn_always"]


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



# flags and settings scripts set and read back: they keep what is set, as PyTorch's do
_settings: dict[str, Any] = {"warn_always": False, "interop_threads": None, "anomaly": False, "anomaly_nan": True}


def set_warn_always(b: bool) -> None:
    """Keep the flag that asks for warnings PyTorch gives once to be given every time
    (``is_warn_always_enabled`` reads it). tidu's warnings go through Python's ``warnings``, whose
    filters decide how often they show.

    >>> import tidu
    >>> tidu.set_warn_always(True); tidu.is_warn_always_enabled()
    True
    >>> tidu.set_warn_always(False)
    """
    _settings["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return _settings["warn_always"]


def get_num_interop_threads() -> int:
    """The number of threads for running independent ops in parallel: the number set, else the
    number of cores (PyTorch's default). tidu runs ops one after another; its kernels use
    ``get_num_threads`` threads.

    >>> import tidu
    >>> tidu.get_num_interop_threads() >= 1
    True
    """
    found = _settings["interop_threads"]
    return found if found is not None else os.cpu_count() or 1


def set_num_interop_threads(n: int) -> None:
    """Set ``get_num_interop_threads``; as in PyTorch, only once (a second call raises)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _settings["interop_threads"] is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started or "
                           "set_num_interop_threads called")
    _settings["interop_threads"] = n


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``autograd.set_detect_anomaly`` and ``detect_anomaly``
    set it too): with it on, a backward pass checks each node's gradients for NaN
    (``check_nan``) and raises PyTorch's error naming the node (``autograd/anomaly_mode.py``).

    >>> import tidu
    >>> tidu.set_anomaly_enabled(True); tidu.is_anomaly_enabled()
    True
    >>> tidu.set_anomaly_enabled(False)
    """
    _settings["anomaly"] = bool(enabled)
    _settings["anomaly_nan"] = bool(check_nan)


def is_anomaly_enabled() -> bool:
    return _settings["anomaly"]


def is_anomaly_check_nan_enabled() -> bool:
    return _settings["anomaly_nan"]
