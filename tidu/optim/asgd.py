"""ASGD: averaged stochastic gradient descent (Polyak and Juditsky)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    assign_,
    buffer,
    check_lr,
    check_nonnegative,
    l2_decayed,
    new_step,
    next_step,
    scalar_state,
    state_like,
)


class ASGD(Optimizer):
    """ASGD, PyTorch's update step for step ``t``::

        g = grad (+ weight_decay * param)
        param *= 1 - lambd * eta;  param -= eta * g
        ax += mu * (param - ax)          (ax = param while mu is 1)
        eta = lr / (1 + lambd * lr * t)**alpha;  mu = 1 / max(1, t - t0)

    ``ax`` is the running average of the parameters, to be used in their place after training.

    Args:
        params: tensors or parameter groups.
        lr: learning rate (default 1e-2).
        lambd: decay term (default 1e-4).
        alpha: power of the ``eta`` schedule (default 0.75).
        t0: the step at which averaging starts (default 1e6).
        weight_decay: L2 penalty (default 0).
        maximize: ascend the objective instead.

    State: ``step``, ``eta``, ``mu`` (float32 scalar tensors), ``ax``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.ASGD([w], lr=0.1, t0=1)
    >>> for _ in range(4):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w, opt.state[w]["ax"]
    (tensor([ 0.4096, -0.4096], requires_grad=True), tensor([ 0.4608, -0.4608]))
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_lr(lr)
        check_nonnegative("weight_decay", weight_decay)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, lambd = float(group["lr"]), group["lambd"]
        if not state:
            state["step"] = new_step()
            state["eta"] = scalar_state(lr)
            state["mu"] = scalar_state(1.0)
            state["ax"] = state_like(param)
        step = next_step(state)
        grad = l2_decayed(grad, param, group["weight_decay"])
        eta_t, mu_t = state["eta"]._data, state["mu"]._data
        eta = float(eta_t)
        param *= 1 - lambd * eta
        param += -eta * grad
        ax = buffer(state["ax"])
        mu = float(mu_t)
        if mu != 1:
            ax += (param - ax) * mu
        else:
            assign_(ax, param)
        # PyTorch makes both as float32 tensors, then copies them into the state (float64 once loaded)
        eta_t[...] = np.float32(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        mu_t[...] = np.float32(1 / max(1, step - group["t0"]))
