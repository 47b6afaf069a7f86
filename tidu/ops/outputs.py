"""``out=``: PyTorch's output argument on the ``tidu.*`` functions that take one.

``tidu.add(a, b, out=c)`` computes ``a + b`` as usual, then writes it into ``c`` and returns
``c``, as PyTorch does: the result is cast to ``c``'s dtype where PyTorch's promotion allows it
(never float into an integer ``out``), ``c`` is resized to the result's shape (with PyTorch's
warning when it had elements), and ``out=`` refuses autograd (PyTorch's error when an argument
requires grad). Functions with several results (``max`` over a dim, ``sort``, ``topk``...) take
a tuple of tensors. Creation functions (``zeros``, ``arange``...) make their values in ``out``'s
dtype and on its device unless ``dtype=`` says otherwise.

Only the ``tidu.*`` namespace functions take ``out``; ``tidu.ops`` and the ``Tensor`` methods
are the plain functions (no wrapper on their path).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from ..core import dtypes, grad_mode
from ..tensor import Tensor

# the functions PyTorch gives ``out=`` (checked against PyTorch 2.13's signatures)
OUT_NAMES = frozenset("""
abs acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax any arange argmax argmin asin
asinh atan atan2 atanh baddbmm bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor
bmm bucketize cat ceil cholesky_inverse cholesky_solve clamp clip column_stack concat concatenate cos cosh cross
cummax cummin cumprod cumsum deg2rad diag digamma div divide dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye
fix float_power floor floor_divide fmax fmin fmod frac frexp full gather gcd ge greater greater_equal gt heaviside
histc hstack hypot i0 igamma igammac index_select inner inverse isneginf isposinf kron kthvalue lcm ldexp le lerp less
less_equal lgamma linspace log log10 log1p log2 logaddexp logaddexp2 logcumsumexp logical_and logical_not logical_or
logical_xor logit logspace logsumexp lt masked_select matmul matrix_power max maximum mean median min minimum mm mode
mul multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum ne neg negative nextafter nonzero
norm normal not_equal ones outer polygamma pow prod quantile rad2deg rand randint randn randperm range reciprocal
remainder round row_stack rsqrt searchsorted sgn sigmoid sign signbit sin sinc sinh sort sqrt square stack std sub
subtract sum take_along_dim tan tanh topk tril triu true_divide trunc var vdot vstack where xlogy zeros
take tensordot diff index_add index_copy index_reduce scatter scatter_add scatter_reduce msort renorm copysign
chain_matmul narrow_copy clamp_min clamp_max cholesky ger histogram lu_solve lu_unpack svd triangular_solve geqrf
conj_physical
""".split())

# creation functions: their values are made in ``out``'s dtype and on its device
_CREATION = frozenset("arange empty eye full linspace logspace ones rand randint randn randperm range zeros".split())


def with_out(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``fn`` taking PyTorch's keyword ``out`` (module docstring).

    >>> import tidu
    >>> buffer = tidu.zeros(2)
    >>> tidu.add(tidu.ones(2), 1, out=buffer) is buffer, buffer
    (True, tensor([2., 2.]))
    """

    @functools.wraps(fn)
    def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if name in _CREATION and isinstance(out, Tensor):
            kwargs.setdefault("dtype", out.dtype)
            kwargs.setdefault("device", out.device)
        result = fn(*args, **kwargs)
        if isinstance(result, tuple):
            if not isinstance(out, tuple | list) or len(out) != len(result):
                raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
            written = [_write(name, r, o) for r, o in zip(result, out)]
            return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
        return _write(name, result, out)

    return call


def _write(name: str, result: Any, out: Any) -> Tensor:
    """``result`` written into ``out`` (PyTorch's checks, resize and cast); ``out`` returned."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.is_grad_enabled() and (out.requires_grad or isinstance(result, Tensor) and result.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if not isinstance(result, Tensor):
        raise TypeError(f"{name}(): out= takes Tensors, the result is a {type(result).__name__}")
    if result.device != out.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    if result.dtype is not out.dtype and result.dtype.category > out.dtype.category:
        raise RuntimeError(f"result type {dtypes.TORCH_NAMES[result.dtype.name]} can't be cast to the desired output "
                           f"type {dtypes.TORCH_NAMES[out.dtype.name]}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does "
                f"not match the required output shape {list(result.shape)}. This behavior is deprecated, and in a "
                "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning, stacklevel=3)
        out.resize_(tuple(result.shape))
    with grad_mode.no_grad():
        out.copy_(result)
    return out
