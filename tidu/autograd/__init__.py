"""Autograd: ``backward``, ``grad``, ``gradcheck`` on the engine's ``try_backward``."""

from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..core.tape import current_recorder
from . import anomaly_mode, forward_ad, functional, grad_mode, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .backward import backward, grad
from .function import Function, FunctionCtx  # noqa: F401 - exported as tidu.autograd.Function
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "GradcheckError", "anomaly_mode", "backward", "detect_anomaly", "forward_ad", "grad_mode", "graph", "set_detect_anomaly", "current_recorder", "enable_grad", "functional", "grad", "gradcheck", "gradgradcheck",
    "is_grad_enabled", "no_grad", "set_grad_enabled", "Variable",
]


def __getattr__(name: str) -> object:
    """``tidu.autograd.profiler``, imported at its first use (``import tidu`` does not load it)."""
    if name == "profiler":
        import importlib

        return importlib.import_module(".profiler", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
