"""Elementwise primitives: a table of derivatives.

``unary``/``binary`` build the kernel from one scalar function and give the
primitive a same-shape shape rule; each JVP rule reads
``rule(tangent, *primals, out)``: d(out) in terms of d(input).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.cpu import elementwise as cpu
from ..backends.cpu import fastmath
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import ALL, FLOATS, INTEGERS, NUMERIC, bool_
from ..core.primitive import Primitive
from ._batching import elementwise as batch_elementwise
from ._util import check_dtype, ops, same_shape_dtype

WITH_BOOL = (bool_, *NUMERIC)


class _CudaRuns:
    """The CUDA runs of an elementwise primitive, ``(float_run, int_run)``: kernels built from the
    same scalar functions as the CPU's, on first use (importing tidu must not import numba.cuda)."""

    __slots__ = ("spec", "runs")

    def __init__(self, factory_name: str, float_fn: Callable, int_fn: Callable | None) -> None:
        self.spec = (factory_name, float_fn, int_fn)
        self.runs: tuple[Callable, Callable] | None = None

    def build(self) -> tuple[Callable, Callable]:
        from ..backends.cuda import elementwise as cuda

        factory_name, float_fn, int_fn = self.spec
        factory = getattr(cuda, factory_name)
        float_run = factory(float_fn)
        self.runs = (float_run, float_run if int_fn is None else factory(int_fn))
        return self.runs


def unary(name: str, scalar_fn: Callable, *jvp: Callable, dtypes: tuple = FLOATS,
          out_dtype: object = None, nondiff: bool = False, int_fn: Callable | None = None,
          f32_fn: Callable | None = None, cuda_fn: Callable | None = None) -> Primitive:
    """An elementwise primitive of one input; ``int_fn`` is the scalar function of the
    integer and bool kernels where it differs from the floating-point one, ``f32_fn`` a
    vectorizable one for float32 (tidu/backends/cpu/fastmath.py), ``cuda_fn`` the
    floating-point one for CUDA where ``scalar_fn`` uses numpy (numba-cuda compiles ``math``)."""
    prim = Primitive(name, nondiff=nondiff)
    prim.scalar_fns = {"float": scalar_fn, "float32": f32_fn or scalar_fn, "int": int_fn or scalar_fn,  # for fusion
                       "cuda": cuda_fn or scalar_fn}
    kernel = cpu.unary_kernel(scalar_fn)
    int_kernel = kernel if int_fn is None else cpu.unary_kernel(int_fn)
    f32_kernel = kernel if f32_fn is None else cpu.unary_kernel(f32_fn)

    @prim.def_abstract_eval
    def _shape(x: ShapeDtype) -> ShapeDtype:
        check_dtype(name, x, dtypes)
        return x if out_dtype is None else x.update(dtype=out_dtype)

    def impl(x: np.ndarray) -> np.ndarray:
        run = (f32_kernel if x.dtype == np.float32 else kernel) if x.dtype.kind == "f" else int_kernel
        return run(x, x.dtype if out_dtype is None else out_dtype.np)

    prim.def_impl(impl)
    cuda_runs = _CudaRuns("unary_kernel", cuda_fn or scalar_fn, int_fn)

    def cuda_impl(x: Any) -> Any:
        runs = cuda_runs.runs or cuda_runs.build()
        return runs[0 if x.dtype.kind == "f" else 1](x, x.dtype if out_dtype is None else out_dtype.np)

    def cuda_prepare(x: ShapeDtype) -> Callable[[Any], Any]:
        runs = cuda_runs.runs or cuda_runs.build()
        return runs[0 if x.dtype.np.kind == "f" else 1].prepare(
            x.shape, x.dtype.np, x.dtype.np if out_dtype is None else out_dtype.np)

    prim.def_impl(cuda_impl, device="cuda", takes_views=True)  # the run makes its input contiguous
    prim.def_prepare(cuda_prepare)
    if jvp:
        prim.def_jvp(*jvp)
    prim.def_batch(batch_elementwise(prim))
    return prim


def binary(name: str, scalar_fn: Callable, *jvp: Callable | None, dtypes: tuple = FLOATS,
           out_dtype: object = None, nondiff: bool = False, int_fn: Callable | None = None,
           check: Callable | None = None, cuda_fn: Callable | None = None) -> Primitive:
    """An elementwise primitive of two same-shape, same-dtype inputs; ``int_fn`` as in
    ``unary``; ``check(x, y)`` validates integer operands' values before the kernel runs."""
    prim = Primitive(name, nondiff=nondiff)
    prim.scalar_fns = {"float": scalar_fn, "cuda": cuda_fn or scalar_fn,  # for fusion
                       **({"int": int_fn or scalar_fn} if check is None else {})}
    kernel = cpu.binary_kernel(scalar_fn)
    int_kernel = kernel if int_fn is None else cpu.binary_kernel(int_fn)

    @prim.def_abstract_eval
    def _shape(x: ShapeDtype, y: ShapeDtype) -> ShapeDtype:
        aval = same_shape_dtype(name, x, y)
        check_dtype(name, aval, dtypes)
        return aval if out_dtype is None else aval.update(dtype=out_dtype)

    def impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        run = kernel if x.dtype.kind == "f" else int_kernel
        if check is not None and x.dtype.kind != "f":
            check(x, y)
        return run(x, y, x.dtype if out_dtype is None else out_dtype.np)

    prim.def_impl(impl)
    cuda_runs = _CudaRuns("binary_kernel", cuda_fn or scalar_fn, int_fn)

    def cuda_impl(x: Any, y: Any) -> Any:
        if check is not None and x.dtype.kind != "f":
            check(x.copy_to_host(), y.copy_to_host())
        runs = cuda_runs.runs or cuda_runs.build()
        return runs[0 if x.dtype.kind == "f" else 1](x, y, x.dtype if out_dtype is None else out_dtype.np)

    def cuda_prepare(x: ShapeDtype, y: ShapeDtype) -> Callable[[Any, Any], Any] | None:
        floating = x.dtype.np.kind == "f"
        if check is not None and not floating:
            return None  # the impl's check reads the operands
        runs = cuda_runs.runs or cuda_runs.build()
        return runs[0 if floating else 1].prepare(
            x.shape, x.dtype.np, y.dtype.np, x.dtype.np if out_dtype is None else out_dtype.np)

    prim.def_impl(cuda_impl, device="cuda", takes_views=True)  # broadcast operands are read in place
    prim.def_prepare(cuda_prepare)
    if jvp:
        prim.def_jvp(*jvp)
    prim.def_batch(batch_elementwise(prim))
    return prim


def _neg(x):  # noqa: ANN001, ANN202
    return -x


def _exp(x):  # noqa: ANN001, ANN202
    return math.exp(x)


def _log(x):  # noqa: ANN001, ANN202
    return math.log(x)


def _tanh(x):  # noqa: ANN001, ANN202
    return math.tanh(x)


def _sin(x):  # noqa: ANN001, ANN202
    return math.sin(x)


def _cos(x):  # noqa: ANN001, ANN202
    return math.cos(x)


def _erf(x):  # noqa: ANN001, ANN202
    return math.erf(x)


def _sqrt(x):  # noqa: ANN001, ANN202
    return math.sqrt(x)


def _tan(x):  # noqa: ANN001, ANN202
    return math.tan(x)


def _expm1(x):  # noqa: ANN001, ANN202
    return math.expm1(x)


def _log1p(x):  # noqa: ANN001, ANN202
    return math.log1p(x)


def _sinh(x):  # noqa: ANN001, ANN202
    return math.sinh(x)


def _cosh(x):  # noqa: ANN001, ANN202
    return math.cosh(x)


def _asin(x):  # noqa: ANN001, ANN202
    return math.asin(x) if -1.0 <= x <= 1.0 else math.nan  # numba's math.asin raises outside [-1, 1]


def _acos(x):  # noqa: ANN001, ANN202
    return math.acos(x) if -1.0 <= x <= 1.0 else math.nan


def _atan(x):  # noqa: ANN001, ANN202
    return math.atan(x)


def _asinh(x):  # noqa: ANN001, ANN202
    return math.asinh(x)


def _acosh(x):  # noqa: ANN001, ANN202
    return math.acosh(x) if x >= 1.0 else math.nan


def _atanh(x):  # noqa: ANN001, ANN202
    if x == 1.0 or x == -1.0:
        return math.copysign(math.inf, x)
    return math.atanh(x) if -1.0 < x < 1.0 else math.nan


def _log10(x):  # noqa: ANN001, ANN202
    if x > 0.0:
        return math.log10(x)
    return -math.inf if x == 0.0 else math.nan


def _atan2(y, x):  # noqa: ANN001, ANN202
    return math.atan2(y, x)


def _hypot(x, y):  # noqa: ANN001, ANN202
    return math.hypot(x, y)


def _fmod(x, y):  # noqa: ANN001, ANN202
    return np.fmod(x, y)  # numba's CPU math has no fmod


def _fmod_cuda(x, y):  # noqa: ANN001, ANN202
    return math.fmod(x, y) if y != 0.0 and not math.isinf(x) else math.nan


def _fmod_int(x, y):  # noqa: ANN001, ANN202
    mod = x % y  # the sign of the dividend: C's rule
    return mod - y if mod != 0 and (mod < 0) != (x < 0) else mod


def _logistic(x):  # noqa: ANN001, ANN202
    e = math.exp(-math.fabs(x))  # never overflows
    r = 1.0 / (1.0 + e)
    return r if x >= 0 else e * r


def _relu(x):  # noqa: ANN001, ANN202
    return 0.0 if x < 0 else x  # NaN and -0.0 stay, as in PyTorch


def _relu_int(x):  # noqa: ANN001, ANN202
    return 0 if x < 0 else x


def _abs(x):  # noqa: ANN001, ANN202
    return math.fabs(x)


def _abs_int(x):  # noqa: ANN001, ANN202
    return x if x >= 0 else -x


def _sign(x):  # noqa: ANN001, ANN202
    return 1 if x > 0 else (-1 if x < 0 else 0)


def _floor(x):  # noqa: ANN001, ANN202
    return np.floor(x)


def _ceil(x):  # noqa: ANN001, ANN202
    return np.ceil(x)


def _round(x):  # noqa: ANN001, ANN202
    return np.rint(x)  # half to even


def _trunc(x):  # noqa: ANN001, ANN202
    return np.trunc(x)


_EXACT = 4503599627370496.0  # 2**52: every float at least this large is an integer


def _floor_cuda(x):  # noqa: ANN001, ANN202
    if not math.fabs(x) < _EXACT:
        return x
    r = float(math.floor(x))
    return math.copysign(r, x) if r == 0.0 else r


def _ceil_cuda(x):  # noqa: ANN001, ANN202
    if not math.fabs(x) < _EXACT:
        return x
    r = float(math.ceil(x))
    return math.copysign(r, x) if r == 0.0 else r


def _trunc_cuda(x):  # noqa: ANN001, ANN202
    if not math.fabs(x) < _EXACT:
        return x
    r = float(int(x))
    return math.copysign(r, x) if r == 0.0 else r


def _round_cuda(x):  # noqa: ANN001, ANN202
    if not math.fabs(x) < _EXACT:
        return x
    r = float(math.floor(x + 0.5))
    if r - x == 0.5 and math.fmod(r, 2.0) != 0.0:
        r -= 1.0
    return math.copysign(r, x) if r == 0.0 else r


def _identity(x):  # noqa: ANN001, ANN202
    return x


def _add(x, y):  # noqa: ANN001, ANN202
    return x + y


def _sub(x, y):  # noqa: ANN001, ANN202
    return x - y


def _mul(x, y):  # noqa: ANN001, ANN202
    return x * y


def _div(x, y):  # noqa: ANN001, ANN202
    return x / y


def _pow(x, y):  # noqa: ANN001, ANN202
    return x**y


def _maximum(x, y):  # noqa: ANN001, ANN202
    return x if (x > y or x != x) else y


def _pow_int(x, y):  # noqa: ANN001, ANN202
    if y < 0:  # |x| > 1 gives 0, as in PyTorch
        if x == 1:
            return 1
        if x == -1:
            return 1 if y % 2 == 0 else -1
        return 0
    result = 1
    while y:  # square and multiply; wraps around on overflow like PyTorch
        if y & 1:
            result *= x
        x *= x
        y >>= 1
    return result


def _minimum(x, y):  # noqa: ANN001, ANN202
    return x if (x < y or x != x) else y


def _floor_divide(x, y):  # noqa: ANN001, ANN202
    """PyTorch's ``div_floor_floating``: floor(x / y) computed exactly from fmod."""
    if y == 0:
        return x / y
    mod = np.fmod(x, y)
    div = (x - mod) / y
    if mod != 0 and (y < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return math.copysign(0.0, x / y)
    floor = np.floor(div)
    return floor + 1 if div - floor > 0.5 else floor


def _floor_divide_cuda(x, y):  # noqa: ANN001, ANN202
    """``_floor_divide`` for CUDA: numba's CPU target lacks ``math.fmod``, numba-cuda ``np.fmod``."""
    if y == 0:
        return x / y
    mod = math.fmod(x, y)
    div = (x - mod) / y
    if mod != 0 and (y < 0) != (mod < 0):
        div -= 1
    if div == 0:
        return math.copysign(0.0, x / y)
    floor = div if not math.fabs(div) < 4503599627370496.0 else float(math.floor(div))
    return floor + 1 if div - floor > 0.5 else floor


def _floor_divide_int(x, y):  # noqa: ANN001, ANN202
    return x // y  # Python's floor semantics


def _remainder(x, y):  # noqa: ANN001, ANN202
    mod = np.fmod(x, y)
    return mod + y if mod != 0 and (y < 0) != (mod < 0) else mod


def _remainder_cuda(x, y):  # noqa: ANN001, ANN202
    mod = math.fmod(x, y)
    return mod + y if mod != 0 and (y < 0) != (mod < 0) else mod


def _remainder_int(x, y):  # noqa: ANN001, ANN202
    return x % y  # the sign of the divisor


def _no_zero_divisor(x: np.ndarray, y: np.ndarray) -> None:
    if (y == 0).any():
        raise RuntimeError("ZeroDivisionError")


def _bitwise_and(x, y):  # noqa: ANN001, ANN202
    return x & y


def _bitwise_or(x, y):  # noqa: ANN001, ANN202
    return x | y


def _bitwise_xor(x, y):  # noqa: ANN001, ANN202
    return x ^ y


def _left_shift(x, y):  # noqa: ANN001, ANN202
    """PyTorch's ``x << y``: 0 for a count outside ``[0, bits)``. Shifted in int64 (every tidu
    integer fits), then the store wraps to the dtype: counts up to 63 push every bit out of a
    narrower type. Both operands are made int64 first: a uint8 operand would otherwise unify
    with the int64 branch as a float, whose store into uint8 saturates on the GPU."""
    a, n = np.int64(x), np.int64(y)
    return np.int64(0) if (n < 0 or n > 63) else a << n


def _right_shift(x, y):  # noqa: ANN001, ANN202
    """PyTorch's arithmetic ``x >> y``: a count outside ``[0, bits)`` shifts by ``bits - 1``
    (0 or -1 by the sign); in int64 that is a shift by 63 (or by the count, up to 63)."""
    a, n = np.int64(x), np.int64(y)
    return a >> (np.int64(63) if (n < 0 or n > 63) else n)


def _eq(x, y):  # noqa: ANN001, ANN202
    return x == y


def _ne(x, y):  # noqa: ANN001, ANN202
    return x != y


def _lt(x, y):  # noqa: ANN001, ANN202
    return x < y


def _le(x, y):  # noqa: ANN001, ANN202
    return x <= y


def _gt(x, y):  # noqa: ANN001, ANN202
    return x > y


def _ge(x, y):  # noqa: ANN001, ANN202
    return x >= y


SQRT_PI_2 = 2.0 / math.sqrt(math.pi)
BITWISE = (bool_, *INTEGERS)


def _zero(dx, *primals, **params):  # noqa: ANN001, ANN002, ANN003, ANN202
    """The derivative of a piecewise-constant function (floor, sign, ...): zeros, as in PyTorch. A
    ``select`` of zeros, not ``dx * 0``: its transpose gives zeros for any cotangent, where
    ``ct * 0`` is NaN for an infinite one (``sign(x) * relu(x)`` under a ``sqrt``)."""
    return ops.where(ops.full_like(dx, True, dtype=bool_), 0.0, dx)


#                                  d(out) in terms of d(input)
neg = unary("neg", _neg, dtypes=NUMERIC)
neg.def_linear(lambda ct, x: [-ct])
exp = unary("exp", _exp, lambda dx, x, out: dx * out, f32_fn=fastmath.exp_f32)
expm1 = unary("expm1", _expm1, lambda dx, x, out: dx * (out + 1.0), f32_fn=fastmath.expm1_f32)
log = unary("log", _log, lambda dx, x, out: dx / x, f32_fn=fastmath.log_f32)
sqrt = unary("sqrt", _sqrt, lambda dx, x, out: dx / (out * 2.0))
log1p = unary("log1p", _log1p, lambda dx, x, out: dx / (x + 1.0), f32_fn=fastmath.log1p_f32)
tanh = unary("tanh", _tanh, lambda dx, x, out: dx * (1 - out * out), f32_fn=fastmath.tanh_f32)
logistic = unary("logistic", _logistic, lambda dx, x, out: dx * (out * (1.0 - out)), f32_fn=fastmath.logistic_f32)
sin = unary("sin", _sin, lambda dx, x, out: dx * ops.cos(x), f32_fn=fastmath.sin_f32)
cos = unary("cos", _cos, lambda dx, x, out: -(dx * ops.sin(x)), f32_fn=fastmath.cos_f32)
tan = unary("tan", _tan, lambda dx, x, out: dx * (1.0 + out * out), f32_fn=fastmath.tan_f32)
erf = unary("erf", _erf, lambda dx, x, out: dx * (SQRT_PI_2 * ops.exp(-(x * x))), f32_fn=fastmath.erf_f32)
sinh = unary("sinh", _sinh, lambda dx, x, out: dx * ops.cosh(x))
cosh = unary("cosh", _cosh, lambda dx, x, out: dx * ops.sinh(x))
asin = unary("asin", _asin, lambda dx, x, out: dx * ops.rsqrt(1.0 - x * x))
acos = unary("acos", _acos, lambda dx, x, out: -(dx * ops.rsqrt(1.0 - x * x)))
atan = unary("atan", _atan, lambda dx, x, out: dx / (x * x + 1.0))
asinh = unary("asinh", _asinh, lambda dx, x, out: dx * ops.rsqrt(x * x + 1.0))
acosh = unary("acosh", _acosh, lambda dx, x, out: dx * ops.rsqrt(x * x - 1.0))
atanh = unary("atanh", _atanh, lambda dx, x, out: dx / (1.0 - x * x))
log10 = unary("log10", _log10, lambda dx, x, out: dx / (x * math.log(10.0)))
# PyTorch's threshold_backward: the gradient passes where the output is not <= 0 (NaN included)
relu = unary("relu", _relu, lambda dx, x, out: ops.where(out <= 0, 0.0, dx), dtypes=NUMERIC, int_fn=_relu_int)
abs = unary("abs", _abs, lambda dx, x, out: dx * ops.sign(x), dtypes=NUMERIC, int_fn=_abs_int)  # noqa: A001
sign = unary("sign", _sign, _zero, dtypes=WITH_BOOL)
floor = unary("floor", _floor, _zero, dtypes=NUMERIC, int_fn=_identity, cuda_fn=_floor_cuda)
ceil = unary("ceil", _ceil, _zero, dtypes=NUMERIC, int_fn=_identity, cuda_fn=_ceil_cuda)
round = unary("round", _round, _zero, dtypes=NUMERIC, int_fn=_identity, cuda_fn=_round_cuda)  # noqa: A001
trunc = unary("trunc", _trunc, _zero, dtypes=NUMERIC, int_fn=_identity, cuda_fn=_trunc_cuda)

add = binary("add", _add, lambda dx, x, y, out: dx, lambda dy, x, y, out: dy, dtypes=WITH_BOOL)
add.def_transpose(lambda ct, x, y: [ct, ct])
sub = binary("sub", _sub, lambda dx, x, y, out: dx, lambda dy, x, y, out: -dy, dtypes=NUMERIC)
sub.def_transpose(lambda ct, x, y: [ct, -ct])
mul = binary("mul", _mul, lambda dx, x, y, out: dx * y, lambda dy, x, y, out: x * dy, dtypes=WITH_BOOL)
mul.def_transpose(
    lambda ct, x, y: [ct * y if ops.is_linear(x) else None, x * ct if ops.is_linear(y) else None],
    bilinear=True,
)
# d/dy reads x and y, not the output, as PyTorch's does: writing the quotient in place leaves
# its backward intact
div = binary("div", _div, lambda dx, x, y, out: dx / y, lambda dy, x, y, out: -(dy * (x / y / y)))
div.def_transpose(lambda ct, x, y: [ct / y, None], linear_in=(0,))
# PyTorch's conventions at 0: d/dx is 0 where y == 0, d/dy is 0 where x == 0 and y >= 0.
pow = binary(  # noqa: A001 - the primitive's name
    "pow", _pow,
    lambda dx, x, y, out: dx * ops.where(y == 0, 0.0, y * x ** (y - 1)),
    lambda dy, x, y, out: dy * ops.where((x == 0) & (y >= 0), 0.0, out * ops.log(x)),
    dtypes=NUMERIC, int_fn=_pow_int,
)
maximum = binary(
    "maximum", _maximum,
    lambda dx, x, y, out: dx * ops.where(x > y, 1.0, ops.where(x == y, 0.5, 0.0)).to(x.dtype),
    lambda dy, x, y, out: dy * ops.where(y > x, 1.0, ops.where(x == y, 0.5, 0.0)).to(x.dtype),
    dtypes=WITH_BOOL,
)
minimum = binary(
    "minimum", _minimum,
    lambda dx, x, y, out: dx * ops.where(x < y, 1.0, ops.where(x == y, 0.5, 0.0)).to(x.dtype),
    lambda dy, x, y, out: dy * ops.where(y < x, 1.0, ops.where(x == y, 0.5, 0.0)).to(x.dtype),
    dtypes=WITH_BOOL,
)
floor_divide = binary(
    "floor_divide", _floor_divide, _zero, _zero,
    dtypes=NUMERIC, int_fn=_floor_divide_int, check=_no_zero_divisor, cuda_fn=_floor_divide_cuda,
)
remainder = binary(  # x - y * floor(x / y), without its rounding
    "remainder", _remainder,
    lambda dx, x, y, out: dx,
    lambda dy, x, y, out: -(dy * ops.floor_divide(x, y)),
    dtypes=NUMERIC, int_fn=_remainder_int, check=_no_zero_divisor, cuda_fn=_remainder_cuda,
)
atan2 = binary(
    "atan2", _atan2,
    lambda dy, y, x, out: dy * (x / (x * x + y * y)),
    lambda dx, y, x, out: -(dx * (y / (x * x + y * y))),
)
hypot = binary("hypot", _hypot, lambda dx, x, y, out: dx * (x / out), lambda dy, x, y, out: dy * (y / out))
fmod = binary(  # the sign of the dividend (C's fmod)
    "fmod", _fmod,
    lambda dx, x, y, out: dx,
    lambda dy, x, y, out: -(dy * ops.div(x, y, rounding_mode="trunc")),
    dtypes=NUMERIC, int_fn=_fmod_int, check=_no_zero_divisor, cuda_fn=_fmod_cuda,
)
bitwise_and = binary("bitwise_and", _bitwise_and, dtypes=BITWISE, nondiff=True)
bitwise_or = binary("bitwise_or", _bitwise_or, dtypes=BITWISE, nondiff=True)
bitwise_xor = binary("bitwise_xor", _bitwise_xor, dtypes=BITWISE, nondiff=True)
bitwise_left_shift = binary("bitwise_left_shift", _left_shift, dtypes=INTEGERS, nondiff=True)
bitwise_right_shift = binary("bitwise_right_shift", _right_shift, dtypes=INTEGERS, nondiff=True)

eq = binary("eq", _eq, dtypes=ALL, out_dtype=bool_, nondiff=True)
ne = binary("ne", _ne, dtypes=ALL, out_dtype=bool_, nondiff=True)
lt = binary("lt", _lt, dtypes=WITH_BOOL, out_dtype=bool_, nondiff=True)
le = binary("le", _le, dtypes=WITH_BOOL, out_dtype=bool_, nondiff=True)
gt = binary("gt", _gt, dtypes=WITH_BOOL, out_dtype=bool_, nondiff=True)
ge = binary("ge", _ge, dtypes=WITH_BOOL, out_dtype=bool_, nondiff=True)

select = Primitive("select")


@select.def_abstract_eval
def _select_shape(pred: ShapeDtype, x: ShapeDtype, y: ShapeDtype) -> ShapeDtype:
    if pred.dtype is not bool_:
        raise TypeError(f"select: the condition must be bool, got {pred.dtype.name}")
    if pred.shape != x.shape:
        raise RuntimeError(f"select: condition shape {tuple(pred.shape)} and value shape {tuple(x.shape)} differ")
    return same_shape_dtype("select", x, y)


select.def_impl(cpu.select)
select.def_impl(kernel("elementwise", "select"), device="cuda",
               takes_views=True)
select.def_jvp(None, lambda dx, p, x, y, out: ops.where(p, dx, 0.0), lambda dy, p, x, y, out: ops.where(p, 0.0, dy))
select.def_transpose(
    lambda ct, p, x, y: [
        None,
        ops.where(p, ct, 0.0) if ops.is_linear(x) else None,
        ops.where(p, 0.0, ct) if ops.is_linear(y) else None,
    ],
    linear_in=(1, 2),
)
select.def_batch(batch_elementwise(select))
