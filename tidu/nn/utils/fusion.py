"""Fold an eval-mode BatchNorm into the convolution or linear layer before it (PyTorch's formulas)."""

from __future__ import annotations

import copy
from typing import Any

from ... import ops
from ...tensor import Tensor
from ..parameter import Parameter


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of ``conv`` whose weight and bias apply ``bn``'s eval-mode normalization too
    (``transpose`` for a transposed convolution). Both must be in eval mode.

    >>> import tidu
    >>> conv, bn = tidu.nn.Conv2d(2, 3, 3).eval(), tidu.nn.BatchNorm2d(3).eval()
    >>> bn.running_mean.fill_(0.5); bn.running_var.fill_(4.0)
    tensor([0.5000, 0.5000, 0.5000])
    tensor([4., 4., 4.])
    >>> x = tidu.randn(1, 2, 5, 5)
    >>> bool(((tidu.nn.utils.fuse_conv_bn_eval(conv, bn)(x) - bn(conv(x))).abs() < 1e-5).all())
    True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                    bn.eps, bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None, transpose: bool = False
                         ) -> tuple[Parameter, Parameter]:
    """``(conv_w * scale, (conv_b - bn_rm) * rsqrt(bn_rv + eps) * bn_w + bn_b)`` as Parameters, with
    ``scale = bn_w * rsqrt(bn_rv + eps)`` along the output channels (dim 1 if ``transpose``).

    >>> import tidu
    >>> w, b = tidu.nn.utils.fuse_conv_bn_weights(tidu.ones(2, 1, 1), None, tidu.zeros(2), tidu.full((2,), 3.0), 1.0,
    ...                                           tidu.tensor([1.0, 2.0]), tidu.tensor([0.0, 1.0]))
    >>> w.flatten().tolist(), b.tolist(), type(b).__name__, b.requires_grad  # requires_grad as conv_w's
    ([0.5, 1.0], [0.0, 1.0], 'Parameter', False)
    """
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = ops.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ops.ones_like(bn_rm)
    if bn_b is None:
        bn_b = ops.zeros_like(bn_rm)
    bn_var_rsqrt = ops.rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    fused_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=weight_dtype)
    fused_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w.detach(), conv_w.requires_grad), Parameter(fused_b.detach(), conv_b.requires_grad)


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of ``linear`` whose weight and bias apply ``bn``'s eval-mode normalization too
    (``bn.num_features`` must be ``linear.out_features`` or 1). Both must be in eval mode.

    >>> import tidu
    >>> linear, bn = tidu.nn.Linear(3, 2).eval(), tidu.nn.BatchNorm1d(2).eval()
    >>> x = tidu.randn(4, 3)
    >>> bool(((tidu.nn.utils.fuse_linear_bn_eval(linear, bn)(x) - bn(linear(x))).abs() < 1e-5).all())
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """``(linear_w * scale[:, None], (linear_b - bn_rm) * scale + bn_b)`` as Parameters, with
    ``scale = bn_w * rsqrt(bn_rv + eps)``.

    >>> import tidu
    >>> w, b = tidu.nn.utils.fuse_linear_bn_weights(tidu.ones(2, 2), tidu.ones(2), tidu.zeros(2), tidu.full((2,), 3.0),
    ...                                             1.0, tidu.tensor([1.0, 2.0]), tidu.zeros(2))
    >>> w.detach(), b.detach()
    (tensor([[0.5000, 0.5000],
            [1.0000, 1.0000]]), tensor([0.5000, 1.0000]))
    """
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = ops.zeros_like(bn_rm)
    bn_scale = bn_w * ops.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=bias_dtype)
    return Parameter(fused_w.detach(), linear_w.requires_grad), Parameter(fused_b.detach(), linear_b.requires_grad)
