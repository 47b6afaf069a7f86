"""``tidu.special``: ``torch.special``'s names for the special functions and their relatives.

Most are tidu's own functions under SciPy's names (``gammaln`` is ``lgamma``, ``psi`` is
``digamma``, ``expit`` is ``sigmoid``); ``ndtri`` is a primitive of its own, and ``ndtr``,
``entr``, ``xlog1py`` and ``multigammaln`` are composed. Not here: the Bessel functions, ``erfcx``,
``log_ndtr``, ``zeta`` and the incomplete gamma functions.

>>> import tidu
>>> tidu.special.ndtri(tidu.tensor([0.025, 0.5]))
tensor([-1.9600,  0.0000])
"""

from __future__ import annotations

import math
from typing import Any

from .core import dtypes
from .core.primitive import bind
from .ops import activation, pointwise, reduce
from .ops import math as ops_math
from .ops import special as ops_special
from .ops._operands import float_operand
from .primitives import special as sp

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "log1p", "log_softmax",
    "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py",
    "xlogy",
]

erf = ops_math.erf
erfc = ops_special.erfc
erfinv = ops_special.erfinv
gammaln = ops_special.lgamma
digamma = psi = ops_special.digamma
polygamma = ops_special.polygamma
expit = ops_math.sigmoid
logit = pointwise.logit
xlogy = pointwise.xlogy
sinc = pointwise.sinc
log1p = ops_math.log1p
expm1 = ops_math.expm1
exp2 = ops_math.exp2
round = ops_math.round  # noqa: A001
logsumexp = reduce.logsumexp
softmax = activation.softmax
log_softmax = activation.log_softmax

_SQRT_HALF = math.sqrt(0.5)


def ndtr(input: Any) -> Any:  # noqa: A002
    """The standard normal CDF ``erfc(-x / sqrt(2)) / 2`` (accurate in the lower tail).

    >>> import tidu
    >>> tidu.special.ndtr(tidu.tensor([0.0, -1.0, 1.0]))
    tensor([0.5000, 0.1587, 0.8413])
    """
    x = float_operand(input, "special_ndtr")
    return ops_special.erfc(x * -_SQRT_HALF) * 0.5


def ndtri(input: Any) -> Any:  # noqa: A002
    """The standard normal quantile, the inverse of ``ndtr``: ``sqrt(2) erfinv(2p - 1)`` with
    ``2p - 1`` never rounded, so accurate for tiny ``p``; ``-inf``/``inf`` at 0/1, NaN outside.

    Gradient: ``d ndtri(p) = sqrt(2 pi) exp(ndtri(p)**2 / 2) dp`` (primitive ``ndtri``).

    >>> import tidu
    >>> tidu.special.ndtri(tidu.tensor([1e-30, 0.0], dtype=tidu.float64))
    tensor([-11.4640,     -inf], dtype=tidu.float64)
    """
    x = float_operand(input, "special_ndtri")
    if x.dtype.is_half:
        raise dtypes.not_implemented("ndtri_cpu", x.dtype)  # PyTorch has no half kernel for it
    return bind(sp.ndtri, x)


def entr(input: Any) -> Any:  # noqa: A002
    """Elementwise entropy ``-x log x``: 0 at 0, ``-inf`` for negative ``x``.

    >>> import tidu
    >>> tidu.special.entr(tidu.tensor([0.0, 0.5, -1.0]))
    tensor([0.0000, 0.3466,   -inf])
    """
    x = float_operand(input, "special_entr")
    positive = ops_math.gt(x, 0)
    safe = ops_math.where(positive, x, 1.0)
    inner = ops_math.where(ops_math.eq(x, 0), 0.0, -math.inf)
    return ops_math.where(positive, -(safe * ops_math.log(safe)), ops_math.where(ops_math.isnan(x), x, inner))


def xlog1py(input: Any, other: Any) -> Any:  # noqa: A002
    """``input * log1p(other)``, but 0 where ``input`` is 0 (unless ``other`` is NaN).

    >>> import tidu
    >>> tidu.special.xlog1py(tidu.tensor([0.0, 2.0]), tidu.tensor([-1.0, 1.0]))
    tensor([0.0000, 1.3863])
    """
    return pointwise.x_times_log(input, other, ops_math.log1p, 0.0,
                                 lambda y: ops_math.logical_or(ops_math.le(y, -1), ops_math.eq(y, math.inf)))


def multigammaln(input: Any, p: int) -> Any:  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p``:
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2)``; it is
    real for ``x > (p - 1) / 2`` (not checked, as in PyTorch 2.13).

    >>> import tidu
    >>> tidu.special.multigammaln(tidu.tensor([2.5, 3.0]), 2)
    tensor([0.8570, 1.5502])
    """
    x = float_operand(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = ops_special.lgamma(x)
    for j in range(1, p):
        total = total + ops_special.lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)
