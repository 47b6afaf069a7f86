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
from .backends.cuda.driver import OutOfMemoryError
from .ops import creation

__all__ = ["OutOfMemoryError", "compile", "get_device_module", "get_float32_matmul_precision",
           "get_num_interop_threads", "get_rng_state", "set_default_tensor_type", "set_flush_denormal",
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


def get_device_module(device: Any = None) -> Any:
    """The module of ``device``'s type: ``tidu.cuda`` or ``tidu.cpu``; with no device, the
    accelerator's (``tidu.cuda`` where tidu has a CUDA device), else ``tidu.cpu``.

    >>> import tidu
    >>> tidu.get_device_module("cpu").device_count()
    1
    >>> tidu.get_device_module(tidu.device("cuda")) is tidu.cuda
    True
    """
    import importlib

    from .core.device import device as _device

    if isinstance(device, _device):
        kind = device.type
    elif isinstance(device, str):
        kind = _device(device).type
    elif device is None:
        from .backends.cuda.runtime import is_available

        kind = "cuda" if is_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect tidu.device, str, or None")
    return importlib.import_module(f"tidu.{kind}")


def set_default_tensor_type(t: Any) -> None:
    """PyTorch's deprecated way to set the default dtype (and device): ``tidu.FloatTensor`` or
    ``tidu.DoubleTensor`` (``tidu.cuda.*`` to make ``cuda`` the default device too), or their
    names (``"torch.DoubleTensor"``). It warns, as PyTorch's does; prefer ``set_default_dtype``
    and ``set_default_device``.

    >>> import tidu, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.set_default_tensor_type(tidu.DoubleTensor)
    >>> tidu.tensor([1.0]).dtype
    tidu.float64
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.set_default_tensor_type("torch.FloatTensor")
    >>> tidu.get_default_dtype()
    tidu.float32
    """
    from .core import device as _device_mod
    from .core import dtypes
    from .legacy import CUDA_TYPES, TYPES, LegacyType

    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        kinds = {"torch": TYPES, "tidu": TYPES, "torch.cuda": CUDA_TYPES, "tidu.cuda": CUDA_TYPES}.get(module)
        if kinds is None:
            raise ModuleNotFoundError(f"No module named {module or name!r}")
        if name not in kinds:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        t = kinds[name]
    if not isinstance(t, LegacyType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if t.is_cuda:
        from .backends.cuda.runtime import is_available

        if not is_available():
            raise TypeError(f"type {t.__module__}.{t.__name__} not available: tidu has no CUDA device here "
                            "(set NUMBA_ENABLE_CUDASIM=1 to use Numba's simulator)")
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use set_default_dtype() and "
                  "set_default_device() as alternatives.", UserWarning, stacklevel=2)
    dtypes.set_default_dtype(t.dtype)
    if t.is_cuda:
        _device_mod.set_default_device("cuda")
    elif _device_mod.get_default_device().type == "cuda":
        _device_mod.set_default_device("cpu")


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing denormal floats to zero could be switched ``mode``: False, which is
    PyTorch's answer on a CPU that cannot. tidu's kernels run on Numba's threads, whose
    floating-point mode tidu cannot set, so denormals keep their values.

    >>> import tidu
    >>> tidu.set_flush_denormal(True)
    False
    """
    if not isinstance(mode, (bool, int)):
        raise TypeError(f"set_flush_denormal(): argument 'mode' must be bool, not {type(mode).__name__}")
    return False
