"""Adagrad (Duchi et al.), with learning-rate decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    add_ratio_,
    buffer,
    check_lr,
    check_nonnegative,
    l2_decayed,
    new_step,
    next_step,
    sqrt,
    state_like,
)


class Adagrad(Optimizer):
    """Adagrad, PyTorch's update step for step ``t``::

        g = grad (+ weight_decay * param)
        clr = lr / (1 + (t - 1) * lr_decay)
        sum += g * g
        param -= clr * g / (sqrt(sum) + eps)

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-2).
        lr_decay, weight_decay: default 0.
        initial_accumulator_value: the starting value of ``sum`` (default 0).
        eps: added to the denominator (default 1e-10).
        maximize: ascend the objective instead.

    State (made at construction, as PyTorch does): ``step``, ``sum``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        check_nonnegative("lr_decay", lr_decay)
        check_nonnegative("weight_decay", weight_decay)
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(
            lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
            differentiable=differentiable, fused=fused,
        )
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], buffer(p), group)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            _init_state(state, param, group)
        step = next_step(state)
        grad = l2_decayed(grad, param, group["weight_decay"])
        clr = float(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        state_sum = buffer(state["sum"])
        state_sum += grad * grad
        std = sqrt(state_sum)
        std += group["eps"]
        add_ratio_(param, -clr, grad, std)


def _init_state(state: dict[str, Any], param: np.ndarray, group: dict[str, Any]) -> None:
    state["step"] = new_step()
    state["sum"] = state_like(param, group["initial_accumulator_value"])
