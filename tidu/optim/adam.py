"""Adam and AdamW (Adam with decoupled weight decay), with AMSGrad."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    adam_moments,
    add_ratio_,
    buffer,
    check_adam_args,
    decayed,
    maximum_,
    new_state,
    next_step,
    sqrt,
)


class Adam(Optimizer):
    """Adam (Kingma and Ba), PyTorch's update step for step::

        g = grad (+ weight_decay * param)        (Adam: L2 penalty in the gradient)
        param *= 1 - lr * weight_decay           (AdamW: decoupled decay instead)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        param -= lr / (1 - beta1**t) * m / (sqrt(v_hat) / sqrt(1 - beta2**t) + eps)

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-3).
        betas: coefficients of the running averages of the gradient and its square.
        eps: added to the denominator.
        weight_decay: L2 penalty (default 0).
        amsgrad: keep the maximum of the second moment (AMSGrad).
        maximize: ascend the objective instead.
        decoupled_weight_decay: AdamW's decay (``AdamW`` sets it).

    State: ``step`` (a float32 scalar tensor), ``exp_avg``, ``exp_avg_sq`` and, with
    amsgrad, ``max_exp_avg_sq``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
            foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            new_state(state, param, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if group["amsgrad"] else ()))
        lr, (beta1, beta2), eps = float(group["lr"]), group["betas"], group["eps"]
        step = next_step(state)
        exp_avg, exp_avg_sq = adam_moments(state, decayed(grad, param, lr, group), beta1, beta2)
        if group["amsgrad"]:
            second = buffer(state["max_exp_avg_sq"])
            maximum_(second, exp_avg_sq)
        else:
            second = exp_avg_sq
        denom = sqrt(second)
        denom /= (1 - beta2**step) ** 0.5
        denom += eps
        add_ratio_(param, -lr / (1 - beta1**step), exp_avg, denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter): ``param *= 1 - lr * weight_decay``
    before the Adam step, in place of Adam's L2 term. Default ``weight_decay=1e-2``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([ 0.8500, -0.8500], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused, decoupled_weight_decay=True,
        )

