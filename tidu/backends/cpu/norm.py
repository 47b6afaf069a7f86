"""layer_norm on the CPU: one pass over each row's mean, one over its squared deviations, one
writing ``(x - mean) / sqrt(var + eps)`` (``layer_norm_affine``: that times the weight plus the
bias), a row per task (rows run in parallel when there is enough work; each row's result does
not depend on the thread count). The arithmetic stays in the element dtype, as PyTorch's: float32
rows sum in float32 vector lanes (a float64 sum would convert every element; that made the
kernels 2.5 times slower).

``layer_norm_tangent`` is its derivative at ``x`` applied to ``dx``,
``r * (dx - mean(dx) - y * mean(y * dx))``: ``r`` as above (``_stats``), one pass summing ``dx``
and ``y * dx`` together, one writing the result.

``reassoc`` lets LLVM keep a vector of partial sums (the order is fixed by the compiled loop,
not by the data), as in tidu/backends/cpu/reduce.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous
from .threads import run_tasks


@njit(**JIT, fastmath={"reassoc"}, inline="always")
def _stats(xs, n, eps):  # pragma: no cover - compiled
    """``(mean, 1 / sqrt(var + eps))`` of a row: two passes, so the variance is never negative."""
    s = n - n
    for j in range(xs.shape[0]):
        s += xs[j]
    mean = s / n
    s = n - n
    for j in range(xs.shape[0]):
        d = xs[j] - mean
        s += d * d
    return mean, 1.0 / math.sqrt(s / n + eps)


@njit(**JIT, fastmath={"reassoc"})
def _rows(x, out, n_eps, lo, hi):  # pragma: no cover - compiled
    n, eps = n_eps[0], n_eps[1]  # in the element dtype: the arithmetic stays in it (vectorized)
    for r in range(lo, hi):
        xs = x[r]
        mean, scale = _stats(xs, n, eps)
        o = out[r]
        for j in range(x.shape[1]):
            o[j] = (xs[j] - mean) * scale


def layer_norm(x: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """Normalize ``x`` over its last ``k`` dimensions (biased variance)."""
    return _run(_rows, [x], k, eps)


@njit(**JIT, fastmath={"reassoc"})
def _affine_rows(x, weight, bias, out, n_eps, lo, hi):  # pragma: no cover - compiled
    n, eps = n_eps[0], n_eps[1]
    w, b = weight[0], bias[0]
    for r in range(lo, hi):
        xs = x[r]
        mean, scale = _stats(xs, n, eps)
        o = out[r]
        for j in range(x.shape[1]):
            o[j] = (xs[j] - mean) * scale * w[j] + b[j]


def layer_norm_affine(x: np.ndarray, w: np.ndarray, b: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """``layer_norm(x) * w + b``, with ``w`` and ``b`` of the normalized shape."""
    return _run(_affine_rows, [x], k, eps, (w, b))


@njit(**JIT, fastmath={"reassoc"})
def _tangent_rows(dx, x, y, out, n_eps, lo, hi):  # pragma: no cover - compiled
    n, eps = n_eps[0], n_eps[1]
    for r in range(lo, hi):
        ys = y[r]
        ds = dx[r]
        _, scale = _stats(x[r], n, eps)
        a = n - n
        b = n - n
        for j in range(x.shape[1]):
            a += ds[j]
            b += ds[j] * ys[j]
        a /= n
        b /= n
        o = out[r]
        for j in range(x.shape[1]):
            o[j] = scale * (ds[j] - a - ys[j] * b)


def layer_norm_tangent(dx: np.ndarray, x: np.ndarray, y: np.ndarray, *, k: int, eps: float) -> np.ndarray:
    """``layer_norm``'s derivative at ``x`` (with ``y = layer_norm(x)``) applied to ``dx``."""
    return _run(_tangent_rows, [dx, x, y], k, eps)


def _run(kernel, operands: list[np.ndarray], k: int, eps: float,  # noqa: ANN001
         row_params: tuple[np.ndarray, ...] = ()) -> np.ndarray:
    """``kernel(*operands, *row_params, out, (n, eps), lo, hi)`` over the rows of the last ``k``
    dimensions; each of ``row_params`` has the normalized shape (one row, read by every row)."""
    x = operands[0]  # the shape rules give every operand its shape and dtype
    out = np.empty(x.shape, x.dtype)
    if x.size == 0:
        return out
    n = math.prod(x.shape[x.ndim - k:])
    rows = x.size // n
    run_tasks(kernel, rows, len(operands) * x.size, *[contiguous(a).reshape(rows, n) for a in operands],
              *[contiguous(p).reshape(1, n) for p in row_params], out.reshape(rows, n), np.array([n, eps], x.dtype))
    return out
