"""``tidu.nn.init``: fill a tensor in place from tidu's RNG (PyTorch's formulas for the bounds).

Each function writes under ``no_grad`` with ``tidu.core.inplace.assign_`` and returns the
tensor. The draws come from ``tidu.rand``/``tidu.randn`` (the ``generator`` given, else the one
``tidu.manual_seed`` seeds), so the values differ from PyTorch's but follow the same distributions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import ops
from ..core import dtypes
from ..core.grad_mode import no_grad
from ..core.inplace import assign_
from ..tensor import Tensor

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_", "orthogonal_",
    "sparse_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
    # PyTorch's deprecated names without the trailing underscore
    "constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal", "orthogonal", "sparse", "uniform",
    "xavier_normal", "xavier_uniform",
]


def _fill(tensor: Tensor, value: Tensor, op: str) -> Tensor:
    with no_grad():
        return assign_(tensor, value.to(tensor.dtype), op=op)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float | int:
    """The recommended gain for a nonlinearity (PyTorch's table).

    >>> import tidu
    >>> tidu.nn.init.calculate_gain("relu"), tidu.nn.init.calculate_gain("tanh")
    (1.4142135623730951, 1.6666666666666667)
    """
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1  # (an int, as PyTorch's)
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int | float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


_calculate_correct_fan = _fan  # PyTorch's private name, which some libraries call


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``U(a, b)``.

    >>> import tidu
    >>> w = tidu.nn.init.uniform_(tidu.empty(1000), -2.0, 2.0)
    >>> bool(w.amax() <= 2.0), bool(-w.amax() <= 2.0)
    (True, True)
    """
    return _fill(tensor, ops.rand(tensor.shape, generator=generator, dtype=tensor.dtype) * (b - a) + a, "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from ``N(mean, std**2)``.

    >>> import tidu
    >>> w = tidu.nn.init.normal_(tidu.empty(10000), 3.0, 0.5)
    >>> round(w.mean().item())
    3
    """
    return _fill(tensor, ops.randn(tensor.shape, generator=generator, dtype=tensor.dtype) * std + mean, "normal_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with ``val``.

    >>> import tidu
    >>> tidu.nn.init.constant_(tidu.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    return _fill(tensor, ops.full(tuple(tensor.shape), val, dtype=tensor.dtype), "constant_")


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros.

    >>> import tidu
    >>> tidu.nn.init.zeros_(tidu.ones(2))
    tensor([0., 0.])
    """
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones.

    >>> import tidu
    >>> tidu.nn.init.ones_(tidu.zeros(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: ``U(-a, a)`` with ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    >>> import tidu
    >>> w = tidu.nn.init.xavier_uniform_(tidu.empty(30, 20))
    >>> bool(w.amax() <= (6 / 50) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: ``N(0, std**2)`` with ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    >>> import tidu
    >>> tidu.nn.init.xavier_normal_(tidu.empty(3, 2)).shape
    tidu.Size([3, 2])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He uniform: ``U(-b, b)`` with ``b = gain * sqrt(3 / fan)`` (``fan`` by ``mode``).

    >>> import tidu
    >>> w = tidu.nn.init.kaiming_uniform_(tidu.empty(4, 16), a=5 ** 0.5)
    >>> bool(w.amax() <= 16 ** -0.5)
    True
    """
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He normal: ``N(0, std**2)`` with ``std = gain / sqrt(fan)``.

    >>> import tidu
    >>> tidu.nn.init.kaiming_normal_(tidu.empty(3, 2), mode="fan_out", nonlinearity="relu").shape
    tidu.Size([3, 2])
    """
    if 0 in tensor.shape:
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Fill with draws from ``N(mean, std**2)`` truncated to ``[a, b]``: uniform draws between the
    normal CDF's values at ``a`` and ``b``, mapped back through its inverse, then clamped (as
    PyTorch's, whose warning about bounds far in a tail applies here too).

    >>> import tidu
    >>> w = tidu.nn.init.trunc_normal_(tidu.empty(1000), std=0.02, a=-0.03, b=0.03)
    >>> bool(w.abs().amax() <= 0.03)
    True
    """
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    low, high = (_normal_cdf((a - mean) / std), _normal_cdf((b - mean) / std)) if std > 0 else (0.5, 0.5)
    u = low + ops.rand(tensor.numel(), generator=generator, dtype=dtypes.float64).numpy() * (high - low)
    values = np.clip(_normal_ppf(u) * std + mean, a, b)
    return _fill(tensor, ops.tensor(values.reshape(tuple(tensor.shape)), dtype=tensor.dtype), "trunc_normal_")


def _normal_cdf(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# Acklam's rational approximation of the standard normal's inverse CDF (relative error < 1.2e-9)
_PPF_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
          -3.066479806614716e01, 2.506628277459239e00)
_PPF_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
          -1.328068155288572e01)
_PPF_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
          4.374664141464968e00, 2.938163982698783e00)
_PPF_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)


def _normal_ppf(p: np.ndarray) -> np.ndarray:
    """The standard normal quantile of each probability in ``p`` (0 and 1 give -inf and inf).

    >>> from tidu.nn.init import _normal_ppf
    >>> [round(float(v), 6) for v in _normal_ppf(np.array([0.5, 0.975, 0.001]))]
    [0.0, 1.959964, -3.090232]
    """
    p = np.asarray(p, dtype=np.float64)
    out = np.empty_like(p)

    def poly(coeffs: tuple, x: np.ndarray) -> np.ndarray:
        acc = np.zeros_like(x)
        for c in coeffs:
            acc = acc * x + c
        return acc

    tail = 0.02425
    lower, upper = p < tail, p > 1 - tail
    mid = ~(lower | upper)
    q = p[mid] - 0.5
    r = q * q
    out[mid] = poly(_PPF_A, r) * q / (poly(_PPF_B, r) * r + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        for where, q, sign in ((lower, np.sqrt(-2 * np.log(p[lower])), 1.0),
                               (upper, np.sqrt(-2 * np.log1p(-p[upper])), -1.0)):
            out[where] = sign * poly(_PPF_C, q) / (poly(_PPF_D, q) * q + 1)
    out[p == 0.0] = -np.inf
    out[p == 1.0] = np.inf
    return out


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal, zeros elsewhere).

    >>> import tidu
    >>> tidu.nn.init.eye_(tidu.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, ops.eye(*tensor.shape, dtype=tensor.dtype), "eye_")


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: a convolution by it keeps
    its input channels (the first ``min(out // groups, in)`` of each group).

    >>> import tidu
    >>> w = tidu.nn.init.dirac_(tidu.empty(2, 2, 3))
    >>> tidu.nn.functional.conv1d(tidu.tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]), w, padding=1)
    tensor([[[1., 2., 3.],
             [4., 5., 6.]]])
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    value = np.zeros(sizes)
    centre = tuple(n // 2 for n in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            value[(g * per_group + d, d, *centre)] = 1
    return _fill(tensor, ops.tensor(value, dtype=tensor.dtype, device=tensor.device), "dirac_")


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Fill a 2-D tensor with normal draws (``std``), then zero ``ceil(sparsity * rows)`` random
    rows of each column (Martens, 2010). Draws from tidu's generator (or ``generator``).

    >>> import tidu
    >>> w = tidu.nn.init.sparse_(tidu.empty(4, 3), sparsity=0.5)
    >>> (w == 0).sum(0).tolist()
    [2, 2, 2]
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    value = ops.randn(rows, cols, generator=generator, dtype=dtypes.float64).numpy() * std
    for col in range(cols):
        value[ops.randperm(rows, generator=generator).numpy()[:num_zeros], col] = 0
    return _fill(tensor, ops.tensor(value, dtype=tensor.dtype, device=tensor.device), "sparse_")


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (dims after the first flattened): the Q of a QR
    factorization of normal draws, signs fixed by R's diagonal, times ``gain`` (Saxe et al.).

    >>> import tidu
    >>> w = tidu.nn.init.orthogonal_(tidu.empty(3, 5))
    >>> bool(((w @ w.T) - tidu.eye(3)).abs().amax() < 1e-5)
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = ops.randn(rows, cols, generator=generator, dtype=dtypes.float64).numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, ops.tensor(q.reshape(tuple(tensor.shape)) * gain, dtype=tensor.dtype), "orthogonal_")


def _deprecated(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """``fn`` under its old name without the trailing underscore, warning as PyTorch's does.

    >>> import warnings, tidu
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     tidu.nn.init.constant(tidu.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    >>> caught[0].category.__name__, str(caught[0].message)
    ('FutureWarning', '`nn.init.constant` is now deprecated in favor of `nn.init.constant_`.')
    """
    new = fn.__name__
    old = new[:-1]

    def alias(*args: Any, **kwargs: Any) -> Tensor:
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = f"Deprecated: ``{new}`` (this name warns with a ``FutureWarning``)."
    return alias


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
