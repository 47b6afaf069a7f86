"""Activation modules: ``ReLU``, ``LeakyReLU``, ``ELU``, ``Softplus``, ``GELU``, ``SiLU``, ``Tanh``,
``Sigmoid``, ``Softmax``, ``LogSoftmax``, ``Hardtanh``, ``ReLU6``, ``Hardsigmoid``, ``Hardswish``,
``Mish``, ``LogSigmoid``, ``Softsign``, ``SELU``, ``CELU``, ``PReLU``, ``Softmin``, ``Softmax2d``,
``Softshrink``, ``Hardshrink``, ``Tanhshrink``, ``Threshold``, ``GLU``."""

from __future__ import annotations

from typing import Any

from ... import ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
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



class RReLU(Module):
    """Randomized leaky ReLU (``F.rrelu``): in training, negative inputs are scaled by slopes
    drawn from ``U(lower, upper)``; in eval, by ``(lower + upper) / 2``.

    >>> import tidu
    >>> tidu.nn.RReLU(0.1, 0.3).eval()(tidu.tensor([-1.0, 1.0]))
    tensor([-0.2000,  1.0000])
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")

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
        if max_val <= min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")
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


class SELU(_Pointwise):
    """``scale * elu(x, alpha)`` with the self-normalizing constants (``F.selu``).

    >>> import tidu
    >>> tidu.nn.SELU()(tidu.tensor([1.0]))
    tensor([1.0507])
    """

    fn = staticmethod(F.selu)


class Tanhshrink(Module):
    """``x - tanh(x)`` (``F.tanhshrink``).

    >>> import tidu
    >>> tidu.nn.Tanhshrink()(tidu.tensor([1.0]))
    tensor([0.2384])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.tanhshrink(input)


class CELU(ELU):
    """``x`` where positive, ``alpha * (exp(x / alpha) - 1)`` elsewhere (``F.celu``).

    >>> import tidu
    >>> tidu.nn.CELU(2.0)
    CELU(alpha=2.0)
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.celu(input, self.alpha)


class PReLU(Module):
    """``x`` where positive, ``weight * x`` elsewhere, with a learnt ``weight`` of ``num_parameters``
    slopes (1, or one per channel), all ``init`` at first.

    >>> import tidu
    >>> act = tidu.nn.PReLU(2, init=0.5)
    >>> act
    PReLU(num_parameters=2)
    >>> act(tidu.tensor([[-2.0, 2.0]]))
    tensor([[-1.,  2.]], grad_fn=<select>)
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ops.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.constant_(self.weight, self.init)

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(Softmax):
    """Softmax of ``-x`` along ``dim`` (``F.softmin``).

    >>> import tidu
    >>> tidu.nn.Softmin(dim=0)(tidu.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.softmin(input, self.dim)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of ``(N, C, H, W)`` or ``(C, H, W)``.

    >>> import tidu
    >>> tidu.nn.Softmax2d()(tidu.zeros(2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class Softshrink(Module):
    """``x`` moved ``lambd`` towards 0, 0 within ``[-lambd, lambd]`` (``F.softshrink``).

    >>> import tidu
    >>> tidu.nn.Softshrink(1.0)(tidu.tensor([-2.0, 0.5]))
    tensor([-1.,  0.])
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """``x`` where ``|x| > lambd``, else 0 (``F.hardshrink``).

    >>> import tidu
    >>> tidu.nn.Hardshrink(1.0)(tidu.tensor([-2.0, 0.5]))
    tensor([-2.,  0.])
    """

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value`` (``F.threshold``).

    >>> import tidu
    >>> tidu.nn.Threshold(0.5, -1.0)(tidu.tensor([0.0, 1.0]))
    tensor([-1.,  1.])
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """Gated linear unit along ``dim`` (``F.glu``): first half times the sigmoid of the second.

    >>> import tidu
    >>> tidu.nn.GLU()
    GLU(dim=-1)
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Any) -> Any:  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
