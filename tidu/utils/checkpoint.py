"""``tidu.utils.checkpoint``: activation checkpointing. The forward runs without recording, and
the backward runs it again, recorded, to differentiate it: memory for the checkpointed part's
intermediate values is traded for a second forward.

>>> import tidu
>>> from tidu.utils.checkpoint import checkpoint
>>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
>>> checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False).sum().backward()
>>> x.grad
tensor([ 1.0806, -2.6146])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..autograd.backward import backward
from ..autograd.function import Function
from ..core import grad_mode
from ..random import fork_rng, get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: Any, run: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        ctx.run = run
        ctx.rng = get_rng_state() if preserve_rng_state else None
        ctx.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.others = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with grad_mode.no_grad():
            out = run(*args)
        ctx.single = isinstance(out, Tensor)
        return out

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        saved = ctx.saved_tensors
        inputs = [t.detach().requires_grad_(t.requires_grad) for t in saved]
        args = list(ctx.others)
        for slot, t in zip(ctx.tensor_slots, inputs):
            args[slot] = t
        with fork_rng(enabled=ctx.rng is not None), grad_mode.enable_grad():
            if ctx.rng is not None:
                set_rng_state(ctx.rng)
            out = ctx.run(*args)
        outs = [out] if ctx.single else list(out)
        pairs = [(o, g) for o, g in zip(outs, grad_outputs) if isinstance(o, Tensor) and o.requires_grad]
        if pairs:  # into the inputs' and every other leaf's (the parameters') ``.grad``, as PyTorch's
            backward([o for o, _ in pairs], [g for _, g in pairs])
        by_slot = dict(zip(ctx.tensor_slots, (t.grad for t in inputs)))
        return (None, None, *[by_slot.get(i) for i in range(len(args))])


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, its intermediate values not kept for the backward but
    recomputed there (with the random stream as it was, unless ``preserve_rng_state=False``, so
    dropout draws the same masks). Values and gradients are ``function``'s own; the outputs must be
    tensors or a tuple of them. ``use_reentrant`` and the other options are accepted; both of
    PyTorch's variants give these results.

    >>> import tidu
    >>> from tidu.utils.checkpoint import checkpoint
    >>> layer = tidu.nn.Linear(2, 2)
    >>> y = checkpoint(layer, tidu.ones(1, 2, requires_grad=True), use_reentrant=False)
    >>> y.shape
    tidu.Size([1, 2])
    """
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not grad_mode.is_grad_enabled():
        return run(*args)
    return _Checkpoint.apply(run, preserve_rng_state, *args)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,  # noqa: A002
                          **kwargs: Any) -> Any:
    """Run the modules of ``functions`` (a ``Sequential`` or a list) in ``segments`` checkpointed
    pieces, the last one recorded as usual (as PyTorch does).

    >>> import tidu
    >>> from tidu.utils.checkpoint import checkpoint_sequential
    >>> net = tidu.nn.Sequential(tidu.nn.Linear(2, 2), tidu.nn.Tanh(), tidu.nn.Linear(2, 1))
    >>> checkpoint_sequential(net, 2, tidu.ones(3, 2), use_reentrant=False).shape
    tidu.Size([3, 1])
    """
    modules: Sequence[Any] = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = len(modules) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        piece = modules[start:end + 1]

        def run(x: Any, piece: Sequence[Any] = piece) -> Any:
            for m in piece:
                x = m(x)
            return x

        input = checkpoint(run, input, use_reentrant=use_reentrant, **kwargs)  # noqa: A001
    for m in modules[end + 1:]:
        input = m(input)  # noqa: A001
    return input

