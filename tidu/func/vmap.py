"""``vmap`` (``torch.func.vmap``): a function of one example mapped over a batch dimension.

The mechanism lives in ``batching``: batched values are ``Var`` s of a
``BatchTrace`` and every bind runs its primitive's batching rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core.primitive import Var
from ..tensor import Tensor
from . import batching
from .pytree import broadcast_prefix, flatten, unflatten

RANDOMNESS = ("error", "different", "same")


def _is_value(x: Any) -> bool:
    return isinstance(x, Tensor | Var)


def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable:
    """Map ``func`` over dimension ``in_dims`` of its inputs; outputs stacked along ``out_dims``.

    ``in_dims`` is an int (every argument), ``None`` (not mapped), or a tuple with one
    entry per positional argument, each an int, ``None`` or a pytree prefix of it.
    Nests (``vmap(vmap(f))``) and composes with the other transforms
    (``vmap(grad(f))`` gives per-example gradients). ``chunk_size`` is accepted for
    torch.func's signature: the batch always runs as one chunk. A random op inside raises
    under ``randomness='error'`` (the default, as in PyTorch); under ``'same'`` its draw is
    shared by every example; ``'different'`` (a draw per example) is not supported and raises.

    >>> import tidu
    >>> x = tidu.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tidu.func.vmap(lambda row: row @ row)(x)
    tensor([ 5., 25.])
    >>> tidu.func.vmap(lambda a, b: a * b, in_dims=(1, None))(x, tidu.tensor(10.0))
    tensor([[10., 30.],
            [20., 40.]])
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"vmap: randomness must be one of {RANDOMNESS}, got {randomness!r}")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_dims, tuple | list) and len(in_dims) != len(args):
            raise ValueError(
                f"vmap(f, in_dims={in_dims!r}, ...)(<inputs>): in_dims is not compatible with the structure "
                f"of `inputs`: in_dims has {len(in_dims)} entries, but there are {len(args)} positional inputs")
        mapped, size = [], None
        for i, arg in enumerate(args):
            leaves, spec = flatten(arg)
            dims = broadcast_prefix(in_dims[i] if isinstance(in_dims, tuple | list) else in_dims, arg,
                                    "in_dims")
            for x, d in zip(leaves, dims):
                if d is None:
                    continue
                if not isinstance(d, int):
                    raise ValueError(f"vmap: in_dims must be ints or None, got {d!r} for argument {i}")
                if not _is_value(x):
                    raise ValueError(f"vmap: argument {i} has in_dim={d} but is a {type(x).__name__}, not a "
                                     "Tensor; use in_dims=None for it")
                if not -x.ndim <= d < x.ndim:
                    raise ValueError(f"vmap: in_dim={d} does not fit argument {i} of shape {tuple(x.shape)} "
                                     f"({x.ndim} dims)")
                n = x.shape[d % x.ndim]
                if size is not None and n != size:
                    raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, "
                                     f"got sizes {size} and {n} (argument {i} of shape {tuple(x.shape)}, "
                                     f"in_dim={d})")
                size = n
            mapped.append((leaves, spec, dims))
        if size is None:
            raise ValueError("vmap: at least one argument must be mapped over (in_dims are all None)")
        trace = batching.BatchTrace(size)
        call_args = [
            unflatten(spec, [x if d is None else trace.wrap(batching.move_to_front(x, d % x.ndim))
                             for x, d in zip(leaves, dims)])
            for leaves, spec, dims in mapped
        ]
        batching.LEVELS.append(trace)
        batching.RANDOMNESS.append(randomness)
        try:
            output = func(*call_args, **kwargs)
        finally:
            batching.LEVELS.pop()
            batching.RANDOMNESS.pop()
        return _unbatch(output, trace, out_dims)

    del chunk_size
    return wrapper


def _unbatch(output: Any, trace: batching.BatchTrace, out_dims: Any) -> Any:
    leaves, spec = flatten(output)
    dims = broadcast_prefix(out_dims, output, "out_dims")
    results = []
    for o, d in zip(leaves, dims):
        if not _is_value(o):
            raise ValueError(f"vmap: the function must only return Tensors, got {type(o).__name__}")
        if d is None:
            if trace.owns(o):
                raise ValueError("vmap: out_dims=None for an output that depends on the mapped inputs")
            results.append(o)
            continue
        value = o.value if trace.owns(o) else batching.add_batch_dim(o, trace.size)
        if not -value.ndim <= d < value.ndim:
            raise ValueError(f"vmap: out_dims={d} is out of range for an output with {value.ndim - 1} dims")
        results.append(batching.move_from_front(value, d % value.ndim))
    return unflatten(spec, results)
