"""``tidu.nn.functional``: PyTorch's functional layers, activations and losses.

Everything is composed from tidu ops; ``softmax`` and ``log_softmax`` (``tidu.ops.activation``)
bind the fused primitives of ``tidu/primitives/nn.py``. Picking the target class (``nll_loss``,
``cross_entropy``) and looking up rows (``embedding``) gather (``tidu.gather``,
``tidu.index_select``), so their gradients scatter-add.
"""

from __future__ import annotations

import inspect
import math
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..core import autocast, dtypes
from ..core.autocast import policy as autocast_policy
from ..core.aval import wrap_dim
from ..core.deferred import reads_exposed
from ..core.device import CPU
from ..core.dispatch import bind_matmul
from ..core.grad_mode import no_grad
from ..core.half import computed_in_float32
from ..core.inplace import assign_
from ..core.primitive import Var, bind
from ..ops._operands import kept
from ..ops.activation import _softmax_dim, log_softmax, softmax
from ..ops.conv import (
    avg_pool2d,
    avg_pool3d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool2d,
    max_pool3d,
)
from ..ops.indexing import select_positions
from ..ops.linalg import pdist
from ..primitives import gather as gather_prims
from ..primitives import linalg
from ..primitives import nn as nn_prims
from ..primitives.slicing import pad as pad_p
from ..tensor import SHORT_PATH_TYPES, Tensor, placed
from ._tuples import _pair as _two

__all__ = [
    "affine_grid", "ctc_loss", "grid_sample", "rrelu", "rrelu_", "triplet_margin_with_distance_loss", "interpolate", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "group_norm", "avg_pool2d", "batch_norm", "conv1d", "conv2d", "max_pool2d", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "cosine_similarity", "dropout", "elu", "embedding", "gelu", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
    "mish", "relu6", "softsign", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax",
    "mse_loss", "multi_head_attention_forward", "nll_loss", "normalize", "one_hot", "pad", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "softplus", "tanh",
    "selu", "celu", "prelu", "softmin", "softshrink", "hardshrink", "tanhshrink", "threshold", "glu",
    "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "pairwise_distance", "triplet_margin_loss", "gaussian_nll_loss", "poisson_nll_loss",
    "multilabel_soft_margin_loss", "rms_norm", "instance_norm", "pixel_shuffle", "pixel_unshuffle", "dropout1d",
    "dropout2d", "max_pool1d", "avg_pool1d", "conv_transpose1d", "conv_transpose2d", "pdist", "unfold", "fold",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "max_unpool1d", "max_unpool2d", "lp_pool1d", "lp_pool2d",
    "local_response_norm", "alpha_dropout", "feature_alpha_dropout", "channel_shuffle", "embedding_bag",
    "multi_margin_loss", "multilabel_margin_loss", "gumbel_softmax",
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "max_unpool3d", "lp_pool3d", "dropout3d", "linear_cross_entropy", "conv_tbc", "native_channel_shuffle",
]


# --- helpers -------------------------------------------------------------------------------
def _reduce(loss: Any, reduction: str) -> Any:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  UserWarning, stacklevel=3)
    return reduction


def _class_mask(target: Any, num_classes: int, class_dim: int) -> Any:
    """Boolean one-hot of integer ``target`` with the classes along ``class_dim``."""
    shape = [1] * (target.ndim + 1)
    shape[class_dim] = num_classes
    return target.unsqueeze(class_dim) == ops.arange(num_classes, device=target.device).reshape(*shape)


def _along(vector: Any, ndim: int, dim: int) -> Any:
    """A 1-d tensor reshaped to broadcast along ``dim`` of an ``ndim``-d tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return vector.reshape(*shape)


def _float_input(input: Any, kernel: str) -> None:  # noqa: A002
    """PyTorch's error (naming its CPU ``kernel``) for an input that is not floating-point."""
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented(kernel, input.dtype)


# --- linear layers -------------------------------------------------------------------------
def linear(input: Any, weight: Any, bias: Any = None) -> Any:  # noqa: A002
    """``input @ weight.T + bias``: ``(*, in_features)`` to ``(*, out_features)``.

    >>> import tidu
    >>> import tidu.nn.functional as F
    >>> F.linear(tidu.tensor([[1.0, 2.0]]), tidu.tensor([[1.0, 1.0], [0.0, 2.0]]), tidu.tensor([0.5, 0.0]))
    tensor([[3.5000, 4.0000]])
    """
    if autocast.ON:
        input, weight, bias = autocast.lower(input, weight, bias)
    if weight.ndim not in (1, 2) or input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        rows = math.prod(input.shape[:-1]) if input.ndim else 1
        cols = input.shape[-1] if input.ndim else 1
        w = tuple(weight.shape)[::-1]
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and {'x'.join(map(str, w))}) "
            f"(linear: input {tuple(input.shape)}, weight {tuple(weight.shape)})"
        )
    if weight.ndim == 1 and bias is not None and (bias.ndim or input.ndim == 2):  # PyTorch's addmm's check
        raise RuntimeError(f"mat2 must be a matrix, got 1-D tensor (linear: weight {tuple(weight.shape)} with a bias)")
    if weight.ndim == 2 and input.dtype is weight.dtype and input.dtype.is_floating_point:
        # one product contracting the weight's last dim: its gradient comes out in its layout
        if input.ndim == 2 and type(input) in SHORT_PATH_TYPES and type(weight) in SHORT_PATH_TYPES:
            out = bind_matmul(input, weight, transposed=True)
        else:
            dims = (((input.ndim - 1,), (1,)), ((), ()))
            out = bind(linalg.dot_general, input, weight, dimension_numbers=dims)
    else:
        out = ops.matmul(input, weight.t() if weight.ndim == 2 else weight)
    return out if bias is None else out + bias


def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
    """``y_k = x1^T W_k x2 + b_k`` for ``weight`` of shape ``(out, in1, in2)``.

    >>> import tidu
    >>> import tidu.nn.functional as F
    >>> F.bilinear(tidu.tensor([[1.0, 2.0]]), tidu.tensor([[3.0]]), tidu.ones(1, 2, 1))
    tensor([[9.]])
    """
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear: input1 {tuple(input1.shape)} and input2 {tuple(input2.shape)} do not fit weight "
            f"{tuple(weight.shape)} (expected (*, {in1}) and (*, {in2}) with the same leading dims)"
        )
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    t = ops.matmul(x1, weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    out = (t * x2.unsqueeze(1)).sum(dim=-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, out_f)


# --- activations ---------------------------------------------------------------------------
def _in_place(input: Any, out: Any, inplace: bool) -> Any:  # noqa: A002
    """``out``, or with ``inplace`` written into ``input`` (PyTorch's ``inplace=True``: the input
    tensor holds the result, recorded as an in-place op)."""
    return input.copy_(out) if inplace and out is not input else out


def relu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``max(input, 0)`` (gradient 0 at 0).

    >>> import tidu
    >>> tidu.nn.functional.relu(tidu.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    out = ops.relu(input)
    return _in_place(input, out, inplace)

@computed_in_float32
def gelu(input: Any, approximate: str = "none") -> Any:  # noqa: A002
    """GELU, exact (``erf``) or ``approximate='tanh'``.

    >>> import tidu
    >>> tidu.nn.functional.gelu(tidu.tensor([1.0]), approximate="tanh")
    tensor([0.8412])
    """
    return ops.gelu(input, approximate=approximate)


@computed_in_float32
def silu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * sigmoid(input)`` (also called swish).

    >>> import tidu
    >>> tidu.nn.functional.silu(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    _float_input(input, "silu_cpu")
    x = input.clone() if inplace else input  # the product saves its operand: not the tensor overwritten
    return _in_place(input, x * ops.sigmoid(x), inplace)

def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where positive, ``negative_slope * input`` elsewhere.

    >>> import tidu
    >>> tidu.nn.functional.leaky_relu(tidu.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    if not input.dtype.is_floating_point:
        raise dtypes.not_implemented("leaky_relu_cpu", input.dtype)
    out = ops.where(input > 0, input, input * negative_slope)
    return _in_place(input, out, inplace)

def rrelu(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Any:
    """Randomized leaky ReLU: ``input`` where positive, ``a * input`` elsewhere. In training each
    element draws its slope ``a ~ U(lower, upper)`` from tidu's generator (the gradient uses the
    same slopes); in eval ``a = (lower + upper) / 2``, as PyTorch.

    >>> import tidu
    >>> tidu.nn.functional.rrelu(tidu.tensor([-4.0, 2.0]), 0.25, 0.75)
    tensor([-2.,  2.])
    >>> _ = tidu.manual_seed(0)
    >>> y = tidu.nn.functional.rrelu(-tidu.ones(1000), training=True)
    >>> bool(((y >= -1 / 3) & (y <= -1 / 8)).all())
    True
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    out = _rrelu(input, lower, upper, training)
    return _in_place(input, out, inplace)


def _rrelu(input: Any, lower: float, upper: float, training: bool, generator: Any = None) -> Any:  # noqa: A002
    """``rrelu`` out of place, its training slopes drawn from ``generator`` (the default one if None)."""
    if training:
        slopes = ops.empty_like(input.detach()).uniform_(lower, upper, generator=generator)
        return ops.where(input > 0, input, input * slopes)
    return ops.where(input > 0, input, input * ((lower + upper) / 2))


def rrelu_(input: Any, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Any:  # noqa: A002
    """``rrelu`` in place."""
    return rrelu(input, lower, upper, training, inplace=True)

@computed_in_float32
def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere.

    >>> import tidu
    >>> tidu.nn.functional.elu(tidu.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    out = _elu_family(input, alpha)
    return _in_place(input, out, inplace)

@computed_in_float32
def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:  # noqa: A002
    """``log(1 + exp(beta * input)) / beta``, linear where ``beta * input > threshold``.

    >>> import tidu
    >>> tidu.nn.functional.softplus(tidu.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    _float_input(input, "softplus_cpu")
    scaled = input * beta
    linear_part = scaled > threshold
    safe = ops.where(linear_part, 0.0, scaled)
    return ops.where(linear_part, input, ops.log1p(ops.exp(safe)) / beta)


def hardtanh(input: Any, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` clamped to ``[min_val, max_val]``; the gradient passes strictly inside (PyTorch's
    ``hardtanh_backward``: zero at the bounds, where ``clamp``'s passes).

    >>> import tidu
    >>> tidu.nn.functional.hardtanh(tidu.tensor([-2.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if not input.dtype.is_floating_point:  # clamped in its own dtype (not differentiable)
        return _in_place(input, ops.clamp(input, min_val, max_val).to(input.dtype), inplace)
    inside = (input > min_val) & (input < max_val)
    out = ops.where(inside, input, ops.clamp(input, min_val, max_val).detach())
    return _in_place(input, out, inplace)

def relu6(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``hardtanh(input, 0, 6)``.

    >>> import tidu
    >>> tidu.nn.functional.relu6(tidu.tensor([-1.0, 3.0, 7.0]))
    tensor([0., 3., 6.])
    """
    out = hardtanh(input, 0.0, 6.0)
    return _in_place(input, out, inplace)

def hardsigmoid(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``relu6(input + 3) / 6``: 0 below -3, 1 above 3, linear between (gradient 1/6 strictly
    inside).

    >>> import tidu
    >>> tidu.nn.functional.hardsigmoid(tidu.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    inside = (input > -3.0) & (input < 3.0)  # PyTorch's hardsigmoid_backward: NaN gets no gradient
    out = ops.where(inside, (input + 3.0) / 6.0, (ops.clamp(input + 3.0, 0.0, 6.0) / 6.0).detach())
    return _in_place(input, out, inplace)

@computed_in_float32
def hardswish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * relu6(input + 3) / 6``, with PyTorch's gradient: 0 up to -3 (inclusive),
    ``input / 3 + 0.5`` below 3, 1 from 3 on.

    >>> import tidu
    >>> tidu.nn.functional.hardswish(tidu.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    _float_input(input, "hardswish_cpu")
    low, middle = input <= -3.0, (input > -3.0) & (input < 3.0)
    inner = ops.where(middle, input, 0.0)  # the middle branch's gradient never meets a value outside it
    out = ops.where(low, input * 0.0, ops.where(middle, inner * (inner + 3.0) / 6.0, input))
    return _in_place(input, out, inplace)

@computed_in_float32
def mish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * tanh(softplus(input))``.

    >>> import tidu
    >>> tidu.nn.functional.mish(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    x = input.clone() if inplace else input  # the product saves its operand: not the tensor overwritten
    return _in_place(input, x * ops.tanh(softplus(x)), inplace)

@computed_in_float32
def logsigmoid(input: Any) -> Any:  # noqa: A002
    """``log(sigmoid(input))``, computed as ``-softplus(-input)`` (no overflow).

    >>> import tidu
    >>> tidu.nn.functional.logsigmoid(tidu.tensor([0.0, -200.0]))
    tensor([  -0.6931, -200.0000])
    """
    _float_input(input, "log_sigmoid_cpu")
    return -softplus(-input)


def softsign(input: Any) -> Any:  # noqa: A002
    """``input / (1 + |input|)``.

    >>> import tidu
    >>> tidu.nn.functional.softsign(tidu.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """
    return input / (ops.abs(input) + 1.0)


def sigmoid(input: Any) -> Any:  # noqa: A002
    """``1 / (1 + exp(-input))``.

    >>> import tidu
    >>> tidu.nn.functional.sigmoid(tidu.tensor([0.0]))
    tensor([0.5000])
    """
    return ops.sigmoid(input)


def tanh(input: Any) -> Any:  # noqa: A002
    """Hyperbolic tangent.

    >>> import tidu
    >>> tidu.nn.functional.tanh(tidu.tensor([0.0]))
    tensor([0.])
    """
    return ops.tanh(input)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu_family(input: Any, alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Any:  # noqa: A002
    """``scale * input`` where positive, ``scale * alpha * (exp(input * input_scale) - 1)`` elsewhere.

    As PyTorch at 0: the first derivative is the negative side's, the second the positive side's
    (0): below 0 the exponential, at 0 a term of value 0 and slope 1."""
    _float_input(input, "elu_cpu")
    below_0 = ops.where(input < 0, input, 0.0) * input_scale
    at_0 = ops.where(input == 0, input, 0.0) * input_scale
    out = ops.where(input > 0, input, (ops.expm1(below_0) + at_0) * alpha)
    return out if scale == 1.0 else out * scale


@computed_in_float32
def selu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``scale * elu(input, alpha)`` with the self-normalizing constants (``alpha ~ 1.6733``,
    ``scale ~ 1.0507``).

    >>> import tidu
    >>> tidu.nn.functional.selu(tidu.tensor([-1.0, 1.0]))
    tensor([-1.1113,  1.0507])
    """
    out = _elu_family(input, _SELU_ALPHA, _SELU_SCALE)
    return _in_place(input, out, inplace)


@computed_in_float32
def celu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where positive, ``alpha * (exp(input / alpha) - 1)`` elsewhere.

    >>> import tidu
    >>> tidu.nn.functional.celu(tidu.tensor([-1.0, 1.0]), alpha=2.0)
    tensor([-0.7869,  1.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    out = _elu_family(input, alpha, input_scale=1.0 / alpha)
    return _in_place(input, out, inplace)


@autocast_policy("lower")
def prelu(input: Any, weight: Any) -> Any:  # noqa: A002
    """``input`` where positive, ``weight * input`` elsewhere; ``weight`` holds one slope or one per
    channel (dim 1).

    >>> import tidu
    >>> tidu.nn.functional.prelu(tidu.tensor([[-2.0, 3.0]]), tidu.tensor([0.25, 0.5]))
    tensor([[-0.5000,  3.0000]])
    """
    _float_input(input, "prelu_cpu")
    if input.ndim == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                           f"{weight.numel()} and channel size = {channels}.")
    slope = weight.reshape(()) if weight.numel() == 1 else _along(weight, input.ndim, 1)
    return ops.where(input > 0, input, input * slope)


def softmin(input: Any, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Any:  # noqa: A002
    """``softmax(-input)`` along ``dim``.

    >>> import tidu
    >>> tidu.nn.functional.softmin(tidu.tensor([0.0, 1.0]), dim=0)
    tensor([0.7311, 0.2689])
    """
    if dim is None:
        dim = _softmax_dim(input.ndim, "softmin")
    return softmax(-input, dim, dtype=dtype)


def softshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``input`` moved ``lambd`` towards 0, and 0 within ``[-lambd, lambd]`` (gradient 0 there,
    bounds included).

    >>> import tidu
    >>> tidu.nn.functional.softshrink(tidu.tensor([-2.0, 0.3, 1.0]))
    tensor([-1.5000,  0.0000,  0.5000])
    """
    _float_input(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {ops.finfo(input.dtype).max:g}] for input dtype "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]}, but found {lambd:g}")
    return ops.where(ops.abs(input) > lambd, input - ops.sign(input).detach() * lambd, 0.0)


def hardshrink(input: Any, lambd: float = 0.5) -> Any:  # noqa: A002
    """``input`` where ``|input| > lambd``, else 0.

    >>> import tidu
    >>> tidu.nn.functional.hardshrink(tidu.tensor([-2.0, 0.3, 0.5, 1.0]))
    tensor([-2.,  0.,  0.,  1.])
    """
    _float_input(input, "hardshrink_cpu")
    return ops.where(ops.abs(input) > lambd, input, 0.0)


@computed_in_float32
def tanhshrink(input: Any) -> Any:  # noqa: A002
    """``input - tanh(input)``.

    >>> import tidu
    >>> tidu.nn.functional.tanhshrink(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.2384])
    """
    return input - ops.tanh(input)


def threshold(input: Any, threshold: float, value: float, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where ``input > threshold``, else ``value`` (gradient 0 there).

    >>> import tidu
    >>> tidu.nn.functional.threshold(tidu.tensor([-1.0, 0.5, 2.0]), 0.5, -9.0)
    tensor([-9.0000, -9.0000,  2.0000])
    """
    out = ops.where(input > threshold, input, value)
    return _in_place(input, out, inplace)


def glu(input: Any, dim: int = -1) -> Any:  # noqa: A002
    """Gated linear unit: ``input`` split in halves ``a, b`` along ``dim``, ``a * sigmoid(b)``.

    >>> import tidu
    >>> tidu.nn.functional.glu(tidu.tensor([2.0, 0.0]))
    tensor([1.])
    """
    _float_input(input, "glu_cpu")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    axis = wrap_dim(dim, input.ndim)
    if input.shape[axis] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {axis} is size {input.shape[axis]}")
    a, b = ops.chunk(input, 2, axis)
    return a * ops.sigmoid(b)


# --- normalization and dropout ------------------------------------------------------------
@computed_in_float32(mixed=True)
def group_norm(input: Any, num_groups: int, weight: Any = None, bias: Any = None, eps: float = 1e-5) -> Any:  # noqa: A002
    """Normalize (N, C, *) over each group of ``C / num_groups`` channels and the other dims
    (biased variance), then scale and shift per channel.

    >>> import tidu
    >>> tidu.nn.functional.group_norm(tidu.tensor([[[1.0], [3.0], [5.0], [5.0]]]), 2).flatten()
    tensor([-1.0000,  1.0000,  0.0000,  0.0000])
    """
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    if input.numel() == 0:  # an empty batch: an empty result (PyTorch's)
        along = (c,) + (1,) * (input.ndim - 2)
        out = input * 1.0 if weight is None else input * weight.reshape(along)
        return out if bias is None else out + bias.reshape(along)
    grouped = input.reshape(n, num_groups, -1)
    out = layer_norm(grouped, (grouped.shape[-1],), eps=eps).reshape(input.shape)
    along = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(along)
    if bias is not None:
        out = out + bias.reshape(along)
    return out


def _adaptive_mean(size: int, out: int, like: Any) -> Any:
    """The (out, size) matrix whose rows average PyTorch's adaptive windows: row ``i`` over
    ``floor(i * size / out)`` up to ``ceil((i + 1) * size / out)``."""
    pool = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        pool[i, start:end] = 1.0 / (end - start)
    return placed(dtypes.cast(pool, like.dtype), like.dtype, like.device)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """Mean over PyTorch's adaptive windows of the last two dims, to ``output_size`` (an int, or
    a pair whose ``None`` keeps that dim): two products with averaging matrices.

    >>> import tidu
    >>> tidu.nn.functional.adaptive_avg_pool2d(tidu.arange(16.0).reshape(1, 1, 4, 4), 1)
    tensor([[[[7.5000]]]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    return _adaptive_avg_pool_nd(input, _adaptive_sizes(output_size, tuple(input.shape[-2:]), "adaptive_avg_pool2d"))


@autocast_policy("fp32")
def adaptive_avg_pool3d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """Mean over PyTorch's adaptive windows of the last three dims of (N, C, D, H, W) or
    (C, D, H, W), to ``output_size`` (an int, or a triple whose ``None`` keeps that dim).

    >>> import tidu
    >>> tidu.nn.functional.adaptive_avg_pool3d(tidu.arange(8.0).reshape(1, 2, 2, 2), (1, None, 1))
    tensor([[[[2.5000],
              [4.5000]]]])
    """
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(input.shape)}")
    _float_input(input, "adaptive_avg_pool3d_cpu")
    return _adaptive_avg_pool_nd(input, _adaptive_sizes(output_size, tuple(input.shape[-3:]), "adaptive_avg_pool3d"))


def adaptive_avg_pool1d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """Mean over PyTorch's adaptive windows of the last dim of (N, C, L) or (C, L).

    >>> import tidu
    >>> tidu.nn.functional.adaptive_avg_pool1d(tidu.arange(6.0).reshape(1, 6), 2)
    tensor([[1., 4.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_avg_pool1d)")
    size = output_size if isinstance(output_size, int) else tuple(output_size)[0]
    return _adaptive_avg_pool_nd(input, (size,))


def _adaptive_windows(size: int, out: int) -> np.ndarray:
    """PyTorch's adaptive windows as (out, K) positions, each window padded to the widest one
    by repeating its last position (a repeat changes neither the max nor which element gives it)."""
    starts = (np.arange(out) * size) // out
    ends = -((-(np.arange(out) + 1) * size) // out)
    width = int((ends - starts).max()) if out else 1
    return np.minimum(starts[:, None] + np.arange(width), ends[:, None] - 1)


def _adaptive_max_pool_nd(input: Any, out_sizes: tuple[int, ...], return_indices: bool) -> Any:  # noqa: A002
    """Max over the adaptive windows of the last ``len(out_sizes)`` dims: each dim's windows
    gathered into a (out, K) pair of dims, then one ``max`` over all window dims; the indices
    are flat positions in the pooled dims."""
    spatial, first = len(out_sizes), input.ndim - len(out_sizes)
    sizes = tuple(input.shape[first:])
    for d in range(1 if input.ndim == spatial + 2 else 0, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"adaptive_max_pool{spatial}d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being empty")
    windows = [_adaptive_windows(n, o) for n, o in zip(sizes, out_sizes)]
    x = input
    for i, win in enumerate(windows):
        axis = first + 2 * i
        x = select_positions(x, axis, win.reshape(-1))
        x = x.reshape(*x.shape[:axis], *win.shape, *x.shape[axis + 1:])
    order = [*range(first), *(first + 2 * i for i in range(spatial)), *(first + 2 * i + 1 for i in range(spatial))]
    window = math.prod(win.shape[1] for win in windows)
    values, where = ops.max(x.permute(*order).reshape(*input.shape[:first], *out_sizes, window), dim=-1)
    if not return_indices:
        return values
    flat = np.zeros((1,) * (2 * spatial), np.int64)
    for i, (n, win) in enumerate(zip(sizes, windows)):
        shape = [1] * (2 * spatial)
        shape[i], shape[spatial + i] = win.shape
        flat = flat * n + win.reshape(shape)
    flat = placed(flat.reshape(*out_sizes, window), None, input.device)
    return values, ops.take_along_dim(flat.expand(*where.shape, window), where.unsqueeze(-1), -1).squeeze(-1)


def _adaptive_sizes(output_size: Any, sizes: tuple[int, ...], op: str = "") -> tuple[int, ...]:
    """``output_size`` (an int, or a sequence whose ``None`` keeps that dim) for the dims ``sizes``."""
    wanted = (output_size,) * len(sizes) if isinstance(output_size, int) else tuple(output_size)
    if len(wanted) != len(sizes):
        raise RuntimeError(f"{op or f'adaptive_pool{len(sizes)}d'}: output_size must be {len(sizes)}")
    out = tuple(n if o is None else int(o) for o, n in zip(wanted, sizes))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op or 'adaptive_pool'}: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{', '.join(map(str, out))}}}")
    return out


def adaptive_max_pool2d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows of the last two dims of (N, C, H, W) or (C, H, W), to
    ``output_size``; with ``return_indices``, also each max's flat position in ``H * W``.

    >>> import tidu
    >>> tidu.nn.functional.adaptive_max_pool2d(tidu.arange(16.0).reshape(1, 4, 4), 2, return_indices=True)
    (tensor([[[ 5.,  7.],
             [13., 15.]]]), tensor([[[ 5,  7],
             [13, 15]]]))
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    _float_input(input, "adaptive_max_pool2d")
    return _adaptive_max_pool_nd(input, _adaptive_sizes(output_size, tuple(input.shape[-2:])), return_indices)


@autocast_policy("fp32")
def adaptive_max_pool3d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows of the last three dims of (N, C, D, H, W) or
    (C, D, H, W), to ``output_size``; with ``return_indices``, also each max's flat position in
    ``D * H * W``.

    >>> import tidu
    >>> tidu.nn.functional.adaptive_max_pool3d(tidu.arange(8.0).reshape(1, 2, 2, 2), 1, return_indices=True)
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_max_pool3d(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    _float_input(input, "adaptive_max_pool3d_cpu")
    sizes = _adaptive_sizes(output_size, tuple(input.shape[-3:]), "adaptive_max_pool3d")
    return _adaptive_max_pool_nd(input, sizes, return_indices)


def adaptive_max_pool1d(input: Any, output_size: Any, return_indices: bool = False) -> Any:  # noqa: A002
    """Max over PyTorch's adaptive windows of the last dim of (N, C, L) or (C, L).

    >>> import tidu
    >>> tidu.nn.functional.adaptive_max_pool1d(tidu.tensor([[1.0, 5.0, 2.0, 0.0, 3.0]]), 2)
    tensor([[5., 3.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_max_pool1d)")
    _float_input(input, "adaptive_max_pool2d")
    return _adaptive_max_pool_nd(input, _adaptive_sizes(output_size, tuple(input.shape[-1:])), return_indices)


def _max_unpool(input: Any, indices: Any, kernel: tuple, stride: tuple, padding: tuple,  # noqa: A002
                output_size: Any) -> Any:
    """Scatter ``input`` into zeros at the flat positions ``indices`` of the pooled dims."""
    spatial = len(kernel)
    default = [(n - 1) * s - 2 * p + k for n, k, s, p in zip(input.shape[-spatial:], kernel, stride, padding)]
    if output_size is None:
        size = default
    else:
        size = [int(n) for n in output_size]
        if len(size) == spatial + 2:
            size = size[2:]
        if len(size) != spatial:
            raise ValueError(f"output_size must have {spatial} or {spatial + 2} elements (got {len(size)})")
        for d, (n, want, s) in enumerate(zip(size, default, stride)):
            if not want - s < n < want + s:
                raise ValueError(f'invalid output_size "{tuple(size)}" (dim {d} must be between {want - s} and '
                                 f"{want + s})")
    lead, total = tuple(input.shape[:-spatial]), math.prod(size)
    where = indices.reshape(*lead, -1)
    host = where._host()
    bad = host[(host < 0) | (host >= total)]
    if bad.size:
        shown = [*size, 1] if spatial == 1 else size
        raise RuntimeError(f"Found an invalid max index: {int(bad[0])} (output volumes are of size "
                           f"{'x'.join(map(str, shown))})")
    zeros, src = ops.zeros(*lead, total, dtype=input.dtype, device=input.device), input.reshape(*lead, -1)
    # the value of a scatter, the gradient of a scatter-add: an index that overlapping windows
    # share passes the output's gradient to each of its inputs, as PyTorch's
    added = zeros.scatter_add(-1, where, src)
    return (added + (zeros.scatter(-1, where, src) - added).detach()).reshape(*lead, *size)


def _unpool_args(kernel_size: Any, stride: Any, padding: Any, n: int) -> tuple[tuple, tuple, tuple]:
    def tup(value: Any) -> tuple:
        return (int(value),) * n if isinstance(value, int) else tuple(int(v) for v in value)

    kernel = tup(kernel_size)
    return kernel, kernel if stride is None else tup(stride), tup(padding)


def max_unpool1d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool1d``: each value of (N, C, L) or (C, L) written at its index of the
    (larger) output, zeros elsewhere.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 3.0, 2.0, 0.0]])
    >>> y, i = tidu.nn.functional.max_pool1d(x, 2, return_indices=True)
    >>> tidu.nn.functional.max_unpool1d(y, i, 2)
    tensor([[0., 3., 2., 0.]])
    """
    return _max_unpool(input, indices, *_unpool_args(kernel_size, stride, padding, 1), output_size)


@autocast_policy("fp32")
def max_unpool2d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool2d``: each value of (N, C, H, W) or (C, H, W) written at its flat
    index of the output's ``H * W``, zeros elsewhere.

    >>> import tidu
    >>> x = tidu.arange(4.0).reshape(1, 1, 2, 2)
    >>> y, i = tidu.nn.functional.max_pool2d(x, 2, return_indices=True)
    >>> tidu.nn.functional.max_unpool2d(y, i, 2)
    tensor([[[[0., 0.],
              [0., 3.]]]])
    """
    return _max_unpool(input, indices, *_unpool_args(kernel_size, stride, padding, 2), output_size)


@autocast_policy("fp32")
def max_unpool3d(input: Any, indices: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
                 output_size: Any = None) -> Any:
    """The inverse of ``max_pool3d``: each value of (N, C, D, H, W) or (C, D, H, W) written at its
    flat index of the output's ``D * H * W``, zeros elsewhere.

    >>> import tidu
    >>> y, i = tidu.nn.functional.max_pool3d(tidu.arange(8.0).reshape(1, 2, 2, 2), 2, return_indices=True)
    >>> tidu.nn.functional.max_unpool3d(y, i, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _max_unpool(input, indices, *_unpool_args(kernel_size, stride, padding, 3), output_size)


def _lp_pool(nd: int, input: Any, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool) -> Any:  # noqa: A002
    """``(sum over the window of x ** p) ** (1 / p)`` over the last ``nd`` dims, written as PyTorch's
    (an average pool times the window size; ``p = inf``: the max of ``|x|``)."""
    max_pool, avg_pool = {1: (max_pool1d, avg_pool1d), 2: (max_pool2d, avg_pool2d), 3: (max_pool3d, avg_pool3d)}[nd]
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    window = math.prod((kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size))
    out = avg_pool(input ** norm_type, kernel_size, stride, 0, ceil_mode)
    return (ops.sign(out) * relu(out.abs()) * window) ** (1.0 / norm_type)


def lp_pool3d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """Power-average pooling ``(sum over the window of x ** p) ** (1 / p)`` over (N, C, D, H, W)
    or (C, D, H, W); a window cut by ``ceil_mode`` counts as full, as PyTorch's.

    >>> import tidu
    >>> tidu.nn.functional.lp_pool3d(tidu.full((1, 2, 2, 2), 1.0), 1, 2)
    tensor([[[[8.]]]])
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Any, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """Power-average pooling ``(sum over the window of x ** p) ** (1 / p)`` over (N, C, H, W) or
    (C, H, W); a window cut by ``ceil_mode`` counts as full, as PyTorch's.

    >>> import tidu
    >>> tidu.nn.functional.lp_pool2d(tidu.full((1, 1, 2, 2), 2.0), 2, 2)
    tensor([[[[4.]]]])
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool1d(input: Any, norm_type: float, kernel_size: int, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Any:
    """Power-average pooling ``(sum over the window of x ** p) ** (1 / p)`` over (N, C, L) or (C, L).

    >>> import tidu
    >>> tidu.nn.functional.lp_pool1d(tidu.tensor([[3.0, 4.0]]), 2, 2)
    tensor([[5.]])
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


_INTERPOLATING = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


@computed_in_float32  # (a half input interpolated in float32 and rounded once, as PyTorch's kernels)
def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Any:
    """Resample the spatial dims of (N, C, d1, ...) to ``size`` or ``scale_factor`` times theirs:
    ``nearest``/``nearest-exact`` (index selection), ``linear``/``bilinear``/``trilinear`` (two
    index selections a dim, weighted; ``align_corners`` as PyTorch's), ``bicubic`` (four a dim,
    PyTorch's cubic kernel with ``a = -0.75`` and positions clamped at the border), ``area``
    (adaptive average pooling); with ``antialias=True`` (bilinear, bicubic on 4-D input) PyTorch's
    antialiased resampling. Source positions are computed in the input's precision, as PyTorch's kernels do.

    >>> import tidu
    >>> x = tidu.tensor([[[1.0, 2.0]]])
    >>> tidu.nn.functional.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> tidu.nn.functional.interpolate(x, size=4, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.3333, 1.6667, 2.0000]]])
    >>> tidu.nn.functional.interpolate(tidu.tensor([[[[1.0, 2.0]]]]), size=(1, 4), mode="bicubic")
    tensor([[[[0.8945, 1.2266, 1.7734, 2.1055]]]])
    """
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if mode in _INTERPOLATING and input.ndim != _INTERPOLATING[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERPOLATING[mode]}D input")
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: {' | '.join(_MODES)} (got {mode})")
    if antialias and (mode not in ("bilinear", "bicubic") or input.ndim != 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if not input.dtype.is_floating_point:
        kernel = "nearest" if mode in ("nearest", "nearest-exact") else "linear" if mode != "area" else None
        if kernel is None:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               f"complex dtype. Got: {dtypes.TORCH_NAMES[input.dtype.name]}")
        raise dtypes.not_implemented(f"compute_indices_weights_{kernel}", input.dtype)
    if size is not None and recompute_scale_factor:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if isinstance(size, Tensor):
        size = size.tolist()
    spatial = input.ndim - 2
    in_sizes = tuple(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        out_sizes = tuple(size) if isinstance(size, list | tuple) else (size,) * spatial
        if len(out_sizes) != spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {size}. Please provide input "
                             "tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        scales: tuple = (None,) * spatial
    elif scale_factor is not None:
        factors = tuple(scale_factor) if isinstance(scale_factor, list | tuple) else (scale_factor,) * spatial
        if len(factors) != spatial:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(in_sizes)} and scale_factor of shape {scale_factor}. "
                             "Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
                             "(s1, s2, ...,sK) format.")
        out_sizes = tuple(math.floor(float(n) * float(f)) for n, f in zip(in_sizes, factors))
        scales = (None,) * spatial if recompute_scale_factor else tuple(float(f) for f in factors)
    if size is not None or scale_factor is not None:
        small = [(n, o) for n, o in zip(in_sizes, out_sizes) if n <= 0 or o <= 0]
        if small:
            axes = "DHW"[-spatial:]
            raise RuntimeError("Input and output sizes should be greater than 0, but got input ("
                               + ", ".join(f"{a}: {n}" for a, n in zip(axes, in_sizes)) + ") and output ("
                               + ", ".join(f"{a}: {o}" for a, o in zip(axes, out_sizes)) + ")")
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        return _adaptive_avg_pool_nd(input, out_sizes)
    out = input
    for axis, (n_in, n_out, scale) in enumerate(zip(in_sizes, out_sizes, scales)):
        if antialias:
            out = _resample_antialiased(out, axis + 2, n_in, n_out, scale, mode, bool(align_corners))
        else:
            out = _resample(out, axis + 2, n_in, n_out, scale, mode, bool(align_corners))
    return out


@computed_in_float32
def _adaptive_avg_pool_nd(input: Any, out_sizes: tuple[int, ...]) -> Any:  # noqa: A002
    """Adaptive average pooling of the last ``len(out_sizes)`` dims: one product with an averaging
    matrix a dim whose size changes (the last dim from the right, the others from the left); a
    half input in float32, rounded once (PyTorch averages in float32)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {dtypes.TORCH_NAMES[input.dtype.name]}")
    out = input
    first = input.ndim - len(out_sizes)
    for axis, n_out in enumerate(out_sizes, first):
        n_in = input.shape[axis]
        if n_in == n_out:
            continue
        pool = _adaptive_mean(n_in, n_out, out)
        if axis == input.ndim - 1:
            out = ops.matmul(out, pool.t())
        else:
            out = ops.movedim(ops.matmul(pool, ops.movedim(out, axis, -2)), -2, axis)
    return out


def _resample(x: Any, axis: int, n_in: int, n_out: int, scale: float | None, mode: str, align_corners: bool) -> Any:
    """One spatial dim of ``interpolate``: PyTorch's source positions (``nearest_idx``,
    ``area_pixel_compute_source_index``) in the input's float type."""
    real = x.dtype.np.type if x.dtype.is_floating_point else np.float32
    dst = np.arange(n_out, dtype=real)
    if mode in ("nearest", "nearest-exact"):
        if n_in == n_out and (scale is None or mode == "nearest" and x.ndim == 4):
            return x  # (PyTorch's 2-D nearest kernel copies an unchanged axis; the others resample at ``scale``)
        step = real(1.0 / scale) if scale is not None and scale > 0 else real(n_in) / real(n_out)
        where = np.floor((dst + real(0.5)) * step if mode == "nearest-exact" else dst * step).astype(np.int64)
        return select_positions(x, axis, np.minimum(where, n_in - 1))
    if n_in == n_out and mode != "bicubic":
        return x  # PyTorch's linear kernels copy an axis whose size does not change, whatever ``scale``
    if align_corners:
        step = real(n_in - 1) / real(n_out - 1) if n_out > 1 else real(0.0)
        src = dst * step
    else:
        step = real(1.0 / scale) if scale is not None and scale > 0 else real(n_in) / real(n_out)
        src = step * (dst + real(0.5)) - real(0.5)
        if mode != "bicubic":
            src = np.maximum(src, real(0.0))
    if mode == "bicubic":
        low = np.floor(src)
        t = (src - low).astype(real)
        taps = [low.astype(np.int64) + k for k in (-1, 0, 1, 2)]
        weights = [_cubic_far(t + real(1.0)), _cubic_near(t), _cubic_near(real(1.0) - t), _cubic_far(real(2.0) - t)]
        return _weighted_taps(x, axis, [np.clip(tap, 0, n_in - 1) for tap in taps], weights)
    low = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    high = low + (low < n_in - 1)
    weight_high = np.clip(src - low.astype(real), 0.0, 1.0).astype(real)
    return _weighted_taps(x, axis, [low, high], [real(1.0) - weight_high, weight_high])


def _resample_antialiased(x: Any, axis: int, n_in: int, n_out: int, scale: float | None, mode: str,
                          align_corners: bool) -> Any:
    """One spatial dim of ``interpolate(antialias=True)``: each output a normalized weighted sum
    of the inputs under its filter (a triangle for bilinear, the cubic with ``a = -0.5`` for
    bicubic), widened by the downsampling factor so that every input contributes (PIL's and
    PyTorch's resampling)."""
    if align_corners:
        step = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    width = 1.0 if mode == "bilinear" else 2.0  # the filter's half-width at scale 1
    support = width * step if step >= 1.0 else width
    inv = 1.0 / step if step >= 1.0 else 1.0
    center = step * (np.arange(n_out) + 0.5)  # (with align_corners too: only the step changes)
    lows = np.maximum((center - support + 0.5).astype(np.int64), 0)
    highs = np.minimum((center + support + 0.5).astype(np.int64), n_in)
    taps = int((highs - lows).max(initial=1))
    offsets = np.arange(taps)
    where = lows[:, None] + offsets[None, :]
    d = np.abs((where - center[:, None] + 0.5) * inv)
    if mode == "bilinear":
        w = np.maximum(1.0 - d, 0.0)
    else:
        w = np.where(d < 1.0, (1.5 * d - 2.5) * d * d + 1.0, np.where(d < 2.0, ((-0.5 * d + 2.5) * d - 4.0) * d + 2.0, 0.0))
    w = np.where(where < highs[:, None], w, 0.0)
    w = w / np.where(w.sum(1, keepdims=True) == 0, 1.0, w.sum(1, keepdims=True))
    positions = [np.minimum(where[:, k], n_in - 1) for k in range(taps)]
    return _weighted_taps(x, axis, positions, [w[:, k] for k in range(taps)])


_CUBIC_A = -0.75  # PyTorch's bicubic kernel parameter


def _cubic_near(d: np.ndarray) -> np.ndarray:
    """The cubic convolution kernel at distances ``d`` in [0, 1]."""
    return ((_CUBIC_A + 2) * d - (_CUBIC_A + 3)) * d * d + 1


def _cubic_far(d: np.ndarray) -> np.ndarray:
    """The cubic convolution kernel at distances ``d`` in [1, 2]."""
    return ((_CUBIC_A * d - 5 * _CUBIC_A) * d + 8 * _CUBIC_A) * d - 4 * _CUBIC_A


def _weighted_taps(x: Any, axis: int, positions: list[np.ndarray], weights: list[np.ndarray]) -> Any:
    """``sum_k x[positions[k]] * weights[k]`` along ``axis``, one position and weight per output index."""
    n_out = positions[0].size
    shape = [1] * x.ndim
    shape[axis] = n_out
    full = tuple(n_out if d == axis else s for d, s in enumerate(x.shape))
    # positions and weights stand for the sizes and scales PyTorch's backward holds as numbers;
    # the weights come in the result's shape (a zero-stride view), so no broadcast of them is saved
    out = None
    for where, weight in zip(positions, weights):
        w = kept(placed(np.broadcast_to(dtypes.cast(weight, x.dtype).reshape(shape), full), x.dtype, x.device))
        term = select_positions(x, axis, where) * w
        out = term if out is None else out + term
    return out


def _normalized_shape(input: Any, normalized_shape: Any, params: tuple, sep: str) -> tuple[int, ...]:  # noqa: A002
    """``normalized_shape`` as a tuple, checked against ``input``'s trailing dims and the
    ``(name, tensor)`` ``params`` (PyTorch's errors; ``sep`` follows ``[*`` in the first)."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*{sep}{', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    for name, p in params:
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(p.shape)} and normalized_shape = {list(shape)}")
    return shape


@computed_in_float32(mixed=True)
def layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any = None, bias: Any = None,  # noqa: A002
               eps: float = 1e-5) -> Any:
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then scale and shift.

    >>> import tidu
    >>> tidu.nn.functional.layer_norm(tidu.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    k = len(_normalized_shape(input, normalized_shape, (("weight", weight), ("bias", bias)), sep=", "))
    _float_input(input, "LayerNormKernelImpl")
    if weight is not None and bias is not None and weight.dtype == input.dtype == bias.dtype:
        return bind(nn_prims.layer_norm_affine, input, weight, bias, k=k, eps=float(eps))
    out = bind(nn_prims.layer_norm, input, k=k, eps=float(eps))
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


@computed_in_float32(mixed=True)
def batch_norm(input: Any, running_mean: Any, running_var: Any, weight: Any = None, bias: Any = None,  # noqa: A002
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalize each channel (dim 1) of ``(N, C, *)`` input.

    Training: batch statistics (biased variance), and the running statistics, when given, move
    by ``momentum`` towards the batch mean and unbiased variance (in place, not recorded).
    Otherwise: the running statistics.

    >>> import tidu
    >>> x = tidu.tensor([[1.0], [3.0]])
    >>> mean, var = tidu.zeros(1), tidu.ones(1)
    >>> tidu.nn.functional.batch_norm(x, mean, var, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> mean, var
    (tensor([0.2000]), tensor([1.1000]))
    """
    if input.ndim < 2:
        raise ValueError(f"batch_norm: expected input of shape (N, C, *), got {tuple(input.shape)}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(
                f"batch_norm: {name} should contain {c} elements (the channels of input {tuple(input.shape)}), "
                f"not {t.numel()}"
            )
    dims = (0, *range(2, input.ndim))
    if input.numel() == 0:  # an empty batch: an empty result, the running statistics as they are (PyTorch's)
        out = input * 1.0 if weight is None else input * _along(weight, input.ndim, 1)
        return out if bias is None else out + _along(bias, input.ndim, 1)
    if training:
        count = input.numel() // max(c, 1)
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        mean = input.mean(dim=dims)
        centered = input - _along(mean, input.ndim, 1)
        var = (centered * centered).mean(dim=dims)
        if running_mean is not None and running_var is not None:
            with no_grad():
                new_mean = running_mean * (1 - momentum) + mean.to(running_mean.dtype) * momentum
                new_var = running_var * (1 - momentum) + var.to(running_var.dtype) * (momentum * count / (count - 1))
                assign_(running_mean, new_mean, op="batch_norm")
                assign_(running_var, new_var, op="batch_norm")
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean must be defined in evaluation mode (and running_var)")
        centered = input - _along(running_mean, input.ndim, 1)
        var = running_var
    out = centered * _along((var + eps) ** -0.5, input.ndim, 1)
    if weight is not None:
        out = out * _along(weight, input.ndim, 1)
    if bias is not None:
        out = out + _along(bias, input.ndim, 1)
    return out


def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:  # noqa: A002
    """Zero each element with probability ``p`` (tidu's RNG) and scale the rest by ``1/(1-p)``;
    the identity when not ``training``.

    >>> import tidu
    >>> x = tidu.ones(4)
    >>> tidu.nn.functional.dropout(x, 0.5, training=False)
    tensor([1., 1., 1., 1.])
    >>> sorted(set(tidu.nn.functional.dropout(x, 0.5).tolist()) - {0.0, 2.0})
    []
    """
    return _in_place(input, _dropout_masked(input, p, training, tuple(input.shape)), inplace)


def _dropout_masked(input: Any, p: float, training: bool, mask_shape: tuple[int, ...]) -> Any:  # noqa: A002
    """Dropout with one draw per cell of ``mask_shape`` (which broadcasts to ``input``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = ops.rand(mask_shape, dtype=input.dtype, device=input.device) < (1.0 - p)
    return ops.where(keep, input * (1.0 / (1.0 - p)), 0.0)


_SELU_NEGATIVE = -1.0507009873554804934193349852946 * 1.6732632423543772848170429916717


def _alpha_dropout(input: Any, p: float, training: bool, mask_shape: tuple[int, ...]) -> Any:  # noqa: A002
    """Alpha dropout with one draw per cell of ``mask_shape``: a dropped value becomes SELU's
    negative saturation, then an affine map restores zero mean and unit variance."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep_p = 1.0 - p
    scale = (keep_p * (1.0 + p * _SELU_NEGATIVE ** 2)) ** -0.5
    keep = ops.rand(mask_shape, dtype=input.dtype, device=input.device) < keep_p
    return ops.where(keep, input * scale, _SELU_NEGATIVE * scale) - _SELU_NEGATIVE * scale * p


def alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False) -> Any:  # noqa: A002
    """Dropout for SELU networks: each element, with probability ``p``, is set to SELU's negative
    saturation value, then all are mapped affinely so that inputs of zero mean and unit variance
    keep them; the identity when not ``training`` (the default, as PyTorch's).

    >>> import tidu
    >>> tidu.nn.functional.alpha_dropout(tidu.ones(3), 0.5)
    tensor([1., 1., 1.])
    """
    return _in_place(input, _alpha_dropout(input, p, training, tuple(input.shape)), inplace)


def feature_alpha_dropout(input: Any, p: float = 0.5, training: bool = False, inplace: bool = False) -> Any:  # noqa: A002
    """``alpha_dropout`` of whole channels: one draw for each index of the first two dims.

    >>> import tidu
    >>> y = tidu.nn.functional.feature_alpha_dropout(tidu.ones(4, 3, 5), 0.5, training=True)
    >>> all(len(set(ch.tolist())) == 1 for ch in y.reshape(12, 5))
    True
    """
    if training and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _in_place(input, _alpha_dropout(input, p, training, tuple(input.shape[:2]) + (1,) * (input.ndim - 2)),
                     inplace)


def _channel_dropout(input: Any, p: float, training: bool, lead: int) -> Any:  # noqa: A002
    """Dropout of whole channels: one draw for each index of the first ``lead`` dims."""
    return _dropout_masked(input, p, training, tuple(input.shape[:lead]) + (1,) * (input.ndim - lead))


def dropout1d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:  # noqa: A002
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` with probability ``p``, scaling the rest
    by ``1/(1-p)``; the identity when not ``training``.

    >>> import tidu
    >>> y = tidu.nn.functional.dropout1d(tidu.ones(8, 3), 0.5)
    >>> all(len(set(row)) == 1 for row in y.tolist())
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _in_place(input, _channel_dropout(input, p, training, input.ndim - 1), inplace)


def dropout2d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:  # noqa: A002
    """Zero whole channels of ``(N, C, H, W)`` with probability ``p``, scaling the rest by
    ``1/(1-p)``. As PyTorch, other ranks warn and still take dim 0 as the batch and dim 1 as
    the channels (a 3-D input is ``(N, C, L)``).

    >>> import tidu
    >>> y = tidu.nn.functional.dropout2d(tidu.ones(2, 5, 3, 3), 0.5)
    >>> all(len(set(ch.flatten().tolist())) == 1 for ch in y.reshape(10, 3, 3))
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", UserWarning, stacklevel=2)
    elif input.ndim != 4:
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", UserWarning, stacklevel=2)
    return _in_place(input, _channel_dropout(input, p, training, min(input.ndim, 2)), inplace)


def dropout3d(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:  # noqa: A002
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` with probability ``p``,
    scaling the rest by ``1/(1-p)``; the identity when not ``training``. Other ranks warn, as
    PyTorch's, and take dim 0 as the channels.

    >>> import tidu
    >>> y = tidu.nn.functional.dropout3d(tidu.ones(2, 3, 2, 2, 2), 0.5)
    >>> all(len(set(ch.flatten().tolist())) == 1 for ch in y.reshape(6, 8))
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", UserWarning, stacklevel=2)
    return _in_place(input, _channel_dropout(input, p, training, 2 if input.ndim == 5 else 1), inplace)


def local_response_norm(input: Any, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                        k: float = 1.0) -> Any:
    """``input / (k + alpha * mean of input ** 2 over size neighbouring channels) ** beta``, the
    window of channel ``c`` spanning ``c - size // 2`` to ``c + (size - 1) // 2`` (zeros beyond
    the edges, still counted in the mean).

    >>> import tidu
    >>> tidu.nn.functional.local_response_norm(tidu.full((1, 2, 1), 2.0), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.4000]]])
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {input.ndim} "
                         "dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = pad((input * input).movedim(1, -1), (size // 2, (size - 1) // 2))
    window = squares.narrow(-1, 0, channels)
    for shift in range(1, size):
        window = window + squares.narrow(-1, shift, channels)
    return input / ((window * (alpha / size) + k) ** beta).movedim(-1, 1)


@computed_in_float32(mixed=True)  # (half inputs in float32, rounded once, as PyTorch's)
def rms_norm(input: Any, normalized_shape: Sequence[int], weight: Any = None, eps: float | None = None) -> Any:  # noqa: A002
    """``input`` divided by its root mean square over the trailing ``normalized_shape`` dims (plus
    ``eps``, by default the machine epsilon of the dtype it computes in: float32 for half inputs),
    then scaled by ``weight``.

    >>> import tidu
    >>> tidu.nn.functional.rms_norm(tidu.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    shape = _normalized_shape(input, normalized_shape, (("weight", weight),), sep="")
    _float_input(input, "rms_norm")
    if eps is None:
        eps = ops.finfo(input.dtype).eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ops.rsqrt((input * input).mean(dim=dims, keepdim=True) + eps)
    return out if weight is None else out * weight


@computed_in_float32(mixed=True)
def instance_norm(input: Any, running_mean: Any = None, running_var: Any = None, weight: Any = None,  # noqa: A002
                  bias: Any = None, use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Any:
    """Normalize each channel of each sample of ``(N, C, *)`` over its spatial dims, then scale and
    shift per channel. With ``use_input_stats`` the running statistics, when given, move by
    ``momentum`` towards the batch's average of the instances' means and unbiased variances;
    otherwise they normalize.

    >>> import tidu
    >>> tidu.nn.functional.instance_norm(tidu.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    if use_input_stats and math.prod(input.shape[2:]) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    n, c = input.shape[0], input.shape[1]
    stats = [None if s is None else s.repeat(n) for s in (running_mean, running_var)]
    folded = input.reshape(1, n * c, *input.shape[2:])
    out = batch_norm(folded, *stats, training=use_input_stats, momentum=momentum, eps=eps).reshape(input.shape)
    for stat, instances in zip((running_mean, running_var), stats):
        if stat is not None and use_input_stats:
            with no_grad():
                assign_(stat, instances.reshape(n, c).mean(dim=0), op="instance_norm")
    if weight is not None:
        out = out * _along(weight, input.ndim, 1)
    if bias is not None:
        out = out + _along(bias, input.ndim, 1)
    return out


def _lead_permute(x: Any, lead: int, order: tuple[int, ...]) -> Any:
    """Permute the dims after the first ``lead`` ones by ``order``."""
    return x.permute(*range(lead), *(lead + i for i in order))


def _check_pixel_shuffle(input: Any, factor: int, name: str, what: str) -> None:  # noqa: A002
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input with {input.ndim} "
                           "dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Any, upscale_factor: int) -> Any:  # noqa: A002
    """``(*, C * r**2, H, W)`` to ``(*, C, H * r, W * r)``: each channel's ``r x r`` block is spread
    over the spatial grid.

    >>> import tidu
    >>> tidu.nn.functional.pixel_shuffle(tidu.arange(4.0).reshape(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]])
    """
    r = upscale_factor
    _check_pixel_shuffle(input, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    blocks = input.reshape(*lead, c // (r * r), r, r, h, w)
    return _lead_permute(blocks, len(lead), (0, 3, 1, 4, 2)).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Any, downscale_factor: int) -> Any:  # noqa: A002
    """The inverse of ``pixel_shuffle``: ``(*, C, H * r, W * r)`` to ``(*, C * r**2, H, W)``.

    >>> import tidu
    >>> tidu.nn.functional.pixel_unshuffle(tidu.arange(4.0).reshape(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = downscale_factor
    _check_pixel_shuffle(input, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    blocks = input.reshape(*lead, c, h // r, r, w // r, r)
    return _lead_permute(blocks, len(lead), (0, 2, 4, 1, 3)).reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input: Any, groups: int) -> Any:  # noqa: A002
    """Interleave the ``groups`` groups of channels of (N, C, *): channel ``g * (C // groups) + i``
    moves to ``i * groups + g``.

    >>> import tidu
    >>> tidu.nn.functional.channel_shuffle(tidu.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


native_channel_shuffle = channel_shuffle


def conv_tbc(input: Any, weight: Any, bias: Any, pad: int = 0) -> Any:  # noqa: A002
    """A 1-D convolution over ``input`` laid out (time, batch, channels), ``weight`` (kernel width,
    in channels, out channels), ``pad`` zeros at both ends of the time axis: ``conv1d`` on the
    permuted tensors.

    >>> import tidu
    >>> tidu.nn.functional.conv_tbc(tidu.ones(4, 1, 2), tidu.ones(3, 2, 1), tidu.zeros(1), 1).flatten()
    tensor([4., 6., 6., 4.])
    """
    if input.ndim != 3 or weight.ndim != 3 or bias is None or bias.ndim != 1:
        raise RuntimeError("conv_tbc: input must be 3-D (time, batch, channels), weight 3-D (width, in, out), bias 1-D")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def linear_cross_entropy(input: Any, linear_weight: Any, target: Any, *, linear_bias: Any = None,  # noqa: A002
                         weight: Any = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Any:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``: PyTorch's reference
    form (tidu does not chunk the logits, so ``options`` changes nothing).

    >>> import tidu
    >>> x, w = tidu.tensor([[1.0, 2.0]]), tidu.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> tidu.nn.functional.linear_cross_entropy(x, w, tidu.tensor([1]))
    tensor(0.3133)
    """
    logits = linear(input, linear_weight, linear_bias)
    return cross_entropy(logits, target, weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index, label_smoothing=label_smoothing)


def _single(value: Any, name: str, fn: str) -> int:
    """A 1-d pooling argument: an int or a sequence of one."""
    if isinstance(value, int):
        return value
    if len(value) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(value)})")
    return int(value[0])


def max_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)``: ``max_pool2d`` over a unit height.

    >>> import tidu
    >>> tidu.nn.functional.max_pool1d(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[3., 2.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    _float_input(input, "max_pool1d_impl")
    k = _single(kernel_size, "kernel_size", "max_pool1d")
    s = k if stride is None or stride == () else _single(stride, "stride", "max_pool1d")
    p, d = _single(padding, "padding", "max_pool1d"), _single(dilation, "dilation", "max_pool1d")
    if k < 1:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    size = (input.shape[-1] + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // max(s, 1) + 1
    if size < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {size}")
    out = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


@computed_in_float32
def avg_pool1d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,  # noqa: A002
               count_include_pad: bool = True) -> Any:
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``: ``avg_pool2d`` over a unit height.

    >>> import tidu
    >>> tidu.nn.functional.avg_pool1d(tidu.tensor([[1.0, 3.0, 2.0, 0.0]]), 2)
    tensor([[2., 1.]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for avg_pool1d)")
    k = _single(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or stride == () else _single(stride, "stride", "avg_pool1d")
    p = _single(padding, "padding", "avg_pool1d")
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad).squeeze(-2)


# --- sparse --------------------------------------------------------------------------------
def _check_index(input: Any, name: str) -> None:  # noqa: A002
    if not isinstance(input, Tensor | Var) or input.dtype not in (dtypes.int64, dtypes.int32):
        got = f"torch.{dtypes.LEGACY_TYPES[input.dtype.name]}" if isinstance(input, Tensor | Var) else type(input).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for {name})")


def embedding(input: Any, weight: Any, padding_idx: int | None = None, max_norm: Any = None,  # noqa: A002
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """Rows of ``weight`` picked by the integer ``input``: ``(*)`` to ``(*, embedding_dim)``.

    The row ``padding_idx`` gets no gradient; with ``max_norm``, the rows looked up are first
    rescaled in place to norm at most ``max_norm``. Gradient: scatter-add into the rows used
    (``index_select`` on the ``gather`` primitive).

    >>> import tidu
    >>> w = tidu.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, 4.0]])
    >>> tidu.nn.functional.embedding(tidu.tensor([2, 1]), w)
    tensor([[3., 4.],
            [1., 2.]])
    """
    _check_index(input, "embedding")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported (tidu has no sparse tensors)")
    if scale_grad_by_freq and isinstance(input, Var):
        raise NotImplementedError("embedding: scale_grad_by_freq counts the indices' values, which vmap-ed indices "
                                  "do not have")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D, got shape {tuple(weight.shape)}")
    num = weight.shape[0]
    symbolic = isinstance(input, Var)  # ``vmap``-ed indices: no values here; the gather checks the bounds
    if symbolic and max_norm is not None:
        raise NotImplementedError("embedding: max_norm renormalizes the rows looked up in place, which tidu cannot "
                                  "do for indices mapped by vmap")
    if not symbolic:
        data = input._host()  # validated on the host, also for CUDA (PyTorch asserts on the device)
        if data.size and (data.min() < 0 or data.max() >= num):
            raise IndexError(f"index out of range in self (embedding indices must lie in [0, {num}), got "
                             f"min {data.min()}, max {data.max()})")
        if max_norm is not None:
            _renorm_rows(weight, np.unique(data), max_norm, norm_type)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        rows = (ops.arange(num, device=weight.device) == padding_idx % num).reshape(num, 1)
        weight = ops.where(rows, weight.detach(), weight)
    if symbolic:
        return weight[input]
    rows = ops.index_select(weight, 0, input.reshape(-1))
    if scale_grad_by_freq:
        rows = _by_frequency(rows, data.reshape(-1))
    return rows.reshape(*input.shape, weight.shape[1])


def _by_frequency(rows: Any, indices: np.ndarray) -> Any:
    """``rows`` (one per index), whose gradient is divided by the number of times its index
    occurs: PyTorch's ``scale_grad_by_freq``. The values are exactly ``rows``."""
    _, inverse, counts = np.unique(indices, return_inverse=True, return_counts=True)
    scale = placed(dtypes.cast((1.0 / counts[inverse]).reshape(-1, 1), rows.dtype), rows.dtype, rows.device)
    return rows.detach() + (rows - rows.detach()) * scale


def _bag_slots(input: Any, offsets: Any, include_last_offset: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """The flat indices, the bag of each and the number of bags of ``embedding_bag``'s input."""
    data = input._host()
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        return data.reshape(-1), np.repeat(np.arange(data.shape[0]), data.shape[1]), data.shape[0]
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None or offsets.ndim != 1:
        raise ValueError(f"offsets has to be a 1D Tensor but got {None if offsets is None else offsets.ndim}")
    starts = offsets._host().astype(np.int64)
    if starts.size and starts[0] != 0:
        raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > data.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {data.size} but got offsets[-1] of "
                           f"{starts[-1]}")
    bags = starts.size - 1 if include_last_offset else starts.size
    ends = np.append(starts[1:], data.size)[:bags]
    counts = np.maximum(ends - starts[:bags], 0)
    return data, np.repeat(np.arange(bags), counts), bags


@computed_in_float32
def embedding_bag(input: Any, weight: Any, offsets: Any = None, max_norm: float | None = None,  # noqa: A002
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Any = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Any:
    """The sum, mean or max of the ``weight`` rows of each bag of indices: the rows of a 2-D
    ``input``, or the runs of a 1-D ``input`` that ``offsets`` start. Entries equal to
    ``padding_idx`` are left out (an empty bag gives zeros); ``per_sample_weights`` (``sum``
    only) scales each row first. Each bag's rows are gathered into a padded grid, reduced along it.

    >>> import tidu
    >>> w = tidu.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> tidu.nn.functional.embedding_bag(tidu.tensor([0, 2, 1]), w, tidu.tensor([0, 2]), mode="sum")
    tensor([[6., 8.],
            [3., 4.]])
    """
    _check_index(input, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported (tidu has no sparse tensors)")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                      f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                      "on GitHub.")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) is not None, then "
                             f"it must have the same shape as the input ({_size(input)})")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} through {num - 1}, but "
                               f"got {padding_idx}")
        padding_idx %= num
    flat, bag, bags = _bag_slots(input, offsets, include_last_offset)
    bad = np.flatnonzero((flat < 0) | (flat >= num))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {flat[bad[0]]} which is not in the valid range "
                           f"[0, {num})")
    if max_norm is not None:
        _renorm_rows(weight, np.unique(flat), max_norm, norm_type)
    used = np.flatnonzero(flat[:bag.size] != padding_idx)
    bag = bag[used]
    counts = np.bincount(bag, minlength=bags)
    slot = np.arange(used.size) - np.repeat(np.cumsum(counts) - counts, counts)
    grid = np.full((bags, max(int(counts.max(initial=0)), 1)), used.size)  # the filler row's position
    grid[bag, slot] = np.arange(used.size)
    rows = ops.index_select(weight, 0, placed(flat[used], None, weight.device))
    if scale_grad_by_freq:
        rows = _by_frequency(rows, flat[used])
    if per_sample_weights is not None:
        rows = rows * ops.index_select(per_sample_weights.reshape(-1), 0, placed(used, None, weight.device)).unsqueeze(1)
    filler = ops.full((1, dim), float("-inf") if mode == "max" else 0.0, dtype=weight.dtype, device=weight.device)
    picked = ops.index_select(ops.cat([rows, filler]), 0, placed(grid.reshape(-1), None, weight.device))
    picked = picked.reshape(bags, grid.shape[1], dim)
    if mode == "sum":
        return picked.sum(1)
    if mode == "mean":
        return picked.sum(1) / placed(dtypes.cast(np.maximum(counts, 1).reshape(-1, 1), weight.dtype), weight.dtype,
                                      weight.device)
    empty = placed((counts == 0).reshape(-1, 1), None, weight.device)
    return ops.where(empty, 0.0, ops.max(picked, dim=1).values)


def _size(t: Any) -> str:
    return f"torch.Size({list(t.shape)})"


def _renorm_rows(weight: Any, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale the ``rows`` of ``weight`` whose norm exceeds ``max_norm`` down to it, in place (PyTorch's
    ``embedding_renorm_``: not recorded)."""
    w = weight.detach()._values()
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    scale = np.ones(w.shape[0], w.dtype)
    scale[rows] = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    with no_grad():
        factor = placed(dtypes.cast(scale.reshape(-1, 1), weight.dtype), weight.dtype, weight.device)
        assign_(weight, weight * factor, op="embedding_renorm_")


@computed_in_float32
def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:  # noqa: A002
    """``input`` divided by its ``p``-norm along ``dim``, a norm below ``eps`` counting as ``eps``
    (so a zero vector stays zero).

    >>> import tidu
    >>> tidu.nn.functional.normalize(tidu.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    """
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


@computed_in_float32
def cosine_similarity(x1: Any, x2: Any, dim: int = 1, eps: float = 1e-8) -> Any:
    """The cosine of the angle between ``x1`` and ``x2`` (broadcast together) along ``dim``, which
    is removed: each normalized first, a norm below ``eps`` counting as ``eps`` (PyTorch's order).

    >>> import tidu
    >>> tidu.nn.functional.cosine_similarity(tidu.tensor([[1.0, 0.0]]), tidu.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    if x1.shape != x2.shape:
        x1, x2 = ops.broadcast_tensors(x1, x2)
    return (normalize(x1, 2.0, dim, eps) * normalize(x2, 2.0, dim, eps)).sum(dim)


def one_hot(tensor: Any, num_classes: int = -1) -> Any:
    """``(*)`` int64 class indices to ``(*, num_classes)`` int64 one-hot rows.

    >>> import tidu
    >>> tidu.nn.functional.one_hot(tidu.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if not isinstance(num_classes, int) or isinstance(num_classes, bool):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not {type(num_classes).__name__}")
    if not isinstance(tensor, Tensor) or tensor.dtype is not dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    data = tensor._host()
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _class_mask(tensor, num_classes, tensor.ndim).to(dtypes.int64)


def pad(input: Any, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Any:  # noqa: A002
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists ``(left, right)`` for the last dim
    first, then the one before, as PyTorch. ``mode='constant'`` fills with ``value`` (negative
    sizes crop); ``'reflect'``, ``'replicate'`` and ``'circular'`` pad 1 to 3 trailing dims of a
    batched or unbatched input, as PyTorch.

    >>> import tidu
    >>> tidu.nn.functional.pad(tidu.tensor([[1.0, 2.0]]), (1, 0, 0, 1), value=9.0)
    tensor([[9., 1., 2.],
            [9., 9., 9.]])
    >>> tidu.nn.functional.pad(tidu.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    config = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        config[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    if mode == "constant":
        return _pad_constant(input, config, value)
    if mode not in _EDGE_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if len(pad) // 2 not in (input.ndim - 1, input.ndim - 2) or not 1 <= len(pad) // 2 <= 3:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor "
                                  f"(mode {mode!r} pads 1 to 3 trailing dims of a batched or unbatched input)")
    if autocast.ON and (mode == "replicate" or mode == "reflect" and len(pad) <= 4):  # PyTorch's float32 list
        return autocast.run(autocast.widened, globals()["pad"], (input, pad, mode, value), {})
    if mode in ("replicate", "circular") and any(lo < 0 or hi < 0 for lo, hi in config):
        # a negative pad crops first, as PyTorch's; the rest pads what is left
        crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(config, input.shape))
        if any(c.stop < c.start for c in crop):
            raise RuntimeError(f"pad: the negative padding {tuple(pad)} crops more than the input's size "
                               f"{list(input.shape)}")
        input = input[crop]  # noqa: A001
        config = [(max(lo, 0), max(hi, 0)) for lo, hi in config]
    for d, (lo, hi) in enumerate(config):
        n = input.shape[d]
        if lo < 0 or hi < 0:
            raise NotImplementedError(f"pad: negative padding {(lo, hi)} is not supported with mode {mode!r}")
        if mode == "reflect" and (lo >= n or hi >= n) and (lo or hi):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if (lo or hi) and n == 0:
            raise RuntimeError(f"pad: cannot pad dimension {d} of size 0 with mode {mode!r}")
    out = input
    for d in reversed(range(input.ndim)):
        lo, hi = config[d]
        if lo or hi:
            out = ops.cat(_EDGE_MODES[mode](out, d, lo, hi, out.shape[d]), dim=d)
    return out


def _take(x: Any, dim: int, start: int, stop: int) -> Any:
    return x[(slice(None),) * dim + (slice(start, stop),)]


def _edge_replicate(x: Any, d: int, lo: int, hi: int, n: int) -> list:
    first, last = _take(x, d, 0, 1), _take(x, d, n - 1, n)
    size = list(x.shape)
    return [first.expand(*size[:d], lo, *size[d + 1:]), x, last.expand(*size[:d], hi, *size[d + 1:])]


def _edge_reflect(x: Any, d: int, lo: int, hi: int, n: int) -> list:
    left = [_take(x, d, i, i + 1) for i in range(lo, 0, -1)]
    right = [_take(x, d, i, i + 1) for i in range(n - 2, n - 2 - hi, -1)]
    return [*left, x, *right]


def _edge_circular(x: Any, d: int, lo: int, hi: int, n: int) -> list:
    return [_take(x, d, n - lo, n), x, _take(x, d, 0, hi)]


_EDGE_MODES = {"reflect": _edge_reflect, "replicate": _edge_replicate, "circular": _edge_circular}


def _pad_constant(input: Any, config: list, value: float | None) -> Any:  # noqa: A002
    for d, (lo, hi) in enumerate(config):
        if input.shape[d] + lo + hi < 0:
            raise RuntimeError(f"pad: the padded size of dimension {d} would be negative "
                               f"(size {input.shape[d]}, padding {(lo, hi)})")
    crops = tuple(slice(max(-lo, 0), input.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(config))
    if any(lo < 0 or hi < 0 for lo, hi in config):
        input = input[crops]
    grow = tuple((max(lo, 0), max(hi, 0), 0) for lo, hi in config)
    if all(g == (0, 0, 0) for g in grow):
        return input
    out = bind(pad_p, input, padding_config=grow)
    if value:
        if not input.dtype.is_floating_point:  # the fill in the input's dtype, as PyTorch casts it
            value = bool(value) if input.dtype is dtypes.bool_ else int(value)
        inside = np.pad(np.ones(tuple(input.shape), bool), [(lo, hi) for lo, hi, _ in grow])
        out = ops.where(placed(inside, None, input.device), out, value)
    return out


# --- losses --------------------------------------------------------------------------------
@autocast_policy("fp32")
def mse_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
             reduction: str = "mean", weight: Any = None) -> Any:
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``.

    >>> import tidu
    >>> tidu.nn.functional.mse_loss(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 4.0]))
    tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target)
    dt = dtypes.result_type(input, target)
    if not dt.is_floating_point:  # after the shapes' check, as PyTorch's
        ops.broadcast_shapes(tuple(input.shape), tuple(target.shape))
        raise dtypes.not_implemented("mse_cpu", dt)
    diff = input - target
    return _weighted(diff * diff, weight, reduction)


@autocast_policy("fp32")
def l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
            reduction: str = "mean", weight: Any = None) -> Any:
    """Mean absolute error ``|input - target|`` (gradient 0 where they are equal).

    >>> import tidu
    >>> tidu.nn.functional.l1_loss(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 4.0]), reduction="sum")
    tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target)
    diff = input - target
    return _weighted(ops.abs(diff), weight, reduction)


def _weighted(loss: Any, weight: Any, reduction: str) -> Any:
    """``loss`` (elementwise) times ``weight`` (of ``loss``'s shape) and reduced; ``mean`` divides
    by the weights' sum, as PyTorch's weighted ``mse_loss`` and ``l1_loss``."""
    if weight is None:
        return _reduce(loss, reduction)
    _same_size_weight(loss, weight)
    if reduction == "mean":
        return (loss * weight).sum() / weight.sum()
    return _reduce(loss * weight, reduction)


def _same_size_weight(loss: Any, weight: Any) -> None:
    if tuple(weight.shape) != tuple(loss.shape):
        raise ValueError("Weights and input must have the same size.")


def _warn_size(input: Any, target: Any) -> None:  # noqa: A002
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


# a CUDA target array -> ((its version, classes, ignore_index), any ignored) when it last passed the check
_CHECKED_TARGETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _check_targets(target: Tensor, num: int, ignore_index: int) -> bool:
    """Raise PyTorch's error for a class index outside ``[0, num)`` that is not ``ignore_index``;
    return whether any target is ``ignore_index``.

    Checked on the host, also for CUDA (PyTorch asserts on the device). A CUDA target is copied
    (a synchronization) only on its first check at each version: a training loop passing the same
    target tensor every step checks it once. Storage shared with another library
    (``__cuda_array_interface__``) may change without a version: it is checked every time."""
    on_device = target._device is not CPU
    stamp = (target._version.value, num, ignore_index)
    if on_device:
        known = _CHECKED_TARGETS.get(target._buf)
        if known is not None and known[0] == stamp and not reads_exposed([target._buf]):
            return known[1]
    t = target._host()
    ignored = t == ignore_index
    bad = t[~ignored & ((t < 0) | (t >= num))]
    if bad.size:
        raise IndexError(f"Target {bad.flat[0]} is out of bounds.")
    any_ignored = bool(ignored.any())
    if on_device:
        _CHECKED_TARGETS[target._buf] = (stamp, any_ignored)
    return any_ignored


def _nll(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str, name: str) -> Any:
    """Negative log likelihood of integer ``target`` under ``logp`` of shape ``(N, C, *)`` or ``(C,)``."""
    if not isinstance(target, Tensor | Var):
        raise TypeError(f"{name}(): argument 'target' must be Tensor, not {type(target).__name__}")
    if target.dtype is dtypes.uint8:
        target = target.to(dtypes.int64)  # PyTorch takes byte class indices too
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {dtypes.TORCH_NAMES[target.dtype.name]} "
                           f"({name} takes int64 class indices)")
    class_dim = 1 if logp.ndim >= 2 else 0
    if logp.ndim == 0:
        raise ValueError(f"{name}: expected input of 1 or more dimensions (got 0)")
    if logp.ndim == 1 and tuple(target.shape) == (1,):
        target = target.reshape(())  # PyTorch takes a one-element target for one sample's scores
    _check_target_shape(tuple(logp.shape), tuple(target.shape))
    num = logp.shape[class_dim]
    if weight is not None and tuple(weight.shape) != (num,):
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {num} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")
    _same_dtype(logp, weight)
    # a symbolic target (``vmap``-ed: per-example gradients) has no values to check here: it takes the
    # masked path, where ``ignore_index`` needs none, and the gather checks the bounds on the values
    if isinstance(target, Tensor) and not _check_targets(target, num, ignore_index) and weight is None \
            and target.numel():
        # every target counts with weight 1: the same sums as below, in one primitive (two dimensions,
        # a reduction) or four, not thirteen
        if logp.ndim == 2 and reduction != "none" and logp.dtype.is_floating_point:
            return bind(gather_prims.nll_sum, logp, target, scale=-1.0 / target.numel() if reduction == "mean" else -1.0)
        picked = ops.gather(logp, class_dim, target.unsqueeze(class_dim))
        if reduction == "mean":
            return picked.sum() / -target.numel()
        if reduction == "sum":
            return -picked.sum()
        return -picked.squeeze(class_dim)
    ignored = target == ignore_index
    safe = ops.where(ignored, 0, target)  # in range for the gather; masked out below
    picked = ops.gather(logp, class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim)
    valid = (~ignored).to(logp.dtype)
    w = valid if weight is None else ops.index_select(weight.to(logp.dtype), 0, safe.reshape(-1)).reshape(
        tuple(safe.shape)) * valid
    loss = -(picked * w)
    if reduction == "mean":
        return _mean_over(loss.sum(), w.sum())
    return _reduce(loss, reduction)


def _mean_over(total: Any, count: Any) -> Any:
    """``total / count``; NaN where ``count`` is 0 (every target ignored), as PyTorch's, and then
    with a zero gradient (PyTorch's), not the NaN of ``0 / 0``'s derivative."""
    empty = count == 0
    return ops.where(empty, float("nan"), total / ops.where(empty, 1.0, count))


def _check_target_shape(input: tuple[int, ...], target: tuple[int, ...]) -> None:  # noqa: A002
    """PyTorch's errors, in its order, for a class-index target that does not fit scores of
    shape ``input``: ``(C,)`` takes ``()``, ``(N, C, *rest)`` takes ``(N, *rest)``."""
    expected = (input[0], *input[2:]) if len(input) >= 2 else ()
    if target == expected:
        return
    if len(input) == 1:
        if len(target) >= 2:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target[0]}")
    if not target or target[0] != input[0]:
        raise ValueError(f"Expected input batch_size ({input[0]}) to match target batch_size ({target[0] if target else 0}).")
    if len(input) == 2:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if len(input) == 4:  # PyTorch's two-dimensional kernel's own checks
        if len(target) != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                               f"{len(target)}")
        raise RuntimeError(f"size mismatch (got input: {list(input)} , target: {list(target)}")
    raise RuntimeError(f"Expected target size {list(expected)}, got {list(target)}")


@autocast_policy("fp32")
def nll_loss(input: Any, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Any:
    """Negative log likelihood: ``-weight[t] * input[n, t]`` for class indices ``t``; ``mean``
    divides by the summed weights of the targets that are not ``ignore_index``.

    >>> import tidu
    >>> logp = tidu.tensor([[-0.5, -1.0], [-2.0, -0.1]])
    >>> tidu.nn.functional.nll_loss(logp, tidu.tensor([0, 1]))
    tensor(0.3000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _nll(input, target, weight, ignore_index, reduction, "nll_loss")


@autocast_policy("fp32")
def cross_entropy(input: Any, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Any:
    """Cross entropy of unnormalized logits ``(N, C, *)`` (or ``(C,)``) against class indices
    ``(N, *)`` or class probabilities (same shape as ``input``), as PyTorch: ``log_softmax`` then
    ``nll_loss``, with ``weight``, ``ignore_index`` and ``label_smoothing``.

    >>> import tidu
    >>> logits = tidu.tensor([[2.0, 0.0, -1.0]], requires_grad=True)
    >>> loss = tidu.nn.functional.cross_entropy(logits, tidu.tensor([0]))
    >>> loss
    tensor(0.1698, grad_fn=<nll_sum>)
    >>> loss.backward()
    >>> logits.grad
    tensor([[-0.1562,  0.1142,  0.0420]])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.ndim == 0:
        raise ValueError("cross_entropy: expected input of 1 or more dimensions (got 0)")
    class_dim = 1 if input.ndim >= 2 else 0
    num = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    if isinstance(target, Tensor | Var) and target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / num
        terms = logp * target
        if weight is not None:
            terms = terms * _along(weight, input.ndim, class_dim)
        loss = -terms.sum(dim=class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // num) if num else loss.sum() * float("nan")
        return _reduce(loss, reduction)
    nll = _nll(logp, target, weight, ignore_index, reduction, "cross_entropy")
    if label_smoothing == 0:
        return nll
    valid = (target != ignore_index).to(logp.dtype)
    terms = logp if weight is None else logp * _along(weight.to(logp.dtype), logp.ndim, class_dim)
    smooth = -terms.sum(dim=class_dim) * valid
    if reduction == "mean":
        if weight is None:
            smooth = _mean_over(smooth.sum(), valid.sum())
        else:
            picked = ops.where(_class_mask(target, num, class_dim), _along(weight, logp.ndim, class_dim), 0.0)
            smooth = _mean_over(smooth.sum(), (picked.sum(dim=class_dim) * valid).sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / num)


@autocast_policy("fp32")
@computed_in_float32
def binary_cross_entropy(input: Any, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
                         reduce: Any = None, reduction: str = "mean") -> Any:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` (logs clamped at -100, as PyTorch).

    >>> import tidu
    >>> tidu.nn.functional.binary_cross_entropy(tidu.tensor([0.5, 0.9]), tidu.tensor([1.0, 1.0]))
    tensor(0.3993)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is "
            "deprecated. Please ensure they have the same size."
        )
    if isinstance(input, Tensor):
        data = input.detach()._values()
        if data.size and not ((data >= 0) & (data <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    if isinstance(target, Tensor):
        data = target.detach()._values()
        if data.size and not ((data >= 0) & (data <= 1)).all():
            raise RuntimeError("all elements of target should be between 0 and 1")
    _same_dtype(input, target, found_first=True)
    (weight,) = _in_dtype_of(input, weight)
    loss = _bce_terms(input, target)
    return _reduce(loss if weight is None else loss * weight, reduction)


_BCE_EPS = float(np.float32(1e-12))  # PyTorch's floor on x (1 - x) in binary_cross_entropy's derivative


def _bce_terms(x: Any, t: Any) -> Any:
    """``-(t log x + (1 - t) log(1 - x))`` with the logs clamped at -100 (the value), and PyTorch's
    derivatives: ``(x - t) / max(x (1 - x), 1e-12)`` in ``x`` (finite at 0 and 1, where the clamped
    logs' derivative is NaN), the clamped logs' difference in ``t``. The derivative in ``x`` is
    that of ``-(t A(x) + (1 - t) B(x))`` with ``A, B = log x, log(1 - x)`` and, where the floor
    applies, the quadratics whose derivatives are ``(1 - x) / eps`` and ``-x / eps``; its own
    derivatives are PyTorch's second derivatives."""
    x_, t_ = x.detach(), t.detach()
    log_x = ops.clamp(ops.log(x_), min=-100.0)
    log_1mx = ops.clamp(ops.log(1 - x_), min=-100.0)
    value = -(t * log_x + (1 - t) * log_1mx)  # (its derivative in ``t`` is PyTorch's)
    if not (x.requires_grad or isinstance(x, Var)):
        return value
    floored = x_ * (1 - x_) <= _BCE_EPS
    inner = ops.where(floored, 0.5, x)
    a = ops.where(floored, (x - x * x / 2) / _BCE_EPS, ops.log(inner))
    b = ops.where(floored, -x * x / (2 * _BCE_EPS), ops.log1p(-inner))
    shaped = -(t * a + (1 - t) * b)
    # ``shaped`` carries the derivatives in ``x``; in ``t`` its own is taken back out (``value``'s stays)
    return value + (shaped - shaped.detach()) + (t - t_) * (a - b).detach()


def _softplus_neg(x: Any) -> Any:
    """``log(1 + exp(-x))`` without overflow."""
    abs_x = ops.where(x < 0, -x, x)
    return ops.log1p(ops.exp(-abs_x)) + ops.where(x < 0, -x, 0.0)


@autocast_policy("fp32")
def binary_cross_entropy_with_logits(input: Any, target: Any, weight: Any = None,  # noqa: A002
                                     size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Any:
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits; ``pos_weight``
    weighs the positive term (broadcast along the last dim).

    >>> import tidu
    >>> tidu.nn.functional.binary_cross_entropy_with_logits(tidu.tensor([0.0, 2.0]), tidu.tensor([1.0, 0.0]))
    tensor(1.4100)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if isinstance(target, Tensor | Var) and not target.dtype.is_floating_point:
        raise RuntimeError(f"result type {dtypes.TORCH_NAMES[input.dtype.name]} can't be cast to the desired output "
                           f"type {dtypes.TORCH_NAMES[target.dtype.name]}")
    weight, pos_weight = _in_dtype_of(input, weight, pos_weight)
    softplus = _softplus_neg(input)
    if pos_weight is None:
        loss = (1 - target) * input + softplus
    else:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus
    return _reduce(loss if weight is None else loss * weight, reduction)


def _in_dtype_of(input: Any, *others: Any) -> list[Any]:  # noqa: A002
    """``others`` (tensors or ``None``) in ``input``'s dtype, as PyTorch's losses take their
    weights and some targets: a float64 weight does not make a float32 loss float64."""
    return [o.to(input.dtype) if isinstance(o, Tensor) and o.dtype is not input.dtype else o for o in others]


def _same_dtype(expected: Any, found: Any, found_first: bool = False) -> None:
    """PyTorch's kernels' error for a weight (or target) of another dtype than the input's."""
    if isinstance(found, Tensor) and isinstance(expected, Tensor) and found.dtype is not expected.dtype:
        names = dtypes.TORCH_NAMES[expected.dtype.name], dtypes.TORCH_NAMES[found.dtype.name]
        if found_first:
            raise RuntimeError(f"Found dtype {names[1]} but expected {names[0]}")
        raise RuntimeError(f"expected scalar type {names[0]} but found {names[1]}")


def _check_float(input: Any, target: Any, kernel: str) -> None:  # noqa: A002
    """PyTorch's ``kernel`` error for operands whose common type is not floating-point."""
    dt = dtypes.result_type(input, target)
    if not dt.is_floating_point:
        raise dtypes.not_implemented(kernel, dt)


def _quadratic_then_linear(diff: Any, width: float, slope: float) -> Any:
    """``slope * |diff| - slope * width / 2`` outside ``(-width, width)``, the quadratic
    ``slope * diff**2 / (2 * width)`` inside: Huber's and smooth L1's shape."""
    size = ops.abs(diff)
    return ops.where(size < width, diff * diff * (0.5 * slope / width), (size - 0.5 * width) * slope)


@autocast_policy("fp32")
def smooth_l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Any:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``, for ``d = input - target``
    (``beta=0``: L1).

    >>> import tidu
    >>> tidu.nn.functional.smooth_l1_loss(tidu.tensor([0.5, 3.0]), tidu.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target)
    _check_float(input, target, "smooth_l1_cpu")
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = input - target
    return _reduce(ops.abs(diff) if beta == 0 else _quadratic_then_linear(diff, beta, 1.0), reduction)


@autocast_policy("fp32")
def huber_loss(input: Any, target: Any, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Any = None) -> Any:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``, for ``d = input - target``.

    >>> import tidu
    >>> tidu.nn.functional.huber_loss(tidu.tensor([0.5, 3.0]), tidu.tensor([0.0, 0.0]), delta=2.0)
    tensor(2.0625)
    """
    _warn_size(input, target)
    _check_float(input, target, "huber_cpu")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    (target,) = _in_dtype_of(input, target)
    loss = _quadratic_then_linear(input - target, delta, delta)
    if weight is not None:
        _same_size_weight(loss, weight)
    return _reduce(loss if weight is None else loss * weight, reduction)


@autocast_policy("fp32")
def kl_div(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Any:
    """Kullback-Leibler divergence ``target * (log(target) - input)`` of log-probabilities ``input``
    (``log_target``: ``target`` holds log-probabilities too); ``'batchmean'`` divides the sum by
    the batch size.

    >>> import tidu
    >>> logp = tidu.tensor([[0.5, 0.5]]).log()
    >>> tidu.nn.functional.kl_div(logp, tidu.tensor([[0.25, 0.75]]), reduction="batchmean")
    tensor(0.1308)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if not dtypes.result_type(input, target).is_floating_point:
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:  # xlogy: 0 * log(0) counts as 0
        zero = target == 0
        loss = ops.where(zero, 0.0, target * ops.log(ops.where(zero, 1.0, target))) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def soft_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
                     reduction: str = "mean") -> Any:
    """Two-class logistic loss ``log(1 + exp(-target * input))`` for targets of +-1 (computed
    without overflow).

    >>> import tidu
    >>> tidu.nn.functional.soft_margin_loss(tidu.tensor([0.0, 2.0]), tidu.tensor([1.0, -1.0]), reduction="none")
    tensor([0.6931, 2.1269])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]}")
    (target,) = _in_dtype_of(input, target)
    loss = _softplus_neg(input * target)
    if tuple(loss.shape) != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                           f"{list(loss.shape)}")
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, size_average: Any = None,
                        reduce: Any = None, reduction: str = "mean") -> Any:
    """``max(0, -target * (input1 - input2) + margin)``: ``target = 1`` asks ``input1`` to rank higher.

    >>> import tidu
    >>> tidu.nn.functional.margin_ranking_loss(tidu.tensor([1.0, 0.0]), tidu.tensor([0.0, 0.5]),
    ...                                        tidu.tensor([1.0, 1.0]), margin=0.5, reduction="none")
    tensor([0., 1.])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce(ops.clamp(-target * (input1 - input2) + margin, min=0), reduction)


@autocast_policy("fp32")
def hinge_embedding_loss(input: Any, target: Any, margin: float = 1.0, size_average: Any = None,  # noqa: A002
                         reduce: Any = None, reduction: str = "mean") -> Any:
    """``input`` where ``target = 1``, ``max(0, margin - input)`` where ``target = -1``.

    >>> import tidu
    >>> tidu.nn.functional.hinge_embedding_loss(tidu.tensor([0.3, 0.3]), tidu.tensor([1.0, -1.0]), reduction="none")
    tensor([0.3000, 0.7000])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    below_margin = ops.clamp(margin - input, min=0)
    loss = ops.where(target != 1, below_margin, 0.0) + ops.where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float = 0.0, size_average: Any = None,
                          reduce: Any = None, reduction: str = "mean") -> Any:
    """``1 - cos(input1, input2)`` where ``target = 1``, ``max(0, cos - margin)`` where ``target = -1``;
    rows ``(N, D)`` with targets ``(N,)``, or one pair ``(D,)`` with a 0-d target.

    >>> import tidu
    >>> tidu.nn.functional.cosine_embedding_loss(tidu.tensor([[1.0, 0.0], [1.0, 1.0]]),
    ...     tidu.tensor([[0.0, 1.0], [1.0, 0.0]]), tidu.tensor([1.0, -1.0]), reduction="none")
    tensor([1.0000, 0.7071])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    expected = target.ndim + 1
    if input1.ndim != expected or input2.ndim != expected:
        raise RuntimeError(f"{target.ndim}D target tensor expects {expected}D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = target.ndim
    eps = 1e-12
    dot = (input1 * input2).sum(dim)
    cos = dot / ops.sqrt(((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps))
    loss = ops.where(target == 1, 1 - cos, 0.0) + ops.where(target == -1, ops.clamp(cos - margin, min=0), 0.0)
    return _reduce(loss, reduction)


@computed_in_float32
def pairwise_distance(x1: Any, x2: Any, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Any:
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim (the operands broadcast together).

    >>> import tidu
    >>> tidu.nn.functional.pairwise_distance(tidu.tensor([[0.0, 0.0]]), tidu.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)


@autocast_policy("fp32")
def triplet_margin_loss(anchor: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Any:
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with ``pairwise_distance``;
    ``swap`` takes the smaller of ``d(anchor, negative)`` and ``d(positive, negative)``.

    >>> import tidu
    >>> a, pos, neg = tidu.tensor([[0.0, 0.0]]), tidu.tensor([[1.0, 0.0]]), tidu.tensor([[0.0, 1.5]])
    >>> tidu.nn.functional.triplet_margin_loss(a, pos, neg, eps=0.0)
    tensor(0.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _triplet(anchor, positive, negative, lambda x, y: pairwise_distance(x, y, p, eps), margin, swap, reduction,
                    margin_last=True)



def triplet_margin_with_distance_loss(anchor: Any, positive: Any, negative: Any, *, distance_function: Any = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Any:
    """``max(0, d(anchor, positive) - d(anchor, negative) + margin)`` with any distance
    ``distance_function(x, y)`` (default ``pairwise_distance``); ``swap`` takes the smaller of
    ``d(anchor, negative)`` and ``d(positive, negative)``.

    >>> import tidu
    >>> a, pos, neg = tidu.tensor([[0.0, 0.0]]), tidu.tensor([[1.0, 0.0]]), tidu.tensor([[0.0, 1.5]])
    >>> l1 = lambda x, y: (x - y).abs().sum(-1)
    >>> tidu.nn.functional.triplet_margin_with_distance_loss(a, pos, neg, distance_function=l1, margin=2.0)
    tensor(1.5000)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    distance = pairwise_distance if distance_function is None else distance_function
    return _triplet(anchor, positive, negative, distance, margin, swap, reduction)


def _triplet(anchor: Any, positive: Any, negative: Any, distance: Any, margin: float, swap: bool, reduction: str,
             margin_last: bool = False) -> Any:
    """The triplet losses' common part; ``margin_last``: ``d_pos - d_neg + margin``, the order
    PyTorch's ``triplet_margin_loss`` adds in (``margin + d_pos - d_neg`` otherwise)."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = ops.minimum(d_neg, distance(positive, negative))
    margins = d_pos - d_neg + margin if margin_last else margin + d_pos - d_neg
    return _reduce(ops.clamp(margins, min=0), reduction)

def _check_reduction(reduction: str) -> None:
    """The check of the losses whose error reads ``'<reduction> is not valid'``."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not valid")


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False, eps: float = 1e-6,  # noqa: A002
                      reduction: str = "mean") -> Any:
    """Negative log likelihood of ``target`` under normals of mean ``input`` and variance ``var``:
    ``0.5 * (log(var) + (input - target)**2 / var)`` (``+ 0.5 * log(2 pi)`` when ``full``). ``var``
    has ``input``'s shape, or lacks (or has 1 for) its last dim, or is a number; it is clamped to
    ``eps`` without that clamp being differentiated.

    >>> import tidu
    >>> tidu.nn.functional.gaussian_nll_loss(tidu.tensor([0.0, 1.0]), tidu.tensor([1.0, 1.0]), tidu.tensor([1.0, 2.0]))
    tensor(0.4233)
    """
    if not isinstance(var, Tensor):
        var = ops.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.ndim and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    _check_reduction(reduction)
    if bool((var.detach() < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var + (ops.clamp(var.detach(), min=eps) - var.detach())
    diff = input - target
    loss = (ops.log(var) + diff * diff / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


@autocast_policy("fp32")
def poisson_nll_loss(input: Any, target: Any, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> Any:
    """Negative log likelihood of ``target`` under Poissons of rate ``exp(input)`` (``log_input``)
    or ``input``: ``exp(input) - target * input`` or ``input - target * log(input + eps)``; ``full``
    adds Stirling's ``target * log(target) - target + 0.5 * log(2 pi target)`` where ``target > 1``.

    >>> import tidu
    >>> tidu.nn.functional.poisson_nll_loss(tidu.tensor([0.0, 1.0]), tidu.tensor([1.0, 3.0]), reduction="none")
    tensor([ 1.0000, -0.2817])
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    loss = ops.exp(input) - target * input if log_input else input - target * ops.log(input + eps)
    if full:
        counted = target > 1
        t = ops.where(counted, target, 2.0)  # in the logs' domain; masked out below
        stirling = t * ops.log(t) - t + 0.5 * ops.log(2 * math.pi * t)
        loss = loss + ops.where(counted, stirling, 0.0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input: Any, target: Any, weight: Any = None, size_average: Any = None,  # noqa: A002
                                reduce: Any = None, reduction: str = "mean") -> Any:
    """Binary logistic loss of each class (``target`` 0 or 1 along the last dim), optionally
    weighted, averaged over the classes.

    >>> import tidu
    >>> tidu.nn.functional.multilabel_soft_margin_loss(tidu.tensor([[0.0, 2.0]]), tidu.tensor([[1.0, 0.0]]))
    tensor(1.4100)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[-1]
    _check_reduction(reduction)
    return _reduce(loss, reduction)


def _long_target(target: Any) -> None:
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected scalar type Long but found {dtypes.TORCH_NAMES[target.dtype.name]}")


@autocast_policy("fp32")
def multi_margin_loss(input: Any, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,  # noqa: A002
                      size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Any:
    """Multi-class hinge loss of (N, C) or (C,) scores and class indices: the sum over the other
    classes ``i`` of ``weight[y] * max(0, margin - x[y] + x[i]) ** p`` (``p`` 1 or 2), over ``C``.

    >>> import tidu
    >>> tidu.nn.functional.multi_margin_loss(tidu.tensor([[0.1, 0.8, 0.4]]), tidu.tensor([1]))
    tensor(0.3000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.ndim not in (1, 2) or input.numel() == 0 and input.ndim != 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    _long_target(target)
    rows = input.reshape(-1, input.shape[-1])
    n, classes = rows.shape
    if target.numel() != n or target.ndim > 1:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got {list(weight.shape)}")
    _same_dtype(input, weight)
    _check_targets_in(target, classes, "target out of range")
    labels = target.reshape(n, 1)
    margins = relu(margin - ops.gather(rows, 1, labels) + rows)
    terms = ops.where(_class_mask(labels.squeeze(1), classes, 1), 0.0, margins if p == 1 else margins * margins)
    if weight is not None:
        terms = terms * weight[labels]
    loss = terms.sum(1) / classes
    return _reduce(loss.reshape(target.shape) if input.ndim == 1 else loss, reduction)


def _check_targets_in(target: Any, classes: int, message: str) -> None:
    """``target`` (host-checked, as PyTorch's CPU kernels) in ``[0, classes)``, or ``RuntimeError(message)``."""
    data = target._host()
    if data.size and (data.min() < 0 or data.max() >= classes):
        raise RuntimeError(message)


@autocast_policy("fp32")
def multilabel_margin_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
                           reduction: str = "mean") -> Any:
    """Multi-label hinge loss of (N, C) or (C,) scores: ``target`` lists each sample's classes,
    ended by the first ``-1``; the sum over listed ``j`` and unlisted ``i`` of
    ``max(0, 1 - (x[j] - x[i]))``, over ``C``.

    >>> import tidu
    >>> tidu.nn.functional.multilabel_margin_loss(tidu.tensor([[0.1, 0.2, 0.4, 0.8]]), tidu.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _long_target(target)
    if tuple(target.shape) != tuple(input.shape) or input.ndim not in (1, 2):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    rows = input.reshape(-1, input.shape[-1])
    classes = rows.shape[1]
    labels = target._host().reshape(rows.shape)
    listed = np.cumprod(labels != -1, axis=1).astype(bool)  # the entries before the first -1
    if (listed & ((labels < 0) | (labels >= classes))).any():
        raise RuntimeError("argument #2 'target' is out of range")
    picked = np.where(listed, labels, 0)
    is_target = np.zeros(rows.shape, bool)
    is_target[np.broadcast_to(np.arange(rows.shape[0])[:, None], picked.shape)[listed], picked[listed]] = True
    scores = ops.gather(rows, 1, placed(picked, None, input.device)).unsqueeze(2)  # (N, C listed, 1)
    pairs = relu(1.0 - scores + rows.unsqueeze(1))  # (N, C listed, C others)
    keep = placed(listed[:, :, None] & ~is_target[:, None, :], None, input.device)
    loss = ops.where(keep, pairs, 0.0).sum((1, 2)) / classes
    return _reduce(loss.reshape(()) if input.ndim == 1 else loss, reduction)


def gumbel_softmax(logits: Any, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Any:
    """A sample of the Gumbel-softmax distribution: ``softmax((logits + g) / tau)`` with ``g``
    standard Gumbel noise (tidu's RNG). With ``hard``, the one-hot of its argmax, whose gradient
    is the soft sample's (straight-through).

    >>> import tidu
    >>> y = tidu.nn.functional.gumbel_softmax(tidu.zeros(4, 3), hard=True)
    >>> y.sum(-1).tolist(), sorted(set(y.flatten().tolist()))
    ([1.0, 1.0, 1.0, 1.0], [0.0, 1.0])
    """
    exponential = -ops.log1p(-ops.rand_like(logits.detach()))
    soft = softmax((logits - ops.log(exponential)) / tau, dim=dim)
    if not hard:
        return soft
    index = soft.detach().argmax(dim, keepdim=True)
    one_hot = ops.zeros_like(soft.detach()).scatter(dim, index, 1.0)
    return one_hot - soft.detach() + soft


# Attention lives in its own file; it uses linear, softmax and dropout from this one.
from ._attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402
from ._ctc import ctc_loss  # noqa: E402
from ._grid_sample import affine_grid, grid_sample  # noqa: E402


def _pair(value: Any) -> tuple[int, int]:
    return tuple(int(v) for v in _two(value))


def _block_kernel(channels: int, kernel: tuple[int, int], like: Any) -> Any:
    """One-hot kernels, one per window position and channel (C * kH * kW, 1, kH, kW): a grouped
    convolution with them lists each window's elements, channel by channel (PyTorch's im2col order)."""
    k = kernel[0] * kernel[1]
    eye = np.tile(np.eye(k).reshape(k, 1, *kernel), (channels, 1, 1, 1))
    return ops.tensor(eye, dtype=like.dtype, device=like.device)


def _blocks(spatial: Any, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> list[int]:
    return [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(spatial, kernel, dilation, padding, stride)]


def unfold(input: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:  # noqa: A002
    """The sliding ``kernel_size`` windows of a batched (N, C, H, W) or unbatched input as columns:
    (N, C * kH * kW, L), ``L`` windows in row-major order (im2col). A grouped convolution with
    one-hot kernels, so its gradient (``fold``) comes from the convolution's rules.

    >>> import tidu
    >>> tidu.nn.functional.unfold(tidu.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    _float_input(input, "im2col_out_cpu")
    kernel, dilation, padding, stride = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    x = input.unsqueeze(0) if input.ndim == 3 else input
    sizes = _blocks(x.shape[2:], kernel, dilation, padding, stride)
    if min(sizes) < 1:
        raise RuntimeError(f"Given input with spatial size {tuple(x.shape[2:])}, kernel_size={kernel}, dilation="
                           f"{dilation}, padding={padding}, calculated shape of the array of sliding blocks as "
                           f"({sizes[0]}, {sizes[1]}), but its components must be at least one.")
    c = x.shape[1]
    cols = conv2d(x, _block_kernel(c, kernel, x), None, stride, padding, dilation, c)
    out = cols.reshape(x.shape[0], c * kernel[0] * kernel[1], sizes[0] * sizes[1])
    return out.squeeze(0) if input.ndim == 3 else out


def fold(input: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
         stride: Any = 1) -> Any:
    """The transpose of ``unfold``: columns (N, C * kH * kW, L) summed back into an (N, C, *output_size)
    image, overlapping windows adding up (col2im).

    >>> import tidu
    >>> F = tidu.nn.functional
    >>> F.fold(F.unfold(tidu.ones(1, 1, 3, 3), 2), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    size, kernel = _pair(output_size), _pair(kernel_size)
    dilation, padding, stride = _pair(dilation), _pair(padding), _pair(stride)
    x = input.unsqueeze(0) if input.ndim == 2 else input
    k = kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={x.shape[1]} and kernel_size={kernel}.")
    blocks = _blocks(size, kernel, dilation, padding, stride)
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, padding="
                           f"{padding}, stride={stride}, expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    c = x.shape[1] // k
    made = [(b - 1) * s - 2 * p + d * (kk - 1) + 1 for b, s, p, d, kk in zip(blocks, stride, padding, dilation, kernel)]
    cols = x.reshape(x.shape[0], x.shape[1], *blocks)
    extra = tuple(want - got for want, got in zip(size, made))  # less than the stride: an output padding
    image = conv_transpose2d(cols, _block_kernel(c, kernel, x), None, stride, padding, extra, c, dilation)
    return image.squeeze(0) if input.ndim == 2 else image


# --- PyTorch's in-place and older names of the functions above ----------------------------------
def relu_(input: Any) -> Any:  # noqa: A002
    """``relu(input, inplace=True)``.

    >>> import tidu
    >>> x = tidu.tensor([-1.0, 2.0])
    >>> _ = tidu.nn.functional.relu_(x); x
    tensor([0., 2.])
    """
    return relu(input, inplace=True)


def elu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``elu(input, alpha, inplace=True)``."""
    return elu(input, alpha, inplace=True)


def leaky_relu_(input: Any, negative_slope: float = 0.01) -> Any:  # noqa: A002
    """``leaky_relu(input, negative_slope, inplace=True)``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:  # noqa: A002
    """``hardtanh(input, min_val, max_val, inplace=True)``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def celu_(input: Any, alpha: float = 1.0) -> Any:  # noqa: A002
    """``celu(input, alpha, inplace=True)``."""
    return celu(input, alpha, inplace=True)


def selu_(input: Any) -> Any:  # noqa: A002
    """``selu(input, inplace=True)``."""
    return selu(input, inplace=True)


_threshold = threshold


def threshold_(input: Any, threshold: float, value: float) -> Any:  # noqa: A002
    """``threshold(input, threshold, value, inplace=True)``."""
    return _threshold(input, threshold, value, inplace=True)


def _with_indices(pool: Any, name: str) -> Any:
    at = list(inspect.signature(pool).parameters).index("return_indices") - 1  # its place among ``args``

    def fn(input: Any, *args: Any, return_indices: bool = True, **kwargs: Any) -> Any:  # noqa: A002
        if len(args) > at:  # given by position, as PyTorch's signature allows: always True here
            args = args[:at] + args[at + 1:]
        return pool(input, *args, return_indices=True, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{pool.__name__}(..., return_indices=True)``: ``(output, indices)``."
    return fn


max_pool1d_with_indices = _with_indices(max_pool1d, "max_pool1d_with_indices")
max_pool2d_with_indices = _with_indices(max_pool2d, "max_pool2d_with_indices")
max_pool3d_with_indices = _with_indices(max_pool3d, "max_pool3d_with_indices")
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d, "adaptive_max_pool1d_with_indices")
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d, "adaptive_max_pool2d_with_indices")
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d, "adaptive_max_pool3d_with_indices")


def upsample(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
             align_corners: Any = None) -> Any:
    """The older name of ``interpolate`` (it warns, as PyTorch's does).

    >>> import warnings, tidu
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.nn.functional.upsample(tidu.ones(1, 1, 1), scale_factor=2).shape
    tidu.Size([1, 1, 2])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """The older ``interpolate(..., mode='nearest')`` (it warns, as PyTorch's does)."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Any, size: Any = None, scale_factor: Any = None) -> Any:  # noqa: A002
    """The older ``interpolate(..., mode='bilinear', align_corners=True)`` (it warns, as PyTorch's does)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


__all__ += ["relu_", "elu_", "leaky_relu_", "hardtanh_", "celu_", "selu_", "threshold_", "max_pool1d_with_indices",
            "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices", "upsample", "upsample_nearest",
            "upsample_bilinear"]


@autocast_policy("fp32")
def fractional_max_pool2d(input: Any, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,  # noqa: A002
                          return_indices: bool = False, _random_samples: Any = None) -> Any:
    """Fractional max pooling over ``(N, C, H, W)`` or ``(C, H, W)``: ``kernel_size`` windows whose
    starts spread pseudo-randomly to give ``output_size`` (or ``output_ratio`` of the input);
    ``_random_samples`` (N, C, 2) in [0, 1) fixes the spread (PyTorch's windows for the same samples).

    >>> import tidu
    >>> x = tidu.arange(16.0).reshape(1, 1, 4, 4)
    >>> tidu.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=tidu.zeros(1, 1, 2))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    from ._fractional import fractional_max_pool

    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 2)


@autocast_policy("fp32")
def fractional_max_pool3d(input: Any, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,  # noqa: A002
                          return_indices: bool = False, _random_samples: Any = None) -> Any:
    """``fractional_max_pool2d`` over ``(N, C, T, H, W)`` or ``(C, T, H, W)``; ``_random_samples`` is (N, C, 3)."""
    from ._fractional import fractional_max_pool

    return fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices, _random_samples, 3)


fractional_max_pool2d_with_indices = _with_indices(fractional_max_pool2d, "fractional_max_pool2d_with_indices")
fractional_max_pool3d_with_indices = _with_indices(fractional_max_pool3d, "fractional_max_pool3d_with_indices")
__all__ += ["fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
            "fractional_max_pool3d_with_indices"]


def __getattr__(name: str) -> Any:
    if name == "grad":  # ``F.grad`` is ``tidu.nn.grad``, as in PyTorch (imported at first use: it imports this module)
        from . import grad

        return grad
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
