"""NAdam: Adam with Nesterov momentum (Dozat), with PyTorch's momentum schedule."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    adam_moments,
    add_ratio_,
    check_adam_args,
    check_nonnegative,
    decayed,
    new_step,
    next_step,
    scalar_state,
    sqrt,
    state_like,
)


class NAdam(Optimizer):
    """NAdam, PyTorch's update step for step ``t``::

        g = grad (+ weight_decay * param)       (or, decoupled: param *= 1 - lr * weight_decay)
        mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay));  mu_product *= mu_t
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        param -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
        param -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 2e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator (default 1e-8).
        weight_decay: default 0.
        momentum_decay: how fast the momentum schedule reaches beta1 (default 4e-3).
        decoupled_weight_decay: decay the parameters (NAdamW) instead of the gradient's L2 term.
        maximize: ascend the objective instead.

    State: ``step`` and ``mu_product`` (float32 scalar tensors), ``exp_avg``, ``exp_avg_sq``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8944, -0.8944], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        check_nonnegative("momentum_decay", momentum_decay)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
            capturable=capturable, differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = new_step()
            state["mu_product"] = scalar_state(1.0)  # PyTorch's order of the state's entries
            state["exp_avg"] = state_like(param)
            state["exp_avg_sq"] = state_like(param)
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        momentum_decay = group["momentum_decay"]
        step = next_step(state)
        grad = decayed(grad, param, lr, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
        mu_product_t = state["mu_product"]._data
        mu_product_t *= mu_product_t.dtype.type(mu)  # in its own dtype: float32, or a loaded state's
        mu_product = float(mu_product_t)
        exp_avg, exp_avg_sq = adam_moments(state, grad, beta1, beta2)
        denom = sqrt(exp_avg_sq / (1 - beta2**step))
        denom += eps
        add_ratio_(param, -lr * (1.0 - mu) / (1.0 - mu_product), grad, denom)
        add_ratio_(param, -lr * mu_next / (1.0 - mu_product * mu_next), exp_avg, denom)
