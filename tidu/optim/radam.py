"""RAdam: Adam with a rectified adaptive learning rate (Liu et al.)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    adam_moments,
    check_adam_args,
    decayed,
    new_state,
    next_step,
    sqrt,
)


class RAdam(Optimizer):
    """RAdam, PyTorch's update step for step ``t``::

        g = grad (+ weight_decay * param)       (or, decoupled: param *= 1 - lr * weight_decay)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        rho_t > 5:  param -= m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * rect(rho_t)
        otherwise:  param -= m_hat * lr

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator (default 1e-8).
        weight_decay: default 0.
        decoupled_weight_decay: decay the parameters (as AdamW) instead of the gradient's L2 term.
        maximize: ascend the objective instead.

    State: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8000, -0.8000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
            capturable=capturable, decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            new_state(state, param, "exp_avg", "exp_avg_sq")
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        step = next_step(state)
        exp_avg, exp_avg_sq = adam_moments(state, decayed(grad, param, lr, group), beta1, beta2)
        bias_correction2 = 1 - beta2**step
        update = exp_avg / (1 - beta1**step)
        update *= lr
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            root = sqrt(exp_avg_sq)
            root += eps
            update *= (1 / root) * math.sqrt(bias_correction2)  # PyTorch's scalar / tensor: reciprocal, then scale
            update *= rect
        param -= update
