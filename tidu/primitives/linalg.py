"""``dot_general``: contraction with batch dimensions (XLA's), on BLAS through numpy (floats;
integers use numpy's own loops).

Output dimensions are (batch..., lhs free..., rhs free...).
"""

from __future__ import annotations

import functools
from math import prod
from typing import Any

import numpy as np

from ..backends.cpu.threads import serial_blas
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import NUMERIC
from ..core.primitive import Primitive
from ._batching import shifted
from ._util import check_dtype, ops
from .structural import transpose

dot_general = Primitive("dot_general")

Dims = tuple[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], tuple[int, ...]]]


def _free(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [d for d in range(ndim) if d not in contract and d not in batch]


@dot_general.def_abstract_eval
def _dot_shape(a: ShapeDtype, b: ShapeDtype, *, dimension_numbers: Dims) -> ShapeDtype:
    (ca, cb), (ba, bb) = dimension_numbers
    check_dtype("dot_general", a, NUMERIC)
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}"
        )
    if [a.shape[i] for i in ca] != [b.shape[i] for i in cb]:
        raise RuntimeError(
            f"dot_general: contracted sizes differ: shapes {tuple(a.shape)} and {tuple(b.shape)} "
            f"(contracting {ca} with {cb})"
        )
    if [a.shape[i] for i in ba] != [b.shape[i] for i in bb]:
        raise RuntimeError(f"dot_general: batch sizes differ: shapes {tuple(a.shape)} and {tuple(b.shape)}")
    shape = [a.shape[i] for i in ba] + [a.shape[i] for i in _free(a.ndim, ca, ba)]
    shape += [b.shape[i] for i in _free(b.ndim, cb, bb)]
    return ShapeDtype(tuple(shape), a.dtype)


@functools.lru_cache(maxsize=4096)
def _dot_plan(a_shape: tuple[int, ...], b_shape: tuple[int, ...], dimension_numbers: Dims) -> tuple:
    """How ``_dot_impl`` lays the operands out as (batch,) m x k @ k x n, per shapes and dims:
    each operand's permutation and shape (``None``: as it is), the output shape (``None``:
    matmul's), and the multiply-adds of one m x k @ k x n product."""
    (ca, cb), (ba, bb) = dimension_numbers
    fa, fb = _free(len(a_shape), ca, ba), _free(len(b_shape), cb, bb)
    perm_a, perm_b = list(ba) + fa + list(ca), list(bb) + list(cb) + fb
    bshape = [a_shape[i] for i in ba]
    nbatch, k = prod(bshape), prod(a_shape[i] for i in ca)
    m, n = prod(a_shape[i] for i in fa), prod(b_shape[i] for i in fb)
    lead = (nbatch,) if ba else ()
    a2, b2 = lead + (m, k), lead + (k, n)
    out = tuple(bshape + [a_shape[i] for i in fa] + [b_shape[i] for i in fb])
    return (None if perm_a == sorted(perm_a) else tuple(perm_a),
            None if perm_a == sorted(perm_a) and a2 == a_shape else a2,
            None if perm_b == sorted(perm_b) else tuple(perm_b),
            None if perm_b == sorted(perm_b) and b2 == b_shape else b2,
            None if out == lead + (m, n) else out, m * k * n)


def _dot_impl(a: np.ndarray, b: np.ndarray, *, dimension_numbers: Dims) -> np.ndarray:
    return _planned(a, b, _dot_plan(a.shape, b.shape, dimension_numbers))


def _planned(a: np.ndarray, b: np.ndarray, plan: tuple) -> np.ndarray:
    """``a . b`` by ``_dot_plan``'s ``plan`` for their shapes."""
    perm_a, a_shape, perm_b, b_shape, out_shape, size = plan
    if perm_a is not None:
        a = a.transpose(perm_a)
    if a_shape is not None:
        a = a.reshape(a_shape)
    if perm_b is not None:
        b = b.transpose(perm_b)
    if b_shape is not None:
        b = b.reshape(b_shape)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1] + b.shape[-1:] if out_shape is None else out_shape, a.dtype)
    out = serial_blas(size, np.matmul, a, b)
    return out if out_shape is None else out.reshape(out_shape)


def dot_kernel(a_shape: tuple[int, ...], b_shape: tuple[int, ...], dimension_numbers: Dims) -> Any:
    """``_dot_impl`` for host operands of these shapes, its plan made once: ``(a, b) -> out``
    (``bind_product``'s kernel for a signature; no plan lookup and no keyword arguments a call).

    >>> import numpy as np
    >>> a, b = np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)
    >>> dot_kernel((2, 3), (4, 3), (((1,), (1,)), ((), ())))(a, b).shape  # a @ b.T
    (2, 4)
    """
    plan = _dot_plan(a_shape, b_shape, dimension_numbers)
    perm_a, a2, perm_b, b2, out_shape, size = plan
    if size and perm_a is None and a2 is None and out_shape is None:
        if perm_b is None and b2 is None:  # a @ b
            return functools.partial(serial_blas, size, np.matmul)
        if perm_b == (1, 0) and b2 == b_shape[::-1]:  # a @ b.T: F.linear's product

            def transposed(a: np.ndarray, b: np.ndarray) -> np.ndarray:
                return serial_blas(size, np.matmul, a, b.T)

            return transposed
    return functools.partial(_planned, plan=plan)


_dot_impl.planned = dot_kernel  # a compiled step's product: planned once (core/instructions.py)


def _in_order(out, order_src: list[int]):  # noqa: ANN001, ANN202
    """``out``, whose dims are the operand's dims ``order_src``, permuted into the operand's order."""
    perm = tuple(order_src.index(d) for d in range(len(order_src)))
    return transpose.bind(out, permutation=perm) if perm != tuple(range(len(perm))) else out


def _dot_transpose(ct, a, b, *, dimension_numbers):  # noqa: ANN001, ANN202
    """d lhs = ct . rhs over rhs's free dims; d rhs = lhs . ct over lhs's free dims. Each is one
    product, its operands ordered so that the result comes out in its operand's layout where
    that is (batch, free, contracted) or (batch, contracted, free): for ``a @ b``, ``ct @ b.T``
    and ``a.T @ ct``; for ``x @ w.T`` contracting ``w``'s last dim (``F.linear``), ``ct.T @ x``.
    Other layouts get one transpose."""
    (ca, cb), (ba, bb) = dimension_numbers
    fa, fb = _free(a.ndim, ca, ba), _free(b.ndim, cb, bb)
    nb, na = len(ba), len(fa)
    ct_batch = tuple(range(nb))
    da = db = None
    if ops.is_linear(a):
        ct_fb = tuple(range(nb + na, nb + na + len(fb)))
        summed = [ca[cb.index(d)] for d in sorted(cb)]  # a's contracting dims, in b's order
        if list(ba) + summed + fa == list(range(a.ndim)):  # a laid out (batch, contracted, free)
            da = dot_general.bind(b, ct, dimension_numbers=((tuple(fb), ct_fb), (tuple(bb), ct_batch)))
        else:  # dims: batch, fa, then the contracted dims
            out = dot_general.bind(ct, b, dimension_numbers=((ct_fb, tuple(fb)), (ct_batch, tuple(bb))))
            da = _in_order(out, list(ba) + fa + summed)
    if ops.is_linear(b):
        ct_fa = tuple(range(nb, nb + na))
        summed = [cb[ca.index(d)] for d in sorted(ca)]  # b's contracting dims, in a's order
        if list(bb) + fb + summed == list(range(b.ndim)):  # b laid out (batch, free, contracted): F.linear's
            db = dot_general.bind(ct, a, dimension_numbers=((ct_fa, tuple(fa)), (ct_batch, tuple(ba))))
        else:  # dims: batch, the contracted dims, then fb
            out = dot_general.bind(a, ct, dimension_numbers=((tuple(fa), ct_fa), (tuple(ba), ct_batch)))
            db = _in_order(out, list(bb) + summed + fb)
    return [da, db]


dot_general.def_impl(_dot_impl)
dot_general.def_impl(kernel("linalg", "dot_general"), device="cuda",
                     takes_views=True)  # reads transposed, sliced and broadcast operands in place
dot_general.def_jvp(
    lambda da, a, b, out, *, dimension_numbers: dot_general.bind(da, b, dimension_numbers=dimension_numbers),
    lambda db, a, b, out, *, dimension_numbers: dot_general.bind(a, db, dimension_numbers=dimension_numbers),
)
dot_general.def_transpose(_dot_transpose, bilinear=True)


def _dot_batch(args, dims, *, dimension_numbers):  # noqa: ANN001, ANN202
    """Both batched: a new leading batch dimension; one batched: its batch dim is a free dim."""
    (a, b), (da, db) = args, dims
    (ca, cb), (ba, bb) = dimension_numbers
    if da is not None and db is not None:
        dims_new = ((shifted(ca), shifted(cb)), ((0, *shifted(ba)), (0, *shifted(bb))))
        return dot_general.bind(a, b, dimension_numbers=dims_new), 0
    if da is not None:
        out = dot_general.bind(a, b, dimension_numbers=((shifted(ca), cb), (shifted(ba), bb)))
        return out, len(ba)
    out = dot_general.bind(a, b, dimension_numbers=((ca, shifted(cb)), (ba, shifted(bb))))
    return out, len(ba) + len(_free(a.ndim, ca, ba))


dot_general.def_batch(_dot_batch)
