"""``torch.nn.grad``: the gradients of a convolution with respect to its input and its weight,
given the gradient of its output; each is the transpose of the convolution's linear map in that
argument, taken through ``tidu.func.vjp`` (the convolution's own rules).

>>> import tidu
>>> w = tidu.ones(1, 1, 2, 2)
>>> tidu.nn.grad.conv2d_input((1, 1, 3, 3), w, tidu.ones(1, 1, 2, 2))
tensor([[[[1., 2., 1.],
          [2., 4., 2.],
          [1., 2., 1.]]]])
"""

from __future__ import annotations

from typing import Any

from .. import ops
from ..func import vjp
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _input_grad(n: int) -> Any:
    def grad(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
             groups: int = 1) -> Any:
        x = ops.zeros(*tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
        _, pull = vjp(lambda v: _CONV[n](v, weight, None, stride, padding, dilation, groups), x)
        return pull(grad_output)[0]

    grad.__name__ = grad.__qualname__ = f"conv{n}d_input"
    grad.__doc__ = f"The gradient of ``conv{n}d`` with respect to an input of shape ``input_size``."
    return grad


def _weight_grad(n: int) -> Any:
    def grad(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,  # noqa: A002
             dilation: Any = 1, groups: int = 1) -> Any:
        w = ops.zeros(*tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device)
        _, pull = vjp(lambda v: _CONV[n](input, v, None, stride, padding, dilation, groups), w)
        return pull(grad_output)[0]

    grad.__name__ = grad.__qualname__ = f"conv{n}d_weight"
    grad.__doc__ = f"The gradient of ``conv{n}d`` with respect to a weight of shape ``weight_size``."
    return grad


conv1d_input, conv2d_input, conv3d_input = (_input_grad(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_grad(n) for n in (1, 2, 3))
