"""Adadelta (Zeiler): step sizes from running averages of squared gradients and updates."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    average_square_,
    buffer,
    check_eps,
    check_lr,
    check_nonnegative,
    l2_decayed,
    new_state,
    next_step,
    sqrt,
)


class Adadelta(Optimizer):
    """Adadelta, PyTorch's update step::

        g = grad (+ weight_decay * param)
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        param -= lr * delta

    Args:
        params: tensors or parameter groups.
        lr: scales ``delta`` (default 1.0).
        rho: smoothing constant of both running averages, in [0, 1] (default 0.9).
        eps: inside both square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        maximize: ascend the objective instead.

    State: ``step`` (a float32 scalar tensor), ``square_avg`` (v), ``acc_delta`` (u).

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.Adadelta([w], lr=100.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.6838, -0.6838], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_eps(eps)
        check_nonnegative("weight_decay", weight_decay)
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
            foreach=foreach, differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            new_state(state, param, "square_avg", "acc_delta")
        lr, rho, eps = float(group["lr"]), group["rho"], group["eps"]
        next_step(state)
        grad = l2_decayed(grad, param, group["weight_decay"])
        square_avg, acc_delta = buffer(state["square_avg"]), buffer(state["acc_delta"])
        average_square_(square_avg, grad, rho)
        delta = sqrt(acc_delta + eps)
        delta /= sqrt(square_avg + eps)
        delta *= grad
        average_square_(acc_delta, delta, rho)
        param += -lr * delta
