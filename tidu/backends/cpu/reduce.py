"""Reductions over a block of axes: the input is viewed as (outer, reduced, inner).

Floating-point sums and products accumulate in float64. ``max`` propagates NaN like PyTorch.
When the reduced axes are the innermost (``inner == 1``: a row sum, a full sum), the loops are
vector reductions: a sum with ``reassoc`` (as many running totals as LLVM's vectors hold, in
an order fixed by the compiled loop), a float max as an integer max of order keys.

Large reductions run on several threads (``threads.run_tasks``). The work is cut into tasks by
``_plan`` from the SHAPE alone: blocks of ``TASK`` elements along a reduced row, or chunks of
output columns, and where there are too few of those, blocks of the reduced axis. Each task
writes its own partial result; partials are combined in a fixed order. So a result never
depends on the number of threads: integers, ``max`` and ``argmax`` are exact anyway, and a
float sum or product is bit-identical for 1, 2 or any number of threads.
"""

from __future__ import annotations

from math import prod

import numpy as np
from numba import njit

from .elementwise import JIT, contiguous
from .threads import PARALLEL_MIN, run_tasks

TASK = 1 << 16  # elements of one task in a large reduction
MIN_TASKS = 16  # fewer output-column tasks than this: also split the reduced axis


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _plan(outer: int, k: int, inner: int) -> tuple[int, int, int]:
    """``(kb, nk, cb)``: blocks of ``kb`` along the reduced axis (``nk`` of them), chunks of ``cb``
    output columns. A function of the shape only, never of the thread count."""
    if outer * k * inner < PARALLEL_MIN:
        return max(k, 1), 1, max(inner, 1)
    if inner == 1:
        nk = max(_ceil_div(k, TASK), 1)
        return _ceil_div(k, nk), nk, 1
    cb = min(inner, max(1024, _ceil_div(TASK, k)))
    nk = 1 if outer * _ceil_div(inner, cb) >= MIN_TASKS else min(256, max(_ceil_div(k * cb, TASK), 1))
    kb = max(_ceil_div(k, nk), 1)
    return kb, _ceil_div(k, kb) if k else 1, cb


# The inner loops run over contiguous 1-d slices from index 0: a loop index Numba cannot prove
# non-negative gets a wraparound check on every access, and a 2-d slice of columns is typed
# non-contiguous; either stops LLVM from vectorizing the loop.


@njit(**JIT)
def _task(t, nk, nc, kb, cb, k, inner):  # pragma: no cover - compiled
    """Task ``t`` -> (outer index, block of the reduced axis, its range, range of columns)."""
    a, j, c = t // (nk * nc), t // nc % nk, t % nc
    return a, j, j * kb, min(j * kb + kb, k), c * cb, min(c * cb + cb, inner)


@njit(**JIT)
def _sum3(x, part, kb, cb, lo, hi):  # pragma: no cover - compiled
    nk, nc = part.shape[1], (x.shape[2] + cb - 1) // cb
    for t in range(lo, hi):
        a, j, k0, k1, b0, b1 = _task(t, nk, nc, kb, cb, x.shape[1], x.shape[2])
        acc = part[a, j, b0:b1]
        for k in range(k0, k1):
            xs = x[a, k, b0:b1]
            for b in range(xs.shape[0]):
                acc[b] += xs[b]


@njit(**JIT, fastmath={"reassoc"})
def _sum_rows(x, part, kb, lo, hi):  # pragma: no cover - compiled
    """part[a, j] = sum of block j of row a of x (outer, n). ``reassoc`` lets LLVM keep as many
    partial sums as its vectors hold (the order is fixed by the compiled loop, not by the data)."""
    nk = part.shape[1]
    for t in range(lo, hi):
        a, j = t // nk, t % nk
        xs = x[a, j * kb:min(j * kb + kb, x.shape[1])]
        total = part[a, j]
        for k in range(xs.shape[0]):
            total += xs[k]
        part[a, j] = total


@njit(**JIT)
def _max_key_rows(bits, mask, keys, kb, lo, hi):  # pragma: no cover - compiled
    """The largest and smallest order key of each block of the rows of a float array seen as
    integers (``bits``): ``key = bits ^ ((bits >> sign) & mask)`` orders floats as integers, so the
    loop is an integer max/min that vectorizes. A NaN's key lies above +inf's or below -inf's."""
    nk = keys.shape[1]
    shift = bits.itemsize * 8 - 1
    for t in range(lo, hi):
        a, j = t // nk, t % nk
        xs = bits[a, j * kb:min(j * kb + kb, bits.shape[1])]
        top = keys[a, j, 0]
        bottom = keys[a, j, 1]
        for k in range(xs.shape[0]):
            b = xs[k]
            key = b ^ ((b >> shift) & mask)
            top = max(top, key)
            bottom = min(bottom, key)
        keys[a, j, 0] = top
        keys[a, j, 1] = bottom


@njit(**JIT)
def _max_rows(x, part, kb, lo, hi):  # pragma: no cover - compiled
    """part[a, j] = max of block j of row a of an integer x (outer, n >= 1)."""
    nk = part.shape[1]
    for t in range(lo, hi):
        a, j = t // nk, t % nk
        xs = x[a, j * kb:min(j * kb + kb, x.shape[1])]
        best = xs[0]
        for k in range(xs.shape[0]):
            best = max(best, xs[k])
        part[a, j] = best


@njit(**JIT)
def _max3(x, part, kb, cb, lo, hi):  # pragma: no cover - compiled
    nk, nc = part.shape[1], (x.shape[2] + cb - 1) // cb
    for t in range(lo, hi):
        a, j, k0, k1, b0, b1 = _task(t, nk, nc, kb, cb, x.shape[1], x.shape[2])
        best = part[a, j, b0:b1]
        best[:] = x[a, k0, b0:b1]
        for k in range(k0 + 1, k1):
            xs = x[a, k, b0:b1]
            for b in range(xs.shape[0]):
                v = xs[b]
                best[b] = v if (v > best[b] or v != v) else best[b]


@njit(**JIT)
def _prod3(x, part, kb, cb, lo, hi):  # pragma: no cover - compiled
    nk, nc = part.shape[1], (x.shape[2] + cb - 1) // cb
    for t in range(lo, hi):
        a, j, k0, k1, b0, b1 = _task(t, nk, nc, kb, cb, x.shape[1], x.shape[2])
        acc = part[a, j, b0:b1]
        for k in range(k0, k1):
            xs = x[a, k, b0:b1]
            for b in range(xs.shape[0]):
                acc[b] *= xs[b]


@njit(**JIT)
def _arg3(x, largest, best, at, kb, cb, lo, hi):  # pragma: no cover - compiled
    """First index of the max (``largest``) or min over each block; a NaN wins at once."""
    nk, nc = best.shape[1], (x.shape[2] + cb - 1) // cb
    for t in range(lo, hi):
        a, j, k0, k1, b0, b1 = _task(t, nk, nc, kb, cb, x.shape[1], x.shape[2])
        xs = x[a, k0:k1, b0:b1]
        for b in range(xs.shape[1]):
            v0 = xs[0, b]
            i0 = 0
            if v0 == v0:
                for k in range(1, xs.shape[0]):
                    v = xs[k, b]
                    if v != v:
                        v0 = v
                        i0 = k
                        break
                    if (v > v0) if largest else (v < v0):
                        v0 = v
                        i0 = k
            best[a, j, b0 + b] = v0
            at[a, j, b0 + b] = k0 + i0


@njit(**JIT)
def _key(b, shift, mask, negzero):  # pragma: no cover - compiled
    key = b ^ ((b >> shift) & mask)
    return 0 if key == negzero else key  # -0 ties with 0, as in numpy and PyTorch


@njit(**JIT)
def _first(xs, lo, hi, inside, shift, mask, negzero):  # pragma: no cover - compiled
    """First k with ``lo <= key(xs[k]) <= hi`` (``inside``) or outside it: 64 at a time, vectorized."""
    c = 0
    while c + 64 <= xs.shape[0]:
        chunk = xs[c:c + 64]
        hits = 0
        for i in range(64):
            key = _key(chunk[i], shift, mask, negzero)
            hits += (lo <= key and key <= hi) == inside
        if hits:
            break
        c += 64
    rest = xs[c:]
    for k in range(rest.shape[0]):
        key = _key(rest[k], shift, mask, negzero)
        if (lo <= key and key <= hi) == inside:
            return c + k
    return 0


@njit(**JIT)
def _arg_key_rows(bits, keyed, largest, best, at, kb, lo, hi):  # pragma: no cover - compiled
    """argmax/argmin of each block of the rows of ``bits`` (integers, or floats seen as integers):
    a vectorized pass for the extreme order key, then a vectorized scan for its first position.
    ``keyed = (mask, +inf's key, -inf's key, -0's key)``; for integers ``(0, max, min, 0)``."""
    mask, top_ok, bottom_ok, negzero = keyed
    nk = best.shape[1]
    shift = bits.itemsize * 8 - 1
    for t in range(lo, hi):
        a, j = t // nk, t % nk
        xs = bits[a, j * kb:min(j * kb + kb, bits.shape[1])]
        top = bottom = _key(xs[0], shift, mask, negzero)
        for k in range(xs.shape[0]):
            key = _key(xs[k], shift, mask, negzero)
            top = max(top, key)
            bottom = min(bottom, key)
        if top > top_ok or bottom < bottom_ok:  # a NaN: the first key outside [-inf, +inf]
            found = _first(xs, bottom_ok, top_ok, False, shift, mask, negzero)
        else:
            want = top if largest else bottom
            found = _first(xs, want, want, True, shift, mask, negzero)
        best[a, j] = xs[found]
        at[a, j] = j * kb + found


@njit(**JIT)
def _arg_combine(best, at, largest, out):  # pragma: no cover - compiled
    """The blocks' winners in block order: the first NaN, else the first strict improvement."""
    for a in range(best.shape[0]):
        for b in range(best.shape[2]):
            v0 = best[a, 0, b]
            i0 = at[a, 0, b]
            for j in range(1, best.shape[1]):
                if v0 != v0:
                    break
                v = best[a, j, b]
                if v != v or ((v > v0) if largest else (v < v0)):
                    v0 = v
                    i0 = at[a, j, b]
            out[a, b] = i0


def _as_block(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """Move ``axes`` next to each other and view as (outer, reduced, inner), contiguous."""
    keep = [d for d in range(x.ndim) if d not in axes]
    lo = min(axes)
    if list(axes) != list(range(lo, lo + len(axes))):
        order = keep[:0] + [d for d in keep if d < lo] + list(axes) + [d for d in keep if d > lo]
        x = np.transpose(x, order)
        axes = tuple(range(len([d for d in keep if d < lo]), len([d for d in keep if d < lo]) + len(axes)))
        lo = axes[0]
    hi = lo + len(axes)
    x = contiguous(x)
    outer = prod(x.shape[:lo])
    inner = prod(x.shape[hi:])
    out_shape = x.shape[:lo] + x.shape[hi:]
    return x.reshape(outer, prod(x.shape[lo:hi]), inner), out_shape


def _blocked(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    block, out_shape = _as_block(x, axes)
    return block, out_shape, _plan(*block.shape)


def _tasks(block: np.ndarray, nk: int, cb: int) -> int:
    return block.shape[0] * nk * _ceil_div(block.shape[2], cb)


SMALL_SUM = 4096  # elements: numpy's reduction costs less than the blocked plan below


def sum_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    if len(axes) == x.ndim and x.size <= SMALL_SUM and x.dtype.kind == "f" and x.itemsize >= 4:
        total = np.zeros((1, 1))  # a full float sum: one kernel call, the same float64 accumulation
        _sum_rows(contiguous(x).reshape(1, -1), total, max(x.size, 1), 0, 1)
        return np.array(total.item(), x.dtype)  # float32 rounds to nearest, as astype does
    acc_dtype = np.float64 if x.dtype.kind == "f" else np.int64
    if x.size <= SMALL_SUM:  # one thread either way; the same float64 (int64) accumulation
        with np.errstate(all="ignore"):  # inf - inf is NaN without a warning, as in the Numba kernels
            total = np.add.reduce(x, axis=axes, dtype=acc_dtype)  # a numpy scalar when every axis goes
            return np.asarray(total.astype(x.dtype if x.dtype.kind != "b" else np.int64))
    block, out_shape, (kb, nk, cb) = _blocked(x, axes)
    part = np.zeros((block.shape[0], nk, block.shape[2]), acc_dtype)
    if block.shape[2] == 1:
        run_tasks(_sum_rows, block.shape[0] * nk, block.size,
                  block.reshape(block.shape[0], block.shape[1]), part.reshape(block.shape[0], nk), kb)
    else:
        run_tasks(_sum3, _tasks(block, nk, cb), block.size, block, part, kb, cb)
    acc = part[:, 0] if nk == 1 else part.sum(axis=1)
    return acc.astype(x.dtype if x.dtype.kind != "b" else np.int64, copy=False).reshape(out_shape)


def _float_max(block: np.ndarray, kb: int, nk: int) -> np.ndarray:
    """Row maxima of a float block (outer, n, 1) through integer order keys, NaN propagating."""
    ints = np.dtype(f"i{block.itemsize}")
    mask = ints.type(np.iinfo(ints).max)
    keys = np.empty((block.shape[0], nk, 2), ints)
    keys[..., 0], keys[..., 1] = np.iinfo(ints).min, np.iinfo(ints).max
    bits = block.reshape(block.shape[0], block.shape[1]).view(ints)
    run_tasks(_max_key_rows, block.shape[0] * nk, block.size, bits, mask, keys, kb)
    top, bottom = keys[..., 0].max(axis=1), keys[..., 1].min(axis=1)
    inf = np.array([np.inf, -np.inf], block.dtype).view(ints)
    nan = (top > inf[0]) | (bottom < inf[1] ^ mask)
    out = (top ^ ((top >> (8 * block.itemsize - 1)) & mask)).view(block.dtype)
    out[nan] = np.nan
    return out


def max_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    block, out_shape, (kb, nk, cb) = _blocked(x, axes)
    if block.shape[2] == 1 and x.dtype.kind == "f":
        return _float_max(block, kb, nk).reshape(out_shape)
    part = np.empty((block.shape[0], nk, block.shape[2]), x.dtype)
    if block.shape[2] == 1:
        run_tasks(_max_rows, block.shape[0] * nk, block.size,
                  block.reshape(block.shape[0], block.shape[1]), part.reshape(block.shape[0], nk), kb)
    else:
        run_tasks(_max3, _tasks(block, nk, cb), block.size, block, part, kb, cb)
    return (part[:, 0] if nk == 1 else part.max(axis=1)).reshape(out_shape)


def prod_axes(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    if not axes:
        return x.copy()
    block, out_shape, (kb, nk, cb) = _blocked(x, axes)
    part = np.ones((block.shape[0], nk, block.shape[2]), np.float64 if x.dtype.kind == "f" else np.int64)
    run_tasks(_prod3, _tasks(block, nk, cb), block.size, block, part, kb, cb)
    acc = part[:, 0] if nk == 1 else part.prod(axis=1)
    return acc.astype(x.dtype, copy=False).reshape(out_shape)


def _order_keys(dtype: np.dtype) -> tuple[np.dtype, tuple[int, int, int, int]]:
    """The integer view of ``dtype`` and ``_arg_key_rows``'s ``keyed`` for it."""
    if dtype.kind != "f":
        ints = np.dtype(np.uint8) if dtype.kind == "b" else dtype
        return ints, (0, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0)
    ints = np.dtype(f"i{dtype.itemsize}")
    mask = int(np.iinfo(ints).max)
    inf = np.array([np.inf, -np.inf], dtype).view(ints).astype(np.int64)
    return ints, (mask, int(inf[0]), int(inf[1]) ^ mask, -1)


def arg_axis(x: np.ndarray, axis: int, largest: bool) -> np.ndarray:
    block, out_shape, (kb, nk, cb) = _blocked(x, (axis,))
    if block.shape[2] == 1 and block.shape[1] > 0:
        ints, keyed = _order_keys(x.dtype)
        bits = block.reshape(block.shape[0], block.shape[1]).view(ints)
        best = np.empty((block.shape[0], nk, 1), ints)
        at = np.empty((block.shape[0], nk, 1), np.int64)
        run_tasks(_arg_key_rows, block.shape[0] * nk, block.size, bits, keyed, largest,
                  best.reshape(block.shape[0], nk), at.reshape(block.shape[0], nk), kb)
        best = best.view(block.dtype) if x.dtype.kind == "f" else best
    else:
        block = block.view(np.uint8) if x.dtype.kind == "b" else block
        best = np.empty((block.shape[0], nk, block.shape[2]), block.dtype)
        at = np.empty((block.shape[0], nk, block.shape[2]), np.int64)
        run_tasks(_arg3, _tasks(block, nk, cb), block.size, block, largest, best, at, kb, cb)
    if nk == 1:
        return at[:, 0].reshape(out_shape)
    out = np.empty((block.shape[0], block.shape[2]), np.int64)
    _arg_combine(best, at, largest, out)
    return out.reshape(out_shape)
