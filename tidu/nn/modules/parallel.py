"""``DataParallel``: PyTorch's wrapper that splits a batch across GPUs. tidu uses one device, where
PyTorch's wrapper, too, just calls the module; so this one calls it, keeping PyTorch's
``module`` attribute and ``module.``-prefixed state_dict keys."""

from __future__ import annotations

from typing import Any

from .module import Module


class DataParallel(Module):
    """``module`` called on the whole batch (one device).

    >>> import tidu
    >>> net = tidu.nn.DataParallel(tidu.nn.Linear(2, 1))
    >>> sorted(net.state_dict())
    ['module.bias', 'module.weight']
    >>> net(tidu.ones(3, 2)).shape
    tidu.Size([3, 1])
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = device_ids, output_device, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)
