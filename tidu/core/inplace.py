"""In-place writes: a tensor takes a new value in its own storage and its place in the graph.

Every in-place operation (``add_``, ``x[i] = v``, ``+=``, ...) computes its new value
out of place with ordinary (recorded) ops and then calls ``assign_``. The storage is
overwritten and its version counter bumped, so a node that saved the old value refuses
to run at backward (PyTorch's "modified by an inplace operation" error); when the new
value was recorded, the tensor takes over its key and trace, so gradients flow through
the write as PyTorch's do.
"""

from __future__ import annotations

from typing import Any

from . import grad_mode

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


def check_writable(target: Any, op: str) -> None:
    """Raise PyTorch's errors for in-place writes that can never be allowed."""
    if grad_mode.is_grad_enabled() and target._requires_grad and target._trace is None:
        raise RuntimeError(LEAF_ERROR)
    if not target._data.flags.writeable:
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
            "memory location (an expanded view). Please clone() the tensor before performing the operation."
        )


def assign_(target: Any, value: Any, *, op: str) -> Any:
    """Write ``value`` (a tensor of ``target``'s shape and dtype) into ``target``, in place.

    >>> import tidu
    >>> from tidu.core.inplace import assign_
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> buffer = tidu.zeros(2)
    >>> _ = assign_(buffer, x * x, op="example")
    >>> buffer.sum().backward()
    >>> x.grad
    tensor([2., 4.])
    """
    check_writable(target, op)
    if tuple(value.shape) != tuple(target.shape) or value.dtype is not target.dtype:
        raise RuntimeError(
            f"{op}: internal error: in-place value {tuple(value.shape)} {value.dtype.name} does not fit the "
            f"tensor {tuple(target.shape)} {target.dtype.name}"
        )
    recorded = grad_mode.is_grad_enabled() and value._trace is not None
    target._data[...] = value._data
    target._version.value += 1
    if recorded:
        target._requires_grad = True
        target._key = value._key
        target._trace = value._trace
    elif grad_mode.is_grad_enabled() and target._trace is not None:
        # Overwritten by constant data: the old history no longer reaches this value.
        target._trace = None
        target._key = None
        target._requires_grad = False
    return target
