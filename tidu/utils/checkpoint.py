"""``tidu.utils.checkpoint``: activation checkpointing. The checkpointed part's intermediate
values are not kept for the backward but computed again there: memory traded for a second
forward. PyTorch's two variants:

- ``use_reentrant=False`` (recommended): the forward is recorded as usual, but every value its
  backward would read is packed as a place in a list (``autograd.graph.saved_tensors_hooks``);
  the first unpack runs the function again and the backward reads the values that run saved.
  The graph is the function's own: ``autograd.grad`` of the parameters, ``backward(inputs=...)``
  and a double backward work through it.
- ``use_reentrant=True``: the forward runs without recording, inside an ``autograd.Function``
  whose backward runs it again and calls ``backward`` on it, into the inputs' and the
  parameters' ``.grad``.

>>> import tidu
>>> from tidu.utils.checkpoint import checkpoint
>>> x = tidu.tensor([1.0, 2.0], requires_grad=True)
>>> checkpoint(lambda t: (t * t).sin(), x, use_reentrant=False).sum().backward()
>>> x.grad
tensor([ 1.0806, -2.6146])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from ..autograd.backward import backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks
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


class _Recomputed:
    """The values a checkpointed call's backward reads, by place (``use_reentrant=False``): the
    pack hook numbers them; the first unpack runs the function again (random stream as it was),
    saving through a hook that keeps them in the same order, and each unpack reads its own."""

    def __init__(self, run: Callable, args: Sequence[Any], rng: Any) -> None:
        self.run, self.args, self.rng = run, args, rng
        self.count = 0
        self.values: list[Any] | None = None

    def pack(self, tensor: Any) -> int:
        self.count += 1
        return self.count - 1

    def unpack(self, place: int) -> Any:
        if self.values is None:
            values: list[Any] = []
            with fork_rng(enabled=self.rng is not None), grad_mode.enable_grad(), \
                    saved_tensors_hooks(lambda t: values.append(t) or t, lambda t: t):
                if self.rng is not None:
                    set_rng_state(self.rng)
                self.run(*self.args)
            if len(values) != self.count:
                raise RuntimeError(
                    f"torch.utils.checkpoint: the recomputed forward saved {len(values)} tensors for backward where "
                    f"the original forward saved {self.count}: the checkpointed function must compute the same "
                    "operations when run again"
                )
            self.values = values
        return self.values[place]


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn: Any = None,
               determinism_check: str = "default", debug: bool = False, preserve_rng_state: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, its intermediate values not kept for the backward but
    recomputed there (with the random stream as it was, unless ``preserve_rng_state=False``, so
    dropout draws the same masks). Values and gradients are ``function``'s own; the outputs must be
    tensors or a tuple of them. ``use_reentrant`` picks PyTorch's variant (the module's
    docstring); left out, it warns as PyTorch does and takes the reentrant one. ``context_fn``,
    ``determinism_check`` and ``debug`` are accepted.

    >>> import tidu
    >>> from tidu.utils.checkpoint import checkpoint
    >>> layer = tidu.nn.Linear(2, 2)
    >>> y = checkpoint(layer, tidu.ones(1, 2, requires_grad=True), use_reentrant=False)
    >>> y.shape
    tidu.Size([1, 2])
    """
    if use_reentrant is None:
        warnings.warn(_EXPLICIT, UserWarning, stacklevel=2)
        use_reentrant = True  # PyTorch's default still
    run = (lambda *a: function(*a, **kwargs)) if kwargs else function
    if not grad_mode.is_grad_enabled():
        return run(*args)
    if use_reentrant:
        return _Checkpoint.apply(run, preserve_rng_state, *args)
    recomputed = _Recomputed(run, args, get_rng_state() if preserve_rng_state else None)
    with saved_tensors_hooks(recomputed.pack, recomputed.unpack):
        return run(*args)


_EXPLICIT = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
             "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
             "recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. "
             "Refer to docs for more details on the differences between the two variants.")


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

