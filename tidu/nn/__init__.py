"""``tidu.nn``: modules, layers and losses with PyTorch's API (``import tidu as torch; torch.nn``).

``tidu.nn.functional`` holds the functions the layers call, ``tidu.nn.init`` the initialisers
and ``tidu.nn.utils`` gradient clipping, packed sequences and weight parametrizations.

>>> import tidu
>>> net = tidu.nn.Sequential(tidu.nn.Linear(3, 4), tidu.nn.ReLU(), tidu.nn.Linear(4, 2))
>>> loss = tidu.nn.CrossEntropyLoss()(net(tidu.ones(5, 3)), tidu.tensor([0, 1, 0, 1, 1]))
>>> loss.backward()
>>> net[0].weight.grad.shape
tidu.Size([4, 3])
"""

from . import attention, functional, grad, init, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "attention", "functional", "grad", "init", "utils", *_modules_all]
