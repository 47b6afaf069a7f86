"""``Linear``, ``LazyLinear``, ``Bilinear`` and ``Identity``."""

from __future__ import annotations

import math
from typing import Any

from ... import ops
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, materialize_all
from .module import Module


def _empty(*shape: int, dtype: Any = None) -> Any:
    return ops.empty(shape, dtype=dtype)


def reset_weight_and_bias(weight: Any, bias: Any) -> None:
    """PyTorch's default for Linear and Conv: ``kaiming_uniform_(a=sqrt(5))``, bias ``U(-1/sqrt(fan_in), ..)``."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in = init._calculate_fan_in_and_fan_out(weight)[0]
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input (arguments are accepted and ignored).

    >>> import tidu
    >>> tidu.nn.Identity(54)(tidu.tensor([1.0]))
    tensor([1.])
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Any) -> Any:  # noqa: A002
        return input


class Linear(Module):
    """``y = x W^T + b`` with ``weight (out_features, in_features)`` and ``bias (out_features,)``,
    initialised as PyTorch's (``kaiming_uniform_(a=sqrt(5))``, bias ``U(-1/sqrt(in), 1/sqrt(in))``).

    >>> import tidu
    >>> layer = tidu.nn.Linear(4, 3)
    >>> layer
    Linear(in_features=4, out_features=3, bias=True)
    >>> layer(tidu.ones(2, 4)).shape
    tidu.Size([2, 3])
    >>> [name for name, _ in layer.named_parameters()]
    ['weight', 'bias']
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"



class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dim of its first input; it then becomes a
    ``Linear`` (see ``LazyModuleMixin``).

    >>> import tidu
    >>> layer = tidu.nn.LazyLinear(3)
    >>> layer.weight
    <UninitializedParameter>
    >>> layer(tidu.ones(2, 5)).shape, layer.weight.shape, type(layer).__name__
    (tidu.Size([2, 3]), tidu.Size([3, 5]), 'Linear')
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Any) -> None:  # noqa: A002
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            materialize_all(self, {"weight": (self.out_features, self.in_features), "bias": (self.out_features,)})
            self.reset_parameters()
        if self.in_features == 0:  # loaded from a state dict: take in_features from the input
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to in_features from "
                    f"self.weight: {self.weight.shape[-1]}"
                )
            self.in_features = input.shape[-1]

class Bilinear(Module):
    """``y = x1^T A x2 + b`` with ``weight (out, in1, in2)``; PyTorch's init ``U(-1/sqrt(in1), 1/sqrt(in1))``.

    >>> import tidu
    >>> tidu.nn.Bilinear(3, 2, 4)(tidu.ones(5, 3), tidu.ones(5, 2)).shape
    tidu.Size([5, 4])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_empty(out_features, in1_features, in2_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Any, input2: Any) -> Any:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
