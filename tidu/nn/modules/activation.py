"""Activation modules: ``ReLU``, ``LeakyReLU``, ``ELU``, ``Softplus``, ``GELU``, ``SiLU``, ``Tanh``,
``Sigmoid``, ``Softmax``, ``LogSoftmax``, ``Hardtanh``, ``ReLU6``, ``Hardsigmoid``, ``Hardswish``,
``Mish``, ``LogSigmoid``, ``Softsign``."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .module import Module


class ReLU(Module):
    """``max(x, 0)`` elementwise.

    >>> import tidu
    >>> tidu.nn.ReLU()(tidu.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.relu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where positive, ``negative_slope * x`` elsewhere.

    >>> import tidu
    >>> tidu.nn.LeakyReLU(0.2)(tidu.tensor([-1.0, 1.0]))
    tensor([-0.2000,  1.0000])
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` where positive, ``alpha * (exp(x) - 1)`` elsewhere.

    >>> import tidu
    >>> tidu.nn.ELU()
    ELU(alpha=1.0)
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).

    >>> import tidu
    >>> tidu.nn.Softplus()(tidu.tensor([0.0]))
    tensor([0.6931])
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class GELU(Module):
    """Gaussian error linear unit, ``approximate='none'`` (erf) or ``'tanh'``.

    >>> import tidu
    >>> tidu.nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``.

    >>> import tidu
    >>> tidu.nn.SiLU()(tidu.tensor([0.0]))
    tensor([0.])
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.silu(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """Hyperbolic tangent.

    >>> import tidu
    >>> tidu.nn.Tanh()(tidu.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid.

    >>> import tidu
    >>> tidu.nn.Sigmoid()(tidu.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.sigmoid(input)


class Softmax(Module):
    """Softmax along ``dim``.

    >>> import tidu
    >>> tidu.nn.Softmax(dim=0)(tidu.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim``.

    >>> import tidu
    >>> tidu.nn.LogSoftmax(dim=0)(tidu.tensor([0.0, 0.0]))
    tensor([-0.6931, -0.6931])
    """

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]`` (``F.hardtanh``).

    >>> import tidu
    >>> tidu.nn.Hardtanh(-2.0, 2.0)(tidu.tensor([-3.0, 1.0]))
    tensor([-2.,  1.])
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class _Pointwise(Module):
    """An activation with no parameters: ``fn`` elementwise."""

    fn: Any = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return type(self).fn(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU6(_Pointwise):
    """``min(max(x, 0), 6)`` (``F.relu6``).

    >>> import tidu
    >>> tidu.nn.ReLU6()(tidu.tensor([-1.0, 7.0]))
    tensor([0., 6.])
    """

    fn = staticmethod(F.relu6)


class Hardsigmoid(_Pointwise):
    """``relu6(x + 3) / 6`` (``F.hardsigmoid``).

    >>> import tidu
    >>> tidu.nn.Hardsigmoid()(tidu.tensor([0.0]))
    tensor([0.5000])
    """

    fn = staticmethod(F.hardsigmoid)


class Hardswish(_Pointwise):
    """``x * relu6(x + 3) / 6`` (``F.hardswish``).

    >>> import tidu
    >>> tidu.nn.Hardswish()(tidu.tensor([4.0]))
    tensor([4.])
    """

    fn = staticmethod(F.hardswish)


class Mish(_Pointwise):
    """``x * tanh(softplus(x))`` (``F.mish``).

    >>> import tidu
    >>> tidu.nn.Mish()(tidu.tensor([0.0]))
    tensor([0.])
    """

    fn = staticmethod(F.mish)


class LogSigmoid(_Pointwise):
    """``log(sigmoid(x))`` (``F.logsigmoid``).

    >>> import tidu
    >>> tidu.nn.LogSigmoid()(tidu.tensor([0.0]))
    tensor([-0.6931])
    """

    fn = staticmethod(F.logsigmoid)


class Softsign(_Pointwise):
    """``x / (1 + |x|)`` (``F.softsign``).

    >>> import tidu
    >>> tidu.nn.Softsign()(tidu.tensor([1.0]))
    tensor([0.5000])
    """

    fn = staticmethod(F.softsign)
