"""``tidu.nn.functional``: PyTorch's functional layers, activations and losses.

Everything is composed from tidu ops; ``softmax`` and ``log_softmax`` (``tidu.ops.activation``)
bind the fused primitives of ``tidu/primitives/nn.py``. Picking the target class (``nll_loss``,
``cross_entropy``) and looking up rows (``embedding``) gather (``tidu.gather``,
``tidu.index_select``), so their gradients scatter-add.
"""

from __future__ import annotations

import math
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import ops
from ..core import dtypes
from ..core.deferred import reads_exposed
from ..core.device import CPU
from ..core.dispatch import bind_matmul
from ..core.grad_mode import no_grad
from ..core.inplace import assign_
from ..core.primitive import bind
from ..ops._operands import kept
from ..ops.activation import log_softmax, softmax
from ..ops.conv import avg_pool2d, conv1d, conv2d, max_pool2d
from ..ops.indexing import select_positions
from ..primitives import gather as gather_prims
from ..primitives import linalg
from ..primitives import nn as nn_prims
from ..primitives.slicing import pad as pad_p
from ..tensor import SHORT_PATH_TYPES, Tensor, placed

__all__ = [
    "interpolate", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "group_norm", "avg_pool2d", "batch_norm", "conv1d", "conv2d", "max_pool2d", "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "cosine_similarity", "dropout", "elu", "embedding", "gelu", "hardsigmoid", "hardswish", "hardtanh", "logsigmoid",
    "mish", "relu6", "softsign", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax",
    "mse_loss", "multi_head_attention_forward", "nll_loss", "normalize", "one_hot", "pad", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "softplus", "tanh",
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
    return ("mean" if size_average else "sum") if reduce else "none"


def _class_mask(target: Any, num_classes: int, class_dim: int) -> Any:
    """Boolean one-hot of integer ``target`` with the classes along ``class_dim``."""
    shape = [1] * (target.ndim + 1)
    shape[class_dim] = num_classes
    return target.unsqueeze(class_dim) == ops.arange(num_classes).reshape(*shape)


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
def relu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``max(input, 0)`` (gradient 0 at 0).

    >>> import tidu
    >>> tidu.nn.functional.relu(tidu.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return ops.relu(input)


def gelu(input: Any, approximate: str = "none") -> Any:  # noqa: A002
    """GELU, exact (``erf``) or ``approximate='tanh'``.

    >>> import tidu
    >>> tidu.nn.functional.gelu(tidu.tensor([1.0]), approximate="tanh")
    tensor([0.8412])
    """
    return ops.gelu(input, approximate=approximate)


def silu(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * sigmoid(input)`` (also called swish).

    >>> import tidu
    >>> tidu.nn.functional.silu(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    _float_input(input, "silu_cpu")
    return input * ops.sigmoid(input)


def leaky_relu(input: Any, negative_slope: float = 0.01, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where positive, ``negative_slope * input`` elsewhere.

    >>> import tidu
    >>> tidu.nn.functional.leaky_relu(tidu.tensor([-2.0, 3.0]), 0.1)
    tensor([-0.2000,  3.0000])
    """
    return ops.where(input > 0, input, input * negative_slope)


def elu(input: Any, alpha: float = 1.0, inplace: bool = False) -> Any:  # noqa: A002
    """``input`` where positive, ``alpha * (exp(input) - 1)`` elsewhere.

    >>> import tidu
    >>> tidu.nn.functional.elu(tidu.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    negative = ops.where(input > 0, 0.0, input)
    return ops.where(input > 0, input, ops.expm1(negative) * alpha)


def softplus(input: Any, beta: float = 1.0, threshold: float = 20.0) -> Any:  # noqa: A002
    """``log(1 + exp(beta * input)) / beta``, linear where ``beta * input > threshold``.

    >>> import tidu
    >>> tidu.nn.functional.softplus(tidu.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
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
    inside = (input > min_val) & (input < max_val)
    return ops.where(inside, input, ops.clamp(input, min_val, max_val).detach())


def relu6(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``hardtanh(input, 0, 6)``.

    >>> import tidu
    >>> tidu.nn.functional.relu6(tidu.tensor([-1.0, 3.0, 7.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``relu6(input + 3) / 6``: 0 below -3, 1 above 3, linear between (gradient 1/6 strictly
    inside).

    >>> import tidu
    >>> tidu.nn.functional.hardsigmoid(tidu.tensor([-4.0, 0.0, 4.0]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    inside = (input > -3.0) & (input < 3.0)  # PyTorch's hardsigmoid_backward: NaN gets no gradient
    return ops.where(inside, (input + 3.0) / 6.0, (ops.clamp(input + 3.0, 0.0, 6.0) / 6.0).detach())


def hardswish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * relu6(input + 3) / 6``, with PyTorch's gradient: 0 up to -3 (inclusive),
    ``input / 3 + 0.5`` below 3, 1 from 3 on.

    >>> import tidu
    >>> tidu.nn.functional.hardswish(tidu.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000,  0.6667,  4.0000])
    """
    low, middle = input <= -3.0, (input > -3.0) & (input < 3.0)
    inner = ops.where(middle, input, 0.0)  # the middle branch's gradient never meets a value outside it
    return ops.where(low, input * 0.0, ops.where(middle, inner * (inner + 3.0) / 6.0, input))


def mish(input: Any, inplace: bool = False) -> Any:  # noqa: A002
    """``input * tanh(softplus(input))``.

    >>> import tidu
    >>> tidu.nn.functional.mish(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    return input * ops.tanh(softplus(input))


def logsigmoid(input: Any) -> Any:  # noqa: A002
    """``log(sigmoid(input))``, computed as ``-softplus(-input)`` (no overflow).

    >>> import tidu
    >>> tidu.nn.functional.logsigmoid(tidu.tensor([0.0, -200.0]))
    tensor([  -0.6931, -200.0000])
    """
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


# --- normalization and dropout ------------------------------------------------------------
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
    return placed(pool.astype(like.dtype.np), like.dtype, like.device)


def adaptive_avg_pool2d(input: Any, output_size: Any) -> Any:  # noqa: A002
    """Mean over PyTorch's adaptive windows of the last two dims, to ``output_size`` (an int, or
    a pair whose ``None`` keeps that dim): two products with averaging matrices.

    >>> import tidu
    >>> tidu.nn.functional.adaptive_avg_pool2d(tidu.arange(16.0).reshape(1, 1, 4, 4), 1)
    tensor([[[[7.5000]]]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    h, w = input.shape[-2], input.shape[-1]
    return _adaptive_avg_pool_nd(input, (h if oh is None else oh, w if ow is None else ow))


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


_INTERPOLATING = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")


def interpolate(input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Any:
    """Resample the spatial dims of (N, C, d1, ...) to ``size`` or ``scale_factor`` times theirs:
    ``nearest``/``nearest-exact`` (index selection), ``linear``/``bilinear``/``trilinear`` (two
    index selections a dim, weighted; ``align_corners`` as PyTorch's), ``area`` (adaptive average
    pooling). Source positions are computed in the input's precision, as PyTorch's kernels do.

    >>> import tidu
    >>> x = tidu.tensor([[[1.0, 2.0]]])
    >>> tidu.nn.functional.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2.]]])
    >>> tidu.nn.functional.interpolate(x, size=4, mode="linear", align_corners=True)
    tensor([[[1.0000, 1.3333, 1.6667, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if mode in _INTERPOLATING and input.ndim != _INTERPOLATING[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_INTERPOLATING[mode]}D input")
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: {' | '.join(_MODES)} (got {mode})")
    if mode == "bicubic" or antialias:
        raise NotImplementedError(f"interpolate: mode {mode!r}{' with antialias' if antialias else ''} is not "
                                  "implemented in tidu")
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
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        return _adaptive_avg_pool_nd(input, out_sizes)
    out = input
    for axis, (n_in, n_out, scale) in enumerate(zip(in_sizes, out_sizes, scales)):
        out = _resample(out, axis + 2, n_in, n_out, scale, mode, bool(align_corners))
    return out


def _adaptive_avg_pool_nd(input: Any, out_sizes: tuple[int, ...]) -> Any:  # noqa: A002
    """Adaptive average pooling of the last ``len(out_sizes)`` dims: one product with an averaging
    matrix a dim whose size changes (the last dim from the right, the others from the left)."""
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
        if n_in == n_out:
            return x
        step = real(1.0 / scale) if scale is not None and scale > 0 else real(n_in) / real(n_out)
        where = np.floor((dst + real(0.5)) * step if mode == "nearest-exact" else dst * step).astype(np.int64)
        return select_positions(x, axis, np.minimum(where, n_in - 1))
    if align_corners:
        step = real(n_in - 1) / real(n_out - 1) if n_out > 1 else real(0.0)
        src = dst * step
    else:
        step = real(1.0 / scale) if scale is not None and scale > 0 else real(n_in) / real(n_out)
        src = np.maximum(step * (dst + real(0.5)) - real(0.5), real(0.0))
    low = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    high = low + (low < n_in - 1)
    weight_high = np.clip(src - low.astype(real), 0.0, 1.0).astype(real)
    shape = [1] * x.ndim
    shape[axis] = n_out
    full = tuple(n_out if d == axis else s for d, s in enumerate(x.shape))
    # positions and weights stand for the sizes and scales PyTorch's backward holds as numbers;
    # the weights come in the result's shape (a zero-stride view), so no broadcast of them is saved
    device = x.device
    w_high = kept(placed(np.broadcast_to(weight_high.reshape(shape), full), None, device))
    w_low = kept(placed(np.broadcast_to((real(1.0) - weight_high).reshape(shape), full), None, device))
    return select_positions(x, axis, low) * w_low + select_positions(x, axis, high) * w_high


def layer_norm(input: Any, normalized_shape: Sequence[int], weight: Any = None, bias: Any = None,  # noqa: A002
               eps: float = 1e-5) -> Any:
    """Normalize over the trailing ``normalized_shape`` dims (biased variance), then scale and shift.

    >>> import tidu
    >>> tidu.nn.functional.layer_norm(tidu.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(p.shape)} and normalized_shape = {list(shape)}")
    _float_input(input, "LayerNormKernelImpl")
    if weight is not None and bias is not None and weight.dtype == input.dtype == bias.dtype:
        return bind(nn_prims.layer_norm_affine, input, weight, bias, k=k, eps=float(eps))
    out = bind(nn_prims.layer_norm, input, k=k, eps=float(eps))
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


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
    if training:
        count = input.numel() // max(c, 1)
        if count <= 1:
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
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    keep = ops.rand(input.shape, dtype=input.dtype) < (1.0 - p)
    return ops.where(keep, input * (1.0 / (1.0 - p)), 0.0)


# --- sparse --------------------------------------------------------------------------------
def _check_index(input: Any, name: str) -> None:  # noqa: A002
    if not isinstance(input, Tensor) or input.dtype not in (dtypes.int64, dtypes.int32):
        got = input.dtype.name if isinstance(input, Tensor) else type(input).__name__
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
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse are not supported")
    if weight.ndim != 2:
        raise RuntimeError(f"embedding: 'weight' must be 2-D, got shape {tuple(weight.shape)}")
    num = weight.shape[0]
    data = input._host()  # validated on the host, also for CUDA (PyTorch asserts on the device)
    if data.size and (data.min() < 0 or data.max() >= num):
        raise IndexError(f"index out of range in self (embedding indices must lie in [0, {num}), got "
                         f"min {data.min()}, max {data.max()})")
    if max_norm is not None:
        _renorm_rows(weight, np.unique(data), max_norm, norm_type)
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        rows = (ops.arange(num) == padding_idx % num).reshape(num, 1)
        weight = ops.where(rows, weight.detach(), weight)
    return ops.index_select(weight, 0, input.reshape(-1)).reshape(*input.shape, weight.shape[1])


def _renorm_rows(weight: Any, rows: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale the ``rows`` of ``weight`` whose norm exceeds ``max_norm`` down to it, in place (PyTorch's
    ``embedding_renorm_``: not recorded)."""
    w = weight.detach()._host()
    norms = np.linalg.norm(w[rows], ord=norm_type, axis=1)
    scale = np.ones(w.shape[0], w.dtype)
    scale[rows] = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    with no_grad():
        assign_(weight, weight * placed(scale.reshape(-1, 1), None, weight.device), op="embedding_renorm_")


def normalize(input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Any:  # noqa: A002
    """``input`` divided by its ``p``-norm along ``dim``, a norm below ``eps`` counting as ``eps``
    (so a zero vector stays zero).

    >>> import tidu
    >>> tidu.nn.functional.normalize(tidu.tensor([[3.0, 4.0], [0.0, 0.0]]))
    tensor([[0.6000, 0.8000],
            [0.0000, 0.0000]])
    """
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


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
    if len(pad) // 2 not in (input.ndim - 1, input.ndim - 2) or not 1 <= len(pad) // 2 <= 3:
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor "
                                  f"(mode {mode!r} pads 1 to 3 trailing dims of a batched or unbatched input)")
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
        inside = np.pad(np.ones(tuple(input.shape), bool), [(lo, hi) for lo, hi, _ in grow])
        out = ops.where(placed(inside, None, input.device), out, value)
    return out


# --- losses --------------------------------------------------------------------------------
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
    loss = diff * diff
    return _reduce(loss if weight is None else loss * weight, reduction)


def l1_loss(input: Any, target: Any, size_average: Any = None, reduce: Any = None,  # noqa: A002
            reduction: str = "mean") -> Any:
    """Mean absolute error ``|input - target|`` (gradient 0 where they are equal).

    >>> import tidu
    >>> tidu.nn.functional.l1_loss(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 4.0]), reduction="sum")
    tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target)
    diff = input - target
    return _reduce(ops.abs(diff), reduction)


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
    if not isinstance(target, Tensor):
        raise TypeError(f"{name}(): argument 'target' must be Tensor, not {type(target).__name__}")
    if target.dtype is not dtypes.int64:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {dtypes.TORCH_NAMES[target.dtype.name]} "
                           f"({name} takes int64 class indices)")
    class_dim = 1 if logp.ndim >= 2 else 0
    if logp.ndim == 0:
        raise ValueError(f"{name}: expected input of 1 or more dimensions (got 0)")
    expected = (logp.shape[0], *logp.shape[2:]) if logp.ndim >= 2 else ()
    if tuple(target.shape) != expected:
        if logp.ndim >= 2 and (target.ndim == 0 or target.shape[0] != logp.shape[0]):
            raise ValueError(
                f"Expected input batch_size ({logp.shape[0]}) to match target batch_size "
                f"({target.shape[0] if target.ndim else 0})."
            )
        raise RuntimeError(f"{name}: expected target of shape {expected} for input of shape "
                           f"{tuple(logp.shape)}, got {tuple(target.shape)}")
    num = logp.shape[class_dim]
    if weight is not None and tuple(weight.shape) != (num,):
        raise RuntimeError(f"{name}: weight tensor should be defined either for all {num} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")
    if not _check_targets(target, num, ignore_index) and weight is None and target.numel():
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
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


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
    if isinstance(target, Tensor) and target.dtype.is_floating_point and tuple(target.shape) == tuple(input.shape):
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
            smooth = smooth.sum() / valid.sum()
        else:
            picked = ops.where(_class_mask(target, num, class_dim), _along(weight, logp.ndim, class_dim), 0.0)
            smooth = smooth.sum() / (picked.sum(dim=class_dim) * valid).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / num)


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
        data = input.detach()._host()
        if data.size and not ((data >= 0) & (data <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = ops.clamp(ops.log(input), min=-100.0)
    log_1mx = ops.clamp(ops.log(1 - input), min=-100.0)
    loss = -(target * log_x + (1 - target) * log_1mx)
    return _reduce(loss if weight is None else loss * weight, reduction)


def _softplus_neg(x: Any) -> Any:
    """``log(1 + exp(-x))`` without overflow."""
    abs_x = ops.where(x < 0, -x, x)
    return ops.log1p(ops.exp(-abs_x)) + ops.where(x < 0, -x, 0.0)


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
    softplus = _softplus_neg(input)
    if pos_weight is None:
        loss = (1 - target) * input + softplus
    else:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * softplus
    return _reduce(loss if weight is None else loss * weight, reduction)


# Attention lives in its own file; it uses linear, softmax and dropout from this one.
from ._attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402
