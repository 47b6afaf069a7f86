"""Elementwise functions composed from the primitives: ``logit``, ``xlogy``, ``sinc``,
``deg2rad``/``rad2deg``, ``float_power``, ``fmax``/``fmin``, ``addcmul``/``addcdiv``, the
comparisons ``isinf``/``isposinf``/``isneginf``/``isclose``/``allclose``/``equal``, and PyTorch's
other names (``absolute``, ``negative``, ``positive``, ``true_divide``, ``divide``, ``multiply``,
``subtract``, ``rsub``, ``greater``/``less``/..., ``arcsinh``/``arccosh``/``arctanh``, ``fix``, ``sgn``).

Their gradients come from the primitives they are made of; where a formula has a removable
singularity (``sinc`` at 0, ``xlogy`` at ``x == 0``) the singular branch reads a safe operand, so
``where`` passes no NaN into the gradient.
"""

from __future__ import annotations

import math as pymath
from collections import namedtuple
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.half import computed_in_float32
from ..tensor import placed
from . import math, reduce
from ._operands import constant, convert, is_value, operands

__all__ = [
    "absolute", "addcdiv", "addcmul", "allclose", "deg2rad", "equal", "float_power", "fmax", "fmin", "isclose",
    "isinf", "isneginf", "isposinf", "logit", "negative", "positive", "rad2deg", "sinc", "true_divide", "xlogy",
    "arccosh", "arcsinh", "arctanh", "divide", "fix", "greater", "greater_equal", "less", "less_equal",
    "multiply", "not_equal", "rsub", "sgn", "subtract",
    "copysign", "frexp", "gcd", "heaviside", "isin", "isreal", "lcm", "ldexp", "logaddexp2", "nextafter", "signbit",
    "angle",
]

# PyTorch's (and numpy's) other names for ops of ``tidu.ops.math``: the same functions
absolute = math.abs
negative = math.neg


def true_divide(input: Any, other: Any) -> Any:  # noqa: A002
    """``div(input, other)`` without ``rounding_mode`` (PyTorch's older name).

    >>> import tidu
    >>> tidu.true_divide(tidu.tensor([1, 3]), 2)
    tensor([0.5000, 1.5000])
    """
    return math.div(input, other)


divide = math.div
multiply = math.mul
subtract = math.sub
greater, greater_equal, less, less_equal, not_equal = math.gt, math.ge, math.lt, math.le, math.ne
arcsinh, arccosh, arctanh = math.asinh, math.acosh, math.atanh
fix = math.trunc
sgn = math.sign  # the sign of a real number (tidu has no complex dtypes)


def rsub(input: Any, other: Any, *, alpha: Any = 1) -> Any:  # noqa: A002
    """``other - alpha * input`` (``sub`` with its operands swapped).

    >>> import tidu
    >>> tidu.rsub(tidu.tensor([1.0, 2.0]), 3)
    tensor([2., 1.])
    >>> tidu.rsub(tidu.tensor([1.0, 2.0]), tidu.tensor([3.0, 3.0]), alpha=2)
    tensor([ 1., -1.])
    """
    return math.sub(other, input, alpha=alpha)


def positive(input: Any) -> Any:  # noqa: A002
    """``input`` itself (``+input``); bool tensors raise, as in PyTorch.

    >>> import tidu
    >>> tidu.positive(tidu.tensor([-1, 2]))
    tensor([-1,  2])
    """
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _floating(x: Any) -> Any:
    """``x`` in the default float dtype if it is not floating-point (PyTorch's promotion for these)."""
    return x if x.dtype.is_floating_point else convert(x, dtypes.get_default_dtype())


def logit(input: Any, eps: float | None = None) -> Any:  # noqa: A002
    """``log(x / (1 - x))``, with ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given (its
    gradient is then zero outside that range).

    >>> import tidu
    >>> tidu.logit(tidu.tensor([0.5, 0.75]))
    tensor([0.0000, 1.0986])
    """
    x = _floating(input)
    if eps is not None:
        x = math.clamp(x, eps, 1 - eps)
    return math.log(math.div(x, math.sub(1, x)))


def xlogy(input: Any, other: Any) -> Any:  # noqa: A002
    """``input * log(other)``, but 0 where ``input`` is 0 (unless ``other`` is NaN); either may be a
    number.

    >>> import tidu
    >>> tidu.xlogy(tidu.tensor([0.0, 2.0]), tidu.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])
    """
    return x_times_log(input, other, math.log, 1.0, lambda y: math.logical_or(math.le(y, 0), math.eq(y, pymath.inf)))


def x_times_log(input: Any, other: Any, log: Any, neutral: float, outside: Any) -> Any:  # noqa: A002
    """``input * log(other)``, and 0 where ``input`` is 0 and ``log(other)`` is not finite
    (``outside(other)``) unless ``other`` is NaN (``xlogy``, ``special.xlog1py``). The gradient in
    ``input`` is ``log(other)``, as PyTorch's; at the masked points the log reads ``neutral``
    (where it is 0), so no inf or NaN reaches the gradient."""
    like = input if is_value(input) else other
    dt = dtypes.result_type(input, other)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    x = convert(input, dt) if is_value(input) else constant(input, dt, like, tuple(like.shape))
    y = convert(other, dt) if is_value(other) else constant(other, dt, like, tuple(like.shape))
    masked = math.logical_and(math.eq(x, 0), outside(y))
    return math.mul(x, log(math.where(masked, neutral, y)))


@computed_in_float32
def sinc(input: Any) -> Any:  # noqa: A002
    """``sin(pi x) / (pi x)``, and 1 at 0.

    Below ``|x| = 1e-5`` it is ``1 - (pi x)^2 / 6`` (the next term is under float64's rounding
    there), so its derivatives at 0 are the true ones: 0, then ``-pi^2 / 3`` (PyTorch's second
    derivative there is NaN).

    >>> import tidu
    >>> tidu.sinc(tidu.tensor([0.0, 0.5]))
    tensor([1.0000, 0.6366])
    """
    x = _floating(input)
    small = math.lt(math.abs(x), 1e-5)
    scaled = math.mul(math.where(small, 1.0, x), pymath.pi)
    near = math.sub(1.0, math.mul(math.square(math.mul(x, pymath.pi)), 1 / 6))
    return math.where(small, near, math.div(math.sin(scaled), scaled))


def deg2rad(input: Any) -> Any:  # noqa: A002
    """Degrees to radians.

    >>> import tidu
    >>> tidu.deg2rad(tidu.tensor([180.0]))
    tensor([3.1416])
    """
    return math.mul(_floating(input), pymath.pi / 180)


def rad2deg(input: Any) -> Any:  # noqa: A002
    """Radians to degrees.

    >>> import tidu
    >>> tidu.rad2deg(tidu.tensor([3.141592653589793]))
    tensor([180.])
    """
    return math.mul(_floating(input), 180 / pymath.pi)


def float_power(input: Any, exponent: Any) -> Any:  # noqa: A002
    """``input ** exponent`` in float64 (both are converted first).

    >>> import tidu
    >>> tidu.float_power(tidu.tensor([2]), 3)
    tensor([8.], dtype=tidu.float64)
    """
    base = convert(input, dtypes.float64) if is_value(input) else float(input)
    power = convert(exponent, dtypes.float64) if is_value(exponent) else float(exponent)
    return math.pow(base, power)


def _nan_ignoring(pick: Any, name: str, input: Any, other: Any) -> Any:  # noqa: A002
    if not (is_value(input) and is_value(other)):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor")
    if not dtypes.result_type(input, other).is_floating_point:
        return (math.maximum if name == "fmax" else math.minimum)(input, other)
    a, b = operands(input, other, op=name)
    take_a = math.logical_or(pick(a, b), math.isnan(b))
    return math.where(take_a, a, b)


def fmax(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise maximum that ignores NaN (NaN only where both are); at ties ``input`` gets the
    gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.fmax(tidu.tensor([1.0, float("nan")]), tidu.tensor([float("nan"), 2.0]))
    tensor([1., 2.])
    """
    return _nan_ignoring(math.ge, "fmax", input, other)


def fmin(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise minimum that ignores NaN (NaN only where both are); at ties ``input`` gets the
    gradient, as in PyTorch.

    >>> import tidu
    >>> tidu.fmin(tidu.tensor([1.0, float("nan")]), tidu.tensor([float("nan"), 2.0]))
    tensor([1., 2.])
    """
    return _nan_ignoring(math.le, "fmin", input, other)


@computed_in_float32
def addcmul(input: Any, tensor1: Any, tensor2: Any, *deprecated: Any, value: Any = 1) -> Any:  # noqa: A002
    """``input + value * tensor1 * tensor2``, broadcasting.

    >>> import tidu
    >>> tidu.addcmul(tidu.tensor([1.0]), tidu.tensor([2.0]), tidu.tensor([3.0]), value=0.5)
    tensor([4.])
    """
    if deprecated:  # ``addcmul(input, value, tensor1, tensor2)``: PyTorch's deprecated form
        value, (tensor1, tensor2) = tensor1, math.scalar_first("addcmul", tensor1, (tensor2, *deprecated),
                                                               "Number value, Tensor tensor1, Tensor tensor2",
                                                               "Tensor tensor1, Tensor tensor2, *, Number value = 1")
    if dtypes.result_type(input, tensor1, tensor2) is dtypes.bool_:
        raise dtypes.not_implemented("addcmul_cpu_out", dtypes.bool_)
    product = math.mul(tensor1, tensor2)
    return math.add(input, product if value == 1 else math.mul(product, value))


@computed_in_float32
def addcdiv(input: Any, tensor1: Any, tensor2: Any, *deprecated: Any, value: Any = 1) -> Any:  # noqa: A002
    """``input + value * tensor1 / tensor2``, broadcasting; integer operands raise, as in PyTorch.

    >>> import tidu
    >>> tidu.addcdiv(tidu.tensor([1.0]), tidu.tensor([3.0]), tidu.tensor([2.0]), value=2)
    tensor([4.])
    """
    if deprecated:  # ``addcdiv(input, value, tensor1, tensor2)``: PyTorch's deprecated form
        value, (tensor1, tensor2) = tensor1, math.scalar_first("addcdiv", tensor1, (tensor2, *deprecated),
                                                               "Number value, Tensor tensor1, Tensor tensor2",
                                                               "Tensor tensor1, Tensor tensor2, *, Number value = 1")
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes."
        )
    quotient = math.div(tensor1, tensor2)
    return math.add(input, quotient if value == 1 else math.mul(quotient, value))


def isinf(input: Any) -> Any:  # noqa: A002
    """Where the elements are infinite, of either sign (a bool tensor).

    >>> import tidu
    >>> tidu.isinf(tidu.tensor([1.0, float("-inf")]))
    tensor([False,  True])
    """
    if not input.dtype.is_floating_point:
        return math.ne(input, input)
    return math.logical_or(math.eq(input, pymath.inf), math.eq(input, -pymath.inf))


def isposinf(input: Any) -> Any:  # noqa: A002
    """Where the elements are ``+inf`` (a bool tensor).

    >>> import tidu
    >>> tidu.isposinf(tidu.tensor([float("inf"), float("-inf")]))
    tensor([ True, False])
    """
    return math.eq(input, pymath.inf) if input.dtype.is_floating_point else math.ne(input, input)


def isneginf(input: Any) -> Any:  # noqa: A002
    """Where the elements are ``-inf`` (a bool tensor).

    >>> import tidu
    >>> tidu.isneginf(tidu.tensor([float("inf"), float("-inf")]))
    tensor([False,  True])
    """
    return math.eq(input, -pymath.inf) if input.dtype.is_floating_point else math.ne(input, input)


def isclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:  # noqa: A002
    """Where ``|input - other| <= atol + rtol * |other|`` (equal infinities match; NaN matches NaN
    only with ``equal_nan``). The dtypes must agree, as in PyTorch.

    >>> import tidu
    >>> tidu.isclose(tidu.tensor([1.0, 1.1]), tidu.tensor([1.0 + 1e-7, 1.0]))
    tensor([ True, False])
    """
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{dtypes.TORCH_NAMES[input.dtype.name]} did not match "
                           f"{dtypes.TORCH_NAMES[other.dtype.name]}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    same = math.eq(input, other)
    if not input.dtype.is_floating_point:
        if input.dtype is dtypes.bool_:
            return same
        input, other = convert(input, dtypes.float64), convert(other, dtypes.float64)  # noqa: A001
    gap = math.abs(math.sub(input, other))
    near = math.logical_and(math.le(gap, math.add(math.mul(math.abs(other), rtol), atol)), math.isfinite(gap))
    out = math.logical_or(same, near)
    if equal_nan:
        out = math.logical_or(out, math.logical_and(math.isnan(input), math.isnan(other)))
    return out


def allclose(input: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:  # noqa: A002
    """Whether ``isclose`` holds everywhere (a Python bool).

    >>> import tidu
    >>> tidu.allclose(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 2.0 + 1e-9]))
    True
    """
    return bool(reduce.all(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input: Any, other: Any) -> bool:  # noqa: A002
    """Whether the two tensors have one shape and equal elements (a Python bool; NaN is unequal).

    >>> import tidu
    >>> tidu.equal(tidu.tensor([1, 2]), tidu.tensor([1, 2]))
    True
    """
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(reduce.all(math.eq(input, other)).item())


def copysign(input: Any, other: Any) -> Any:  # noqa: A002
    """``|input|`` with the sign bit of ``other`` (a number or a tensor; ``-0.0`` counts as
    negative), in a floating dtype. The gradient in ``input`` is ``sign(input) * sign(out)`` (0 at
    ``input = 0``, as PyTorch's), and none reaches ``other``.

    >>> import tidu
    >>> tidu.copysign(tidu.tensor([1.0, -2.0, 3.0]), tidu.tensor([-0.0, 1.0, -1.0]))
    tensor([-1.,  2., -3.])
    """
    math._tensor(input, "copysign")  # (a number ``other`` is one of PyTorch's overloads, a number ``input`` is not)
    dt = dtypes.result_type(input, other)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    x = convert(input, dt)
    magnitude = math.abs(x)
    if not is_value(other):
        return math.neg(magnitude) if np.signbit(other) else magnitude
    return math.where(signbit(other), math.neg(magnitude), magnitude)


def _host_binary(name: str, fn: Any, input: Any, other: Any, kinds: str, dtype: Any = None) -> Any:  # noqa: A002
    """``fn`` of numpy on the two operands' host values (broadcast, promoted), on their device: for
    the functions PyTorch does not differentiate. ``kinds``: ``'int'`` or ``'float'`` operands only."""
    dt = dtypes.result_type(input, other)
    ok = dt.is_floating_point if kinds == "float" else not dt.is_floating_point and dt is not dtypes.bool_
    if not ok:
        raise dtypes.not_implemented(f"{name}_cpu", dt)
    like = input if is_value(input) else other
    a, b = (x._values() if is_value(x) else x for x in (input, other))
    host = np.float32 if dt is dtypes.bfloat16 else dt.np  # bfloat16's values, widened exactly
    out = fn(np.asarray(a, host), np.asarray(b, host))
    return _placed(out, dtype or dt, like)


def _nextafter_bfloat16(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``nextafter`` on bfloat16 values held as float32: one step of bfloat16's grid (its bits
    are float32's upper half), as float32 values."""
    a, b = np.broadcast_arrays(a, b)
    bits = (a.view(np.uint32) >> 16).astype(np.int64)
    away = (b > a) == (a > 0)  # a step away from zero: the magnitude's bits grow by one
    stepped = np.where(away, bits + 1, bits - 1)
    stepped = np.where(a == 0, np.where(b > 0, 1, 0x8001), stepped)  # the smallest subnormal towards b
    out = (stepped.astype(np.uint32) << 16).view(np.float32)
    out = np.where(a == b, b, out)
    return np.where(np.isnan(a) | np.isnan(b), np.float32(np.nan), out)


def _placed(array: Any, dt: dtypes.dtype, like: Any) -> Any:
    """A host result (an array or a numpy scalar) as a tensor of ``dt`` on ``like``'s device."""
    return placed(np.array(dtypes.cast(array, dt), order="C"), dt, like.device)


def gcd(input: Any, other: Any) -> Any:  # noqa: A002
    """The greatest common divisor of integer tensors (non-negative; ``gcd(0, 0) = 0``).

    >>> import tidu
    >>> tidu.gcd(tidu.tensor([12, 18, 0]), tidu.tensor([8, -27, 0]))
    tensor([4, 9, 0])
    """
    return _host_binary("gcd", np.gcd, input, other, "int")


def lcm(input: Any, other: Any) -> Any:  # noqa: A002
    """The least common multiple of integer tensors (non-negative).

    >>> import tidu
    >>> tidu.lcm(tidu.tensor([4, 6]), tidu.tensor([6, -4]))
    tensor([12, 12])
    """
    return _host_binary("lcm", np.lcm, input, other, "int")


def nextafter(input: Any, other: Any) -> Any:  # noqa: A002
    """The next floating-point value after ``input`` towards ``other``.

    >>> import tidu
    >>> x = tidu.tensor([1.0], dtype=tidu.float64)
    >>> (tidu.nextafter(x, tidu.tensor([2.0], dtype=tidu.float64)) - x).item()
    2.220446049250313e-16
    """
    if not (is_value(input) and is_value(other)):
        raise TypeError("nextafter(): argument 'other' (position 2) must be Tensor")
    if dtypes.result_type(input, other) is dtypes.bfloat16:
        return _host_binary("nextafter", _nextafter_bfloat16, input, other, "float")
    return _host_binary("nextafter", np.nextafter, input, other, "float")


def heaviside(input: Any, values: Any) -> Any:  # noqa: A002
    """The step function: 0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive
    (and NaN). The dtypes must agree, as in PyTorch; it has no gradient (PyTorch's backward
    raises).

    >>> import tidu
    >>> tidu.heaviside(tidu.tensor([-1.0, 0.0, 2.0]), tidu.tensor([0.5]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    math._tensor(input, "heaviside")
    math._tensor(values, "heaviside", "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    x, v = input.detach(), values.detach()
    step = math.where(math.gt(x, 0), constant(1, x.dtype, x), constant(0, x.dtype, x))
    return math.where(math.eq(x, 0), v, step)


def ldexp(input: Any, other: Any) -> Any:  # noqa: A002
    """``input * 2 ** other``, in a floating dtype; differentiable in both, as the product.

    >>> import tidu
    >>> tidu.ldexp(tidu.tensor([1.0, 3.0]), tidu.tensor([2, -1]))
    tensor([4.0000, 1.5000])
    """
    math._tensor(input, "ldexp")
    math._tensor(other, "ldexp", "other", 2)
    if other.dtype is dtypes.bool_ and is_value(input) and input.dtype.is_floating_point:  # (PyTorch's kernel)
        raise dtypes.not_implemented("ldexp_cpu_exp", other.dtype)
    # PyTorch's: ``2 ** other`` in ``other``'s float dtype (the default one for integers), then the
    # product in the operands' promoted dtype, a floating one
    dt = dtypes.result_type(input, other)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    power = math.pow(2.0, other if other.dtype.is_floating_point else convert(other, dtypes.get_default_dtype()))
    return math.mul(convert(input, dt), convert(power, dt))


def logaddexp2(input: Any, other: Any) -> Any:  # noqa: A002
    """``log2(2 ** input + 2 ** other)``, without overflow (as ``logaddexp`` in base 2).

    >>> import tidu
    >>> tidu.logaddexp2(tidu.tensor([1.0, 1000.0]), tidu.tensor([1.0, 1000.0]))
    tensor([   2., 1001.])
    """
    math._log_add_operands(input, other, "logaddexp2")
    a, b = operands(input, other, op="logaddexp2", float_only=True)
    both_infinite = math.logical_and(math.eq(a, b), math.logical_not(math.isfinite(a)))
    gap = math.neg(math.abs(math.sub(a, b)))
    out = math.add(math.maximum(a, b), math.mul(math.log1p(math.exp2(gap)), 1 / pymath.log(2)))
    return math.where(both_infinite, a, out)


def angle(input: Any) -> Any:  # noqa: A002
    """The argument of each element as a complex number (tidu's are real): pi where negative
    (``-inf`` too), 0 elsewhere (``-0.0`` too), NaN where NaN; integers give the default float
    dtype. Its gradient is zero, as PyTorch's for real inputs.

    >>> import tidu
    >>> tidu.angle(tidu.tensor([-2.0, 0.0, 3.0]))
    tensor([3.1416, 0.0000, 0.0000])
    """
    x = _floating(input)
    shape = tuple(x.shape)
    values = math.where(math.lt(x, 0), constant(pymath.pi, x.dtype, x, shape), constant(0.0, x.dtype, x, shape))
    values = math.where(math.isnan(x), x, values).detach()
    never = constant(False, dtypes.bool_, x, shape)  # in the graph with a zero gradient, as PyTorch's
    return math.where(never, x, values)


def signbit(input: Any) -> Any:  # noqa: A002
    """Where the sign bit is set (``-0.0`` and negative NaNs too): a bool tensor.

    >>> import tidu
    >>> tidu.signbit(tidu.tensor([-0.0, 1.0, -2.0]))
    tensor([ True, False,  True])
    """
    return _placed(np.signbit(input._values()), dtypes.bool_, input)


FrexpResult = namedtuple("frexp", ["mantissa", "exponent"])


def frexp(input: Any) -> Any:  # noqa: A002
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent`` and ``0.5 <= |mantissa|
    < 1`` (0 for 0); the exponent is int32. Neither output has a gradient.

    >>> import tidu
    >>> tidu.frexp(tidu.tensor([8.0, 0.3, 0.0]))
    frexp(mantissa=tensor([0.5000, 0.6000, 0.0000]), exponent=tensor([ 4, -1,  0], dtype=tidu.int32))
    """
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(input._values())
    return FrexpResult(_placed(mantissa, input.dtype, input), _placed(exponent, dtypes.int32, input))


def isreal(input: Any) -> Any:  # noqa: A002
    """Where the elements are real: everywhere (tidu has no complex dtypes).

    >>> import tidu
    >>> tidu.isreal(tidu.tensor([1.0, 2.0]))
    tensor([True, True])
    """
    return _placed(np.ones(tuple(input.shape), dtype=bool), dtypes.bool_, input)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Any:
    """Where each of ``elements`` is among ``test_elements`` (either may be a number; the other
    is a tensor); ``invert``: where it is not.

    >>> import tidu
    >>> tidu.isin(tidu.tensor([1, 2, 3]), tidu.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if not (is_value(elements) or is_value(test_elements)):
        raise TypeError("isin() received an invalid combination of arguments")
    like = elements if is_value(elements) else test_elements
    a = elements._values() if is_value(elements) else np.asarray(elements)
    b = test_elements._values() if is_value(test_elements) else np.asarray(test_elements)
    out = np.isin(a, b, assume_unique=assume_unique, invert=invert)
    return _placed(out, dtypes.bool_, like)


METHODS = {
    "absolute": absolute, "negative": negative, "positive": positive, "true_divide": true_divide, "logit": logit,
    "xlogy": xlogy, "sinc": sinc, "deg2rad": deg2rad, "rad2deg": rad2deg, "float_power": float_power,
    "fmax": fmax, "fmin": fmin, "addcmul": addcmul, "addcdiv": addcdiv, "isinf": isinf, "isposinf": isposinf,
    "isneginf": isneginf, "isclose": isclose, "allclose": allclose, "equal": equal,
    "divide": divide, "multiply": multiply, "subtract": subtract, "greater": greater, "greater_equal": greater_equal,
    "less": less, "less_equal": less_equal, "not_equal": not_equal, "arcsinh": arcsinh, "arccosh": arccosh,
    "arctanh": arctanh, "fix": fix, "sgn": sgn,
    "copysign": copysign, "gcd": gcd, "lcm": lcm, "nextafter": nextafter, "heaviside": heaviside, "ldexp": ldexp,
    "logaddexp2": logaddexp2, "signbit": signbit, "frexp": frexp, "isreal": isreal, "angle": lambda self: angle(self),
}
