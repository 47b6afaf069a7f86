"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, add_scaled_, buffer, check_lr, check_nonnegative, copy_state


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's update step for step::

        g = grad (+ weight_decay * param)
        buf = g                                   (first step)
        buf = momentum * buf + (1 - dampening) * g   (later steps)
        g = g + momentum * buf if nesterov else buf   (when momentum != 0)
        param -= lr * g

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        momentum, dampening, weight_decay: as above (default 0).
        nesterov: Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: ascend the objective instead.

    State: ``momentum_buffer`` (only when momentum is not 0).

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4600, -0.4600], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr(lr)
        check_nonnegative("momentum", momentum)
        check_nonnegative("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
            maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, momentum, weight_decay = float(group["lr"]), group["momentum"], group["weight_decay"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                state["momentum_buffer"] = copy_state(grad)
                buf_data = buffer(state["momentum_buffer"])
            else:
                buf_data = buffer(buf)
                buf_data *= momentum
                buf_data += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf_data if group["nesterov"] else buf_data
        add_scaled_(param, -lr, grad)
