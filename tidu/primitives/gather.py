"""``gather`` and ``scatter_add`` along one axis: each the other's transpose.

``gather(x, index)`` reads ``x`` at ``index`` along ``axis`` (``torch.gather``); it is
linear in ``x``, and its transpose adds the cotangent back at the same places, so
repeated indices accumulate. ``scatter_add(x, index, src)`` is linear in ``(x, src)``;
its transpose in ``src`` is a gather. Indices are int64 and not differentiable.

``nll_sum(x, target)`` is ``scale * sum_i x[i, target[i]]`` for an (N, C) ``x``: the negative
log likelihood of ``nn.functional.nll_loss`` and ``cross_entropy`` (``scale = -1/N`` for the
mean, ``-1`` for the sum) in one kernel, where a gather, a sum and a division would take three.
It is linear in ``x``; its transpose ``nll_sum_transpose`` spreads ``scale * ct`` as one-hot
rows (the two are each other's transpose).
"""

from __future__ import annotations

from ..backends.cpu import index as cpu
from ..backends.cuda.lazy import kernel
from ..core.aval import ShapeDtype
from ..core.dtypes import FLOATS, NUMERIC, int64
from ..core.primitive import Primitive
from ._batching import along_axis, at_front, batch_size
from ._util import check_dtype, ops
from .slicing import pad


def _check_index(name: str, index: ShapeDtype, ndim: int, axis: int) -> None:
    if index.dtype is not int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index.dtype.name}")
    if index.ndim != ndim:
        raise RuntimeError(
            f"{name}(): Index tensor must have the same number of dimensions as the tensors it indexes "
            f"(index {tuple(index.shape)}, {ndim} dimensions expected)"
        )
    if not 0 <= axis < max(ndim, 1) or ndim == 0:
        raise IndexError(f"{name}(): axis {axis} is out of range for a tensor of dimension {ndim}")


def _check_extent(name: str, index: ShapeDtype, other: ShapeDtype, what: str, skip: int | None) -> None:
    for d, (m, n) in enumerate(zip(index.shape, other.shape)):
        if d != skip and m > n:
            raise RuntimeError(
                f"{name}(): Size does not match at dimension {d}: expected index {list(index.shape)} to be no "
                f"larger than {what} {list(other.shape)}" + (f" apart from dimension {skip}" if skip is not None else "")
            )


def _zeros(like, aval: ShapeDtype):  # noqa: ANN001, ANN202
    """Zeros of ``aval`` inside a rule (``like`` is the rule's tangent or cotangent)."""
    from ..ops._operands import constant

    return constant(0, aval.dtype, like, tuple(aval.shape))


gather = Primitive("gather")


@gather.def_abstract_eval
def _gather_shape(x: ShapeDtype, index: ShapeDtype, *, axis: int) -> ShapeDtype:
    _check_index("gather", index, x.ndim, axis)
    _check_extent("gather", index, x, "input", axis)
    return ShapeDtype(tuple(index.shape), x.dtype)


def _gather_transpose(ct, x, index, *, axis):  # noqa: ANN001, ANN202
    return [scatter_add.bind(_zeros(ct, x.aval), index, ct, axis=axis), None]


gather.def_impl(cpu.gather)
gather.def_impl(kernel("index", "gather"), device="cuda", takes_views=True)
gather.def_jvp(lambda dx, x, index, out, *, axis: gather.bind(dx, index, axis=axis), None)
gather.def_transpose(_gather_transpose, linear_in=(0,))


gather.def_batch(along_axis(gather))

scatter_add = Primitive("scatter_add")


@scatter_add.def_abstract_eval
def _scatter_add_shape(x: ShapeDtype, index: ShapeDtype, src: ShapeDtype, *, axis: int) -> ShapeDtype:
    _check_index("scatter_add", index, x.ndim, axis)
    if src.ndim != x.ndim:
        raise RuntimeError(
            f"scatter_add(): src {tuple(src.shape)} must have as many dimensions as self {tuple(x.shape)}"
        )
    _check_extent("scatter_add", index, x, "self", axis)
    _check_extent("scatter_add", index, src, "src", None)
    if src.dtype is not x.dtype:
        raise RuntimeError(
            f"scatter_add(): Expected self.dtype to be equal to src.dtype ({x.dtype.name} and {src.dtype.name})"
        )
    check_dtype("scatter_add", x, NUMERIC)
    return x


def _scatter_add_transpose(ct, x, index, src, *, axis):  # noqa: ANN001, ANN202
    ct_src = None
    if ops.is_linear(src):
        ct_src = gather.bind(ct, index, axis=axis)
        if tuple(index.shape) != tuple(src.aval.shape):
            config = tuple((0, n - m, 0) for m, n in zip(index.shape, src.aval.shape))
            ct_src = pad.bind(ct_src, padding_config=config)
    return [ct if ops.is_linear(x) else None, None, ct_src]


scatter_add.def_impl(cpu.scatter_add)
scatter_add.def_impl(kernel("index", "scatter_add"), device="cuda",
                     takes_views=True)
scatter_add.def_jvp(
    lambda dx, x, index, src, out, *, axis: dx,
    None,
    lambda dsrc, x, index, src, out, *, axis: scatter_add.bind(_zeros(dsrc, x.aval), index, dsrc, axis=axis),
)
scatter_add.def_transpose(_scatter_add_transpose, linear_in=(0, 2))
scatter_add.def_batch(along_axis(scatter_add))


def _check_rows(name: str, target: ShapeDtype, rows: int) -> None:
    """An int64 target of shape ``(rows,)``."""
    if target.dtype is not int64:
        raise RuntimeError(f"{name}(): Expected dtype int64 for target, got {target.dtype.name}")
    if tuple(target.shape) != (rows,):
        raise RuntimeError(f"{name}(): expected target of shape ({rows},), got {tuple(target.shape)}")


nll_sum = Primitive("nll_sum")


@nll_sum.def_abstract_eval
def _nll_sum_shape(x: ShapeDtype, target: ShapeDtype, *, scale: float) -> ShapeDtype:
    check_dtype("nll_sum", x, FLOATS)
    if x.ndim != 2:
        raise RuntimeError(f"nll_sum(): expected an (N, C) input, got {tuple(x.shape)}")
    _check_rows("nll_sum", target, x.shape[0])
    return ShapeDtype((), x.dtype)


nll_sum.def_impl(cpu.nll_sum)
nll_sum.def_impl(kernel("index", "nll_sum"), device="cuda")
nll_sum.def_jvp(lambda dx, x, target, out, *, scale: nll_sum.bind(dx, target, scale=scale), None)
nll_sum.def_transpose(
    lambda ct, x, target, *, scale: [
        nll_sum_transpose.bind(ct, target, classes=x.aval.shape[1], scale=scale), None],
    linear_in=(0,),
)


def _nll_sum_batch(args, dims, *, scale):  # noqa: ANN001, ANN202
    size = batch_size(args, dims)
    x, target = (at_front(a, d, size) for a, d in zip(args, dims))
    picked = gather.bind(x, ops.unsqueeze(target, 2), axis=2)
    return ops.sum(picked, dim=(1, 2)) * scale, 0


nll_sum.def_batch(_nll_sum_batch)

nll_sum_transpose = Primitive("nll_sum_transpose")


@nll_sum_transpose.def_abstract_eval
def _nll_sum_transpose_shape(ct: ShapeDtype, target: ShapeDtype, *, classes: int, scale: float) -> ShapeDtype:
    check_dtype("nll_sum_transpose", ct, FLOATS)
    if ct.ndim != 0:
        raise RuntimeError(f"nll_sum_transpose(): expected a 0-d cotangent, got {tuple(ct.shape)}")
    if target.ndim != 1:
        raise RuntimeError(f"nll_sum_transpose(): expected a 1-d target, got {tuple(target.shape)}")
    _check_rows("nll_sum_transpose", target, target.shape[0])  # its dtype: its shape is (rows,) by now
    return ShapeDtype((target.shape[0], classes), ct.dtype)


nll_sum_transpose.def_impl(cpu.nll_sum_transpose)
nll_sum_transpose.def_impl(kernel("index", "nll_sum_transpose"), device="cuda")
nll_sum_transpose.def_jvp(
    lambda dct, ct, target, out, *, classes, scale: nll_sum_transpose.bind(dct, target, classes=classes,
                                                                          scale=scale),
    None,
)
nll_sum_transpose.def_transpose(
    lambda ct_out, ct, target, *, classes, scale: [nll_sum.bind(ct_out, target, scale=scale), None],
    linear_in=(0,),
)


def _nll_sum_transpose_batch(args, dims, *, classes, scale):  # noqa: ANN001, ANN202
    size = batch_size(args, dims)
    ct, target = (at_front(a, d, size) for a, d in zip(args, dims))
    hot = ops.eq(ops.unsqueeze(target, 2), ops.arange(classes, device=target.device)).to(ct.dtype)
    return hot * ops.reshape(ct * scale, (size, 1, 1)), 0


nll_sum_transpose.def_batch(_nll_sum_transpose_batch)
