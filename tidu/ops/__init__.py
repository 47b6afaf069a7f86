"""PyTorch-named functions composed from the primitives."""

from ._operands import broadcast_shapes, broadcast_to, is_linear
from .creation import (
    arange,
    as_tensor,
    empty,
    from_numpy,
    full,
    manual_seed,
    ones,
    ones_like,
    rand,
    randn,
    tensor,
    zeros,
    zeros_like,
)
from .linalg import matmul, mm
from .math import (
    add,
    cos,
    div,
    eq,
    erf,
    exp,
    ge,
    gelu,
    gt,
    le,
    log,
    lt,
    maximum,
    mul,
    ne,
    neg,
    pow,
    relu,
    sigmoid,
    sin,
    sqrt,
    sub,
    tanh,
    where,
)
from .reduce import amax, mean, sum
from .shape import expand, flatten, permute, reshape, squeeze, t, transpose, unsqueeze, view

__all__ = [
    "add", "amax", "arange", "as_tensor", "broadcast_shapes", "broadcast_to", "cos", "div", "empty", "eq",
    "erf", "exp", "expand", "flatten", "from_numpy", "full", "ge", "gelu", "gt", "is_linear", "le", "log",
    "lt", "manual_seed", "matmul", "maximum", "mean", "mm", "mul", "ne", "neg", "ones", "ones_like",
    "permute", "pow", "rand", "randn", "relu", "reshape", "sigmoid", "sin", "sqrt", "squeeze", "sub", "sum",
    "t", "tanh", "tensor", "transpose", "unsqueeze", "view", "where", "zeros", "zeros_like",
]
