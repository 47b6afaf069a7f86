"""Module backward hooks (PyTorch's ``torch.utils.hooks.BackwardHook``) on ``autograd.Function``.

A module call with full backward hooks or backward pre-hooks passes its tensor inputs, and then
its tensor outputs, through an identity ``Function`` (``BackwardHookFunction``). Its backward on
the outputs' side sees the gradients of the outputs (``grad_output``: the pre-hooks run there and
may replace them); its backward on the inputs' side sees the gradients of the inputs
(``grad_input``: the hooks run there, with the ``grad_output`` kept from the first, and may
replace them). Nothing else changes: a call without such hooks records no extra node.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...autograd.function import Function
from ...core import grad_mode
from ...core.inplace import forbid_inplace
from ...tensor import Tensor

_INPLACE_MESSAGE = (
    "Output {} of BackwardHookFunction is a view and is being modified inplace. This view was created inside a "
    "custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would "
    "override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior "
    "is forbidden. You can fix this by cloning the output of the custom Function."
)


class BackwardHookFunction(Function):
    """Identity on tensors; its backward hands the gradients to ``callback`` (which may replace them)."""

    @staticmethod
    def forward(ctx: Any, callback: Any, materialize: bool, *args: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        ctx.callback = callback
        ctx.set_materialize_grads(materialize)
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        return (None, None, *ctx.callback(grads))


class BackwardHook:
    """The backward hooks of one module call: ``setup_input_hook(args)`` before ``forward``,
    ``setup_output_hook(result)`` after it."""

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.module, self.user_hooks, self.user_pre_hooks = module, user_hooks, user_pre_hooks
        self.grad_outputs: tuple | None = None
        self.n_outputs = self.n_inputs = -1
        self.output_tensors_index: list[int] | None = None
        self.input_tensors_index: list[int] | None = None

    @staticmethod
    def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple:
        res: list[Any] = [None] * size
        for i, v in zip(indices, values):
            res[i] = v
        return tuple(res)

    def _apply_on_tensors(self, callback: Any, materialize: bool, args: tuple) -> tuple[tuple, list[int] | None]:
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in index]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(callback, materialize, *tensors)
        for n, t in enumerate(new):
            forbid_inplace(t, _INPLACE_MESSAGE.format(n))
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def _input_grads(self, grads: tuple) -> tuple:
        if self.grad_outputs is None:  # reached without passing the outputs (a double backward)
            return grads
        res = self._pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _output_grads(self, grads: tuple) -> tuple:
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grads, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            replaced = pre_hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(replaced)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = replaced
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: the hooks run here
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                          "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=2)
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def setup_input_hook(self, args: tuple) -> tuple:
        res, index = self._apply_on_tensors(self._input_grads, True, args)
        self.n_inputs, self.input_tensors_index = len(args), index
        return res

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        args = (result,) if single else result
        res, index = self._apply_on_tensors(self._output_grads, False, args)
        self.n_outputs, self.output_tensors_index = len(args), index
        return res[0] if single else res
