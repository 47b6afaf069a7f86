"""Elementwise primitives: a table of derivatives.

``unary``/``binary`` build the kernel from one scalar function and give the
primitive a same-shape shape rule; each JVP rule reads
``rule(tangent, *primals, out)``: d(out) in terms of d(input).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..backends.cpu import elementwise as cpu
from ..core.aval import ShapeDtype
from ..core.dtypes import ALL, FLOATS, bool_, float32, float64, int32, int64
from ..core.primitive import Primitive
from ._batching import elementwise as batch_elementwise
from ._util import check_dtype, ops, same_shape_dtype

NUMERIC = (int32, int64, float32, float64)
WITH_BOOL = (bool_, *NUMERIC)


def unary(name: str, scalar_fn: Callable, *jvp: Callable, dtypes: tuple = FLOATS,
          out_dtype: object = None, nondiff: bool = False) -> Primitive:
    prim = Primitive(name, nondiff=nondiff)
    kernel = cpu.unary_kernel(scalar_fn)

    @prim.def_abstract_eval
    def _shape(x: ShapeDtype) -> ShapeDtype:
        check_dtype(name, x, dtypes)
        return x if out_dtype is None else x.update(dtype=out_dtype)

    prim.def_impl(lambda x: kernel(x, x.dtype if out_dtype is None else out_dtype.np))
    if jvp:
        prim.def_jvp(*jvp)
    prim.def_batch(batch_elementwise(prim))
    return prim


def binary(name: str, scalar_fn: Callable, *jvp: Callable | None, dtypes: tuple = FLOATS,
           out_dtype: object = None, nondiff: bool = False) -> Primitive:
    prim = Primitive(name, nondiff=nondiff)
    kernel = cpu.binary_kernel(scalar_fn)

    @prim.def_abstract_eval
    def _shape(x: ShapeDtype, y: ShapeDtype) -> ShapeDtype:
        aval = same_shape_dtype(name, x, y)
        check_dtype(name, aval, dtypes)
        return aval if out_dtype is None else aval.update(dtype=out_dtype)

    prim.def_impl(lambda x, y: kernel(x, y, x.dtype if out_dtype is None else out_dtype.np))
    if jvp:
        prim.def_jvp(*jvp)
    prim.def_batch(batch_elementwise(prim))
    return prim


def _neg(x):  # noqa: ANN001, ANN202
    return -x


def _exp(x):  # noqa: ANN001, ANN202
    return np.exp(x)


def _log(x):  # noqa: ANN001, ANN202
    return np.log(x)


def _tanh(x):  # noqa: ANN001, ANN202
    return np.tanh(x)


def _sin(x):  # noqa: ANN001, ANN202
    return np.sin(x)


def _cos(x):  # noqa: ANN001, ANN202
    return np.cos(x)


def _erf(x):  # noqa: ANN001, ANN202
    return math.erf(x)


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

#                                  d(out) in terms of d(input)
neg = unary("neg", _neg, dtypes=NUMERIC)
neg.def_linear(lambda ct, x: [-ct])
exp = unary("exp", _exp, lambda dx, x, out: dx * out)
log = unary("log", _log, lambda dx, x, out: dx / x)
tanh = unary("tanh", _tanh, lambda dx, x, out: dx * (1 - out * out))
sin = unary("sin", _sin, lambda dx, x, out: dx * ops.cos(x))
cos = unary("cos", _cos, lambda dx, x, out: -(dx * ops.sin(x)))
erf = unary("erf", _erf, lambda dx, x, out: dx * (SQRT_PI_2 * ops.exp(-(x * x))))

add = binary("add", _add, lambda dx, x, y, out: dx, lambda dy, x, y, out: dy, dtypes=WITH_BOOL)
add.def_transpose(lambda ct, x, y: [ct, ct])
sub = binary("sub", _sub, lambda dx, x, y, out: dx, lambda dy, x, y, out: -dy, dtypes=NUMERIC)
sub.def_transpose(lambda ct, x, y: [ct, -ct])
mul = binary("mul", _mul, lambda dx, x, y, out: dx * y, lambda dy, x, y, out: x * dy, dtypes=WITH_BOOL)
mul.def_transpose(
    lambda ct, x, y: [ct * y if ops.is_linear(x) else None, x * ct if ops.is_linear(y) else None],
    bilinear=True,
)
div = binary("div", _div, lambda dx, x, y, out: dx / y, lambda dy, x, y, out: -(dy * out) / y)
div.def_transpose(lambda ct, x, y: [ct / y, None], linear_in=(0,))
pow = binary(  # noqa: A001 - the primitive's name
    "pow", _pow,
    lambda dx, x, y, out: dx * (y * x ** (y - 1)),
    lambda dy, x, y, out: dy * ops.where(x == 0, 0.0, out * ops.log(x)),
)
maximum = binary(
    "maximum", _maximum,
    lambda dx, x, y, out: dx * ops.where(x > y, 1.0, ops.where(x == y, 0.5, 0.0)),
    lambda dy, x, y, out: dy * ops.where(y > x, 1.0, ops.where(x == y, 0.5, 0.0)),
    dtypes=WITH_BOOL,
)

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
