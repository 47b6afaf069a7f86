"""``tidu.special``: ``torch.special``'s names for the special functions and their relatives.

Most are tidu's own functions under SciPy's names (``gammaln`` is ``lgamma``, ``psi`` is
``digamma``, ``expit`` is ``sigmoid``); ``ndtri``, ``erfcx``, ``log_ndtr`` and the modified Bessel
functions ``i0``, ``i0e``, ``i1``, ``i1e``, the incomplete gamma functions ``gammainc``,
``gammaincc``, the Hurwitz ``zeta``, the Bessel functions ``bessel_j0``, ``j1``, ``y0``, ``y1``,
``modified_bessel_k0``, ``k1`` (and scaled), ``spherical_bessel_j0``, ``airy_ai`` and the orthogonal
polynomials (Chebyshev, shifted Chebyshev, Hermite, Laguerre, Legendre) are primitives of their own,
and ``ndtr``, ``entr``, ``xlog1py`` and ``multigammaln`` are composed.

>>> import tidu
>>> tidu.special.ndtri(tidu.tensor([0.025, 0.5]))
tensor([-1.9600,  0.0000])
"""

from __future__ import annotations

import math
from typing import Any

from numba.extending import register_jitable

from .backends.cpu.fastmath import fma_exact
from .core import dtypes
from .core.grad_mode import no_grad
from .core.primitive import Var, bind
from .ops import activation, pointwise, reduce
from .ops import math as ops_math
from .ops import special as ops_special
from .ops._operands import float_operand, operands
from .ops.math import _unary
from .ops.outputs import with_out
from .primitives import special as sp
from .primitives.elementwise import binary
from .tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e",
    "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr",
    "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
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
multigammaln = ops_special.mvlgamma
i0 = modified_bessel_i0 = ops_special.i0


def gammainc(input: Any, other: Any) -> Any:  # noqa: A002
    """The regularized lower incomplete gamma function ``P(a, x)`` (``tidu.igamma``).

    >>> import tidu
    >>> tidu.special.gammainc(tidu.tensor([1.0, 3.0]), tidu.tensor([1.0, 0.5]))
    tensor([0.6321, 0.0144])
    """
    return ops_special.float_pair(sp.igamma, input, other, "special_gammainc")


def gammaincc(input: Any, other: Any) -> Any:  # noqa: A002
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` (``tidu.igammac``).

    >>> import tidu
    >>> tidu.special.gammaincc(tidu.tensor([1.0, 3.0]), tidu.tensor([1.0, 0.5]))
    tensor([0.3679, 0.9856])
    """
    return ops_special.float_pair(sp.igammac, input, other, "special_gammaincc")

erfcx = _unary(sp.erfcx, "special_erfcx", """The scaled complementary error function ``exp(x**2) erfc(x)``,
    finite where ``erfc`` underflows (about ``1 / (x sqrt(pi))`` for large ``x``).

    Gradient: ``d erfcx(x) = (2 x erfcx(x) - 2 / sqrt(pi)) dx`` (primitive ``erfcx``).

    >>> import tidu
    >>> tidu.special.erfcx(tidu.tensor([0.0, 1.0, 30.0, -2.0]))
    tensor([1.0000e+00, 4.2758e-01, 1.8794e-02, 1.0831e+02])
    """)
log_ndtr = _unary(sp.log_ndtr, "special_log_ndtr", """The log of the standard normal CDF, accurate in
    both tails (through ``erfcx`` below -1, so finite far past where ``ndtr`` underflows).

    Gradient: ``d log_ndtr(x) = sqrt(2 / pi) / erfcx(-x / sqrt(2)) dx`` (primitive ``log_ndtr``).

    >>> import tidu
    >>> tidu.special.log_ndtr(tidu.tensor([0.0, -40.0, 5.0], dtype=tidu.float64))
    tensor([-6.9315e-01, -8.0408e+02, -2.8665e-07], dtype=tidu.float64)
    """)

i0e = _unary(sp.i0e, "special_i0e", """The exponentially scaled modified Bessel function of order 0,
    ``exp(-|x|) i0(x)`` (finite everywhere: 0 at ``+-inf``).

    Gradient: ``d i0e(x) = (i1e(x) - sign(x) i0e(x)) dx`` (primitive ``i0e``).

    >>> import tidu
    >>> tidu.special.i0e(tidu.tensor([0.0, 1.0, -1000.0]))
    tensor([1.0000, 0.4658, 0.0126])
    """)
i1 = modified_bessel_i1 = _unary(sp.i1, "special_i1", """The modified Bessel function of the first kind
    of order 1, ``sum_k (x / 2)**(2k + 1) / (k! (k + 1)!)``; odd, ``+-inf`` past ``|x|`` = 709.78
    (NaN at ``+-inf``, as PyTorch's and SciPy's).

    Gradient: ``d i1(x) = (i0(x) - i1(x) / x) dx``, ``dx / 2`` at 0 (primitive ``i1``).

    >>> import tidu
    >>> x = tidu.tensor([0.0, 1.0, -2.0], requires_grad=True)
    >>> tidu.special.i1(x)
    tensor([ 0.0000,  0.5652, -1.5906], grad_fn=<i1>)
    >>> tidu.special.i1(x).sum().backward()
    >>> x.grad
    tensor([0.5000, 0.7009, 1.4843])
    """)
i1e = _unary(sp.i1e, "special_i1e", """The exponentially scaled modified Bessel function of order 1,
    ``exp(-|x|) i1(x)``.

    Gradient: ``d i1e(x) = (i0e(x) - i1e(x) (sign(x) + 1 / x)) dx``, ``dx / 2`` at 0 (primitive ``i1e``).

    >>> import tidu
    >>> tidu.special.i1e(tidu.tensor([0.0, 1.0, -1000.0]))
    tensor([ 0.0000,  0.2079, -0.0126])
    """)

_JY_DOC = """The Bessel function {what}: its power series below 2, Miller's backward
    recurrence with the Neumann series to 25, Hankel's expansion above; within 9 ulps of
    ``max(|value|, 1 / sqrt(x))`` (absolute near its zeros, as PyTorch's). {edges}

    No gradient, as in PyTorch (the result never requires grad).

    >>> import tidu
    >>> tidu.special.{name}(tidu.tensor({example}))
    {result}
    """
bessel_j0 = _unary(sp.bessel_j0, "special_bessel_j0", _JY_DOC.format(
    what="of the first kind of order 0, ``J0``", edges="Even; NaN at ``+-inf`` (PyTorch's).", name="bessel_j0",
    example="[0.0, 1.0, -2.5, 30.0]", result="tensor([ 1.0000,  0.7652, -0.0484, -0.0864])"))
bessel_j1 = _unary(sp.bessel_j1, "special_bessel_j1", _JY_DOC.format(
    what="of the first kind of order 1, ``J1``", edges="Odd; NaN at ``+-inf``.", name="bessel_j1",
    example="[0.0, 1.0, -2.5, 30.0]", result="tensor([ 0.0000,  0.4401, -0.4971, -0.1188])"))
bessel_y0 = _unary(sp.bessel_y0, "special_bessel_y0", _JY_DOC.format(
    what="of the second kind of order 0, ``Y0``", edges="``-inf`` at 0, NaN for ``x < 0`` and at ``inf``.",
    name="bessel_y0", example="[0.0, 1.0, 2.5, -1.0]", result="tensor([  -inf, 0.0883, 0.4981,    nan])"))
bessel_y1 = _unary(sp.bessel_y1, "special_bessel_y1", _JY_DOC.format(
    what="of the second kind of order 1, ``Y1``", edges="``-inf`` at 0, NaN for ``x < 0`` and at ``inf``.",
    name="bessel_y1", example="[0.0, 1.0, 2.5, -1.0]", result="tensor([   -inf, -0.7812,  0.1459,     nan])"))
airy_ai = _unary(sp.airy_ai, "special_airy_ai", """The Airy function ``Ai``, the solution of ``y'' = x y`` that
    decays for ``x -> inf``: ``sqrt(x / 3) / pi K_{1/3}(2/3 x^(3/2))`` above 1, its Maclaurin series
    on ``[-1, 1]``, Taylor steps along the equation to -9.5 and the oscillating expansion below.
    Within ``8 (1 + z)`` ulps of ``max(|Ai(x)|, |x|^(-1/4) / sqrt(pi))`` for ``z = 2/3 |x|^(3/2)``
    (the condition number of ``Ai`` itself grows like ``z``). NaN at ``+-inf``, as PyTorch's.

    No gradient, as in PyTorch (the result never requires grad).

    >>> import tidu
    >>> tidu.special.airy_ai(tidu.tensor([0.0, 1.0, -2.0, 10.0]))
    tensor([3.5503e-01, 1.3529e-01, 2.2741e-01, 1.1048e-10])
    """)
modified_bessel_k0 = _unary(sp.modified_bessel_k0, "special_modified_bessel_k0", """The modified Bessel
    function of the second kind of order 0 for ``x >= 0`` (``inf`` at 0, NaN below): its power
    series to 1, the trapezoid rule on ``int_0^inf exp(-x cosh t) dt`` to 20, then its asymptotic
    series; within 8 ulps of exact.

    No gradient, as in PyTorch (the result never requires grad).

    >>> import tidu
    >>> tidu.special.modified_bessel_k0(tidu.tensor([0.0, 0.5, 2.0, 30.0]))
    tensor([       inf, 9.2442e-01, 1.1389e-01, 2.0884e-14])
    """)
modified_bessel_k1 = _unary(sp.modified_bessel_k1, "special_modified_bessel_k1", """The modified Bessel
    function of the second kind of order 1 for ``x >= 0`` (about ``1 / x`` near 0).

    No gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.special.modified_bessel_k1(tidu.tensor([1e-30, 0.5, 2.0]))
    tensor([1.0000e+30, 1.6564e+00, 1.3987e-01])
    """)
scaled_modified_bessel_k0 = _unary(sp.scaled_modified_bessel_k0, "special_scaled_modified_bessel_k0",
                                   """``exp(x) K0(x)``, finite where ``K0`` underflows.

    No gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.special.scaled_modified_bessel_k0(tidu.tensor([0.5, 1000.0]))
    tensor([1.5241, 0.0396])
    """)
scaled_modified_bessel_k1 = _unary(sp.scaled_modified_bessel_k1, "special_scaled_modified_bessel_k1",
                                   """``exp(x) K1(x)``, finite where ``K1`` underflows.

    No gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.special.scaled_modified_bessel_k1(tidu.tensor([0.5, 1000.0]))
    tensor([2.7310, 0.0397])
    """)
spherical_bessel_j0 = _unary(sp.spherical_bessel_j0, "special_spherical_bessel_j0", """The spherical
    Bessel function of the first kind of order 0, ``sin(x) / x`` (1 at 0, 0 at ``+-inf``).

    No gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.special.spherical_bessel_j0(tidu.tensor([0.0, 1.0, -3.0]))
    tensor([1.0000, 0.8415, 0.0470])
    """)

_SQRT_HALF = math.sqrt(0.5)


def zeta(input: Any, other: Any) -> Any:  # noqa: A002
    """The Hurwitz zeta function ``sum_{k >= 0} (other + k) ** -input`` (``input > 1``; ``inf`` at
    ``input = 1`` and at the non-positive integers ``other``; NaN for ``input < 1``, and for a
    negative non-integer ``other`` unless ``input`` is an integer). Either argument may be a number.

    Gradient: ``d zeta(s, q) = -s zeta(s + 1, q) dq`` (primitive ``zeta``); as in PyTorch there is
    none in ``s``: a backward that needs it raises ``NotImplementedError``.

    >>> import tidu
    >>> tidu.special.zeta(tidu.tensor([2.0, 3.0, 1.0]), 1.0)
    tensor([1.6449, 1.2021,    inf])
    >>> tidu.special.zeta(2, tidu.tensor([0.5, -1.5], dtype=tidu.float64))
    tensor([4.9348, 9.3792], dtype=tidu.float64)
    """
    if not isinstance(input, Tensor | Var) and not isinstance(other, Tensor | Var):
        raise TypeError(f"special_zeta() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(other).__name__})")
    s, q = operands(input, other, op="special_zeta", float_only=True)
    if s.dtype.is_half:
        raise dtypes.not_implemented("zeta_cpu", s.dtype)  # PyTorch has no half kernel for it
    return bind(sp.zeta, s, q)


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


# --- the orthogonal polynomials ------------------------------------------------------------------
# PyTorch's kernels, step for step: computed in the operands' dtype (``type(x)`` gives it, so float32
# stays float32), its shortcuts for |x| = 1 and for large n (a closed form in acos), and its
# recurrences, which stop once a value turns NaN. Its x86 kernels for AVX2 and AVX512 are compiled
# with FMA, which contracts each recurrence step ``a * b - c`` into one rounding: so is ours (``fma_exact``).

_TWO_63 = 9223372036854775808.0


@register_jitable
def _degree(n):  # noqa: ANN001, ANN202
    """``n`` truncated to an integer as PyTorch's kernels cast it: NaN, the infinities and values
    beyond int64 read as int64's minimum (x86's conversion), so as a negative degree."""
    if n != n or not -_TWO_63 <= n < _TWO_63:
        return -1
    return int(n)


@register_jitable
def _three_term(x, n, p, q):  # noqa: ANN001, ANN202
    """``q_n`` from ``q_0 = p``, ``q_1 = q`` and ``q_{k+1} = 2x q_k - q_{k-1}`` (the Chebyshev
    recurrence), stopping at a NaN: ``q`` itself if that is NaN (where PyTorch's kernels, but
    ``T``'s, return an uninitialized value)."""
    r = q
    k = 2
    while k <= n and q == q:
        r = fma_exact(x + x, q, -p)
        p = q
        q = r
        k += 1
    return r


# Each Chebyshev kind past its edges (``_cheb_*``): its closed form in ``theta = acos(y)`` above
# PyTorch's degree threshold ``above``, else its three-term recurrence. The plain and the shifted
# polynomials (of ``y = 2x - 1``) differ only in their edges and thresholds, PyTorch's own.
@register_jitable
def _cheb_t(y, n, above):  # noqa: ANN001, ANN202
    f = type(y)
    if n > above and abs(y) < 1:
        return math.cos(f(n) * math.acos(y))
    if n == 0:
        return f(1)
    return y if n == 1 else _three_term(y, n, f(1), y)


@register_jitable
def _cheb_u(y, n, above):  # noqa: ANN001, ANN202
    f = type(y)
    if n > above and abs(y) < 1:
        theta = math.acos(y)
        if math.sin(theta) != 0:
            return math.sin(f(n + 1) * theta) / math.sin(theta)
        return f(n + 1) * math.cos(f(n + 1) * theta) / y
    if n == 0:
        return f(1)
    return y + y if n == 1 else _three_term(y, n, f(1), y + y)


@register_jitable
def _cheb_v(y, n, above, vertex):  # noqa: ANN001, ANN202
    f = type(y)
    if n > above and abs(y) < 1:
        theta = math.acos(y)
        if math.sin(theta / f(2)) != 1:
            return math.cos((f(n) + f(0.5)) * theta) / math.cos(theta / f(2))
        return vertex
    if n == 0:
        return f(1)
    return y + y - f(1) if n == 1 else _three_term(y, n, f(1), y + y - f(1))


@register_jitable
def _cheb_w(y, n, above, vertex):  # noqa: ANN001, ANN202
    f = type(y)
    if n > above and abs(y) < 1:
        theta = math.acos(y)
        if math.cos(theta / f(2)) != 1:
            return math.sin((f(n) + f(0.5)) * theta) / math.sin(theta / f(2))
        return vertex
    if n == 0:
        return f(1)
    return y + y + f(1) if n == 1 else _three_term(y, n, f(1), y + y + f(1))


@register_jitable
def _chebyshev_t(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if abs(x) == 1:
        return f(1) if x > 0 or n % 2 == 0 else f(-1)
    return _cheb_t(x, n, 6)


@register_jitable
def _chebyshev_u(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if abs(x) == 1:
        return f(n + 1) if x > 0 or n % 2 == 0 else f(-(n + 1))
    return _cheb_u(x, n, 8)


@register_jitable
def _chebyshev_v(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    alternating = f(n + n + 1) if n % 2 == 0 else f(-(n + n + 1))
    if abs(x) == 1:
        return f(1) if x > 0 else alternating
    return _cheb_v(x, n, 8, alternating)


@register_jitable
def _chebyshev_w(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    sign = f(1) if n % 2 == 0 else f(-1)
    if abs(x) == 1:
        return f(n + n + 1) if x > 0 else sign
    return _cheb_w(x, n, 8, f(n + n + 1) if x > 0 else sign)


@register_jitable
def _shifted_chebyshev_t(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if x == 1:
        return f(1)
    if x == 0:
        return f(1) if n % 2 == 0 else f(-1)
    return _cheb_t(x + x - f(1), n, 6)


@register_jitable
def _shifted_chebyshev_u(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if x == 1:
        return f(n + 1)
    if x == 0:
        return f(n + 1) if n % 2 == 0 else f(-(n + 1))
    return _cheb_u(x + x - f(1), n, 6)


@register_jitable
def _shifted_chebyshev_v(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    alternating = f(n + n + 1) if n % 2 == 0 else f(-(n + n + 1))
    if x == 1:
        return f(1)
    if x == 0:
        return alternating
    return _cheb_v(x + x - f(1), n, 6, alternating)


@register_jitable
def _shifted_chebyshev_w(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    sign = f(1) if n % 2 == 0 else f(-1)
    if x == 1:
        return f(n + n + 1)
    if x == 0:
        return sign
    return _cheb_w(x + x - f(1), n, 4, sign)


@register_jitable
def _hermite_limit(x):  # noqa: ANN001, ANN202
    """PyTorch's largest degree of the Hermite polynomials: 128 in float32, 512 in float64."""
    single = type(x)(16777217) == 16777216  # 2**24 + 1 rounds to 2**24 in float32 only
    return 128 if single else 512


@register_jitable
def _hermite_h(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if n == 0:
        return f(1)
    if n == 1:
        return x + x
    if n > _hermite_limit(x):
        return f(math.nan)
    p, q, r = f(1), x + x, f(0)
    for k in range(2, n + n, 2):
        r = fma_exact(x + x, q, -(f(k) * p))
        p = q
        q = r
    return r


@register_jitable
def _hermite_he(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if n == 0:
        return f(1)
    if n == 1:
        return x
    if n > _hermite_limit(x):
        return f(math.nan)
    p, q, r = f(1), x, x
    for k in range(1, n):
        r = fma_exact(x, q, -(f(k) * p))
        p = q
        q = r
    return r


@register_jitable
def _laguerre_l(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if abs(x) == 0 or n == 0:
        return f(1)
    p, q = f(1), f(1) - x
    r = q
    k = 1
    while k < n and q == q:
        r = fma_exact(f(k + k) + (f(1) - x), q, -(f(k) * p)) / f(k + 1)
        p = q
        q = r
        k += 1
    return r


@register_jitable
def _legendre_p(x, n):  # noqa: ANN001, ANN202
    f = type(x)
    n = _degree(n)
    if n < 0:
        return f(0)
    if abs(x) == 1:
        return f(1) if x > 0 or n % 2 == 0 else f(-1)
    if n == 0:
        return f(1)
    p, q = f(1), x
    r = q
    k = 1
    while k < n and q == q:
        r = fma_exact(f(k + k + 1) * x, q, -(f(k) * p)) / f(k + 1)
        p = q
        q = r
        k += 1
    return r


def _polynomial(name: str, scalar_fn: Any, doc: str) -> Any:
    """``tidu.special.<name>(x, n, *, out=None)`` on the primitive of ``scalar_fn``: no gradient,
    as PyTorch's (the result never requires grad)."""
    prim = binary(name, scalar_fn, nondiff=True)
    op = f"special_{name}"
    write_out = with_out(lambda result: result, op)

    def polynomial(x: Any, n: Any, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor | Var) and not isinstance(n, Tensor | Var):
            raise TypeError(f"{op}() received an invalid combination of arguments - got "
                            f"({type(x).__name__}, {type(n).__name__})")
        x, n = operands(x, n, op=op, float_only=True)
        if x.dtype.is_half:
            raise dtypes.not_implemented(f"{name}_cpu", x.dtype)  # PyTorch has no half kernel for them
        result = bind(prim, x, n)
        if out is None:
            return result
        with no_grad():  # a result without gradient goes even into an ``out`` that requires grad
            return write_out(result, out=out)

    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = doc
    return polynomial


_POLY_DOC = """{what}, by PyTorch's {how}.

    ``x`` and ``n`` broadcast together (either may be a number; integers compute in the default
    dtype); ``n`` is truncated to an integer, and a negative one (NaN, infinite) gives 0. {edges}
    No gradient, as in PyTorch (the result never requires grad).

    >>> import tidu
    >>> tidu.special.{name}(tidu.tensor({example}), {n})
    {result}
    """
_CHEBYSHEV = "recurrence ``P_(k+1) = 2x P_k - P_(k-1)`` (stopping at a NaN)"


def _doc(name: str, what: str, how: str, edges: str, example: str, n: str, result: str) -> str:
    return _POLY_DOC.format(what=what, how=how, edges=edges, name=name, example=example, n=n, result=result)


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", _chebyshev_t, _doc(
    "chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind ``T_n(x)``", _CHEBYSHEV,
    "Exact at ``x = +-1``; ``cos(n acos(x))`` for ``n > 6`` and ``|x| < 1``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([-1.0000, -0.7920, -1.0000, 26.0000])"))
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", _chebyshev_u, _doc(
    "chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind ``U_n(x)``", _CHEBYSHEV,
    "Exact at ``x = +-1``; ``sin((n + 1) t) / sin(t)``, ``t = acos(x)``, for ``n > 8`` and ``|x| < 1``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([-4.0000, -0.9840, -1.0000, 56.0000])"))
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", _chebyshev_v, _doc(
    "chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind ``V_n(x)``", _CHEBYSHEV,
    "Exact at ``x = +-1``; ``cos((n + 1/2) t) / cos(t / 2)``, ``t = acos(x)``, for ``n > 8`` and ``|x| < 1``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([-7.0000, -0.3440, -1.0000, 41.0000])"))
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", _chebyshev_w, _doc(
    "chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind ``W_n(x)``", _CHEBYSHEV,
    "Exact at ``x = +-1``; ``sin((n + 1/2) t) / sin(t / 2)``, ``t = acos(x)``, for ``n > 8`` and ``|x| < 1``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([-1.0000, -1.6240, -1.0000, 71.0000])"))
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", _shifted_chebyshev_t, _doc(
    "shifted_chebyshev_polynomial_t", "The shifted Chebyshev polynomial of the first kind ``T_n(2x - 1)``",
    _CHEBYSHEV + " in ``2x - 1``", "Exact at ``x = 0`` and ``1``; the closed form for ``n > 6`` and ``0 < x < 1``.",
    "[0.0, 0.3, 0.5, 2.0]", "3", "tensor([-1.0000,  0.9440, -0.0000, 99.0000])"))
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", _shifted_chebyshev_u, _doc(
    "shifted_chebyshev_polynomial_u", "The shifted Chebyshev polynomial of the second kind ``U_n(2x - 1)``",
    _CHEBYSHEV + " in ``2x - 1``", "Exact at ``x = 0`` and ``1``; the closed form for ``n > 6`` and ``0 < x < 1``.",
    "[0.0, 0.3, 0.5, 2.0]", "3", "tensor([ -4.0000,   1.0880,  -0.0000, 204.0000])"))
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", _shifted_chebyshev_v, _doc(
    "shifted_chebyshev_polynomial_v", "The shifted Chebyshev polynomial of the third kind ``V_n(2x - 1)``",
    _CHEBYSHEV + " in ``2x - 1``", "Exact at ``x = 0`` and ``1``; the closed form for ``n > 6`` and ``0 < x < 1``.",
    "[0.0, 0.3, 0.5, 2.0]", "3", "tensor([ -7.0000,   1.4480,   1.0000, 169.0000])"))
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", _shifted_chebyshev_w, _doc(
    "shifted_chebyshev_polynomial_w", "The shifted Chebyshev polynomial of the fourth kind ``W_n(2x - 1)``",
    _CHEBYSHEV + " in ``2x - 1``", "Exact at ``x = 0`` and ``1``; the closed form for ``n > 4`` and ``0 < x < 1``.",
    "[0.0, 0.3, 0.5, 2.0]", "3", "tensor([ -1.0000,   0.7280,  -1.0000, 239.0000])"))
hermite_polynomial_h = _polynomial("hermite_polynomial_h", _hermite_h, _doc(
    "hermite_polynomial_h", "The physicists' Hermite polynomial ``H_n(x)``",
    "recurrence ``H_(k+1) = 2x H_k - 2k H_(k-1)``",
    "NaN past degree 128 in float32 (512 in float64), as PyTorch's.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([ 4.0000, -3.3840, -5.0000, 40.0000])"))
hermite_polynomial_he = _polynomial("hermite_polynomial_he", _hermite_he, _doc(
    "hermite_polynomial_he", "The probabilists' Hermite polynomial ``He_n(x)``",
    "recurrence ``He_(k+1) = x He_k - k He_(k-1)``",
    "NaN past degree 128 in float32 (512 in float64), as PyTorch's.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([ 2.0000, -0.8730, -1.3750,  2.0000])"))
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", _laguerre_l, _doc(
    "laguerre_polynomial_l", "The Laguerre polynomial ``L_n(x)``",
    "recurrence ``(k + 1) L_(k+1) = (2k + 1 - x) L_k - k L_(k-1)`` (stopping at a NaN)", "1 at ``x = 0``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([ 5.6667,  0.2305, -0.1458, -0.3333])"))
legendre_polynomial_p = _polynomial("legendre_polynomial_p", _legendre_p, _doc(
    "legendre_polynomial_p", "The Legendre polynomial ``P_n(x)``",
    "recurrence ``(k + 1) P_(k+1) = (2k + 1) x P_k - k P_(k-1)`` (stopping at a NaN)", "Exact at ``x = +-1``.",
    "[-1.0, 0.3, 0.5, 2.0]", "3", "tensor([-1.0000, -0.3825, -0.4375, 17.0000])"))
