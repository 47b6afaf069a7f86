"""Autograd: ``backward``, ``grad``, ``gradcheck`` on the engine's ``try_backward``."""

from ..core.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..core.tape import current_recorder
from . import functional
from .backward import backward, grad
from .function import Function, FunctionCtx  # noqa: F401 - exported as tidu.autograd.Function
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "GradcheckError", "backward", "current_recorder", "enable_grad", "functional", "grad", "gradcheck", "gradgradcheck",
    "is_grad_enabled", "no_grad", "set_grad_enabled",
]
