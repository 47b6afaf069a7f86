"""Optimizers with PyTorch's names, options, update formulas and state_dict layout.

>>> import tidu
>>> w = tidu.tensor([3.0], requires_grad=True)
>>> opt = tidu.optim.SGD([w], lr=0.25)
>>> for _ in range(3):
...     opt.zero_grad()
...     (w * w).sum().backward()
...     opt.step()
>>> w
tensor([0.3750], requires_grad=True)
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
