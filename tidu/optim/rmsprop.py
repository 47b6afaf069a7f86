"""RMSprop (Hinton), with momentum and the centered variant."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    add_ratio_,
    average_square_,
    buffer,
    check_lr,
    check_nonnegative,
    l2_decayed,
    lerp_,
    new_state,
    next_step,
    sqrt,
)


class RMSprop(Optimizer):
    """RMSprop, PyTorch's update step for step::

        g = grad (+ weight_decay * param)
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - g_avg**2) + eps  with g_avg = lerp(g_avg, g, 1 - alpha)   (centered)
        avg = sqrt(v) + eps                                                       (otherwise)
        buf = momentum * buf + g / avg;  param -= lr * buf      (momentum > 0)
        param -= lr * g / avg                                    (otherwise)

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-2).
        alpha: smoothing constant (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay, momentum: default 0.
        centered: normalize by an estimate of the gradient's variance.
        maximize: ascend the objective instead.

    State: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0), ``grad_avg`` (centered).

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        check_nonnegative("momentum", momentum)
        check_nonnegative("weight_decay", weight_decay)
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
            capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            new_state(state, param, "square_avg", *(("momentum_buffer",) if group["momentum"] > 0 else ()),
                      *(("grad_avg",) if group["centered"] else ()))
        lr, alpha, momentum = float(group["lr"]), group["alpha"], group["momentum"]
        next_step(state)
        grad = l2_decayed(grad, param, group["weight_decay"])
        square_avg = buffer(state["square_avg"])
        average_square_(square_avg, grad, alpha)
        if group["centered"]:
            grad_avg = buffer(state["grad_avg"])
            lerp_(grad_avg, grad, 1 - alpha)
            avg = sqrt(square_avg + (-1 * grad_avg) * grad_avg)
        else:
            avg = sqrt(square_avg)
        avg += group["eps"]
        if momentum > 0:
            buf = buffer(state["momentum_buffer"])
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            add_ratio_(param, -lr, grad, avg)
