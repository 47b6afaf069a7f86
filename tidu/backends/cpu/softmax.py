"""softmax and log_softmax of float32 rows on the CPU, fused: a pass finds the row maximum ``m``
(NaN if the row has one) on integer order keys (an integer maximum vectorizes, a float select
does not), one writes ``e = exp(x - m)`` (tidu/backends/cpu/fastmath.py's vectorizable ``exp``,
within 1 ULP) and sums it, a second writes ``e * (1 / sum)`` or ``x - m - log(sum)``: the sum and
the last pass in float32 (vector partial sums), as PyTorch's vectorized kernel. A row per task,
rows in parallel when there is enough work (a row's result does not depend on the thread count);
``reassoc`` lets LLVM keep a vector of partial sums. Other layouts and float64 take numpy's path
(tidu/primitives/nn.py).

``tangent`` runs the derivatives (``softmax_tangent``, ``log_softmax_tangent``) along any axis, in
any float dtype: one pass summing a row, one writing it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload, register_jitable

from .. import softmax_tangents as tangents
from .elementwise import JIT, contiguous
from .fastmath import exp_f32
from .threads import run_tasks


@register_jitable
def _from_key(key):  # noqa: ANN001, ANN201
    """The float32 whose order key (``_rows``) is ``key``."""
    return np.int32(key ^ ((key >> 31) & 0x7FFFFFFF)).view(np.float32)


# order keys of +inf and -inf: a NaN's key lies above the one or below the other
_INF_KEY, _NEG_INF_KEY = 0x7F800000, -0x7F800001


@njit(**JIT, fastmath={"reassoc"})
def _rows(x, out, log, lo, hi):  # pragma: no cover - compiled
    n = x.shape[1]
    bits = x.view(np.int32)
    for r in range(lo, hi):
        xs, o, bs = x[r], out[r], bits[r]
        # the maximum through integer order keys (``key = bits ^ ((bits >> 31) & mask)`` orders floats
        # as integers): an integer max vectorizes, a float select does not
        top = np.int32(-0x80000000)
        bottom = np.int32(0x7FFFFFFF)
        for j in range(n):
            b = bs[j]
            key = b ^ ((b >> 31) & np.int32(0x7FFFFFFF))
            top = key if key > top else top
            bottom = key if key < bottom else bottom
        mr = np.float32(np.nan) if top > _INF_KEY or bottom < _NEG_INF_KEY else _from_key(top)
        s = np.float32(0.0)  # float32 partial sums, as PyTorch's: a float64 sum converts every element
        for j in range(n):
            e = np.float32(exp_f32(xs[j] - mr))
            o[j] = e
            s += e
        if log:
            ls = np.float32(math.log(s))
            for j in range(n):
                o[j] = (xs[j] - mr) - ls
        else:
            inv = np.float32(1.0) / s  # a multiply per element, as PyTorch's vectorized kernel
            for j in range(n):
                o[j] = o[j] * inv


def last_axis(x: np.ndarray, log: bool) -> np.ndarray | None:
    """``(log_)softmax`` of ``x`` along its last axis, or ``None`` where numpy's path applies
    (not float32, not C-contiguous, empty or 0-d)."""
    if x.dtype != np.float32 or x.ndim == 0 or x.size == 0 or not x.flags.c_contiguous:
        return None
    n = x.shape[-1]
    rows = x.size // n
    x2 = x.reshape(rows, n)
    out = np.empty(x.shape, x.dtype)
    run_tasks(_rows, rows, x.size, x2, out.reshape(rows, n), log)
    return out


_term, _value = register_jitable(tangents.term), register_jitable(tangents.value)


def _exp(x):  # noqa: ANN001, ANN202 - compiled through the overload below
    return math.exp(x)


@overload(_exp)
def _exp_of(x):  # noqa: ANN001, ANN202
    """float32: the vectorizable exp (within 1 ULP); other dtypes: the C library's."""
    if x == types.float32:
        return lambda x: np.float32(exp_f32(x))
    return lambda x: math.exp(x)


@register_jitable
def _weight(kind, w):  # noqa: ANN001, ANN202
    return w if kind == tangents.SOFTMAX else _exp(w)


# The bodies take ``kind`` as an argument; each kernel below passes a constant, so once a body is
# inlined its branches on ``kind`` fold away and the loops vectorize (a kind read at run time kept
# the branches in the loop: four times slower). The log_softmax kinds' exp is the vectorizable
# one for float32 rows (``_exp``): with the C library's, one element at a time, their kernels were
# four times slower.
@njit(**JIT, inline="always")
def _rows_of(kind, d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    """Rows of (outer, n) arrays: a sum over the row, then the row's values."""
    for r in range(lo, hi):
        ds, ws, o = d[r], w[r], out[r]
        total = zero[0]  # in the element dtype, as the forward kernel's sums
        for j in range(d.shape[1]):
            total += _term(kind, ds[j], _weight(kind, ws[j]))
        for j in range(d.shape[1]):
            o[j] = _value(kind, ds[j], _weight(kind, ws[j]), total)


@njit(**JIT, inline="always")
def _columns_of(kind, d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    """(outer, n, inner) arrays, summed over n: the inner columns side by side (contiguous reads)."""
    totals = np.empty(d.shape[2], d.dtype)
    for r in range(lo, hi):
        ds, ws, o = d[r], w[r], out[r]
        totals[:] = zero[0]
        for j in range(d.shape[1]):
            for i in range(d.shape[2]):
                totals[i] += _term(kind, ds[j, i], _weight(kind, ws[j, i]))
        for j in range(d.shape[1]):
            for i in range(d.shape[2]):
                o[j, i] = _value(kind, ds[j, i], _weight(kind, ws[j, i]), totals[i])


@njit(**JIT, fastmath={"reassoc"})
def _softmax_rows(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _rows_of(tangents.SOFTMAX, d, w, out, zero, lo, hi)


@njit(**JIT, fastmath={"reassoc"})
def _log_softmax_rows(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _rows_of(tangents.LOG_SOFTMAX, d, w, out, zero, lo, hi)


@njit(**JIT, fastmath={"reassoc"})
def _log_softmax_transposed_rows(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _rows_of(tangents.LOG_SOFTMAX_TRANSPOSED, d, w, out, zero, lo, hi)


@njit(**JIT, fastmath={"reassoc"})
def _softmax_columns(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _columns_of(tangents.SOFTMAX, d, w, out, zero, lo, hi)


@njit(**JIT, fastmath={"reassoc"})
def _log_softmax_columns(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _columns_of(tangents.LOG_SOFTMAX, d, w, out, zero, lo, hi)


@njit(**JIT, fastmath={"reassoc"})
def _log_softmax_transposed_columns(d, w, out, zero, lo, hi):  # pragma: no cover - compiled
    _columns_of(tangents.LOG_SOFTMAX_TRANSPOSED, d, w, out, zero, lo, hi)


_KERNELS = {  # kind -> (rows kernel, columns kernel)
    tangents.SOFTMAX: (_softmax_rows, _softmax_columns),
    tangents.LOG_SOFTMAX: (_log_softmax_rows, _log_softmax_columns),
    tangents.LOG_SOFTMAX_TRANSPOSED: (_log_softmax_transposed_rows, _log_softmax_transposed_columns),
}


def tangent(d: np.ndarray, w: np.ndarray, axis: int, kind: int) -> np.ndarray:
    """A softmax tangent (tidu/backends/softmax_tangents.py) of ``d`` along ``axis``, a row per task."""
    out = np.empty(d.shape, d.dtype)
    if d.size == 0:
        return out
    outer, n = math.prod(d.shape[:axis]), math.prod(d.shape[axis:axis + 1])
    inner = d.size // (outer * n)
    rows, columns = _KERNELS[kind]
    if inner == 1:
        kernel, shape = rows, (outer, n)
    else:
        kernel, shape = columns, (outer, n, inner)
    run_tasks(kernel, outer, 2 * d.size, contiguous(d).reshape(shape), contiguous(w).reshape(shape),
              out.reshape(shape), np.zeros(1, d.dtype))
    return out
