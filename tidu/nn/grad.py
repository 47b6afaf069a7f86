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


def _input_grad(n: int, input_size: Any, weight: Any, grad_output: Any, stride: Any, padding: Any, dilation: Any,
                groups: int) -> Any:
    x = ops.zeros(*tuple(input_size), dtype=grad_output.dtype, device=grad_output.device)
    _, pull = vjp(lambda v: _CONV[n](v, weight, None, stride, padding, dilation, groups), x)
    return pull(grad_output)[0]


def _weight_grad(n: int, input: Any, weight_size: Any, grad_output: Any, stride: Any, padding: Any,  # noqa: A002
                 dilation: Any, groups: int) -> Any:
    w = ops.zeros(*tuple(weight_size), dtype=grad_output.dtype, device=grad_output.device)
    _, pull = vjp(lambda v: _CONV[n](input, v, None, stride, padding, dilation, groups), w)
    return pull(grad_output)[0]


def conv1d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv1d`` with respect to an input of shape ``input_size``."""
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,  # noqa: A002
                  dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv1d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv2d`` with respect to an input of shape ``input_size``."""
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,  # noqa: A002
                  dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv2d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size: Any, weight: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv3d`` with respect to an input of shape ``input_size``."""
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input: Any, weight_size: Any, grad_output: Any, stride: Any = 1, padding: Any = 0,  # noqa: A002
                  dilation: Any = 1, groups: int = 1) -> Any:
    """The gradient of ``conv3d`` with respect to a weight of shape ``weight_size``."""
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
