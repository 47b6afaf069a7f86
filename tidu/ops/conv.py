"""Convolution and pooling (PyTorch's ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``,
``max_pool2d/3d``, ``avg_pool2d/3d``; one N-D implementation each).

Convolutions bind ``conv_general_dilated``; average pooling is a convolution with a kernel
of ones divided by the window counts; max pooling gathers each window's first maximum
(``gather``), so its gradient goes to one element per window, as in PyTorch.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from ..backends.cpu.conv import window_argmax
from ..core import autocast, dtypes
from ..core.autocast import policy as autocast_policy
from ..core.half import computed_in_float32
from ..core.primitive import bind
from ..primitives.conv import conv_general_dilated, transpose_lhs
from ..primitives.gather import gather
from ..tensor import Tensor, placed
from ._operands import is_value
from .math import trunc
from .shape import expand, reshape

__all__ = ["avg_pool2d", "avg_pool3d", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "max_pool2d", "max_pool3d"]

_TYPE = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "int32": "int", "int64": "long", "bool": "bool", "uint8": "unsigned char",
         "int8": "signed char", "int16": "short"}


def _tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    out = (value,) * n if isinstance(value, int) else tuple(int(v) for v in value)
    if len(out) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the "
            f"convolution dimensions, but got {name}={list(out)}"
        )
    return out


def _check_tensor(x: Any, arg: str, op: str) -> None:
    if not is_value(x):
        raise TypeError(f"{op}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def _conv(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int,  # noqa: A002
          nd: int) -> Any:
    op = f"conv{nd}d"
    _check_tensor(input, "input", op)
    _check_tensor(weight, "weight", op)
    if autocast.ON:
        input, weight, bias = autocast.lower(input, weight, bias)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: expected a {nd + 2}D weight (out_channels, in_channels / groups, kernel...), "
                           f"but got weight of size {list(weight.shape)}")
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        totals = [d * (k - 1) if padding == "same" else 0 for d, k in zip(dilation, kernel)]
        pads = tuple((t // 2, t - t // 2) for t in totals)  # PyTorch puts the odd one on the right
    else:
        pads = tuple((p, p) for p in _tuple(padding, nd, "padding"))
    if any(lo < 0 for lo, _ in pads):
        raise RuntimeError("negative padding is not supported")
    if any(s < 1 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 1 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    unbatched = input.ndim == nd + 1
    x = reshape(input, (1, *input.shape)) if unbatched else input
    wshape = list(weight.shape)
    if weight.shape[0] < groups or weight.shape[0] % groups:
        kind = "at least" if weight.shape[0] < groups else "divisible by"
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be {kind} {groups} at dimension 0, but got weight of "
            f"size {[wshape] if kind == 'divisible by' else wshape} instead"  # PyTorch's brackets, doubled or not
        )
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {wshape}, expected input{list(x.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({_TYPE[input.dtype.name]}) and weight type ({_TYPE[weight.dtype.name]}) "
                           "should be the same")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, but got {input.dtype.name}")
    if bias is not None:
        _check_tensor(bias, "bias", op)
        if bias.ndim != 1 or bias.shape[0] != weight.shape[0]:
            raise RuntimeError(
                f"Given weight of size {wshape}, expected bias to be 1-dimensional with {weight.shape[0]} "
                f"elements, but got bias of size {list(bias.shape)} instead"
            )
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({_TYPE[input.dtype.name]}) and bias type ({_TYPE[bias.dtype.name]}) "
                               "should be the same")
    padded = [n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads)]
    if any(p < d * (k - 1) + 1 for p, d, k in zip(padded, dilation, kernel)):
        sizes = " x ".join(map(str, padded))
        ks = " x ".join(str(d * (k - 1) + 1) for d, k in zip(dilation, kernel))
        raise RuntimeError(
            f"Calculated padded input size per channel: ({sizes}). Kernel size: ({ks}). Kernel size can't be "
            f"greater than actual input size (input {list(input.shape)}, weight {wshape})"
        )
    out = bind(conv_general_dilated, x, weight, window_strides=stride, padding=pads, lhs_dilation=(1,) * nd,
               rhs_dilation=dilation, feature_group_count=groups, flip=False)
    if bias is not None:  # broadcast in two steps: each transpose then sums adjacent axes, copy-free
        out = out + expand(reshape(bias, (-1,) + (1,) * nd), *out.shape[1:])
    return reshape(out, tuple(out.shape[1:])) if unbatched else out


@computed_in_float32
def conv1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Any:
    """1-D cross-correlation of ``input`` (N, C_in, L) or (C_in, L) with ``weight`` (C_out, C_in / groups, K).

    ``padding`` is an int, a 1-tuple, ``'valid'`` (none) or ``'same'`` (output length = input
    length; stride 1 only). Gradient: primitive ``conv_general_dilated`` (bilinear; both
    transposes are convolutions, tidu/primitives/conv.py).

    >>> import tidu
    >>> x = tidu.tensor([[[1.0, 2.0, 3.0, 4.0]]], requires_grad=True)
    >>> w = tidu.tensor([[[1.0, -1.0]]])
    >>> y = tidu.conv1d(x, w)
    >>> y
    tensor([[[-1., -1., -1.]]], grad_fn=<conv_general_dilated>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([[[ 1.,  0.,  0., -1.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


@computed_in_float32
def conv2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Any:
    """2-D cross-correlation of ``input`` (N, C_in, H, W) or (C_in, H, W) with ``weight``
    (C_out, C_in / groups, kH, kW), plus ``bias`` (C_out,) if given.

    ``stride``, ``padding`` and ``dilation`` are ints or pairs; ``padding`` may also be
    ``'valid'`` or ``'same'`` (stride 1; an odd total padding puts the extra row/column at the
    end, as PyTorch does). ``groups`` splits the channels (``groups == C_in``: depthwise).
    Gradient: primitive ``conv_general_dilated`` (tidu/primitives/conv.py).

    >>> import tidu
    >>> x = tidu.arange(16.0).reshape(1, 1, 4, 4)
    >>> w = tidu.ones(2, 1, 2, 2, requires_grad=True)
    >>> y = tidu.conv2d(x, w, bias=tidu.tensor([0.0, 1.0]), stride=2)
    >>> y
    tensor([[[[10., 18.],
              [42., 50.]],
    <BLANKLINE>
             [[11., 19.],
              [43., 51.]]]], grad_fn=<add>)
    >>> y.sum().backward()
    >>> w.grad[0]
    tensor([[[20., 24.],
             [36., 40.]]])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


@computed_in_float32
def conv3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
           dilation: Any = 1, groups: int = 1) -> Any:
    """3-D cross-correlation of ``input`` (N, C_in, D, H, W) or (C_in, D, H, W) with ``weight``
    (C_out, C_in / groups, kD, kH, kW), plus ``bias`` (C_out,) if given; the arguments as
    ``conv2d``'s, with triples. Gradient: primitive ``conv_general_dilated``.

    >>> import tidu
    >>> x = tidu.arange(8.0).reshape(1, 1, 2, 2, 2).requires_grad_()
    >>> y = tidu.conv3d(x, tidu.ones(1, 1, 2, 1, 2))
    >>> y.flatten()
    tensor([10., 18.], grad_fn=<reshape>)
    >>> y.sum().backward()
    >>> x.grad.flatten()
    tensor([1., 1., 1., 1., 1., 1., 1., 1.])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def _conv_transpose(input: Any, weight: Any, bias: Any, stride: Any, padding: Any, output_padding: Any,  # noqa: A002
                    groups: int, dilation: Any, nd: int) -> Any:
    """The transpose of ``conv{nd}d`` in its input, with ``weight`` (C_in, C_out / groups, *k): the
    gradient of a convolution whose weight it is, as PyTorch's ``conv_transpose``."""
    op = f"conv_transpose{nd}d"
    _check_tensor(input, "input", op)
    _check_tensor(weight, "weight", op)
    if isinstance(padding, str):  # ('same' and 'valid' are the plain convolutions')
        raise TypeError(f"{op}(): argument 'padding' must be tuple of ints, not str")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {op}, but got input "
                           f"of size: {list(input.shape)}")
    if weight.ndim != nd + 2:
        raise RuntimeError(f"weight should have at least three dimensions (got {weight.ndim})" if weight.ndim < 3 else
                           f"Expected {nd + 2}-dimensional weight for {nd + 2}-dimensional input, but got weight of "
                           f"size {list(weight.shape)}")
    stride, padding = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    output_padding, dilation = _tuple(output_padding, nd, "output_padding"), _tuple(dilation, nd, "dilation")
    wshape = list(weight.shape)
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{wshape}] instead")
    unbatched = input.ndim == nd + 1
    x = reshape(input, (1, *input.shape)) if unbatched else input
    if x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected input{list(x.shape)} to have "
                           f"{weight.shape[0]} channels, but got {x.shape[1]} channels instead")
    names = ("depth", "height", "width")[3 - nd:]
    if any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        detail = " ".join(f"output_padding_{n}: {o}" for n, o in zip(names, output_padding))
        detail += " " + " ".join(f"stride_{n}: {s}" for n, s in zip(names, stride))
        detail += " " + " ".join(f"dilation_{n}: {d}" for n, d in zip(names, dilation))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {detail}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({_TYPE[input.dtype.name]}) and weight type ({_TYPE[weight.dtype.name]}) "
                           "should be the same")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating point input, but got {input.dtype.name}")
    out_channels = weight.shape[1] * groups
    if bias is not None:
        _check_tensor(bias, "bias", op)
        if bias.ndim != 1 or bias.shape[0] != out_channels:
            raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected bias to be 1-dimensional with "
                               f"{out_channels} elements, but got bias of size {list(bias.shape)} instead")
    sizes = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1
             for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)]
    if min(sizes) < 1:
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, x.shape[2:]))}). Calculated output "
                           f"size per channel: ({' x '.join(map(str, sizes))}). Output size is too small")
    out = transpose_lhs(x, weight, (x.shape[0], out_channels, *sizes), window_strides=stride,
                        padding=tuple((p, p) for p in padding), lhs_dilation=(1,) * nd, rhs_dilation=dilation,
                        feature_group_count=groups, flip=False)
    if bias is not None:
        out = out + expand(reshape(bias, (-1,) + (1,) * nd), *out.shape[1:])
    return reshape(out, tuple(out.shape[1:])) if unbatched else out


@autocast_policy("lower")
@computed_in_float32
def conv_transpose1d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """The transposed 1-D convolution ("deconvolution") of ``input`` (N, C_in, L) with ``weight``
    (C_in, C_out / groups, K): the input gradient of ``conv1d`` with that weight. The output
    length is ``(L - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1``.

    >>> import tidu
    >>> tidu.conv_transpose1d(tidu.tensor([[[1.0, 2.0]]]), tidu.tensor([[[1.0, 10.0]]]), stride=2)
    tensor([[[ 1., 10.,  2., 20.]]])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


@autocast_policy("lower")
@computed_in_float32
def conv_transpose2d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """The transposed 2-D convolution of ``input`` (N, C_in, H, W) with ``weight``
    (C_in, C_out / groups, kH, kW): the input gradient of ``conv2d`` with that weight.

    >>> import tidu
    >>> tidu.conv_transpose2d(tidu.ones(1, 1, 2, 2), tidu.ones(1, 1, 2, 2), stride=2).shape
    tidu.Size([1, 1, 4, 4])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


@autocast_policy("lower")
@computed_in_float32
def conv_transpose3d(input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,  # noqa: A002
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Any:
    """The transposed 3-D convolution of ``input`` (N, C_in, D, H, W) with ``weight``
    (C_in, C_out / groups, kD, kH, kW): the input gradient of ``conv3d`` with that weight.

    >>> import tidu
    >>> tidu.conv_transpose3d(tidu.ones(1, 1, 2, 2, 2), tidu.ones(1, 3, 2, 2, 2), stride=2).shape
    tidu.Size([1, 3, 4, 4, 4])
    """
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


_AXES = ("T", "H", "W")  # PyTorch's names of the pooled dims in its messages
_COUNT = {1: "one", 2: "two", 3: "three"}


def _pool_tuple(op: str, name: str, value: Any, nd: int) -> tuple[int, ...]:
    """A pooling argument: one int for every dim, or one per dim (PyTorch's message otherwise)."""
    out = (value,) * nd if isinstance(value, int) else tuple(int(v) for v in value)
    if len(out) not in (1, nd):
        either = "" if op == "avg_pool3d" else "either "
        what = {"kernel_size": f"must {either}be a single int", "stride": f"must {either}be omitted, a single int",
                "padding": f"must {either}be a single int", "dilation": "must be either a single int"}[name]
        raise RuntimeError(f"{op}: {name} {what}, or a tuple of {_COUNT[nd]} ints")
    return out * nd if len(out) == 1 else out


def _pool_args(op: str, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
               ceil_mode: bool, nd: int) -> tuple:
    """The geometry of an ``nd``-D pooling and its output size, with PyTorch's checks."""
    _check_tensor(input, "input", op)
    shape = list(input.shape)
    if nd == 2 and (input.ndim not in (3, 4) or 0 in shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shape}")
    if nd == 3:
        if input.ndim not in (4, 5):
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        if 0 in shape[-4:]:
            fn = "max_pool3d_with_indices_out_cpu_template()" if op == "max_pool3d" else f"{op}()"
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {shape} and non-batch dimension 0 has length zero!")
    kernel = _pool_tuple(op, "kernel_size", kernel_size, nd)
    omitted = stride is None or (not isinstance(stride, int) and len(stride) == 0)
    stride = kernel if omitted else _pool_tuple(op, "stride", stride, nd)
    padding, dilation = _pool_tuple(op, "padding", padding, nd), _pool_tuple(op, "dilation", dilation, nd)
    axes = _AXES[3 - nd:]
    if min(kernel) < 1:
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{a}: {k}" for a, k in zip(axes, kernel)))
    if min(stride) < 1:
        raise RuntimeError("stride should not be zero")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{a}: {d}" for a, d in zip(axes, dilation)))
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p}")
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, kernel_size={k} and "
                f"dilation={d}"
            )
    sizes = shape[-nd:]
    if op == "avg_pool3d" and any(n < k for n, k in zip(sizes, kernel)):  # PyTorch's check, padding or not
        raise RuntimeError(f"input image ({' '.join(f'{a}: {n}' for a, n in zip(axes, sizes))}) smaller than kernel "
                           f"size ({' '.join(f'k{a}: {k}' for a, k in zip(axes, kernel))})")
    out = []
    for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation):
        size = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (size - 1) * s >= n + p:
            size -= 1
        out.append(size)
    if min(out) < 1:
        c = shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [c, *sizes]))}). Calculated output size: "
                           f"({'x'.join(map(str, [c, *out]))}). Output size is too small")
    return kernel, stride, padding, dilation, tuple(out)


def _max_pool(op: str, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any, dilation: Any,  # noqa: A002
              ceil_mode: bool, return_indices: bool) -> Any:
    """Max pooling of the last ``nd`` dims: each window's first maximum (found on the host), gathered."""
    kernel, stride, padding, dilation, out_sizes = _pool_args(
        op, input, kernel_size, stride, padding, dilation, ceil_mode, nd)
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: the window maxima are found on concrete data; it cannot run inside vmap or an AD rule")
    lead, sizes = tuple(input.shape[:-nd]), tuple(input.shape[-nd:])
    data = input.detach()._values().reshape(-1, *sizes)  # window maxima found on the host (also for CUDA)
    if data.dtype == np.float16:  # the search is compiled: Numba has no float16 (float32 holds it exactly)
        data = data.astype(np.float32)
    idx = window_argmax(data, kernel, stride, padding, dilation, out_sizes).reshape(lead + (prod(out_sizes),))
    flat = reshape(input, lead + (prod(sizes),))
    out = reshape(bind(gather, flat, placed(idx, None, input.device), axis=flat.ndim - 1), lead + out_sizes)
    if return_indices:
        return out, placed(idx.reshape(lead + out_sizes), None, input.device)
    return out


def max_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """2-D max pooling over (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``.

    Padding never wins (it counts as -inf). With ``return_indices=True`` also returns the flat
    index ``h * W + w`` of each maximum, as PyTorch does. Of tied maxima the first (row-major)
    is chosen, and it alone gets the gradient. Gradient: primitive ``gather`` (its
    transpose is ``scatter_add``; tidu/primitives/gather.py).

    >>> import tidu
    >>> x = tidu.tensor([[[1.0, 3.0, 2.0], [3.0, 0.0, 1.0], [4.0, 5.0, 5.0]]], requires_grad=True)
    >>> y = tidu.max_pool2d(x, 2, stride=1)
    >>> y
    tensor([[[3., 3.],
             [5., 5.]]], grad_fn=<reshape>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([[[0., 2., 0.],
             [0., 0., 0.],
             [0., 2., 0.]]])
    """
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@autocast_policy("fp32")
def max_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W), as ``max_pool2d``; the indices are
    flat in ``D * H * W``.

    >>> import tidu
    >>> y, i = tidu.max_pool3d(tidu.arange(8.0).reshape(1, 2, 2, 2), 2, return_indices=True)
    >>> y, i
    (tensor([[[[7.]]]]), tensor([[[[7]]]]))
    """
    return _max_pool("max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _avg_pool(op: str, nd: int, input: Any, kernel_size: Any, stride: Any, padding: Any,  # noqa: A002
              ceil_mode: bool, count_include_pad: bool, divisor_override: int | None) -> Any:
    """Average pooling of the last ``nd`` dims: window sums (a convolution with ones) over the
    divisor of each window. Integer inputs sum exactly in float64 and divide truncating, as
    PyTorch's integer kernels."""
    kernel, stride, padding, _, out_sizes = _pool_args(op, input, kernel_size, stride, padding, 1, ceil_mode, nd)
    if divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    real = input.dtype if input.dtype.is_floating_point else dtypes.float64
    lead, sizes = tuple(input.shape[:-nd]), tuple(input.shape[-nd:])
    x = reshape(input, (-1, 1, *sizes)).to(real)
    pads = tuple((p, (o - 1) * s + k - n - p) for n, k, s, p, o in zip(sizes, kernel, stride, padding, out_sizes))
    ones = placed(dtypes.cast(np.ones((1, 1, *kernel)), real), real, input.device)
    sums = bind(conv_general_dilated, x, ones, window_strides=stride, padding=pads, lhs_dilation=(1,) * nd,
                rhs_dilation=(1,) * nd, feature_group_count=1, flip=False)
    counts = _window_counts(sizes, kernel, stride, padding, out_sizes, count_include_pad, divisor_override)
    out = sums / placed(dtypes.cast(counts, real), real, input.device)
    if real is not input.dtype:
        out = trunc(out).to(input.dtype)
    return reshape(out, lead + out_sizes)


@computed_in_float32
def avg_pool2d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """2-D average pooling over (N, C, H, W) or (C, H, W); ``stride`` defaults to ``kernel_size``.

    Each window's sum (a convolution with a kernel of ones, primitive ``conv_general_dilated``)
    is divided by the window's size: with ``count_include_pad`` the zero padding counts, but
    never the extra cells of ``ceil_mode``; ``divisor_override`` replaces the count. Integer
    inputs give integer means, truncated toward zero, as PyTorch's.

    >>> import tidu
    >>> x = tidu.arange(9.0).reshape(1, 3, 3)
    >>> tidu.avg_pool2d(x, 2, stride=1)
    tensor([[[2., 3.],
             [5., 6.]]])
    >>> tidu.avg_pool2d(x, 2, padding=1, count_include_pad=False)
    tensor([[[0.0000, 1.5000],
             [4.5000, 6.0000]]])
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


@autocast_policy("fp32")
@computed_in_float32
def avg_pool3d(input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W), as ``avg_pool2d``. As PyTorch,
    the input must be at least as large as the kernel (padding aside).

    >>> import tidu
    >>> tidu.avg_pool3d(tidu.arange(8.0).reshape(1, 2, 2, 2), (2, 1, 2))
    tensor([[[[2.5000],
              [4.5000]]]])
    """
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def _window_counts(size: tuple, kernel: tuple, stride: tuple, padding: tuple, out_sizes: tuple,
                   count_include_pad: bool, divisor_override: int | None) -> np.ndarray:
    """PyTorch's divisor of each output cell: the window clipped to the padded (or the real) input."""
    if divisor_override is not None:
        return np.full(out_sizes, float(divisor_override))
    counts = np.ones(())
    for n, k, s, p, o in zip(size, kernel, stride, padding, out_sizes):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts = np.multiply.outer(counts, (end - start).astype(np.float64))
    return counts


METHODS: dict = {}
