"""Elementwise math with PyTorch's names, broadcasting and promotion."""

from __future__ import annotations

import math
from typing import Any

from ..core import dtypes
from ..core.primitive import Var, bind
from ..primitives import elementwise as ew
from ._operands import broadcast_shapes, broadcast_to, float_operand, is_value, lift, operands

__all__ = ['add', 'cos', 'div', 'eq', 'erf', 'exp', 'ge', 'gelu', 'gt', 'le', 'log', 'lt', 'maximum', 'mul', 'ne', 'neg', 'pow', 'relu', 'sigmoid', 'sin', 'sqrt', 'sub', 'tanh', 'where']

def add(input: Any, other: Any, *, alpha: Any = 1) -> Any:  # noqa: A002
    """``input + alpha * other``, broadcasting.

    >>> import tidu
    >>> tidu.add(tidu.tensor([1, 2]), 1)
    tensor([2, 3])
    """
    if alpha != 1:
        other = mul(other, alpha)
    a, b = operands(input, other, op="add")
    return bind(ew.add, a, b)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Any:  # noqa: A002
    """``input - alpha * other``, broadcasting.

    >>> import tidu
    >>> tidu.sub(tidu.tensor([1.0, 2.0]), 0.5)
    tensor([0.5000, 1.5000])
    """
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    if alpha != 1:
        other = mul(other, alpha)
    a, b = operands(input, other, op="sub")
    return bind(ew.sub, a, b)


def _is_bool(x: Any) -> bool:
    return isinstance(x, bool) or (is_value(x) and x.dtype is dtypes.bool_)


def mul(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise product, broadcasting.

    >>> import tidu
    >>> tidu.mul(tidu.tensor([[1.0], [2.0]]), tidu.tensor([1.0, 10.0]))
    tensor([[ 1., 10.],
            [ 2., 20.]])
    """
    a, b = operands(input, other, op="mul")
    return bind(ew.mul, a, b)


def div(input: Any, other: Any) -> Any:  # noqa: A002
    """True division; integers divide to the default float dtype.

    >>> import tidu
    >>> tidu.div(tidu.tensor([1, 3]), 2)
    tensor([0.5000, 1.5000])
    """
    a, b = operands(input, other, op="div", float_only=True)
    return bind(ew.div, a, b)


def neg(input: Any) -> Any:  # noqa: A002
    """``-input``.

    >>> import tidu
    >>> tidu.neg(tidu.tensor([1, -2]))
    tensor([-1,  2])
    """
    if input.dtype is dtypes.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. "
            "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return bind(ew.neg, input)


def _unary(prim: Any, name: str, doc: str) -> Any:
    def fn(input: Any) -> Any:  # noqa: A002
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
    """``input ** exponent``, broadcasting (floating point).

    >>> import tidu
    >>> tidu.pow(tidu.tensor([2.0, 3.0]), 2)
    tensor([4., 9.])
    """
    dt = dtypes.result_type(input, exponent)
    if not dt.is_floating_point:
        raise NotImplementedError("pow of integer tensors is not supported yet; convert to float first")
    a, b = operands(input, exponent, op="pow")
    return bind(ew.pow, a, b)


def sqrt(input: Any) -> Any:  # noqa: A002
    """Square root (``input ** 0.5``).

    >>> import tidu
    >>> tidu.sqrt(tidu.tensor([4.0, 9.0]))
    tensor([2., 3.])
    """
    return pow(float_operand(input, "sqrt"), 0.5)


def maximum(input: Any, other: Any) -> Any:  # noqa: A002
    """Elementwise maximum; at ties each input gets half the gradient (as in PyTorch).

    >>> import tidu
    >>> tidu.maximum(tidu.tensor([1.0, 5.0]), tidu.tensor([3.0, 2.0]))
    tensor([3., 5.])
    """
    a, b = operands(input, other, op="maximum")
    return bind(ew.maximum, a, b)


def where(condition: Any, input: Any, other: Any) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other``; broadcasting.

    >>> import tidu
    >>> x = tidu.tensor([-1.0, 2.0])
    >>> tidu.where(x > 0, x, 0.0)
    tensor([0., 2.])
    """
    if not is_value(condition):
        raise TypeError(f"where(): argument 'condition' must be Tensor, not {type(condition).__name__}")
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError(
            f"where expected condition to be a boolean tensor, but got a tensor with dtype {condition.dtype.name}"
        )
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
    return where(gt(input, 0), input, 0)


def gelu(input: Any, approximate: str = "none") -> Any:  # noqa: A002
    """Gaussian error linear unit: exact (``erf``) or ``approximate='tanh'``.

    >>> import tidu
    >>> tidu.gelu(tidu.tensor([-1.0, 0.0, 1.0]))
    tensor([-0.1587,  0.0000,  0.8413])
    """
    x = float_operand(input, "gelu")
    if approximate == "none":
        return x * 0.5 * (1.0 + erf(x * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + tanh(inner))
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


def sigmoid(input: Any) -> Any:  # noqa: A002
    """Logistic function ``1 / (1 + exp(-input))``.

    >>> import tidu
    >>> tidu.sigmoid(tidu.tensor([0.0]))
    tensor([0.5000])
    """
    x = float_operand(input, "sigmoid")
    return 0.5 * tanh(x * 0.5) + 0.5


def _reflected(fn: Any) -> Any:
    return lambda self, other: fn(other, self)


# Tensor (and Var) methods and operators of this module; ``tidu.ops.methods`` installs them.
METHODS = {
    "__add__": add, "__radd__": _reflected(add), "__sub__": sub, "__rsub__": _reflected(sub),
    "__mul__": mul, "__rmul__": _reflected(mul), "__truediv__": div, "__rtruediv__": _reflected(div),
    "__pow__": pow, "__rpow__": _reflected(pow), "__neg__": neg, "__pos__": lambda self: self,
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "add": add, "sub": sub, "mul": mul, "div": div, "neg": neg, "pow": pow,
    "exp": exp, "log": log, "tanh": tanh, "sin": sin, "cos": cos, "erf": erf,
    "sqrt": sqrt, "sigmoid": sigmoid, "relu": relu, "maximum": maximum,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
}
