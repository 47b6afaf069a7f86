"""Activation modules: ``ReLU``, ``LeakyReLU``, ``ELU``, ``Softplus``, ``GELU``, ``SiLU``, ``Tanh``,
``Sigmoid``, ``Softmax``, ``LogSoftmax``."""

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
