"""Numerical calculus on sampled values: ``trapezoid`` (and ``trapz``), ``cumulative_trapezoid``
and ``gradient`` (central differences inside, one-sided ones of order 1 or 2 at the edges).

All are composed from slices, arithmetic, sums and concatenation, so they are differentiable in
the samples and in the sample points.
"""

from __future__ import annotations

from numbers import Number
from typing import Any

from ..core import dtypes
from ..core.aval import wrap_dim
from ..tensor import Tensor
from . import reduce, shape

__all__ = ["cumulative_trapezoid", "gradient", "trapezoid", "trapz"]


def _samples(y: Any, name: str) -> Any:
    """``y`` in floating point (integers in the default float dtype); bool is refused, as in PyTorch."""
    if y.dtype is dtypes.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    return y if y.dtype.is_floating_point else y.to(dtypes.get_default_dtype())


def _along(v: Any, d: int, ndim: int) -> Any:
    """A 1-D ``v`` shaped to broadcast along dim ``d`` of an ``ndim``-dim tensor."""
    return shape.reshape(v, tuple(v.shape[0] if i == d else 1 for i in range(ndim)))


def _spacings(y: Any, x: Any, d: int, name: str) -> Any:
    """The steps ``x[i + 1] - x[i]`` along ``d``, shaped to multiply the pairs of ``y``'s samples."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        return _along(x[1:] - x[:-1], d, y.ndim)
    xd = wrap_dim(d - y.ndim, x.ndim)  # the same dim, counted from the end (x broadcasts against y)
    n = x.shape[xd]
    if n != y.shape[d]:
        raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
    return shape._narrow(x, xd, 1, n) - shape._narrow(x, xd, 0, n - 1)


def _check_dx(x: Any, dx: Any, name: str) -> None:
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: `x` and `dx` are both given")


def trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """The integral of the samples ``y`` along ``dim`` by the trapezoidal rule, at the sample
    points ``x`` (1-D, or broadcastable against ``y``) or a constant spacing ``dx`` (1 by default).

    >>> import tidu
    >>> tidu.trapezoid(tidu.tensor([1.0, 2.0, 3.0]), tidu.tensor([0.0, 1.0, 3.0]))
    tensor(6.5000)
    >>> tidu.trapezoid(tidu.tensor([[1, 2, 3]]), dx=2.0)
    tensor([8.])
    """
    _check_dx(x, dx, "trapezoid")
    y = _samples(y, "trapezoid")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return reduce.sum(y, d)
    pairs = shape._narrow(y, d, 0, n - 1) + shape._narrow(y, d, 1, n)
    if x is None:
        return reduce.sum(pairs, d) * ((1.0 if dx is None else dx) / 2)
    return reduce.sum(_spacings(y, x, d, "trapezoid") * pairs, d) / 2


def trapz(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """``trapezoid`` under its older name.

    >>> import tidu
    >>> tidu.trapz(tidu.tensor([1.0, 2.0, 3.0]), dx=0.5)
    tensor(2.)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Any, x: Any = None, *, dx: Any = None, dim: int = -1) -> Any:
    """The running integral of ``trapezoid``: one value per interval (``n - 1`` along ``dim``).

    >>> import tidu
    >>> tidu.cumulative_trapezoid(tidu.tensor([1, 2, 3]))
    tensor([1.5000, 4.0000])
    """
    _check_dx(x, dx, "cumulative_trapezoid")
    y = _samples(y, "cumulative_trapezoid")
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        return y
    pairs = shape._narrow(y, d, 0, n - 1) + shape._narrow(y, d, 1, n)
    if x is None:
        return reduce.cumsum(pairs, d) * ((1.0 if dx is None else dx) / 2)
    return reduce.cumsum(_spacings(y, x, d, "cumulative_trapezoid") * pairs, d) / 2


def _dims_and_spacing(f: Any, spacing: Any, dim: Any) -> tuple[list[int], list[Any]]:
    """The dims to differentiate along and each one's spacing (a number or 1-D coordinates)."""
    if dim is None:
        dims = list(range(f.ndim))
    elif isinstance(dim, int):
        dims = [wrap_dim(dim, f.ndim)]
    else:
        dims = [wrap_dim(d, f.ndim) for d in dim]
    if isinstance(spacing, Number | Tensor) and not (isinstance(spacing, Tensor) and spacing.ndim > 0):
        return dims, [spacing.item() if isinstance(spacing, Tensor) else spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) != len(dims):
        if dim is None:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                f"'self.dim() = {f.ndim}', since dim argument was not given, but got a list of length {len(spacing)}"
            )
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to "
            f"have the same length, but got a spacing argument of length {len(spacing)} and a dim argument of "
            f"length {len(dims)}."
        )
    return dims, spacing


def _sample(f: Any, d: int, i: int) -> Any:
    """Sample ``i`` (from the end when negative) along ``d``, the dim kept."""
    n = f.shape[d]
    return shape._narrow(f, d, i % n, i % n + 1)


def _edges_uniform(f: Any, d: int, h: float, order: int) -> tuple[Any, Any]:
    def at(i: int) -> Any:
        return _sample(f, d, i)

    if order == 1:
        return (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
    return ((at(0) * -1.5 + at(1) * 2.0 - at(2) * 0.5) / h,
            (at(-3) * 0.5 - at(-2) * 2.0 + at(-1) * 1.5) / h)


def _edges_at(f: Any, x: Any, d: int, order: int) -> tuple[Any, Any]:
    def at(i: int) -> Any:
        return _sample(f, d, i)

    if order == 1:
        return (at(1) - at(0)) / (x[1] - x[0]), (at(-1) - at(-2)) / (x[-1] - x[-2])
    h1, h2 = x[1] - x[0], x[2] - x[1]
    first = (at(0) * (-(2 * h1 + h2) / (h1 * (h1 + h2))) + at(1) * ((h1 + h2) / (h1 * h2))
             + at(2) * (-h1 / (h2 * (h1 + h2))))
    h1, h2 = x[-2] - x[-3], x[-1] - x[-2]
    last = (at(-3) * (h2 / (h1 * (h1 + h2))) + at(-2) * (-(h1 + h2) / (h1 * h2))
            + at(-1) * ((2 * h2 + h1) / (h2 * (h1 + h2))))
    return first, last


def gradient(input: Any, *, spacing: Any = 1, dim: Any = None, edge_order: int = 1) -> tuple:  # noqa: A002
    """The derivative of sampled values along each of ``dim`` (all dims by default): central
    differences inside and one-sided differences of order ``edge_order`` (1 or 2) at the edges,
    at a constant ``spacing`` per dim or at the sample coordinates given as 1-D tensors.

    >>> import tidu
    >>> tidu.gradient(tidu.tensor([1.0, 2.0, 4.0, 8.0]))
    (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    >>> tidu.gradient(tidu.tensor([1.0, 2.0, 4.0, 8.0]), spacing=(tidu.tensor([0.0, 1.0, 3.0, 4.0]),))
    (tensor([1.0000, 1.0000, 3.0000, 4.0000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    f = _samples(input, "gradient")
    dims, spacing = _dims_and_spacing(f, spacing, dim)
    if any(f.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, spacing):
        n = f.shape[d]
        before, middle, after = shape._narrow(f, d, 0, n - 2), shape._narrow(f, d, 1, n - 1), shape._narrow(f, d, 2, n)
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != n:
                raise RuntimeError(
                    f"torch.gradient expected the coordinates along dim {d} to be a 1-D tensor of {n} values, "
                    f"got shape {tuple(h.shape)}"
                )
            x = h if h.dtype.is_floating_point else h.to(f.dtype)
            left, right = x[1:-1] - x[:-2], x[2:] - x[1:-1]
            inner = (before * _along(-right / (left * (left + right)), d, f.ndim)
                     + middle * _along((right - left) / (left * right), d, f.ndim)
                     + after * _along(left / (right * (left + right)), d, f.ndim))
            first, last = _edges_at(f, x, d, edge_order)
        else:
            inner = (after - before) / (2 * h)
            first, last = _edges_uniform(f, d, h, edge_order)
        out.append(shape.cat([first, inner, last], d))
    return tuple(out)


METHODS: dict[str, Any] = {}
