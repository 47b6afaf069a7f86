"""Matrix products: ``matmul`` (batched, broadcasting, 1-D operands), ``mm``, ``bmm``, ``dot``,
``outer`` and ``einsum``, all on ``dot_general`` (BLAS for floats, numpy's loop for integers)."""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from ..core import autocast, dtypes
from ..core.autocast import policy as autocast_policy
from ..core.dispatch import _MM_PARAMS, bind_product
from ..core.half import computed_in_float32
from ..core.primitive import bind
from ..primitives.linalg import dot_general
from ..primitives.reduce import reduce_sum
from ..primitives.structural import transpose as transpose_p
from ..tensor import SHORT_PATH_TYPES
from ._operands import broadcast_shapes, broadcast_to, convert, is_value, wrap_dim
from .shape import reshape, squeeze, unsqueeze

__all__ = ["addbmm", "addmm", "addmv", "baddbmm", "bmm", "cdist", "dot", "einsum", "inner", "kron", "matmul", "mm",
           "mv", "outer", "pdist", "tensordot", "addr", "chain_matmul", "dist", "ger", "matrix_power", "pinverse", "renorm",
           "vdot"]

# PyTorch's messages name the C types
_C_NAMES = dtypes.C_TYPES


def _fmt(x: Any) -> str:
    return "x".join(str(s) for s in x.shape)


def _check_tensors(name: str, *xs: Any) -> None:
    for x in xs:
        if not is_value(x):
            raise TypeError(f"{name}(): argument must be Tensor, not {type(x).__name__}")


def _same_dtype(a: Any, b: Any) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_C_NAMES[a.dtype.name]} != "
            f"{_C_NAMES[b.dtype.name]}"
        )
    if a.dtype is dtypes.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def matmul(input: Any, other: Any) -> Any:  # noqa: A002
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dimensions.

    Float and integer tensors (of one dtype); the gradient is ``dot_general``'s transpose.

    >>> import tidu
    >>> a = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> a @ tidu.tensor([1.0, 1.0])
    tensor([3., 7.])
    >>> (tidu.ones(5, 2, 3) @ tidu.ones(3, 4)).shape
    tidu.Size([5, 2, 4])
    >>> tidu.tensor([[1, 2]]) @ tidu.tensor([[3], [4]])
    tensor([[11]])
    """
    if autocast.ON:
        input, other = autocast.lower(input, other)
    if type(input) in SHORT_PATH_TYPES and type(other) in SHORT_PATH_TYPES:  # the common cases, checked at once
        sa, sb = input._buf.shape, other._buf.shape
        if input._dtype is other._dtype and input._dtype is not dtypes.bool_:
            if len(sa) == 2 == len(sb) and sa[1] == sb[0]:
                return bind_product(input, other, _MATRIX_PRODUCT, False)  # ``bind_matmul``'s call
            params = _PRODUCT_PARAMS.get((sa, sb))
            if params is None:
                if len(_PRODUCT_PARAMS) >= 4096:
                    _PRODUCT_PARAMS.clear()
                params = _PRODUCT_PARAMS[(sa, sb)] = _product_params(sa, sb)
            if params:
                return bind_product(input, other, params)
    _check_tensors("matmul", input, other)
    a, b = input, other
    _same_dtype(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a.ndim == 1 and b.ndim == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                "the same number of elements, but got "
                f"{a.shape[0]} and {b.shape[0]} elements respectively"
            )
        return bind(dot_general, a, b, dimension_numbers=(((0,), (0,)), ((), ())))
    if a.ndim == 1:  # (k,) @ (..., k, n): one product over k, the vector's dimension gone
        if a.shape[0] != b.shape[-2]:
            return squeeze(matmul(unsqueeze(a, 0), b), -2)  # raises PyTorch's message
        return bind(dot_general, a, b, dimension_numbers=(((0,), (b.ndim - 2,)), ((), ())))
    if b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"size mismatch, got input ({a.shape[-2]}), mat ({_fmt(a)}), vec ({b.shape[0]})")
        return bind(dot_general, a, b, dimension_numbers=(((a.ndim - 1,), (0,)), ((), ())))
    if a.shape[-1] != b.shape[-2]:
        if b.ndim == 2:  # PyTorch's messages: the rows of ``a`` as one, or the batch as one
            rows = prod(a.shape[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{a.shape[-1]} and {_fmt(b)})")
        batch = prod(broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul"))
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, "
                           f"{a.shape[-1]}] but got: [{batch}, {b.shape[-2]}].")
    if b.ndim == 2:  # (..., k) @ (k, n): one product over a's last dim, its leading dims kept
        return bind(dot_general, a, b, dimension_numbers=(((a.ndim - 1,), (0,)), ((), ())))
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    a = broadcast_to(a, batch + tuple(a.shape[-2:]))
    b = broadcast_to(b, batch + tuple(b.shape[-2:]))
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return bind(dot_general, a, b, dimension_numbers=dims)


# (shape, shape) -> ``dot_general``'s params for ``matmul`` of tensors of those shapes, or ``False``
# where the general path decides (broadcast batch dims; sizes that do not agree, whose error it raises):
# its short path's lookup
_PRODUCT_PARAMS: dict[tuple, dict | bool] = {}
_MATRIX_PRODUCT = _MM_PARAMS[False]  # a @ b of two matrices


def _product_params(sa: tuple[int, ...], sb: tuple[int, ...]) -> dict | bool:
    """The params of ``matmul``'s product of an ``(..., m, k)`` and a ``(k, n)`` or
    ``(..., k, n)`` tensor of the same batch dims, or of a vector and a tensor of at least one
    dimension whose sizes agree (what the general path binds); ``False`` for anything else."""
    if len(sa) >= 1 and len(sb) == 1 and sa[-1] == sb[0]:  # (..., k) @ (k,): the vector's dim gone
        return {"dimension_numbers": (((len(sa) - 1,), (0,)), ((), ()))}
    if len(sa) == 1 and len(sb) >= 2 and sa[0] == sb[-2]:  # (k,) @ (..., k, n)
        return {"dimension_numbers": (((0,), (len(sb) - 2,)), ((), ()))}
    if len(sa) >= 2 and len(sb) == 2 and sa[-1] == sb[0]:
        return {"dimension_numbers": (((len(sa) - 1,), (0,)), ((), ()))}
    if len(sa) == len(sb) >= 3 and sa[:-2] == sb[:-2] and sa[-1] == sb[-2]:
        nb = len(sa) - 2
        return {"dimension_numbers": (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))}
    return False


def mm(input: Any, mat2: Any) -> Any:  # noqa: A002
    """Product of two matrices (2-D only; no broadcasting).

    >>> import tidu
    >>> tidu.mm(tidu.tensor([[1.0, 2.0]]), tidu.tensor([[3.0], [4.0]]))
    tensor([[11.]])
    """
    _check_tensors("mm", input, mat2)
    if input.ndim != 2:
        raise RuntimeError(f"self must be a matrix (got a {input.ndim}-D tensor)")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix (got a {mat2.ndim}-D tensor)")
    return matmul(input, mat2)


def bmm(input: Any, mat2: Any) -> Any:  # noqa: A002
    """Batched product of two 3-D tensors ``(b, n, m) @ (b, m, p) -> (b, n, p)`` (no broadcasting).

    >>> import tidu
    >>> tidu.bmm(tidu.ones(2, 1, 3), tidu.ones(2, 3, 2))
    tensor([[[3., 3.]],
    <BLANKLINE>
            [[3., 3.]]])
    """
    _check_tensors("bmm", input, mat2)
    if input.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {input.ndim}-D)")
    if mat2.ndim != 3:
        raise RuntimeError(f"batch2 must be a 3D tensor (got {mat2.ndim}-D)")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(
            f"expected scalar type {dtypes.TORCH_NAMES[input.dtype.name]} but found {dtypes.TORCH_NAMES[mat2.dtype.name]}"
        )
    want = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != want:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {want} but got: {list(mat2.shape[:2])}."
        )
    return matmul(input, mat2)


@autocast_policy("keep")
def dot(input: Any, tensor: Any) -> Any:  # noqa: A002
    """Inner product of two 1-D tensors of one dtype (a 0-d tensor).

    >>> import tidu
    >>> tidu.dot(tidu.tensor([1.0, 2.0]), tidu.tensor([3.0, 4.0]))
    tensor(11.)
    """
    _check_tensors("dot", input, tensor)
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {dtypes.TORCH_NAMES[input.dtype.name]} and "
            f"{dtypes.TORCH_NAMES[tensor.dtype.name]}"
        )
    return matmul(input, tensor)


def outer(input: Any, vec2: Any) -> Any:  # noqa: A002
    """Outer product of two 1-D tensors (dtypes promote): ``out[i, j] = input[i] * vec2[j]``.

    >>> import tidu
    >>> tidu.outer(tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 10.0, 100.0]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]])
    """
    _check_tensors("outer", input, vec2)
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return unsqueeze(input, 1) * vec2


# --- einsum ----------------------------------------------------------------------------------
def _parse_term(term: str, offset: int) -> list[Any]:
    """Labels of one operand: letters, and ``...`` as a single ``Ellipsis`` entry."""
    labels: list[Any] = []
    i = 0
    while i < len(term):
        c = term[i]
        if c == ".":
            if term[i:i + 3] != "..." or Ellipsis in labels:
                raise RuntimeError(f"einsum(): found '.' for operand {offset} that is not part of any ellipsis")
            labels.append(Ellipsis)
            i += 3
            continue
        if not c.isascii() or not c.isalpha():
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in "
                "[a-zA-Z]"
            )
        labels.append(c)
        i += 1
    return labels


def _expand_ellipsis(labels: list[Any], ndim: int, k: int) -> list[Any]:
    """Replace ``...`` by integer labels for the dims it covers, aligned from the right."""
    named = len([c for c in labels if c is not Ellipsis])
    if Ellipsis not in labels:
        if named != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match the number of "
                f"dimensions ({ndim}) for operand {k} and no ellipsis was given"
            )
        return labels
    covered = ndim - named
    if covered < 0:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({named}) is more than the number of "
            f"dimensions ({ndim}) for operand {k}"
        )
    i = labels.index(Ellipsis)
    return labels[:i] + [-(covered - j) for j in range(covered)] + labels[i + 1:]


def _diagonal(x: Any, labels: list[Any]) -> tuple[Any, list[Any]]:
    """Take the diagonal over every repeated label of one operand (``'ii->i'``): a view, in the
    operand's dtype."""
    from .diagonals import diagonal

    while len(set(labels)) != len(labels):
        p = next(i for i, c in enumerate(labels) if labels.index(c) != i)
        q = labels.index(labels[p])
        n = x.shape[p]
        if x.shape[q] != n:
            raise RuntimeError(
                f"einsum(): subscript {labels[p]} is repeated for operand with sizes {x.shape[q]} and {n}"
            )
        x = diagonal(x, 0, q, p)  # the two dims become one, last
        labels = [c for i, c in enumerate(labels) if i not in (p, q)] + [labels[q]]
    return x, labels


def _sum_out(x: Any, labels: list[Any], keep: set) -> tuple[Any, list[Any]]:
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    if not x.dtype.is_floating_point:  # PyTorch sums these out with ``sum``: integers and bools give int64
        x = convert(x, dtypes.int64)
    return bind(reduce_sum, x, axes=axes), [c for c in labels if c in keep]


def _contract(a: Any, la: list[Any], b: Any, lb: list[Any], keep: set) -> tuple[Any, list[Any]]:
    if a.dtype is not b.dtype:  # integers, one of them summed out to int64 already (``_sum_out``)
        dt = dtypes.promote_types(a.dtype, b.dtype)
        a, b = convert(a, dt), convert(b, dt)
    shared = [c for c in la if c in lb]
    sizes = {c: max(a.shape[la.index(c)], b.shape[lb.index(c)]) for c in shared}
    a = broadcast_to(a, tuple(sizes.get(c, s) for c, s in zip(la, a.shape)))
    b = broadcast_to(b, tuple(sizes.get(c, s) for c, s in zip(lb, b.shape)))
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = (
        (tuple(la.index(c) for c in contract), tuple(lb.index(c) for c in contract)),
        (tuple(la.index(c) for c in batch), tuple(lb.index(c) for c in batch)),
    )
    labels = batch + [c for c in la if c not in shared] + [c for c in lb if c not in shared]
    if a.dtype is dtypes.bool_:  # PyTorch multiplies where nothing is contracted; its bmm has no bool
        if contract:
            raise dtypes.not_implemented("bmm", dtypes.bool_)
        from .math import mul

        return mul(_laid_out(a, la, labels), _laid_out(b, lb, labels)), labels
    return bind(dot_general, a, b, dimension_numbers=dims), labels


def _laid_out(x: Any, labels: list[Any], out: list[Any]) -> Any:
    """``x`` (labelled ``labels``, each in ``out``) permuted into ``out``'s order, with size-1
    dims for the labels it lacks: a broadcasting operand of ``out``'s shape."""
    mine = [c for c in out if c in labels]
    perm = tuple(labels.index(c) for c in mine)
    if perm != tuple(range(len(perm))):
        x = bind(transpose_p, x, permutation=perm)
    return reshape(x, tuple(x.shape[mine.index(c)] if c in mine else 1 for c in out))


@autocast_policy("lower")
def einsum(equation: str, *operands: Any) -> Any:
    """Einstein summation: ``'ij,jk->ik'`` (matrix product), ``'bij,bjk->bik'`` (batched),
    ``'ij->ji'``, ``'ij->'`` (sums), ``'i,j->ij'`` (outer), ``'ii->i'`` (diagonals), ``'...'``
    (broadcast dims) and the implicit output ``'ij,jk'`` (labels seen once, in sorted order).

    Built from ``dot_general``, ``transpose`` and ``reduce_sum``; operands are contracted left
    to right.

    >>> import tidu
    >>> a = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tidu.einsum("ij,jk->ik", a, a)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> tidu.einsum("ii", a)
    tensor(5.)
    >>> tidu.einsum("...j->...", a)
    tensor([3., 7.])
    """
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least one operand and "
            "its subscripts list"
        )
    _check_tensors("einsum", *operands)
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if "-" in rhs or ">" in rhs:
        bad = len(lhs) + 2 + min(i for i, c in enumerate(rhs) if c in "->")
        raise RuntimeError(
            f"einsum(): invalid subscript given at index {bad} in the equation string, subscripts must be in [a-zA-Z]"
        )
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for x in operands[1:]:
        if x.dtype is not operands[0].dtype:
            raise RuntimeError(
                f"expected scalar type {dtypes.TORCH_NAMES[operands[0].dtype.name]} but found "
                f"{dtypes.TORCH_NAMES[x.dtype.name]}"
            )
    labels = [_expand_ellipsis(_parse_term(t, k), x.ndim, k) for k, (t, x) in enumerate(zip(terms, operands))]
    sizes: dict[Any, int] = {}
    for k, (ls, x) in enumerate(zip(labels, operands)):
        for c, s in zip(ls, x.shape):
            seen = sizes.get(c, s)
            if s != seen and 1 not in (s, seen):
                name = "..." if isinstance(c, int) else c
                raise RuntimeError(
                    f"einsum(): subscript {name} has size {s} for operand {k} which does not broadcast with "
                    f"previously seen size {seen}"
                )
            sizes[c] = seen if s == 1 else s
    ell = sorted(c for c in sizes if isinstance(c, int))
    if arrow:
        out = _parse_term(rhs, 0)
        i = out.index(Ellipsis) if Ellipsis in out else None
        out = out if i is None else out[:i] + ell + out[i + 1:]
        for c in out:
            if isinstance(c, str) and c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input operand")
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    else:
        counts = [c for ls in labels for c in ls if isinstance(c, str)]
        out = ell + sorted(c for c in set(counts) if counts.count(c) == 1)
    xs = list(operands)
    for k in range(len(xs)):
        xs[k], labels[k] = _diagonal(xs[k], labels[k])
    acc, la = xs[0], labels[0]
    for k in range(len(xs)):
        later = set(out).union(*labels[k + 1:]) if k + 1 < len(xs) else set(out)
        if k == 0:
            acc, la = _sum_out(acc, la, later)
            continue
        b, lb = _sum_out(xs[k], labels[k], later | set(la))
        acc, la = _sum_out(acc, la, later | set(lb))
        acc, la = _contract(acc, la, b, lb, later)
    acc, la = _sum_out(acc, la, set(out))
    acc = broadcast_to(acc, tuple(sizes[c] for c in la))
    perm = tuple(la.index(c) for c in out)
    return acc if perm == tuple(range(len(perm))) else bind(transpose_p, acc, permutation=perm)


# --- products with an added term, and the other contractions -----------------------------------------
@autocast_policy("keep")
def mv(input: Any, vec: Any) -> Any:  # noqa: A002
    """Product of a matrix and a vector.

    >>> import tidu
    >>> tidu.mv(tidu.tensor([[1.0, 2.0]]), tidu.tensor([3.0, 4.0]))
    tensor([11.])
    """
    _check_tensors("mv", input, vec)
    if input.ndim != 2 or vec.ndim != 1 or input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else ''}), mat ({_fmt(input)}), "
                           f"vec ({_fmt(vec)})")
    return matmul(input, vec)


def _scaled_sum(input: Any, product: Any, beta: Any, alpha: Any) -> Any:  # noqa: A002
    """``beta * input + alpha * product``, with ``input`` broadcast to the product's shape and
    ignored when ``beta`` is 0 (its NaNs too); integer results take the scales as integers."""
    from . import math

    size = tuple(product.shape)
    broadcast_to(input, size)  # PyTorch's shape error even when beta is 0
    if not product.dtype.is_floating_point:
        beta, alpha = int(beta), int(alpha)
    out = product if alpha == 1 else math.mul(product, alpha)
    if beta == 0:
        return out
    return math.add(broadcast_to(input, size) if beta == 1 else math.mul(broadcast_to(input, size), beta), out)


@autocast_policy("lower")
@computed_in_float32
def addmm(input: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)`` (``input`` broadcast; ignored when ``beta`` is 0).

    >>> import tidu
    >>> tidu.addmm(tidu.ones(2), tidu.ones(1, 3), tidu.ones(3, 2), alpha=2)
    tensor([[7., 7.]])
    """
    _check_tensors("addmm", input, mat1, mat2)
    return _scaled_sum(input, mm(mat1, mat2), beta, alpha)


@computed_in_float32
def addmv(input: Any, mat: Any, vec: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:  # noqa: A002
    """``beta * input + alpha * (mat @ vec)``.

    >>> import tidu
    >>> tidu.addmv(tidu.zeros(1), tidu.ones(1, 2), tidu.ones(2))
    tensor([2.])
    """
    _check_tensors("addmv", input, mat, vec)
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


@autocast_policy("lower")
@computed_in_float32
def baddbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:  # noqa: A002
    """``beta * input + alpha * bmm(batch1, batch2)``.

    >>> import tidu
    >>> tidu.baddbmm(tidu.zeros(1), tidu.ones(2, 1, 3), tidu.ones(2, 3, 1)).shape
    tidu.Size([2, 1, 1])
    """
    _check_tensors("baddbmm", input, batch1, batch2)
    return _scaled_sum(input, bmm(batch1, batch2), beta, alpha)


@autocast_policy("lower")
@computed_in_float32
def addbmm(input: Any, batch1: Any, batch2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:  # noqa: A002
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``: one contraction over the batch and
    the inner dim.

    >>> import tidu
    >>> tidu.addbmm(tidu.zeros(1, 1), tidu.ones(5, 1, 3), tidu.ones(5, 3, 1))
    tensor([[15.]])
    """
    _check_tensors("addbmm", input, batch1, batch2)
    bmm(batch1[:0], batch2[:0])  # bmm's checks, on empty batches
    return _scaled_sum(input, tensordot(batch1, batch2, ([0, 2], [0, 1])), beta, alpha)


@autocast_policy("lower")
def tensordot(a: Any, b: Any, dims: Any = 2) -> Any:
    """Contract ``a``'s last ``dims`` dims with ``b``'s first ones, or the listed pairs
    ``([a dims], [b dims])``; the result has ``a``'s free dims, then ``b``'s.

    >>> import tidu
    >>> tidu.tensordot(tidu.ones(2, 3), tidu.ones(3, 4), dims=1).shape
    tidu.Size([2, 4])
    """
    _check_tensors("tensordot", a, b)
    if isinstance(dims, int) or is_value(dims) and dims.ndim == 0:
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        dims_a, dims_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else [int(i) for i in d] for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    from ..core.aval import wrap_dim

    dims_a = [wrap_dim(d, a.ndim) for d in dims_a]
    dims_b = [wrap_dim(d, b.ndim) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {dtypes.TORCH_NAMES[a.dtype.name]} but found "
                           f"{dtypes.TORCH_NAMES[b.dtype.name]}")
    return bind(dot_general, a, b, dimension_numbers=((tuple(dims_a), tuple(dims_b)), ((), ())))


@autocast_policy("lower")
def inner(input: Any, other: Any) -> Any:  # noqa: A002
    """Products summed over the last dims of both (a 0-d operand multiplies).

    >>> import tidu
    >>> tidu.inner(tidu.ones(2, 3), tidu.ones(4, 3)).shape
    tidu.Size([2, 4])
    """
    _check_tensors("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        from . import math

        return math.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def kron(input: Any, other: Any) -> Any:  # noqa: A002
    """The Kronecker product: every element of ``input`` times all of ``other``, laid out in blocks
    (the operands take leading ones to one number of dims).

    >>> import tidu
    >>> tidu.kron(tidu.tensor([1, 2]), tidu.tensor([1, 10]))
    tensor([ 1, 10,  2, 20])
    """
    from . import math

    _check_tensors("kron", input, other)
    n = max(input.ndim, other.ndim)
    a = reshape(input, (1,) * (n - input.ndim) + tuple(input.shape))
    b = reshape(other, (1,) * (n - other.ndim) + tuple(other.shape))
    # a's dims at even places, b's at odd ones: their product's blocks in row-major order
    spread_a = reshape(a, tuple(v for s in a.shape for v in (s, 1)))
    spread_b = reshape(b, tuple(v for s in b.shape for v in (1, s)))
    return reshape(math.mul(spread_a, spread_b), tuple(x * y for x, y in zip(a.shape, b.shape)))


@autocast_policy("fp32")
def cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Any:
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each of ``x2`` (..., R, M),
    batched. For ``p=2``, as PyTorch does, with more than 25 rows on a side (or
    ``compute_mode='use_mm_for_euclid_dist'``) through a product: ``|a|^2 + |b|^2 - 2 a.b``.

    >>> import tidu
    >>> tidu.cdist(tidu.tensor([[0.0, 0.0]]), tidu.tensor([[3.0, 4.0], [1.0, 0.0]]))
    tensor([[5., 1.]])
    """
    from . import math
    from .reduce import amax, norm, sum

    _check_tensors("cdist", x1, x2)
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {dtypes.TORCH_NAMES[x1.dtype.name]}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    rows, cols = x1.shape[-2], x2.shape[-2]
    through_product = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                                  compute_mode == "use_mm_for_euclid_dist_if_necessary" and (rows > 25 or cols > 25))
    if through_product:
        squares = math.add(unsqueeze(sum(math.mul(x1, x1), -1), -1), unsqueeze(sum(math.mul(x2, x2), -1), -2))
        cross = matmul(x1, x2.transpose(-1, -2))
        return math.sqrt(math.clamp_min(math.sub(squares, math.mul(cross, 2)), 0.0))
    diff = math.sub(unsqueeze(x1, -2), unsqueeze(x2, -3))
    if p == float("inf"):  # PyTorch's derivative gives each tied largest coordinate the whole gradient
        size = math.abs(diff)
        largest = amax(size, -1)
        tied = math.eq(size, unsqueeze(largest, -1).detach())
        return math.add(largest.detach(), sum(math.where(tied, math.sub(size, size.detach()), 0.0), -1))
    return norm(diff, p, -1)


def pdist(input: Any, p: float = 2.0) -> Any:  # noqa: A002
    """The ``p``-norm distances between the rows of a matrix, pair ``(i, j)`` for ``i < j`` in
    row-major order (the upper triangle of ``cdist(input, input)``).

    >>> import tidu
    >>> tidu.pdist(tidu.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    from .creation import tensor
    from .indexing import index_select
    from .reduce import norm

    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    first, second = (index_select(input, 0, tensor(rows, device=input.device))
                     for rows in np.triu_indices(input.shape[0], 1))
    return norm(first - second, p, -1)


@computed_in_float32
def addr(input: Any, vec1: Any, vec2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:  # noqa: A002
    """``beta * input + alpha * outer(vec1, vec2)`` (``input`` broadcast; ignored when ``beta`` is 0).

    >>> import tidu
    >>> tidu.addr(tidu.zeros(2, 2), tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 3.0]), alpha=2)
    tensor([[ 2.,  6.],
            [ 4., 12.]])
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    product = outer(vec1, vec2)
    if not product.dtype.is_floating_point and (isinstance(beta, float) or isinstance(alpha, float)):
        name = "beta" if isinstance(beta, float) else "alpha"
        raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return _scaled_sum(input, product, beta, alpha)


ger = outer


@autocast_policy("keep")
def vdot(input: Any, other: Any) -> Any:  # noqa: A002
    """The dot product of two 1-D tensors (``dot``: tidu's tensors are real, so nothing is conjugated).

    >>> import tidu
    >>> tidu.vdot(tidu.tensor([1.0, 2.0]), tidu.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return dot(input, other)


def chain_matmul(*matrices: Any) -> Any:
    """The product of the matrices, in the cheapest order (``linalg.multi_dot``, which PyTorch
    points to: it warns that ``chain_matmul`` is deprecated, and so does tidu).

    >>> import tidu, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.chain_matmul(tidu.ones(2, 3), tidu.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    import warnings

    from ..linalg import multi_dot

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    for m in matrices:
        if is_value(m) and m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


def matrix_power(input: Any, n: int) -> Any:  # noqa: A002
    """The ``n``-th power of square matrices (batched): the identity for 0, repeated squaring, and
    the inverse's power for negative ``n`` (float inputs only). Differentiable, as the products.

    >>> import tidu
    >>> tidu.matrix_power(tidu.tensor([[1.0, 1.0], [0.0, 1.0]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    if input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{input.shape[-2] if input.ndim >= 2 else input.shape[-1] if input.ndim else 1} by "
            f"{input.shape[-1] if input.ndim else 1} matrices")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not {type(n).__name__}")
    if n == 0:
        from .creation import eye

        k = input.shape[-1]
        return broadcast_to(eye(k, dtype=input.dtype, device=input.device), tuple(input.shape)).clone()
    if n < 0:
        from ..linalg import inv

        input, n = inv(input), -n  # noqa: A001
    result, square = None, input
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


@computed_in_float32
def dist(input: Any, other: Any, p: float = 2) -> Any:  # noqa: A002
    """The ``p``-norm of ``input - other`` (broadcast), over all elements.

    >>> import tidu
    >>> tidu.dist(tidu.tensor([1.0, 2.0]), tidu.tensor([4.0, 6.0]))
    tensor(5.)
    """
    from . import math
    from .reduce import norm

    difference = math.sub(input, other)
    if not difference.dtype.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{dtypes.TORCH_NAMES[difference.dtype.name]} instead.")
    return norm(difference, p)


@computed_in_float32
def renorm(input: Any, p: float, dim: int, maxnorm: float) -> Any:  # noqa: A002
    """Each slice ``input.select(dim, i)`` whose ``p``-norm is above ``maxnorm``, scaled to norm
    ``maxnorm`` (PyTorch's ``maxnorm / (norm + 1e-7)``); the others unchanged. Differentiable,
    the norm included.

    >>> import tidu
    >>> tidu.renorm(tidu.tensor([[1.0, 2.0], [3.0, 4.0]]), 2, 0, 3)
    tensor([[1.0000, 2.0000],
            [1.8000, 2.4000]])
    """
    from . import math
    from .reduce import norm

    if not input.dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.TORCH_NAMES[input.dtype.name]}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = wrap_dim(dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = norm(input, p, others, keepdim=True)
    factor = math.where(math.gt(norms, maxnorm), math.div(maxnorm, math.add(norms, 1e-7)), 1.0)
    return math.mul(input, factor)


@autocast_policy("fp32")
def pinverse(input: Any, rcond: float = 1e-15) -> Any:  # noqa: A002
    """The Moore-Penrose pseudo-inverse: ``linalg.pinv(input, rtol=rcond)`` (singular values below
    ``rcond`` times the largest count as zero). Gradient: ``linalg.pinv``'s.

    >>> import tidu
    >>> tidu.pinverse(tidu.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    from ..linalg import pinv

    return pinv(input, rtol=rcond)


METHODS = {
    "__matmul__": matmul, "__rmatmul__": lambda self, other: matmul(other, self), "matmul": matmul, "mm": mm,
    "bmm": bmm, "dot": dot, "outer": outer, "mv": mv, "addmm": addmm, "addmv": addmv, "addbmm": addbmm,
    "baddbmm": baddbmm, "inner": inner, "kron": kron, "addr": addr, "ger": ger, "vdot": vdot,
    "matrix_power": matrix_power, "dist": dist, "renorm": renorm, "pinverse": pinverse,
}
