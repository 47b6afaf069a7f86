"""``torch.utils.hooks``: the handle every ``register_*_hook`` returns.

>>> import tidu
>>> from tidu.utils.hooks import RemovableHandle
>>> handle = tidu.ones(1, requires_grad=True).register_hook(lambda g: g)
>>> isinstance(handle, RemovableHandle)
True
"""

from ..tensor import RemovableHandle

__all__ = ["RemovableHandle"]
