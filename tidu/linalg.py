"""``tidu.linalg``: the norms, products and ``cross`` of ``torch.linalg``, composed from tidu ops.

The decompositions and solvers (``det``, ``inv``, ``solve``, ``cholesky``, ``qr``, ``svd``,
``eigh``, ``lstsq``...) need primitives of their own and are not here yet; neither are the matrix
norms that need singular values (``'nuc'``, 2, -2).

>>> import tidu
>>> tidu.linalg.vector_norm(tidu.tensor([3.0, 4.0]))
tensor(5.)
"""

from __future__ import annotations

import math
from typing import Any

from .core import dtypes
from .core.aval import wrap_dim
from .ops import diagonals, linalg, reduce, shape
from .ops import math as ops_math
from .ops._operands import broadcast_shapes, convert

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "multi_dot", "norm", "vecdot", "vector_norm"]

matmul = linalg.matmul


def _float_input(x: Any, dtype: Any, name: str) -> Any:
    if dtype is not None:
        x = convert(x, dtypes.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{dtypes.TORCH_NAMES[x.dtype.name]}")
    return x


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """The ``ord``-norm of the elements over ``dim`` (all of them by default): any real ``ord``,
    ``inf`` (largest ``|x|``), ``-inf`` or 0 (the count of non-zeros).

    >>> import tidu
    >>> tidu.linalg.vector_norm(tidu.tensor([[1.0, -2.0], [2.0, 0.0]]), ord=1, dim=1)
    tensor([3., 2.])
    """
    x = _float_input(x, dtype, "vector_norm")
    return reduce.norm(x, ord, dim, keepdim)


def matrix_norm(A: Any, ord: Any = "fro", dim: Any = (-2, -1), keepdim: bool = False, *,  # noqa: N803
                dtype: Any = None) -> Any:
    """The matrix norm of the matrices in the two ``dim``: ``'fro'``, or ``inf``/``-inf`` (largest
    or smallest absolute row sum) or 1/-1 (column sum).

    >>> import tidu
    >>> tidu.linalg.matrix_norm(tidu.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
    tensor(6.)
    """
    A = _float_input(A, dtype, "matrix_norm")  # noqa: N806
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = wrap_dim(dims[0], A.ndim), wrap_dim(dims[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, {dims[1]})")
    if ord == "fro":
        return reduce.norm(A, 2, (d0, d1), keepdim)
    if ord in (math.inf, -math.inf, 1, -1):
        summed, then = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = reduce.sum(ops_math.abs(A), summed, keepdim=True)
        out = (reduce.amax if ord > 0 else reduce.amin)(sums, then, keepdim=True)
        return out if keepdim else shape.squeeze(out, tuple(sorted((d0, d1))))
    raise RuntimeError(f"linalg.matrix_norm: order {ord!r} is not supported by tidu (it needs singular values); "
                       "tidu has 'fro', inf, -inf, 1 and -1")


def norm(A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: N803
    """``vector_norm`` for one ``dim`` (or a 1-D input, or all elements when ``ord`` and ``dim``
    are not given), ``matrix_norm`` for two dims (or a 2-D input with an ``ord``).

    >>> import tidu
    >>> tidu.linalg.norm(tidu.tensor([[3.0, 0.0], [0.0, 4.0]]))
    tensor(5.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.ndim == 2:
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if ord is not None and dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vecdot(x: Any, y: Any, *, dim: int = -1) -> Any:
    """Products summed along ``dim``, broadcasting.

    >>> import tidu
    >>> tidu.linalg.vecdot(tidu.tensor([[1.0, 2.0]]), tidu.tensor([3.0, 4.0]))
    tensor([11.])
    """
    return reduce.sum(ops_math.mul(x, y), dim)


def multi_dot(tensors: Any) -> Any:
    """The product of a chain of matrices (the first and last may be 1-D), left to right.

    >>> import tidu
    >>> tidu.linalg.multi_dot([tidu.ones(2), tidu.ones(2, 3), tidu.ones(3)])
    tensor(6.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in allowed:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D{' or 1D' if len(allowed) == 2 else ''} but got "
                               f"{t.ndim}D")
    out = tensors[0]
    for t in tensors[1:]:
        out = linalg.matmul(out, t)
    return out


def diagonal(A: Any, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:  # noqa: N803
    """``tidu.diagonal`` with the last two dims as the default.

    >>> import tidu
    >>> tidu.linalg.diagonal(tidu.eye(2))
    tensor([1., 1.])
    """
    return diagonals.diagonal(A, offset, dim1, dim2)


def cross(input: Any, other: Any, *, dim: int = -1) -> Any:  # noqa: A002
    """The cross product of 3-vectors along ``dim``, broadcasting.

    >>> import tidu
    >>> tidu.linalg.cross(tidu.tensor([1.0, 0.0, 0.0]), tidu.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.])
    """
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = wrap_dim(dim, input.ndim)
    sizes = [input.shape[d], other.shape[d]]
    if sizes != [3, 3]:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {sizes[0]} and {sizes[1]}")
    size = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape), op="linalg.cross"))
    a, b = shape.expand(input, size), shape.expand(other, size)
    ai = [shape.narrow(a, d, i, 1) for i in range(3)]
    bi = [shape.narrow(b, d, i, 1) for i in range(3)]
    parts = [ops_math.sub(ops_math.mul(ai[j], bi[k]), ops_math.mul(ai[k], bi[j])) for j, k in ((1, 2), (2, 0), (0, 1))]
    return shape.cat(parts, d)


def _cross(input: Any, other: Any, dim: int | None = None) -> Any:  # noqa: A002
    """``tidu.cross``: ``linalg.cross`` along ``dim``; without one, along the first dim of size 3
    (PyTorch's deprecated default, with its warning).

    >>> import tidu
    >>> tidu.cross(tidu.tensor([[0.0, 1.0, 0.0]]), tidu.tensor([[0.0, 0.0, 1.0]]), dim=1)
    tensor([[1., 0., 0.]])
    """
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        size = tuple(broadcast_shapes(tuple(input.shape), tuple(other.shape), op="cross"))
        dim = next((d for d, n in enumerate(size) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)
