"""The special functions with PyTorch's names: ``erfc``, ``erfinv``, ``lgamma``, ``digamma``,
``polygamma``, ``i0`` (primitives of tidu/primitives/special.py). Integer and bool inputs are promoted to
the default float dtype."""

from __future__ import annotations

import math
from typing import Any

from ..core import dtypes
from ..core.primitive import Var, bind
from ..primitives import special as sp
from ..tensor import Tensor
from ._operands import constant, float_operand, operands
from .math import _unary

__all__ = ["digamma", "erfc", "erfinv", "i0", "igamma", "igammac", "lgamma", "mvlgamma", "polygamma"]

erfc = _unary(sp.erfc, "erfc", """The complementary error function ``1 - erf(input)``, accurate where
    ``erf`` is close to 1.

    Gradient: ``d erfc(x) = -2 / sqrt(pi) exp(-x**2) dx`` (primitive ``erfc``).

    >>> import tidu
    >>> tidu.erfc(tidu.tensor([0.0, 1.0, 10.0], dtype=tidu.float64))
    tensor([1.0000e+00, 1.5730e-01, 2.0885e-45], dtype=tidu.float64)
    """)
erfinv = _unary(sp.erfinv, "erfinv", """The inverse error function on ``[-1, 1]``: ``erf(erfinv(y)) = y``;
    ``+-1`` give ``+-inf`` and ``|y| > 1`` NaN.

    Gradient: ``d erfinv(y) = sqrt(pi) / 2 exp(erfinv(y)**2) dy`` (primitive ``erfinv``).

    >>> import tidu
    >>> x = tidu.tensor([0.0, 0.5, -1.0], requires_grad=True)
    >>> tidu.erfinv(x)
    tensor([ 0.0000,  0.4769,    -inf], grad_fn=<erfinv>)
    >>> tidu.erfinv(x[:2]).sum().backward()
    >>> x.grad
    tensor([0.8862, 1.1126, 0.0000])
    """)
lgamma = _unary(sp.lgamma, "lgamma", """``log |Gamma(input)|``; ``+inf`` at 0 and the negative integers.

    Gradient: ``d lgamma(x) = digamma(x) dx`` (primitive ``lgamma``).

    >>> import tidu
    >>> tidu.lgamma(tidu.tensor([0.5, 1.0, 4.0, -1.0]))
    tensor([0.5724, 0.0000, 1.7918,    inf])
    """)
digamma = _unary(sp.digamma, "digamma", """The digamma function ``d/dx log Gamma(x)``: ``-inf`` at ``+0``,
    ``+inf`` at ``-0``, NaN at the negative integers (PyTorch's conventions).

    Gradient: ``d digamma(x) = polygamma(1, x) dx`` (primitive ``digamma``).

    >>> import tidu
    >>> tidu.digamma(tidu.tensor([1.0, 0.5, 0.0, -2.0]))
    tensor([-0.5772, -1.9635,    -inf,     nan])
    """)
i0 = _unary(sp.i0, "i0", """The modified Bessel function of the first kind of order 0,
    ``sum_k (input / 2)**(2k) / (k!)**2``; even, and ``inf`` past ``|x|`` = 709.78 (NaN at
    ``+-inf``, as PyTorch's and SciPy's).

    Gradient: ``d i0(x) = i1(x) dx`` (primitive ``i0``; ``i1`` is ``tidu.special.i1``).

    >>> import tidu
    >>> x = tidu.tensor([0.0, 1.0, -2.0], requires_grad=True)
    >>> tidu.i0(x)
    tensor([1.0000, 1.2661, 2.2796], grad_fn=<i0>)
    >>> tidu.i0(x).sum().backward()
    >>> x.grad
    tensor([ 0.0000,  0.5652, -1.5906])
    """)


def polygamma(n: int, input: Any) -> Any:  # noqa: A002
    """The ``n``-th derivative of ``digamma`` (``n = 0`` is ``digamma``); ``n`` a non-negative int.

    Gradient: ``d polygamma(n, x) = polygamma(n + 1, x) dx`` (primitive ``polygamma``).

    >>> import tidu
    >>> tidu.polygamma(1, tidu.tensor([1.0, 0.5]))
    tensor([1.6449, 4.9348])
    >>> x = tidu.tensor([2.0], requires_grad=True)
    >>> tidu.polygamma(2, x).backward()
    >>> x.grad
    tensor([0.4939])
    """
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = float_operand(input, "polygamma")
    if n == 0:
        return digamma(x)
    return bind(sp.polygamma, constant(float(n), x.dtype, x, tuple(x.shape)), x)


def mvlgamma(input: Any, p: int) -> Any:  # noqa: A002
    """The log of the multivariate gamma function of dimension ``p`` (``special.multigammaln``):
    ``p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(x - j / 2)``; it is real for ``x > (p - 1) / 2``
    (not checked, as in PyTorch 2.13).

    Gradient: ``sum_{j < p} digamma(x - j / 2) dx`` (composed of ``lgamma``).

    >>> import tidu
    >>> tidu.mvlgamma(tidu.tensor([2.5, 3.0]), 2)
    tensor([0.8570, 1.5502])
    """
    x = float_operand(input, "mvlgamma")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    total = lgamma(x)
    for j in range(1, p):
        total = total + lgamma(x - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


def float_pair(prim: Any, input: Any, other: Any, op: str) -> Any:  # noqa: A002
    """``prim`` on two tensors (no Python numbers, as PyTorch's signature), promoted and broadcast
    together; PyTorch has no integer kernel, so an integer result type raises its error."""
    for position, (name, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor | Var):
            raise TypeError(f"{op}(): argument '{name}' (position {position}) must be Tensor, not {type(value).__name__}")
    result = dtypes.result_type(input, other)
    if not result.is_floating_point:
        raise dtypes.not_implemented(f"{prim.name}_cpu", result)
    return bind(prim, *operands(input, other, op=op))


def igamma(input: Any, other: Any) -> Any:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(a, x) = gamma(a, x) / Gamma(a)`` for
    ``a = input >= 0``, ``x = other >= 0`` (``special.gammainc``); NaN outside, and at
    ``a = x = 0``. Accurate to a few ulps except where the value is tiny: the relative error
    grows like ``|log P|`` ulps (the exponent of ``x^a e^-x``).

    Gradient: ``d P = x^(a - 1) e^-x / Gamma(a) dx`` (primitive ``igamma``); as in PyTorch there is
    none for ``a``: a backward that needs it raises ``NotImplementedError``.

    >>> import tidu
    >>> a = tidu.tensor([0.5, 2.0, 100.0], dtype=tidu.float64)
    >>> x = tidu.tensor([1.0, 1.0, 50.0], dtype=tidu.float64, requires_grad=True)
    >>> tidu.igamma(a, x)
    tensor([8.4270e-01, 2.6424e-01, 3.2001e-10], dtype=tidu.float64,
           grad_fn=<igamma>)
    >>> tidu.igamma(a, x).sum().backward()
    >>> x.grad
    tensor([2.0755e-01, 3.6788e-01, 3.2606e-10], dtype=tidu.float64)
    """
    return float_pair(sp.igamma, input, other, "igamma")


def igammac(input: Any, other: Any) -> Any:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, computed directly
    where ``Q`` is small (``special.gammaincc``).

    Gradient: ``d Q = -x^(a - 1) e^-x / Gamma(a) dx`` (primitive ``igammac``; none for ``a``).

    >>> import tidu
    >>> tidu.igammac(tidu.tensor([0.5, 2.0, 1.0]), tidu.tensor([1.0, 1.0, 50.0]))
    tensor([1.5730e-01, 7.3576e-01, 1.9287e-22])
    """
    return float_pair(sp.igammac, input, other, "igammac")


def _polygamma_method(self: Any, n: int) -> Any:
    return polygamma(n, self)


METHODS = {
    "erfc": erfc, "erfinv": erfinv, "i0": i0, "lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method,
    "mvlgamma": mvlgamma, "igamma": igamma, "igammac": igammac,
}
