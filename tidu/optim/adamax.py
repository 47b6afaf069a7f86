"""Adamax: Adam with the infinity norm (Kingma and Ba)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    absolute,
    add_ratio_,
    buffer,
    check_adam_args,
    l2_decayed,
    lerp_,
    maximum_,
    new_state,
    next_step,
)


class Adamax(Optimizer):
    """Adamax, PyTorch's update step for step ``t``::

        g = grad (+ weight_decay * param)
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        param -= lr / (1 - beta1**t) * m / u

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 2e-3).
        betas: coefficients of the running average of the gradient and of the infinity norm.
        eps: added to ``|g|`` (default 1e-8).
        weight_decay: L2 penalty (default 0).
        maximize: ascend the objective instead.

    State: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_inf``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            new_state(state, param, "exp_avg", "exp_inf")
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        step = next_step(state)
        grad = l2_decayed(grad, param, group["weight_decay"])
        exp_avg, exp_inf = buffer(state["exp_avg"]), buffer(state["exp_inf"])
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        norm = absolute(grad)
        norm += eps
        maximum_(exp_inf, norm)
        add_ratio_(param, -lr / (1 - beta1**step), exp_avg, exp_inf)
