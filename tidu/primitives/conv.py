"""Convolution and the gather/scatter pair of max pooling.

``conv_general_dilated`` is XLA's convolution on (N, C, *spatial) inputs and (O, C/G, *k)
kernels with G feature groups, in one, two or three spatial dimensions (the rules hold for
any number; the kernels do 3-D, and 1-D and 2-D as 3-D with unit leading dims). Per spatial axis, with kernel length K, stride s,
padding (lo, hi), lhs dilation a and rhs dilation d:

    x_p = the input spread a apart (zeros between), then padded by (lo, hi) (negative crops)
    out[p] = sum_k x_p[p*s + k*d] * w[k]          (w[K-1-k] when ``flip``)

It is bilinear, and both transposes are convolutions of the same primitive, so every order
and mode follows. Note [no reverse op]: the transpose w.r.t. the input needs the kernel read
backwards; instead of a reverse primitive, ``flip`` toggles that reading, and the transpose
w.r.t. a flipped kernel is written as a convolution of the cotangent with the input as the
kernel, which needs no flip at all.

Max pooling (tidu/ops/conv.py) uses the ``gather`` primitive: it gathers each window's first
maximum, found by a kernel in the ops layer, so ties send the gradient to one element as in
PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..backends.cpu import conv as cpu
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import FLOATS
from ..core.primitive import Primitive
from ._util import check_dtype, ops
from .structural import reshape, transpose

conv_general_dilated = Primitive("conv_general_dilated")


def _dilated(n: int, a: int) -> int:
    return (n - 1) * a + 1 if n else 0


def conv_out_size(n: int, k: int, s: int, lo: int, hi: int, a: int, d: int) -> int:
    """Output length along one axis (negative when the kernel overhangs the padded input)."""
    return (lo + _dilated(n, a) + hi - _dilated(k, d)) // s + 1


@conv_general_dilated.def_abstract_eval
def _conv_shape(lhs: ShapeDtype, rhs: ShapeDtype, *, window_strides: tuple, padding: tuple, lhs_dilation: tuple,
                rhs_dilation: tuple, feature_group_count: int, flip: bool) -> ShapeDtype:
    name = "conv_general_dilated"
    check_dtype(name, lhs, FLOATS)
    nd = lhs.ndim - 2
    shapes = f"input {tuple(lhs.shape)}, weight {tuple(rhs.shape)}"
    if lhs.dtype is not rhs.dtype:
        raise RuntimeError(f"{name}: input dtype {lhs.dtype.name} and weight dtype {rhs.dtype.name} differ")
    if nd not in (1, 2, 3) or rhs.ndim != lhs.ndim:
        raise RuntimeError(f"{name}: expected (N, C, L), (N, C, H, W) or (N, C, D, H, W) input and a weight of the "
                           f"same rank: {shapes}")
    if not len(window_strides) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == nd:
        raise RuntimeError(f"{name}: expected {nd} strides, padding pairs and dilations for {shapes}")
    if min((*window_strides, *lhs_dilation, *rhs_dilation), default=1) < 1:
        raise RuntimeError(f"{name}: strides and dilations must be positive for {shapes}")
    g = feature_group_count
    if g < 1 or rhs.shape[0] % g or lhs.shape[1] != rhs.shape[1] * g:
        raise RuntimeError(
            f"{name}: {shapes} with feature_group_count={g}: expected {rhs.shape[1] * g} input channels "
            f"and output channels divisible by {g}"
        )
    out = [conv_out_size(n, k, s, lo, hi, a, d) for n, k, s, (lo, hi), a, d in
           zip(lhs.shape[2:], rhs.shape[2:], window_strides, padding, lhs_dilation, rhs_dilation)]
    if min(out) < 1:
        raise RuntimeError(f"{name}: the kernel is larger than the padded input ({shapes}, padding {padding})")
    return ShapeDtype((lhs.shape[0], rhs.shape[0], *out), lhs.dtype)


def _conv(lhs: Any, rhs: Any, **params: Any) -> Any:
    return conv_general_dilated.bind(lhs, rhs, **params)


def _groups_swap(w: Any, g: int) -> Any:
    """(G*A, B, *k) -> (G*B, A, *k): swap the two channel axes inside each group."""
    if g == 1:
        return _swap01(w)
    a, b, ks = w.shape[0] // g, w.shape[1], tuple(w.shape[2:])
    w = reshape.bind(w, new_sizes=(g, a, b, *ks))
    w = transpose.bind(w, permutation=(0, 2, 1, *range(3, 3 + len(ks))))
    return reshape.bind(w, new_sizes=(g * b, a, *ks))


def _channels_first_groups(x: Any, g: int) -> Any:
    """(N, G*C, *sp) -> (C, G*N, *sp): batch and channels swapped, groups kept outermost."""
    if g == 1:
        return _swap01(x)
    n, c, sp = x.shape[0], x.shape[1] // g, tuple(x.shape[2:])
    x = reshape.bind(x, new_sizes=(n, g, c, *sp))
    x = transpose.bind(x, permutation=(2, 1, 0, *range(3, 3 + len(sp))))
    return reshape.bind(x, new_sizes=(c, g * n, *sp))


def _swap01(x: Any) -> Any:
    return transpose.bind(x, permutation=(1, 0, *range(2, x.ndim)))


def transpose_lhs(ct: Any, rhs: Any, lhs_shape: tuple, *, window_strides: tuple, padding: tuple,
                   lhs_dilation: tuple, rhs_dilation: tuple, feature_group_count: int, flip: bool) -> Any:
    """dx = ct (spread by the stride) convolved with the kernel read the other way: the transpose of
    a convolution in its input (``lhs_shape``), which is also PyTorch's ``conv_transpose``."""
    pads = []
    for n, k, p, (lo, _), a, d, s in zip(lhs_shape[2:], rhs.shape[2:], ct.shape[2:], padding, lhs_dilation,
                                          rhs_dilation, window_strides):
        pads.append((_dilated(k, d) - 1 - lo, _dilated(n, a) + lo - _dilated(p, s)))
    kernel = _groups_swap(rhs, feature_group_count)
    return _conv(ct, kernel, window_strides=lhs_dilation, padding=tuple(pads), lhs_dilation=window_strides,
                 rhs_dilation=rhs_dilation, feature_group_count=feature_group_count, flip=not flip)


def _transpose_rhs(ct: Any, lhs: Any, rhs_shape: tuple, *, window_strides: tuple, padding: tuple,
                   lhs_dilation: tuple, rhs_dilation: tuple, feature_group_count: int, flip: bool) -> Any:
    """dw = the input correlated with ct (batch summed as the channel axis), per group."""
    g = feature_group_count
    geometry = list(zip(lhs.shape[2:], rhs_shape[2:], ct.shape[2:], padding, lhs_dilation, rhs_dilation,
                        window_strides))
    if not flip:  # dw[k] = sum_p x_p[k*d + p*s] ct[p]: the input is the lhs, ct the kernel
        pads = tuple((lo, _dilated(p, s) - _dilated(n, a) + _dilated(k, d) - lo - 1)
                     for n, k, p, (lo, _), a, d, s in geometry)
        out = _conv(_channels_first_groups(lhs, g), _swap01(ct), window_strides=rhs_dilation, padding=pads,
                    lhs_dilation=lhs_dilation, rhs_dilation=window_strides, feature_group_count=g, flip=False)
        return _swap01(out)  # (C/G, O, *k) -> (O, C/G, *k)
    # flipped: dw[k] = sum_i x[i] ct_s[k*d + i*a + lo - (K-1)*d]: ct is the lhs, the input the kernel
    pads = tuple((_dilated(k, d) - 1 - lo, _dilated(n, a) + lo - _dilated(p, s))
                 for n, k, p, (lo, _), a, d, s in geometry)
    out = _conv(_channels_first_groups(ct, g), _swap01(lhs), window_strides=rhs_dilation, padding=pads,
                lhs_dilation=window_strides, rhs_dilation=lhs_dilation, feature_group_count=g, flip=False)
    og, cg, ks = rhs_shape[0] // g, rhs_shape[1], tuple(rhs_shape[2:])
    out = reshape.bind(out, new_sizes=(og, g, cg, *ks))  # (O/G, G*C/G, *k) -> (O, C/G, *k)
    out = transpose.bind(out, permutation=(1, 0, *range(2, 3 + len(ks))))
    return reshape.bind(out, new_sizes=tuple(rhs_shape))


def _conv_transpose(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list:
    if ops.is_linear(lhs):
        return [transpose_lhs(ct, rhs, tuple(lhs.shape), **params), None]
    return [None, _transpose_rhs(ct, lhs, tuple(rhs.shape), **params)]


conv_general_dilated.def_impl(cpu.conv_general)
conv_general_dilated.def_impl(kernel("conv", "conv_general"), device="cuda")
conv_general_dilated.def_jvp(
    lambda dx, x, w, out, **params: _conv(dx, w, **params),
    lambda dw, x, w, out, **params: _conv(x, dw, **params),
)
conv_general_dilated.def_transpose(_conv_transpose, bilinear=True)
