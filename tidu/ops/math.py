"""Elementwise math with PyTorch's names, broadcasting and promotion."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.dispatch import bind_same
from ..core.half import computed_in_float32
from ..core.primitive import Var, bind
from ..primitives import elementwise as ew
from ..tensor import SHORT_PATH_TYPES, Tensor
from ._operands import (
    broadcast_shapes,
    broadcast_to,
    constant,
    convert,
    float_operand,
    is_value,
    kept_constant,
    lift,
    operands,
    same_or_scalar,
)
from .metadata import finfo

__all__ = [
    "abs", "add", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "ceil", "clamp",
    "clip", "cos", "div", "eq", "erf", "exp", "exp2", "expm1", "floor", "floor_divide", "ge",
    "gelu", "gt", "isfinite", "isnan", "le", "lerp", "log", "log1p", "log2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "ne", "neg",
    "pow", "reciprocal", "relu", "remainder", "round", "rsqrt", "sigmoid", "sign", "sin",
    "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "log10",
    "atan2", "arctan2", "hypot", "fmod", "frac", "logaddexp", "nan_to_num", "clamp_min", "clamp_max",
    "sqrt", "square", "sub", "tan", "tanh", "trunc", "where",
]

# --- argument checks with PyTorch's messages -----------------------------------------------------
_not_implemented = dtypes.not_implemented


def _tensor(x: Any, op: str, arg: str = "input", position: int = 1) -> None:
    if not is_value(x):
        raise TypeError(f"{op}(): argument '{arg}' (position {position}) must be Tensor, not {type(x).__name__}")


def _any_tensor(a: Any, b: Any, op: str) -> None:
    if not (is_value(a) or is_value(b)):
        raise TypeError(f"{op}(): expected a Tensor argument, got {type(a).__name__} and {type(b).__name__}")


def _is_int(x: Any) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool)


def _no_bool(x: Any, op: str, kernel: str) -> None:
    _tensor(x, op)
    if x.dtype is dtypes.bool_:
        raise _not_implemented(kernel, x.dtype)


def _binary_op(prim: Any, op: str, float_only: bool = False) -> Any:
    """``fn(input, other)``: ``prim`` on two operands with PyTorch's promotion and broadcasting;
    the common cases (``same_or_scalar``) go straight to ``bind_same``. The operators
    (``a + b``, ``a * b``) are such functions themselves: one call less an op."""

    def fn(input: Any, other: Any) -> Any:  # noqa: A002
        if type(input) is Tensor:  # the commonest cases of ``same_or_scalar`` written out (W1: 0.3 µs an op)
            kind = type(other)
            if kind is Tensor:
                if (input._dtype is other._dtype and input._device is other._device
                        and input._buf.shape == other._buf.shape and (input._dtype.is_floating_point or not float_only)):
                    return bind_same(prim, (input, other))
            elif kind is float and input._dtype.is_floating_point:
                return bind_same(prim, (input, constant(other, input._dtype, input, input._buf.shape)))
        same = same_or_scalar(input, other, float_only)
        if same is not None:
            return bind_same(prim, same)
        a, b = operands(input, other, op=op, float_only=float_only)
        return bind(prim, a, b)

    fn.__name__ = fn.__qualname__ = op
    return fn


_ADD, _SUB, _MUL = _binary_op(ew.add, "add"), _binary_op(ew.sub, "sub"), _binary_op(ew.mul, "mul")
_DIV = _binary_op(ew.div, "div", float_only=True)
_ATAN2, _HYPOT = _binary_op(ew.atan2, "atan2", float_only=True), _binary_op(ew.hypot, "hypot")


def _no_bool_binary(prim: Any, input: Any, other: Any, op: str, kernel: str) -> Any:  # noqa: A002
    """``prim`` on two operands of a numeric (not bool) result dtype, with PyTorch's promotion;
    bool raises PyTorch's ``NotImplementedError`` naming its ``kernel``."""
    _any_tensor(input, other, op)
    dt = dtypes.result_type(input, other)
    if dt is dtypes.bool_:
        raise _not_implemented(kernel, dt)
    a, b = operands(input, other, op=op)
    return bind(prim, a, b)


_ONE_ARGUMENT = object()  # where's missing input and other (None is not a default: PyTorch refuses it)


def _check_alpha(input: Any, other: Any, alpha: Any) -> None:  # noqa: A002
    dt = dtypes.result_type(input, other)
    if isinstance(alpha, float) and not dt.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, bool) and dt is not dtypes.bool_:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")


def _in_result_dtype(input: Any, other: Any) -> Any:  # noqa: A002
    """``add``'s and ``sub``'s ``other`` in the dtype of their result: PyTorch scales it by
    ``alpha`` there (``int8 + 2 * bool`` stays int8)."""
    if not is_value(other):
        return other
    dt = dtypes.result_type(input, other)
    return other if other.dtype is dt else convert(other, dt)


def _scaled(other: Any, alpha: Any) -> Any:
    """``alpha * other`` for ``add`` and ``sub``: PyTorch's backward holds ``alpha`` as a number,
    so a float tensor's is kept on release (``kept_constant``)."""
    if is_value(other) and other.dtype.is_floating_point and type(alpha) in (int, float):
        return mul(other, kept_constant(alpha, other.dtype, other, tuple(other.shape)))
    if not is_value(other) and not is_value(alpha):  # two numbers: their product is a number
        return other * alpha
    return mul(other, alpha)


def scalar_first(name: str, value: Any, rest: tuple, signature: str, instead: str) -> Any:
    """The tensor operand of PyTorch's deprecated overloads that take the scalar first
    (``add(input, alpha, other)``, ``addcmul(input, value, t1, t2)``), with their warning."""
    if not isinstance(value, bool | int | float) or not rest or not all(is_value(r) for r in rest):
        raise TypeError(f"{name}() takes the scalar first only in its deprecated overload {name}({signature})")
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({signature})\nConsider using one of the "
                  f"following signatures instead:\n\t{name}({instead})", UserWarning, stacklevel=3)
    return rest


def add(input: Any, other: Any, *deprecated: Any, alpha: Any = 1) -> Any:  # noqa: A002
    """``input + alpha * other``, broadcasting (``add(input, alpha, other)``: PyTorch's deprecated
    form, with its warning).

    >>> import tidu
    >>> tidu.add(tidu.tensor([1, 2]), 1)
    tensor([2, 3])
    >>> tidu.add(tidu.tensor([1.0, 2.0]), 1, alpha=2)
    tensor([3., 4.])
    """
    if deprecated:
        alpha, (other,) = other, scalar_first("add", other, deprecated, "Number alpha, Tensor other",
                                              "Tensor other, *, Number alpha = 1")
    if alpha != 1 or alpha is True:  # (True == 1: PyTorch checks a bool alpha all the same)
        _check_alpha(input, other, alpha)
        if _is_bool(input) and _is_bool(other):  # bool arithmetic: ``alpha`` is True or False
            other = other if alpha else other & False if is_value(other) else False
        else:
            other = _scaled(_in_result_dtype(input, other), alpha)
    return _ADD(input, other)


def sub(input: Any, other: Any, *deprecated: Any, alpha: Any = 1) -> Any:  # noqa: A002
    """``input - alpha * other``, broadcasting (``sub(input, alpha, other)``: deprecated, as ``add``).

    >>> import tidu
    >>> tidu.sub(tidu.tensor([1.0, 2.0]), 0.5)
    tensor([0.5000, 1.5000])
    """
    if deprecated:
        alpha, (other,) = other, scalar_first("sub", other, deprecated, "Number alpha, Tensor other",
                                              "Tensor other, *, Number alpha = 1")
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if alpha != 1 or alpha is True:  # (True == 1: PyTorch checks a bool alpha all the same)
        _check_alpha(input, other, alpha)
        other = _scaled(_in_result_dtype(input, other), alpha)
    return _SUB(input, other)


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or (is_value(x) and x.dtype is dtypes.bool_)


def mul(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise product, broadcasting.

    >>> import tidu
    >>> tidu.mul(tidu.tensor([[1.0], [2.0]]), tidu.tensor([1.0, 10.0]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    return _MUL(input, other)


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Any:  # noqa: A002
    """Division, broadcasting. ``rounding_mode=None``: true division (integers divide to the
    default float dtype); ``'trunc'``: rounded toward zero; ``'floor'``: rounded down (as
    ``floor_divide``). The rounded forms keep integer dtypes and have a zero gradient.

    >>> import tidu
    >>> tidu.div(tidu.tensor([1, 3]), 2)
    tensor([0.5000, 1.5000])
    >>> tidu.div(tidu.tensor([7, -7]), 2, rounding_mode="trunc")
    tensor([ 3, -3])
    >>> tidu.div(tidu.tensor([7, -7]), 2, rounding_mode="floor")
    tensor([ 3, -4])
    """
    if rounding_mode is None:
        return _DIV(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode != "trunc":
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}"
        )
    dt = dtypes.result_type(input, other)
    if dt.is_floating_point:
        from .creation import ones_like

        if isinstance(input, Var) or isinstance(other, Var):  # in an AD rule (fmod's): nothing to detach
            return trunc(div(input, other))
        a, b = operands(input, other, op="div")
        q = trunc(div(a.detach(), b.detach()))
        # zero derivatives, PyTorch's: a select (not trunc's chain through ``a / b``, NaN where b is 0)
        return where(ones_like(q, dtype=dtypes.bool_), q, a + b)
    if dt is dtypes.bool_:
        raise _not_implemented("div_trunc_cpu", dt)
    a, b = operands(input, other, op="div")
    quotient = bind(ew.floor_divide, a, b)
    inexact = ne(bind(ew.remainder, a, b), 0) & ne(lt(a, 0), lt(b, 0))
    return where(inexact, quotient + 1, quotient)


def neg(input: Any) -> Any:  # noqa: A002
    """``-input``.

    >>> import tidu
    >>> tidu.neg(tidu.tensor([1, -2]))
    tensor([-1,  2])
    """
    _tensor(input, "neg")
    if input.dtype is dtypes.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return bind(ew.neg, input)


def _unary(prim: Any, name: str, doc: str) -> Any:
    def fn(input: Any) -> Any:  # noqa: A002
        if (type(input) is Tensor or type(input) in SHORT_PATH_TYPES) and input._dtype.is_floating_point:
            return bind_same(prim, (input,))
        return bind(prim, float_operand(input, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


exp = _unary(ew.exp, "exp", """Elementwise ``e ** input``; integers are promoted to the default float dtype.

    Gradient: ``d exp(x) = exp(x) dx`` (primitive ``exp``).

    >>> import tidu
    >>> x = tidu.tensor([0.0, 1.0], requires_grad=True)
    >>> tidu.exp(x).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """)
log = _unary(ew.log, "log", """Natural logarithm.

    >>> import tidu
    >>> tidu.log(tidu.tensor([1.0, 2.718281828]))
    tensor([0., 1.])
    """)
tanh = _unary(ew.tanh, "tanh", """Hyperbolic tangent.

    >>> import tidu
    >>> tidu.tanh(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7616])
    """)
sin = _unary(ew.sin, "sin", """Sine.

    >>> import tidu
    >>> tidu.sin(tidu.tensor([0.0]))
    tensor([0.])
    """)
cos = _unary(ew.cos, "cos", """Cosine.

    >>> import tidu
    >>> tidu.cos(tidu.tensor([0.0]))
    tensor([1.])
    """)
erf = _unary(ew.erf, "erf", """The error function.

    >>> import tidu
    >>> tidu.erf(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8427])
    """)


def pow(input: Any, exponent: Any) -> Any:  # noqa: A001, A002
    """``input ** exponent``, broadcasting; either side may be a Python number.

    Integer tensors stay integer (overflow wraps around, and a negative tensor exponent gives
    0 unless the base is 1 or -1, as in PyTorch); a negative Python integer exponent of an
    integer tensor raises ``RuntimeError``. Gradients follow PyTorch at 0: ``d/dx`` is 0
    where ``exponent == 0``, ``d/dexponent`` is 0 where ``input == 0`` and ``exponent >= 0``.

    >>> import tidu
    >>> tidu.pow(tidu.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    >>> tidu.pow(tidu.tensor([2, 3]), 3)
    tensor([ 8, 27])
    >>> 2 ** tidu.tensor([1, 2])
    tensor([2, 4])
    """
    _any_tensor(input, exponent, "pow")
    dt = dtypes.result_type(input, exponent)
    if not dt.is_floating_point and _is_int(exponent) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if is_value(input) and not is_value(exponent):  # PyTorch's special cases of a scalar exponent
        if dt is dtypes.bool_ and isinstance(exponent, bool):
            return eq(input, True) if exponent else eq(input, input)
        if dt.is_floating_point and exponent in (0.5, -0.5):
            root = sqrt(convert(input, dt))
            return root if exponent > 0 else reciprocal(root)
    if dt is dtypes.bool_:
        raise _not_implemented("pow", dt)
    a, b = operands(input, exponent, op="pow")
    return bind(ew.pow, a, b)


def sqrt(input: Any) -> Any:  # noqa: A002
    """Square root; integers are promoted to the default float dtype.

    Gradient: ``dx / (2 sqrt(x))`` (primitive ``sqrt``).

    >>> import tidu
    >>> tidu.sqrt(tidu.tensor([4.0, 9.0]))
    tensor([2., 3.])
    """
    return bind(ew.sqrt, float_operand(input, "sqrt"))


def maximum(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise maximum of two tensors, broadcasting; NaN wins. At ties each input gets
    half the gradient (as in PyTorch).

    >>> import tidu
    >>> tidu.maximum(tidu.tensor([1.0, 5.0]), tidu.tensor([3.0, 2.0]))
    tensor([3., 5.])
    """
    _tensor(input, "maximum")
    _tensor(other, "maximum", "other", 2)
    a, b = operands(input, other, op="maximum")
    return bind(ew.maximum, a, b)


def minimum(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise minimum of two tensors, broadcasting; NaN wins. At ties each input gets
    half the gradient (as in PyTorch).

    >>> import tidu
    >>> tidu.minimum(tidu.tensor([1.0, 5.0]), tidu.tensor([3.0, 2.0]))
    tensor([1., 2.])
    """
    _tensor(input, "minimum")
    _tensor(other, "minimum", "other", 2)
    a, b = operands(input, other, op="minimum")
    return bind(ew.minimum, a, b)


def where(condition: Any, input: Any = _ONE_ARGUMENT, other: Any = _ONE_ARGUMENT) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other``; broadcasting. With ``condition`` alone,
    ``nonzero(condition, as_tuple=True)``: one tensor of indices per dim.

    >>> import tidu
    >>> x = tidu.tensor([-1.0, 2.0])
    >>> tidu.where(x > 0, x, 0.0)
    tensor([0., 2.])
    >>> tidu.where(tidu.tensor([[True, False], [True, True]]))
    (tensor([0, 1, 1]), tensor([0, 0, 1]))
    """
    if input is _ONE_ARGUMENT and other is _ONE_ARGUMENT:
        from .selection import nonzero

        return nonzero(condition, as_tuple=True)
    if input is _ONE_ARGUMENT or other is _ONE_ARGUMENT:
        raise TypeError("where() takes a condition alone, or a condition, input and other")
    if not is_value(condition):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
    if condition.dtype is dtypes.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=2)
        condition = ne(condition, 0)
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{dtypes.TORCH_NAMES[condition.dtype.name]}")
    if (type(condition) in SHORT_PATH_TYPES and type(input) in SHORT_PATH_TYPES and type(other) in SHORT_PATH_TYPES
            and input._dtype is other._dtype and condition._device is input._device is other._device):
        shape = broadcast_shapes(condition._buf.shape, input._buf.shape, other._buf.shape, op="where")
        return bind_same(ew.select, (broadcast_to(condition, shape), broadcast_to(input, shape),
                                     broadcast_to(other, shape)))
    like = next((v for v in (condition, input, other) if isinstance(v, Var)), condition)
    dt = dtypes.result_type(input, other)
    a, b = lift(input, dt, like), lift(other, dt, like)
    shape = broadcast_shapes(condition.shape, a.shape, b.shape, op="where")
    return bind(ew.select, broadcast_to(condition, shape), broadcast_to(a, shape), broadcast_to(b, shape))


_EXAMPLES = {
    "eq": "tensor([False,  True, False])",
    "ne": "tensor([ True, False,  True])",
    "lt": "tensor([ True, False, False])",
    "le": "tensor([ True,  True, False])",
    "gt": "tensor([False, False,  True])",
    "ge": "tensor([False,  True,  True])",
}


def _compare(prim: Any, name: str) -> Any:
    def fn(input: Any, other: Any) -> Any:  # noqa: A002
        a, b = operands(input, other, op=name)
        return bind(prim, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""Elementwise ``{name}`` comparison, broadcasting; a bool tensor (not differentiable).

    >>> import tidu
    >>> tidu.{name}(tidu.tensor([1, 2, 3]), 2)
    {_EXAMPLES[name]}
    """
    return fn


eq = _compare(ew.eq, "eq")
ne = _compare(ew.ne, "ne")
lt = _compare(ew.lt, "lt")
le = _compare(ew.le, "le")
gt = _compare(ew.gt, "gt")
ge = _compare(ew.ge, "ge")


def relu(input: Any) -> Any:  # noqa: A002
    """``max(input, 0)``; the gradient at 0 is 0 (PyTorch's choice).

    >>> import tidu
    >>> tidu.relu(tidu.tensor([-1.0, 0.0, 2.0]))
    tensor([0., 0., 2.])
    """
    _tensor(input, "relu")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return bind(ew.relu, input)


@computed_in_float32
def gelu(input: Any, approximate: str = "none") -> Any:  # noqa: A002
    """Gaussian error linear unit: exact (``erf``) or ``approximate='tanh'``.

    >>> import tidu
    >>> tidu.gelu(tidu.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.1587,  0.0000,  0.8413])
    """
    x = float_operand(input, "gelu")
    if x is not input:
        raise _not_implemented("GeluKernelImpl", input.dtype)
    if approximate == "none":  # x * Phi(x): the backward reads x, Phi and x / sqrt(2) (PyTorch's roundings)
        return x * (erf(x * (1.0 / math.sqrt(2.0))) * 0.5 + 0.5)
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


def sigmoid(input: Any) -> Any:  # noqa: A002
    """Logistic function ``1 / (1 + exp(-input))``, computed without overflow for large ``|input|``.

    Gradient: ``d sigmoid(x) = sigmoid(x) (1 - sigmoid(x)) dx`` (primitive ``logistic``).

    >>> import tidu
    >>> tidu.sigmoid(tidu.tensor([0.0, -100.0, 2.0]))
    tensor([0.5000, 0.0000, 0.8808])
    """
    return bind(ew.logistic, float_operand(input, "sigmoid"))


# --- more unary functions ----------------------------------------------------------------------
expm1 = _unary(ew.expm1, "expm1", """``exp(input) - 1``, accurate for small ``input``.

    >>> import tidu
    >>> tidu.expm1(tidu.tensor([1e-10, 1.0], dtype=tidu.float64))
    tensor([1.0000e-10, 1.7183e+00], dtype=tidu.float64)
    """)
log1p = _unary(ew.log1p, "log1p", """``log(1 + input)``, accurate for small ``input``.

    Gradient: ``dx / (1 + x)`` (primitive ``log1p``).

    >>> import tidu
    >>> tidu.log1p(tidu.tensor([0.0, 1.718281828]))
    tensor([0., 1.])
    """)
tan = _unary(ew.tan, "tan", """Tangent.

    Gradient: ``(1 + tan(x) ** 2) dx`` (primitive ``tan``).

    >>> import tidu
    >>> tidu.tan(tidu.tensor([0.0, 0.7853981634]))
    tensor([0., 1.])
    """)

sinh = _unary(ew.sinh, "sinh", """Hyperbolic sine.

    Gradient: ``cosh(x) dx`` (primitive ``sinh``).

    >>> import tidu
    >>> tidu.sinh(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 1.1752])
    """)
cosh = _unary(ew.cosh, "cosh", """Hyperbolic cosine.

    Gradient: ``sinh(x) dx`` (primitive ``cosh``).

    >>> import tidu
    >>> tidu.cosh(tidu.tensor([0.0, 1.0]))
    tensor([1.0000, 1.5431])
    """)
asin = _unary(ew.asin, "asin", """Arcsine (NaN outside ``[-1, 1]``).

    Gradient: ``dx / sqrt(1 - x ** 2)`` (primitive ``asin``).

    >>> import tidu
    >>> tidu.asin(tidu.tensor([0.0, 1.0, 2.0]))
    tensor([0.0000, 1.5708,    nan])
    """)
acos = _unary(ew.acos, "acos", """Arccosine (NaN outside ``[-1, 1]``).

    Gradient: ``-dx / sqrt(1 - x ** 2)`` (primitive ``acos``).

    >>> import tidu
    >>> tidu.acos(tidu.tensor([1.0, 0.0]))
    tensor([0.0000, 1.5708])
    """)
atan = _unary(ew.atan, "atan", """Arctangent.

    Gradient: ``dx / (1 + x ** 2)`` (primitive ``atan``).

    >>> import tidu
    >>> tidu.atan(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7854])
    """)
asinh = _unary(ew.asinh, "asinh", """Inverse hyperbolic sine.

    Gradient: ``dx / sqrt(x ** 2 + 1)`` (primitive ``asinh``).

    >>> import tidu
    >>> tidu.asinh(tidu.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8814])
    """)
acosh = _unary(ew.acosh, "acosh", """Inverse hyperbolic cosine (NaN below 1).

    Gradient: ``dx / sqrt(x ** 2 - 1)`` (primitive ``acosh``).

    >>> import tidu
    >>> tidu.acosh(tidu.tensor([1.0, 2.0]))
    tensor([0.0000, 1.3170])
    """)
atanh = _unary(ew.atanh, "atanh", """Inverse hyperbolic tangent (infinite at -1 and 1, NaN beyond).

    Gradient: ``dx / (1 - x ** 2)`` (primitive ``atanh``).

    >>> import tidu
    >>> tidu.atanh(tidu.tensor([0.0, 0.5]))
    tensor([0.0000, 0.5493])
    """)
log10 = _unary(ew.log10, "log10", """Base-10 logarithm.

    Gradient: ``dx / (x ln 10)`` (primitive ``log10``).

    >>> import tidu
    >>> tidu.log10(tidu.tensor([1.0, 100.0]))
    tensor([0., 2.])
    """)


def atan2(input: Any, other: Any) -> Any:  # noqa: A002
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in the right quadrant
    (integers promoted to the default float dtype).

    Gradient: ``(x dy - y dx) / (x ** 2 + y ** 2)`` for ``y = input``, ``x = other`` (primitive ``atan2``).

    >>> import tidu
    >>> tidu.atan2(tidu.tensor([1.0, 1.0]), tidu.tensor([1.0, -1.0]))
    tensor([0.7854, 2.3562])
    """
    _tensor(input, "atan2")
    _tensor(other, "atan2", "other", 2)
    return _ATAN2(input, other)


def hypot(input: Any, other: Any) -> Any:  # noqa: A002
    """``sqrt(input ** 2 + other ** 2)`` without overflow in between (floating-point tensors).

    >>> import tidu
    >>> tidu.hypot(tidu.tensor([3.0, 1e200], dtype=tidu.float64), tidu.tensor([4.0, 1e200], dtype=tidu.float64))
    tensor([ 5.0000e+00, 1.4142e+200], dtype=tidu.float64)
    """
    _tensor(input, "hypot")
    _tensor(other, "hypot", "other", 2)
    if not dtypes.result_type(input, other).is_floating_point:
        raise _not_implemented("hypot_cpu", dtypes.result_type(input, other))
    return _HYPOT(input, other)


def fmod(input: Any, other: Any) -> Any:  # noqa: A002
    """The remainder with the sign of ``input`` (C's ``fmod``; ``remainder`` takes the divisor's).
    Integer tensors raise ``RuntimeError`` on a zero divisor; floats give NaN.

    Gradient: ``dx - trunc(x / y) dy`` (primitive ``fmod``).

    >>> import tidu
    >>> tidu.fmod(tidu.tensor([7, -7, 7, -7]), tidu.tensor([2, 2, -2, -2]))
    tensor([ 1, -1,  1, -1])
    """
    _tensor(input, "fmod")  # (a number ``other`` is one of PyTorch's overloads, a number ``input`` is not)
    return _no_bool_binary(ew.fmod, input, other, "fmod", "fmod_cpu")


def frac(input: Any) -> Any:  # noqa: A002
    """``input - trunc(input)``: the fractional part, with ``input``'s sign.

    >>> import tidu
    >>> tidu.frac(tidu.tensor([1.5, -2.25]))
    tensor([ 0.5000, -0.2500])
    """
    _tensor(input, "frac")
    if not input.dtype.is_floating_point:
        raise _not_implemented("frac_cpu", input.dtype)
    return input - trunc(input)


def logaddexp(input: Any, other: Any) -> Any:  # noqa: A002
    """``log(exp(input) + exp(other))``, as ``max + log1p(exp(-|input - other|))`` (no overflow).

    >>> import tidu
    >>> tidu.logaddexp(tidu.tensor([0.0, 1000.0]), tidu.tensor([0.0, 1000.0]))
    tensor([6.9315e-01, 1.0007e+03])
    """
    _log_add_operands(input, other, "logaddexp")
    a, b = operands(input, other, op="logaddexp", float_only=True)
    both_infinite = (a == b) & ~isfinite(a)  # inf - inf would be NaN: the sum of two infs is the inf
    return where(both_infinite, a, maximum(a, b) + log1p(exp(-abs(a - b))))


def _log_add_operands(input: Any, other: Any, name: str) -> None:  # noqa: A002
    """PyTorch's errors for ``logaddexp``/``logaddexp2``: two tensors, of a floating-point type."""
    _tensor(input, name)
    _tensor(other, name, "other", 2)
    dt = dtypes.result_type(input, other)
    if not dt.is_floating_point:
        raise _not_implemented(f"{name}_cpu", dt)


def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Any:  # noqa: A002
    """``input`` with NaN, +inf and -inf replaced (by default: 0 and the dtype's largest and
    smallest finite values); the gradient passes where nothing was replaced.

    >>> import tidu
    >>> tidu.nan_to_num(tidu.tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
    tensor([0., 9., 1.])
    """
    _tensor(input, "nan_to_num")
    if not input.dtype.is_floating_point:
        return input.clone()
    info = finfo(input.dtype)
    high = float(info.max) if posinf is None else posinf
    low = float(info.min) if neginf is None else neginf
    out = where(isnan(input), nan, input)
    out = where(input == math.inf, high, out)
    return where(input == -math.inf, low, out)


def clamp_min(input: Any, min: Any) -> Any:  # noqa: A002
    """``clamp(input, min=min)``.

    >>> import tidu
    >>> tidu.tensor([-1.0, 2.0]).clamp_min(0.5)
    tensor([0.5000, 2.0000])
    """
    return clamp(input, min=min)


def clamp_max(input: Any, max: Any) -> Any:  # noqa: A002
    """``clamp(input, max=max)``.

    >>> import tidu
    >>> tidu.tensor([-1.0, 2.0]).clamp_max(0.5)
    tensor([-1.0000,  0.5000])
    """
    return clamp(input, max=max)


_LN2 = math.log(2.0)


@computed_in_float32  # (half: computed in float32 and rounded once)
def exp2(input: Any) -> Any:  # noqa: A002
    """``2 ** input`` (as ``exp(input * ln 2)``); integers are promoted to the default float dtype.
    A half input is computed in float32 and rounded once, as PyTorch's kernel does: rounding the
    product first would put its error in the exponent (7% at ``2 ** 27.9`` in bfloat16).

    >>> import tidu
    >>> tidu.exp2(tidu.tensor([0, 3, -1]))
    tensor([1.0000, 8.0000, 0.5000])
    """
    return exp(float_operand(input, "exp2") * _LN2)


@computed_in_float32  # (half: computed in float32 and rounded once)
def log2(input: Any) -> Any:  # noqa: A002
    """Base-2 logarithm (as ``log(input) / ln 2``).

    >>> import tidu
    >>> tidu.log2(tidu.tensor([1.0, 8.0]))
    tensor([0., 3.])
    """
    return log(float_operand(input, "log2")) * (1.0 / _LN2)


def rsqrt(input: Any) -> Any:  # noqa: A002
    """``1 / sqrt(input)``.

    >>> import tidu
    >>> tidu.rsqrt(tidu.tensor([4.0, 0.25]))
    tensor([0.5000, 2.0000])
    """
    return reciprocal(sqrt(input))


def reciprocal(input: Any) -> Any:  # noqa: A002
    """``1 / input``; integers are promoted to the default float dtype.

    >>> import tidu
    >>> tidu.reciprocal(tidu.tensor([2, 4]))
    tensor([0.5000, 0.2500])
    """
    return div(1.0, float_operand(input, "reciprocal"))


def square(input: Any) -> Any:  # noqa: A002
    """``input * input``; bool tensors give int64, as in PyTorch.

    >>> import tidu
    >>> tidu.square(tidu.tensor([-3, 2]))
    tensor([9, 4])
    """
    _tensor(input, "square")
    x = convert(input, dtypes.int64) if input.dtype is dtypes.bool_ else input
    return mul(x, x)


def abs(input: Any) -> Any:  # noqa: A001, A002
    """Absolute value; integer tensors stay integer. The gradient at 0 is 0 (``sign(x) dx``,
    primitive ``abs``), as in PyTorch.

    >>> import tidu
    >>> x = tidu.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    >>> tidu.abs(x).sum().backward()
    >>> x.grad
    tensor([-1.,  0.,  1.])
    """
    _no_bool(input, "abs", "abs_cpu")
    return bind(ew.abs, input)


def sign(input: Any) -> Any:  # noqa: A002
    """-1, 0 or 1 by the sign of each element (0 for NaN); the dtype is kept. Its gradient is zero.

    >>> import tidu
    >>> tidu.sign(tidu.tensor([-2.5, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    _tensor(input, "sign")
    return bind(ew.sign, input)


def _rounding(prim: Any, name: str, example: str) -> Any:
    def fn(input: Any) -> Any:  # noqa: A002
        _no_bool(input, name, f"{name}_vml_cpu")
        return bind(prim, input)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""Elementwise ``{name}``; integer tensors are returned unchanged (as a new tensor).
    The gradient is zero (PyTorch's convention; the result still requires grad).

    >>> import tidu
    >>> tidu.{name}(tidu.tensor([-1.5, 0.5, 2.7]))
    {example}
    """
    return fn


floor = _rounding(ew.floor, "floor", "tensor([-2.,  0.,  2.])")
ceil = _rounding(ew.ceil, "ceil", "tensor([-1.,  1.,  3.])")
trunc = _rounding(ew.trunc, "trunc", "tensor([-1.,  0.,  2.])")


def round(input: Any, *, decimals: int = 0) -> Any:  # noqa: A001, A002
    """Round half to even; with ``decimals``, to that many decimal places (negative: tens,
    hundreds...), computed as PyTorch does (``rint(x * 10**d) / 10**d``). Zero gradient.

    >>> import tidu
    >>> tidu.round(tidu.tensor([0.5, 1.5, 2.5, -0.5]))
    tensor([0., 2., 2., -0.])
    >>> tidu.round(tidu.tensor([1.2345, 125.0]), decimals=2)
    tensor([  1.2300, 125.0000])
    """
    _no_bool(input, "round", "round_vml_cpu" if decimals == 0 else "round_cpu")
    if decimals == 0:
        return bind(ew.round, input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round_cpu", input.dtype)
    scale = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return bind(ew.round, input * scale) / scale
    return bind(ew.round, input / scale) * scale


def clamp(input: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A001, A002
    """Limit ``input`` to ``[min, max]``; either bound may be None, a number or a tensor
    (broadcasting, with type promotion). Where ``min > max`` the result is ``max``.

    Gradient (PyTorch's): ``input`` gets it where ``min <= x <= max`` (boundaries
    included), a tensor bound where it is the result.

    >>> import tidu
    >>> x = tidu.tensor([-1.0, 0.0, 0.5, 2.0], requires_grad=True)
    >>> tidu.clamp(x, 0, 1).sum().backward()
    >>> x.grad
    tensor([0., 1., 1., 0.])
    """
    _tensor(input, "clamp")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if b is not None]
    dt = dtypes.result_type(input, *bounds)
    if dt is dtypes.bool_ and not all(is_value(b) for b in bounds):
        raise _not_implemented("clamp_scalar_cpu", dt)
    for b in bounds:
        if not is_value(b):
            dtypes.check_fits(b, dt)
    x = convert(input, dt)
    if min is not None:
        x = where(_bound_wins(x, min, lt), min, x)
    if max is not None:
        x = where(_bound_wins(x, max, gt), max, x)
    return x


def _bound_wins(x: Any, bound: Any, beyond: Any) -> Any:
    """Where ``bound`` replaces ``x`` in ``clamp``: ``x`` is beyond it, or it is NaN (as in PyTorch)."""
    if is_value(bound):
        return beyond(x, bound) | ne(bound, bound) if bound.dtype.is_floating_point else beyond(x, bound)
    if bound != bound:
        return eq(x, x) | ne(x, x)
    return beyond(x, bound)


def clip(input: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A001, A002
    """Alias of ``clamp``.

    >>> import tidu
    >>> tidu.clip(tidu.tensor([1, 5]), max=3)
    tensor([1, 3])
    """
    return clamp(input, min, max)


@computed_in_float32
def lerp(input: Any, end: Any, weight: Any) -> Any:  # noqa: A002
    """``input + weight * (end - input)`` (PyTorch's formula: ``end - (end - input) * (1 - weight)``
    where ``|weight| >= 0.5``); ``weight`` is a number or a tensor, everything broadcasts.

    >>> import tidu
    >>> tidu.lerp(tidu.tensor([0.0, 1.0]), tidu.tensor([10.0, 3.0]), 0.25)
    tensor([2.5000, 1.5000])
    """
    _tensor(input, "lerp")
    _tensor(end, "lerp", "end", 2)
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype.name} for `end` but got dtype {end.dtype.name}")
    if not input.dtype.is_floating_point:
        raise _not_implemented("lerp_kernel_scalar", input.dtype)
    diff = end - input
    if not is_value(weight):
        if not isinstance(weight, int | float | np.number):
            raise TypeError(f"lerp(): argument 'weight' must be Tensor or Number, not {type(weight).__name__}")
        return input + weight * diff if builtins.abs(weight) < 0.5 else end - diff * (1.0 - weight)
    w = convert(weight, input.dtype)
    small = gt(w, -0.5) & lt(w, 0.5)
    return where(small, input + w * diff, end - diff * (1.0 - w))


def isnan(input: Any) -> Any:  # noqa: A002
    """Where the elements are NaN (a bool tensor; integers are never NaN).

    >>> import tidu
    >>> tidu.isnan(tidu.tensor([1.0, float("nan")]))
    tensor([False,  True])
    """
    _tensor(input, "isnan")
    return ne(input, input)


def isfinite(input: Any) -> Any:  # noqa: A002
    """Where the elements are neither infinite nor NaN (a bool tensor).

    >>> import tidu
    >>> tidu.isfinite(tidu.tensor([1.0, float("inf"), float("nan")]))
    tensor([ True, False, False])
    """
    _tensor(input, "isfinite")
    if not input.dtype.is_floating_point:
        return eq(input, input)
    return eq(input, input) & ne(input, math.inf) & ne(input, -math.inf)


# --- integer division --------------------------------------------------------------------------
def floor_divide(input: Any, other: Any) -> Any:  # noqa: A002
    """``input // other``: the quotient rounded down (Python's rule, also for negative
    operands); integer tensors stay integer and raise ``RuntimeError`` on a zero divisor.
    Its gradient is zero (PyTorch raises instead for ``//``).

    >>> import tidu
    >>> tidu.tensor([7, -7, 7, -7]) // tidu.tensor([2, 2, -2, -2])
    tensor([ 3, -4, -4,  3])
    """
    return _no_bool_binary(ew.floor_divide, input, other, "floor_divide", "div_floor_cpu")


def remainder(input: Any, other: Any) -> Any:  # noqa: A002
    """``input % other`` with Python's sign rule: the result has the sign of ``other``.
    Integer tensors raise ``RuntimeError`` on a zero divisor; floats give NaN.

    Gradient: ``dx - floor(x / y) dy`` (primitive ``remainder``).

    >>> import tidu
    >>> tidu.tensor([7, -7, 7, -7]) % tidu.tensor([2, 2, -2, -2])
    tensor([ 1,  1, -1, -1])
    """
    return _no_bool_binary(ew.remainder, input, other, "remainder", "remainder_cpu")


# --- logical and bitwise -----------------------------------------------------------------------
def _truth(x: Any) -> Any:
    return x if x.dtype is dtypes.bool_ else ne(x, 0)


def _logical(name: str, combine: Any, example: str) -> Any:
    def fn(input: Any, other: Any) -> Any:  # noqa: A002
        _tensor(input, name)
        _tensor(other, name, "other", 2)
        return combine(_truth(input), _truth(other))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""Elementwise logical ``{name.removeprefix("logical_")}`` of the truth values of two tensors
    (nonzero is true), broadcasting; a bool tensor.

    >>> import tidu
    >>> tidu.{name}(tidu.tensor([True, True, False]), tidu.tensor([1.0, 0.0, 0.0]))
    {example}
    """
    return fn


def logical_not(input: Any) -> Any:  # noqa: A002
    """Elementwise logical not (zero is false); a bool tensor.

    >>> import tidu
    >>> tidu.logical_not(tidu.tensor([0.0, 2.0]))
    tensor([ True, False])
    """
    _tensor(input, "logical_not")
    return eq(input, False if input.dtype is dtypes.bool_ else 0)


def _bitwise(prim: Any, name: str, example: str) -> Any:
    def fn(input: Any, other: Any) -> Any:  # noqa: A002
        _any_tensor(input, other, name)
        dt = dtypes.result_type(input, other)
        if dt.is_floating_point:
            raise _not_implemented(f"{name}_cpu", dt)
        a, b = operands(input, other, op=name)
        return bind(prim, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""Elementwise ``{name}`` of bool or integer tensors (or Python ints and bools),
    broadcasting; floating-point operands raise ``NotImplementedError`` as in PyTorch.

    >>> import tidu
    >>> tidu.{name}(tidu.tensor([12, 10]), 6)
    {example}
    """
    return fn


bitwise_and = _bitwise(ew.bitwise_and, "bitwise_and", "tensor([4, 2])")
bitwise_or = _bitwise(ew.bitwise_or, "bitwise_or", "tensor([14, 14])")
bitwise_xor = _bitwise(ew.bitwise_xor, "bitwise_xor", "tensor([10, 12])")


def _shift(prim: Any, name: str, kernel: str, example: str) -> Any:
    def fn(input: Any, other: Any) -> Any:  # noqa: A002
        _any_tensor(input, other, name)
        dt = dtypes.result_type(input, other)
        if dt.is_floating_point or dt is dtypes.bool_:
            raise _not_implemented(f"{kernel}_cpu", dt)
        a, b = operands(input, other, op=name)
        return bind(prim, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""Elementwise ``{"<<" if kernel == "lshift" else ">>"}`` of integer tensors (or Python ints), broadcasting, as
    PyTorch's: a count that is negative or at least the dtype's bit width gives
    {"0" if kernel == "lshift" else "0, or -1 for a negative ``input``"}; bits shifted out of the dtype are lost. Floating-point
    and bool operands raise ``NotImplementedError``.

    >>> import tidu
    >>> tidu.{name}(tidu.tensor([-12, 10], dtype=tidu.int8), tidu.tensor([2, 9], dtype=tidu.int8))
    {example}
    """
    return fn


bitwise_left_shift = _shift(ew.bitwise_left_shift, "bitwise_left_shift", "lshift",
                            "tensor([-48,   0], dtype=tidu.int8)")
bitwise_right_shift = _shift(ew.bitwise_right_shift, "bitwise_right_shift", "rshift",
                             "tensor([-3,  0], dtype=tidu.int8)")
logical_and = _logical("logical_and", bitwise_and, "tensor([ True, False, False])")
logical_or = _logical("logical_or", bitwise_or, "tensor([ True,  True, False])")
logical_xor = _logical("logical_xor", ne, "tensor([False,  True, False])")


def bitwise_not(input: Any) -> Any:  # noqa: A002
    """Elementwise ``~``: logical not of bools, two's complement of integers.

    >>> import tidu
    >>> tidu.bitwise_not(tidu.tensor([0, 5, -1]))
    tensor([-1, -6,  0])
    """
    _tensor(input, "bitwise_not")
    if input.dtype.is_floating_point:
        raise _not_implemented("bitwise_not_cpu", input.dtype)
    if input.dtype is dtypes.bool_:
        return eq(input, False)
    return bitwise_xor(input, -1)


def _invert(input: Any) -> Any:  # noqa: A002
    if input.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(input)


def _reflected(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


_COMPARED = (Tensor, Var, bool, int, float, complex, np.generic, np.ndarray)


def _comparison_operator(fn: Any) -> Any:
    """``fn`` as an operator: ``NotImplemented`` for an operand that is neither a tensor, a number
    nor an array (PyTorch's), so Python decides: ``x == None`` and ``x == "a"`` are False,
    ``x < None`` a ``TypeError``."""

    def op(self: Any, other: Any) -> Any:
        if type(other) is Tensor or isinstance(other, _COMPARED):
            return fn(self, other)
        return NotImplemented

    op.__name__ = op.__qualname__ = f"__{fn.__name__}__"
    return op


# Tensor (and Var) methods and operators of this module; ``tidu.ops.methods`` installs them.
METHODS = {
    "__add__": _ADD, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": _reflected(sub),
    "__mul__": _MUL, "__rmul__": _reflected(mul), "__truediv__": _DIV, "__rtruediv__": _reflected(div),
    "__floordiv__": floor_divide, "__rfloordiv__": _reflected(floor_divide),
    "__mod__": remainder, "__rmod__": _reflected(remainder),
    "__pow__": pow, "__rpow__": _reflected(pow), "__neg__": neg, "__pos__": lambda self: self,
    "__abs__": abs, "__invert__": _invert,
    "__and__": bitwise_and, "__rand__": _reflected(bitwise_and), "__or__": bitwise_or,
    "__ror__": _reflected(bitwise_or), "__xor__": bitwise_xor, "__rxor__": _reflected(bitwise_xor),
    "__lshift__": bitwise_left_shift, "__rlshift__": _reflected(bitwise_left_shift),
    "__rshift__": bitwise_right_shift, "__rrshift__": _reflected(bitwise_right_shift),
    "bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift,
    **{f"__{fn.__name__}__": _comparison_operator(fn) for fn in (eq, ne, lt, le, gt, ge)},
    "add": add, "sub": sub, "mul": mul, "div": div, "neg": neg, "pow": pow,
    "exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log1p": log1p,
    "sqrt": sqrt, "rsqrt": rsqrt, "sin": sin, "cos": cos, "tan": tan, "tanh": tanh, "erf": erf,
    "sigmoid": sigmoid, "relu": relu, "abs": abs, "sign": sign, "floor": floor, "ceil": ceil,
    "round": round, "trunc": trunc, "clamp": clamp, "clip": clip, "maximum": maximum,
    "minimum": minimum, "reciprocal": reciprocal, "square": square, "lerp": lerp,
    "isnan": isnan, "isfinite": isfinite, "floor_divide": floor_divide, "remainder": remainder,
    "where": lambda self, condition, other: where(condition, self, other),
    "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
    "logical_not": logical_not, "bitwise_and": bitwise_and, "bitwise_or": bitwise_or,
    "bitwise_xor": bitwise_xor, "bitwise_not": bitwise_not,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "sinh": sinh, "cosh": cosh, "asin": asin, "acos": acos, "atan": atan, "asinh": asinh, "acosh": acosh,
    "atanh": atanh, "arcsin": asin, "arccos": acos, "arctan": atan, "log10": log10, "atan2": atan2,
    "arctan2": atan2, "hypot": hypot, "fmod": fmod, "frac": frac, "logaddexp": logaddexp, "nan_to_num": nan_to_num,
    "clamp_min": clamp_min, "clamp_max": clamp_max,
}

arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
