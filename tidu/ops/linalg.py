"""Matrix products: ``matmul`` (batched, broadcasting, 1-D operands) on ``dot_general``."""

from __future__ import annotations

from typing import Any

from ..core.primitive import bind
from ..primitives.linalg import dot_general
from ._operands import broadcast_shapes, broadcast_to
from .shape import reshape, squeeze, unsqueeze

__all__ = ['matmul', 'mm']

def _mismatch(a: Any, b: Any) -> RuntimeError:
    def fmt(x: Any) -> str:
        return "x".join(str(s) for s in x.shape)

    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({fmt(a)} and {fmt(b)})")


def _common_dtype(a: Any, b: Any) -> tuple[Any, Any]:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != {b.dtype.name}")
    return a, b


def matmul(input: Any, other: Any) -> Any:  # noqa: A002
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dimensions.

    >>> import tidu
    >>> a = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> a @ tidu.tensor([1.0, 1.0])
    tensor([3., 7.])
    >>> (tidu.ones(5, 2, 3) @ tidu.ones(3, 4)).shape
    tidu.Size([5, 2, 4])
    """
    a, b = _common_dtype(input, other)
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
    if a.ndim == 1:
        return squeeze(matmul(unsqueeze(a, 0), b), -2)
    if b.ndim == 1:
        return squeeze(matmul(a, unsqueeze(b, -1)), -1)
    if a.shape[-1] != b.shape[-2]:
        raise _mismatch(a, b)
    if b.ndim == 2:
        lead = tuple(a.shape[:-1])
        flat = reshape(a, -1, a.shape[-1]) if a.ndim > 2 else a
        out = bind(dot_general, flat, b, dimension_numbers=(((1,), (0,)), ((), ())))
        return reshape(out, lead + (b.shape[-1],)) if a.ndim > 2 else out
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    a = broadcast_to(a, batch + tuple(a.shape[-2:]))
    b = broadcast_to(b, batch + tuple(b.shape[-2:]))
    nb = len(batch)
    dims = (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb))))
    return bind(dot_general, a, b, dimension_numbers=dims)


def mm(input: Any, mat2: Any) -> Any:  # noqa: A002
    """Product of two matrices."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    return matmul(input, mat2)



METHODS = {
    "__matmul__": matmul, "__rmatmul__": lambda self, other: matmul(other, self), "matmul": matmul, "mm": mm,
}
