"""Shape ops: reshape, permute, expand, squeeze, flip, roll, cat, stack, split, ...

Views and rearrangements compose the structural primitives (``reshape``, ``transpose``,
``broadcast_in_dim``, ``slice``, ``concatenate``, ``rev``); their gradients come from
those primitives' transposes.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np

from ..backends.layout import storage
from ..core import dtypes, formats
from ..core.dispatch import bind_one
from ..core.primitive import bind
from ..primitives.slicing import slice_p
from ..primitives.structural import broadcast_in_dim, convert_element_type, rev
from ..primitives.structural import concatenate as concatenate_p
from ..primitives.structural import reshape as reshape_p
from ..primitives.structural import transpose as transpose_p
from ..tensor import Tensor
from ._operands import broadcast_shapes as _broadcast_shapes
from ._operands import broadcast_to as _broadcast_to
from ._operands import convert, is_value, wrap_dim, wrap_dims

__all__ = [
    "broadcast_to", "cat", "chunk", "clone", "concat", "concatenate", "expand", "flatten", "flip", "narrow", "permute",
    "repeat", "reshape", "roll", "split", "squeeze", "stack", "t", "transpose", "unflatten", "unsqueeze", "view",
    "select", "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "ravel", "broadcast_tensors",
    "split_with_sizes", "detach", "fill", "adjoint",
]


def _sizes(shape: tuple) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` / ``f([2, 3])`` / ``f(x.shape)`` alike."""
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        return tuple(shape[0])
    return tuple(shape)


def _keyword(args: tuple, kwargs: dict, name: str, op: str) -> tuple:
    """The sizes or dims given positionally or as the keyword ``name`` (``x.flip(dims=(0,))``)."""
    if kwargs:
        if set(kwargs) != {name} or args:
            raise TypeError(f"{op}() got unexpected arguments {sorted(kwargs)}; expected {name}=...")
        return (kwargs[name],)
    return args


def _infer(sizes: list, total: int, op: str = "shape") -> tuple[int, ...]:
    """Replace one ``-1`` by the size that keeps ``total`` elements."""
    sizes = [int(s) for s in sizes]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in sizes:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    if -1 in sizes:
        known = prod(s for s in sizes if s != -1)
        if known == 0 or total % known:
            raise RuntimeError(f"{op} '{sizes}' is invalid for input of size {total}")
        sizes[sizes.index(-1)] = total // known
    return tuple(sizes)


def reshape(input: Any, *shape: Any, **kwargs: Any) -> Any:  # noqa: A002
    """A tensor with the same data and a new shape (one size may be -1).

    Gradient: the cotangent reshaped back (primitive ``reshape``).

    >>> import tidu
    >>> tidu.arange(6).reshape(2, -1)
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    in_shape = tuple(input.shape)
    try:
        sizes = _RESHAPES.get((in_shape, shape)) if not kwargs else None
    except TypeError:  # a list of sizes: not a key
        sizes = None
    if sizes is None:
        sizes = _infer(list(_sizes(_keyword(shape, kwargs, "shape", "reshape"))), prod(in_shape))
        if not kwargs and all(type(s) is int for s in shape):
            if len(_RESHAPES) >= 4096:
                _RESHAPES.clear()
            _RESHAPES[(in_shape, shape)] = sizes
    if sizes == in_shape:
        return input
    return bind_one(reshape_p, input, {"new_sizes": sizes})


# (input shape, the sizes as given: ints) -> the result's shape (``reshape``'s ``-1`` inferred)
_RESHAPES: dict[tuple, tuple[int, ...]] = {}


def view(input: Any, *shape: Any) -> Any:  # noqa: A002
    """``reshape`` that shares ``input``'s storage, as PyTorch's: where the strides allow no view
    (a dimension would span two contiguous pieces, as after a transpose) it raises, rather than
    hand out a copy that writes would not reach.

    >>> import tidu
    >>> tidu.zeros(2, 3).view(-1).shape
    tidu.Size([6])
    >>> tidu.zeros(2, 3).t().view(-1)
    Traceback (most recent call last):
    ...
    RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead.

    ``view(dtype)`` reads the same storage as another dtype (its bits), as PyTorch's: not
    differentiable, and writes through it reach ``input``.

    >>> tidu.tensor([1.0]).view(tidu.int32)
    tensor([1065353216], dtype=tidu.int32)
    """
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        return view_as_dtype(input, shape[0])
    out = reshape(input, *shape)
    if out is not input and isinstance(input, Tensor) and input._buf.size and storage(out._buf) is not storage(input._buf):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans "
            "across two contiguous subspaces). Use .reshape(...) instead."
        )
    return out


def view_as_dtype(input: Tensor, dt: dtypes.dtype) -> Tensor:  # noqa: A002
    """``input.view(dt)``: its storage read as ``dt`` (a smaller or larger itemsize splits or joins
    the elements of the last dim, which must be dense), sharing the version counter."""
    if not isinstance(input, Tensor):
        raise TypeError("view(dtype) reads a tensor's storage: a symbolic value inside a transform has none")
    have, want = input.dtype.itemsize, dt.itemsize
    names = f"{dtypes.TORCH_NAMES[input.dtype.name]} as {dtypes.TORCH_NAMES[dt.name]} (different element sizes)"
    buf = input._data
    shape, strides = tuple(buf.shape), tuple(buf.strides)
    if have != want:
        if not shape:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
        if strides[-1] != have and shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1] // have}")
        if want > have:
            ratio = want // have
            if shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, but got {shape[-1]}")
            if input.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {names}, but got "
                                   f"{input.storage_offset()}")
        shape, strides = (*shape[:-1], shape[-1] * have // want), (*strides[:-1], want)
    if input.device.type == "cpu":
        array = _numpy_view(buf, dt, shape, strides)
    else:
        host = None if buf.host is None else _numpy_view(buf.host, dt, shape, strides)
        array = type(buf)(shape, dt.np, strides, buf.ptr, buf, host)
    return Tensor(array, dt, device=input.device, _version=input._version)


def _numpy_view(array: np.ndarray, dt: dtypes.dtype, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """``array``'s memory as ``dt`` in ``shape`` and byte ``strides``: a view of its storage."""
    root = storage(array)
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return np.ndarray(shape, dt.np, root, offset, strides)


def permute(input: Any, *dims: Any, **kwargs: Any) -> Any:  # noqa: A002
    """Reorder dimensions (``dims`` as varargs or one sequence; negative dims count from the end).

    >>> import tidu
    >>> tidu.zeros(2, 3, 4).permute(2, 0, -2).shape
    tidu.Size([4, 2, 3])
    """
    dims = _sizes(_keyword(dims, kwargs, "dims", "permute"))
    ndim = input.ndim
    try:
        perm = _PERMUTATIONS.get((ndim, dims), False)
    except TypeError:  # dims that are not ints
        perm = False
    if perm is False:
        perm = _permutation(dims, ndim)
        if all(type(d) is int for d in dims):
            if len(_PERMUTATIONS) >= 4096:
                _PERMUTATIONS.clear()
            _PERMUTATIONS[(ndim, dims)] = perm
    return input if perm is None else bind_one(transpose_p, input, {"permutation": perm})


# (ndim, dims as given: ints) -> the permutation (``None``: the identity): ``permute``'s lookup
_PERMUTATIONS: dict[tuple, tuple[int, ...] | None] = {}


def _permutation(dims: tuple, ndim: int) -> tuple[int, ...] | None:
    """``dims`` checked and wrapped (``None`` when they leave every dimension in place)."""
    if len(dims) != ndim:
        raise RuntimeError(
            f"permute(): number of dims don't match in permute: input.dim() = {ndim}, len(dims) = {len(dims)}"
        )
    perm = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(perm)) != len(perm):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return None if perm == tuple(range(ndim)) else perm


def transpose(input: Any, dim0: int, dim1: int) -> Any:  # noqa: A002
    """Swap two dimensions.

    >>> import tidu
    >>> tidu.zeros(2, 3).transpose(0, -1).shape
    tidu.Size([3, 2])
    """
    ndim = input.ndim
    key = (ndim, dim0, dim1)
    perm = _SWAPS.get(key, False)
    if perm is False:
        a, b = wrap_dim(dim0, ndim), wrap_dim(dim1, ndim)
        perm = None
        if a != b and ndim:
            swapped = list(range(ndim))
            swapped[a], swapped[b] = swapped[b], swapped[a]
            perm = tuple(swapped)
        if type(dim0) is int and type(dim1) is int:
            if len(_SWAPS) >= 4096:
                _SWAPS.clear()
            _SWAPS[key] = perm
    return input if perm is None else bind_one(transpose_p, input, {"permutation": perm})


# (ndim, dim0, dim1) -> the permutation (``None``: nothing moves): ``transpose``'s lookup
_SWAPS: dict[tuple, tuple[int, ...] | None] = {}


def t(input: Any) -> Any:  # noqa: A002
    """Transpose of a tensor of at most 2 dimensions (0-d and 1-d come back unchanged).

    >>> import tidu
    >>> tidu.tensor([[1, 2]]).t()
    tensor([[1],
            [2]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def _T(input: Any) -> Any:  # noqa: A002, N802
    """``x.T``: all dimensions reversed.

    >>> import tidu
    >>> tidu.zeros(2, 3).T.shape
    tidu.Size([3, 2])
    """
    return permute(input, tuple(reversed(range(input.ndim))))


def _mT(input: Any) -> Any:  # noqa: A002, N802
    """``x.mT``: the last two dimensions swapped (a batch of matrices transposed).

    >>> import tidu
    >>> tidu.zeros(5, 2, 3).mT.shape
    tidu.Size([5, 3, 2])
    """
    return _matrix_transpose(input, "mT")


def _matrix_transpose(input: Any, name: str) -> Any:  # noqa: A002
    if input.ndim < 2:
        raise RuntimeError(
            f"tensor.{name} is only supported on matrices or batches of matrices. Got {input.ndim}-D tensor."
        )
    return transpose(input, -2, -1)


def _mH(input: Any) -> Any:  # noqa: A002, N802
    """``x.mH``: the conjugate transpose of a batch of matrices; for real tensors ``x.mT``.

    >>> import tidu
    >>> tidu.zeros(5, 2, 3).mH.shape
    tidu.Size([5, 3, 2])
    """
    return _matrix_transpose(input, "mH")


def _H(input: Any) -> Any:  # noqa: A002, N802
    """``x.H``: the conjugate transpose of a matrix (2-D only); for real tensors ``x.T``.

    >>> import tidu
    >>> tidu.zeros(2, 3).H.shape
    tidu.Size([3, 2])
    """
    if input.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if input.ndim > 2 else ""))
    return transpose(input, 0, 1) if input.ndim == 2 else input


def adjoint(input: Any) -> Any:  # noqa: A002
    """The conjugate transpose of the last two dims (for real tensors ``transpose(-2, -1)``), a view.

    >>> import tidu
    >>> tidu.adjoint(tidu.tensor([[1.0, 2.0]]))
    tensor([[1.],
            [2.]])
    """
    return _matrix_transpose(input, "adjoint()")


def broadcast_to(input: Any, size: Any) -> Any:  # noqa: A002
    """Broadcast to ``size`` without copying (-1 keeps a dimension).

    Gradient: the cotangent summed over the broadcast dimensions (primitive ``broadcast_in_dim``).

    >>> import tidu
    >>> tidu.broadcast_to(tidu.tensor([1.0, 2.0]), (2, -1))
    tensor([[1., 2.],
            [1., 2.]])
    """
    return expand(input, tuple(size))


def broadcast_tensors(*tensors: Any) -> tuple:
    """The tensors expanded to their common broadcast shape (views, as ``expand``).

    >>> import tidu
    >>> [t.shape for t in tidu.broadcast_tensors(tidu.zeros(2, 1), tidu.zeros(3))]
    [tidu.Size([2, 3]), tidu.Size([2, 3])]
    """
    shape = _broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(expand(t, shape) for t in tensors)


def expand(input: Any, *sizes: Any) -> Any:  # noqa: A002
    """Broadcast to ``sizes`` without copying (-1 keeps a dimension).

    >>> import tidu
    >>> tidu.tensor([1.0, 2.0]).expand(2, -1)
    tensor([[1., 2.],
            [1., 2.]])
    """
    sizes = [int(s) for s in _sizes(sizes)]
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({input.ndim})"
        )
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise RuntimeError(
                    f"expand: -1 is not allowed in a leading, non-existing dimension ({i}) (sizes {sizes})"
                )
            sizes[i] = input.shape[i - lead]
        elif s < 0:
            raise RuntimeError(f"expand: invalid size {s} (sizes {sizes})")
    return _broadcast_to(input, sizes)


def _expand_as(input: Any, other: Any) -> Any:  # noqa: A002
    """``expand`` to ``other``'s shape.

    >>> import tidu
    >>> tidu.tensor([1, 2]).expand_as(tidu.zeros(2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return expand(input, tuple(other.shape))


def unsqueeze(input: Any, dim: int) -> Any:  # noqa: A002
    """Insert a dimension of size 1 at ``dim`` (in ``[-ndim - 1, ndim]``).

    >>> import tidu
    >>> tidu.zeros(2, 3).unsqueeze(-1).shape
    tidu.Size([2, 3, 1])
    """
    d = wrap_dim(dim, input.ndim + 1)
    shape = list(input.shape)
    shape.insert(d, 1)
    return bind_one(reshape_p, input, {"new_sizes": tuple(shape)})


def squeeze(input: Any, dim: Any = None) -> Any:  # noqa: A002
    """Remove dimensions of size 1 (all, or those of ``dim``: an int or a tuple).

    >>> import tidu
    >>> tidu.zeros(1, 3, 1).squeeze().shape, tidu.zeros(1, 3, 1).squeeze((0, 1)).shape
    (tidu.Size([3]), tidu.Size([3, 1]))
    """
    if dim is None:
        dims = {d for d, s in enumerate(input.shape) if s == 1}
    else:
        dims = set(wrap_dims(dim, input.ndim))
        dims = {d for d in dims if input.shape[d] == 1}
    shape = tuple(s for d, s in enumerate(input.shape) if d not in dims)
    return input if shape == tuple(input.shape) else bind_one(reshape_p, input, {"new_sizes": shape})


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Any:  # noqa: A002
    """Merge dimensions ``start_dim..end_dim`` into one (a 0-d tensor becomes 1-d).

    >>> import tidu
    >>> tidu.zeros(2, 3, 4).flatten(1).shape
    tidu.Size([2, 12])
    """
    if input.ndim == 0:
        return reshape(input, 1)
    a, b = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if a > b:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = list(input.shape[:a]) + [prod(input.shape[a:b + 1])] + list(input.shape[b + 1:])
    return reshape(input, shape)


def unflatten(input: Any, dim: int, sizes: Any) -> Any:  # noqa: A002
    """Split dimension ``dim`` into ``sizes`` (one may be -1).

    >>> import tidu
    >>> tidu.zeros(2, 6).unflatten(1, (3, -1)).shape
    tidu.Size([2, 3, 2])
    """
    if input.ndim == 0:
        raise RuntimeError(f"unflatten got an unexpected error:\nDimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    sizes = [int(s) for s in sizes]
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    if -1 not in sizes and prod(sizes) != n:
        raise RuntimeError(
            f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {dim} ({n}) in the input tensor"
        )
    inner = _infer(sizes, n, op="unflatten: sizes")
    return reshape(input, tuple(input.shape[:d]) + inner + tuple(input.shape[d + 1:]))


def repeat(input: Any, *sizes: Any) -> Any:  # noqa: A002
    """Tile the tensor ``sizes[i]`` times along dimension ``i`` (leading sizes add dimensions).

    Composed as broadcast + reshape: the gradient sums the copies.

    >>> import tidu
    >>> tidu.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]])
    """
    reps = [int(s) for s in _sizes(sizes)]
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor "
            f"(repeats {reps}, tensor of shape {tuple(input.shape)})"
        )
    if any(r < 0 for r in reps):
        raise RuntimeError(f"Trying to create tensor with negative dimension in repeat {reps}")
    shape = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    interleaved = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    x = reshape(input, shape)
    if all(r == 1 for r in reps):
        return _copy(x)
    x = bind(broadcast_in_dim, x, shape=interleaved, broadcast_dimensions=tuple(range(1, 2 * len(shape), 2)))
    return reshape(x, tuple(r * s for r, s in zip(reps, shape)))


def clone(input: Any, *, memory_format: Any = formats.preserve_format) -> Any:  # noqa: A002
    """A copy in new storage, recorded (its gradient is the identity); row-major whatever the
    ``memory_format`` (checked as PyTorch checks it, tidu/core/formats.py).

    >>> import tidu
    >>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> tidu.clone(x)
    tensor([1., 2.], grad_fn=<convert_element_type>)
    """
    if memory_format is not formats.preserve_format:
        formats.check_memory_format(memory_format, input.ndim, "clone")
    return bind(convert_element_type, input, new_dtype=input.dtype)


def _copy(x: Any) -> Any:
    """A copy of ``x`` (a one-operand ``concatenate``), where PyTorch returns new storage."""
    if x.ndim == 0:
        return bind(reshape_p, _copy(bind(reshape_p, x, new_sizes=(1,))), new_sizes=())
    return bind(concatenate_p, x, dimension=0)


def flip(input: Any, *dims: Any, **kwargs: Any) -> Any:  # noqa: A002
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch).

    Gradient: the cotangent flipped back (primitive ``rev``, its own transpose).

    >>> import tidu
    >>> tidu.tensor([[1, 2], [3, 4]]).flip(0)
    tensor([[3, 4],
            [1, 2]])
    """
    axes = wrap_dims(_sizes(_keyword(dims, kwargs, "dims", "flip")), input.ndim)
    return bind(rev, input, dimensions=tuple(sorted(axes)))


def narrow(input: Any, dim: int, start: Any, length: int) -> Any:  # noqa: A002
    """Elements ``start:start + length`` of dimension ``dim`` (a view; ``start`` may be negative).

    >>> import tidu
    >>> tidu.arange(6).narrow(0, -4, 2)
    tensor([2, 3])
    """
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    start, length = int(start), int(length)
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _narrow(input, d, start, start + length)


def _narrow(x: Any, d: int, start: int, stop: int) -> Any:
    if start == 0 and stop == x.shape[d]:
        return x
    starts = tuple(start if i == d else 0 for i in range(x.ndim))
    limits = tuple(stop if i == d else s for i, s in enumerate(x.shape))
    return bind_one(slice_p, x, {"start_indices": starts, "limit_indices": limits, "strides": (1,) * x.ndim})


def roll(input: Any, shifts: Any, dims: Any = None) -> Any:  # noqa: A002
    """Rotate elements by ``shifts`` along ``dims`` (no ``dims``: over the flattened tensor).

    Composed as two slices and a ``concatenate`` per dimension.

    >>> import tidu
    >>> tidu.arange(5).roll(2)
    tensor([3, 4, 0, 1, 2])
    """
    shifts = tuple(shifts) if isinstance(shifts, list | tuple) else (shifts,)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return reshape(roll(flatten(input), shifts[0], 0), tuple(input.shape))
    dims = tuple(dims) if isinstance(dims, list | tuple) else (dims,)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    out = input
    for shift, d in zip(shifts, dims):
        n = out.shape[d]
        k = int(shift) % n if n else 0
        if k:
            out = bind(concatenate_p, _narrow(out, d, n - k, n), _narrow(out, d, 0, n - k), dimension=d)
    return _copy(out) if out is input else out


def _tensor_list(tensors: Any, op: str) -> list:
    if is_value(tensors) or not isinstance(tensors, list | tuple):
        raise TypeError(
            f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}"
        )
    for i, t in enumerate(tensors):
        if not is_value(t):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def cat(tensors: Any, dim: int = 0) -> Any:
    """Concatenate tensors along ``dim`` (one kernel however many tensors).

    Follows PyTorch: the dtypes are promoted, 1-d empty tensors are skipped, and all other
    sizes must match except in ``dim``. Gradient: each operand gets its slice of the
    cotangent (primitive ``concatenate``, whose transpose is ``slice``).

    >>> import tidu
    >>> tidu.cat([tidu.tensor([[1, 2]]), tidu.tensor([[3.0, 4.0]])])
    tensor([[1., 2.],
            [3., 4.]])
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dt = dtypes.result_type(*tensors)
    kept = [t for t in tensors if tuple(t.shape) != (0,)] or tensors[:1]
    d = wrap_dim(dim, kept[0].ndim)
    operands = [convert(t, dt) for t in kept]
    return bind(concatenate_p, *operands, dimension=d)


concat = cat


def concatenate(tensors: Any, axis: int = 0) -> Any:
    """``cat`` with numpy's argument name.

    >>> import tidu
    >>> tidu.concatenate([tidu.zeros(2), tidu.ones(1)], axis=0)
    tensor([0., 0., 1.])
    """
    return cat(tensors, axis)


def stack(tensors: Any, dim: int = 0) -> Any:
    """Join tensors of one shape along a new dimension ``dim``.

    >>> import tidu
    >>> tidu.stack([tidu.tensor([1, 2]), tidu.tensor([3, 4])], dim=1)
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != first:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
    d = wrap_dim(dim, len(first) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes.

    >>> import tidu
    >>> [p.tolist() for p in tidu.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [p.tolist() for p in tidu.arange(5).split([1, 4])]
    [[0], [1, 2, 3, 4]]
    """
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, list | tuple):
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension "
                f"{d}), but got split_sizes={sizes}"
            )
    else:
        size = int(split_size_or_sections)
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [min(size, n - i) for i in range(0, n, size)] if n else [0]
    bounds = [sum(sizes[:i]) for i in range(len(sizes) + 1)]
    return tuple(_narrow(tensor, d, a, b) for a, b in zip(bounds, bounds[1:]))


def split_with_sizes(input: Any, split_sizes: Any, dim: int = 0) -> tuple:  # noqa: A002
    """Pieces of the listed sizes along ``dim``, which must sum to its size (``split`` with a list).

    >>> import tidu
    >>> [p.tolist() for p in tidu.split_with_sizes(tidu.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    return split(input, list(split_sizes), dim)


def detach(input: Any) -> Any:  # noqa: A002
    """``input.detach()``: the same storage, cut from the graph.

    >>> import tidu
    >>> tidu.detach(tidu.ones(2, requires_grad=True)).requires_grad
    False
    """
    return input.detach()


def fill(input: Any, value: Any) -> Any:  # noqa: A002
    """A new tensor of ``input``'s shape and dtype holding ``value`` (a number or a 0-d tensor,
    through which the gradient flows): ``fill_`` out of place.

    >>> import tidu
    >>> tidu.fill(tidu.zeros(2), 3)
    tensor([3., 3.])
    """
    from .methods import _fill

    out = _fill(input, value)
    return _broadcast_to(convert(out, input.dtype), tuple(input.shape)) if is_value(value) else out


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple:  # noqa: A002
    """At most ``chunks`` pieces of equal size ``ceil(n / chunks)`` along ``dim`` (PyTorch's rule).

    >>> import tidu
    >>> [p.tolist() for p in tidu.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return tuple(input for _ in range(chunks))
    return split(input, -(-n // chunks), d)


def select(input: Any, dim: int, index: int) -> Any:  # noqa: A002
    """Element ``index`` of dimension ``dim``, which is removed (a view, as ``x[..., index]``).

    >>> import tidu
    >>> tidu.arange(6).reshape(2, 3).select(1, -1)
    tensor([2, 5])
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if not isinstance(index, int) or isinstance(index, bool):
        raise TypeError(f"select(): argument 'index' (position 2) must be int, not {type(index).__name__}")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    i = index % n
    return squeeze(_narrow(input, d, i, i + 1), d)


def unbind(input: Any, dim: int = 0) -> tuple:  # noqa: A002
    """Every ``select(dim, i)``: the slices along ``dim``, each without it.

    >>> import tidu
    >>> [t.tolist() for t in tidu.arange(4).reshape(2, 2).unbind(1)]
    [[0, 2], [1, 3]]
    """
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    return tuple(squeeze(_narrow(input, d, i, i + 1), d) for i in range(input.shape[d]))


def movedim(input: Any, source: Any, destination: Any) -> Any:  # noqa: A002
    """Move dimensions ``source`` (an int or a sequence) to the places ``destination``; the others
    keep their order (``moveaxis`` is the same).

    >>> import tidu
    >>> tidu.zeros(2, 3, 4).movedim(-1, 0).shape
    tidu.Size([4, 2, 3])
    """
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    ndim = input.ndim
    src_w, dst_w = [wrap_dim(d, ndim) for d in src], [wrap_dim(d, ndim) for d in dst]
    for name, given, wrapped in (("source", src, src_w), ("destination", dst, dst_w)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    if not ndim:
        return input
    order: list[int | None] = [None] * ndim
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(d for d in range(ndim) if d not in src_w)
    return permute(input, [next(rest) if o is None else o for o in order])


def swapaxes(input: Any, axis0: int, axis1: int) -> Any:  # noqa: A002
    """``transpose`` (numpy's name; ``swapdims`` is the same).

    >>> import tidu
    >>> tidu.zeros(2, 3).swapaxes(0, 1).shape
    tidu.Size([3, 2])
    """
    return transpose(input, axis0, axis1)


def swapdims(input: Any, dim0: int, dim1: int) -> Any:  # noqa: A002
    """``transpose`` (``swapaxes`` with PyTorch's other argument names).

    >>> import tidu
    >>> tidu.zeros(2, 3).swapdims(dim0=0, dim1=1).shape
    tidu.Size([3, 2])
    """
    return transpose(input, dim0, dim1)


def ravel(input: Any) -> Any:  # noqa: A002
    """The elements as one dimension: ``reshape(-1)`` (a view where the strides allow it).

    >>> import tidu
    >>> tidu.zeros(2, 3).ravel().shape
    tidu.Size([6])
    """
    return reshape(input, -1)


def _view_as(self: Any, other: Any) -> Any:
    return view(self, tuple(other.shape))


def _reshape_as(self: Any, other: Any) -> Any:
    return reshape(self, tuple(other.shape))


def _split_method(self: Any, split_size: Any, dim: int = 0) -> tuple:
    return split(self, split_size, dim)


METHODS = {
    "reshape": reshape, "view": view, "permute": permute, "transpose": transpose, "t": t,
    "T": property(_T), "mT": property(_mT), "mH": property(_mH), "H": property(_H), "adjoint": adjoint,
    "expand": expand, "expand_as": _expand_as, "broadcast_to": broadcast_to,
    "unsqueeze": unsqueeze, "squeeze": squeeze, "flatten": flatten, "unflatten": unflatten,
    "repeat": repeat, "flip": flip, "roll": roll, "narrow": narrow, "split": _split_method, "chunk": chunk,
    "select": select, "unbind": unbind, "movedim": movedim, "moveaxis": movedim, "swapaxes": swapaxes,
    "swapdims": swapdims, "ravel": ravel, "view_as": _view_as, "reshape_as": _reshape_as,
    "split_with_sizes": split_with_sizes,
}
moveaxis = movedim
