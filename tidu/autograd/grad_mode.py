"""PyTorch's ``torch.autograd.grad_mode``: the grad-mode contexts (``tidu.no_grad`` and friends).

>>> import tidu
>>> with tidu.autograd.grad_mode.no_grad():
...     tidu.is_grad_enabled()
False
"""

from ..core.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["enable_grad", "inference_mode", "no_grad", "set_grad_enabled"]
