"""Rprop: resilient backpropagation, per-element step sizes driven by the gradient's sign."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import (
    Optimizer,
    assign_,
    buffer,
    check_lr,
    clamp_,
    new_step,
    next_step,
    select,
    sign,
    state_like,
)


class Rprop(Optimizer):
    """Rprop, PyTorch's update step::

        s = sign(g * prev)
        step_size = clamp(step_size * (etaplus if s > 0 else etaminus if s < 0 else 1), *step_sizes)
        g = 0 where s < 0                      (a sign change: skip this element once)
        param -= sign(g) * step_size;  prev = g

    Args:
        params: tensors or parameter groups.
        lr: the initial step size of every element (default 1e-2).
        etas: ``(etaminus, etaplus)``, the step-size factors on a sign change and on a kept
            sign, with ``0 < etaminus < 1 < etaplus`` (default ``(0.5, 1.2)``).
        step_sizes: the least and the greatest step size (default ``(1e-6, 50)``).
        maximize: ascend the objective instead.

    State: ``step`` (a float32 scalar tensor), ``prev``, ``step_size``.

    >>> import tidu
    >>> w = tidu.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = tidu.optim.Rprop([w], lr=0.25)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.4500, -0.4500], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
            differentiable=differentiable, capturable=capturable,
        )
        super().__init__(params, defaults)

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = new_step()
            state["prev"] = state_like(param)
            state["step_size"] = state_like(param, float(group["lr"]))
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        next_step(state)
        prev, step_size = buffer(state["prev"]), buffer(state["step_size"])
        agreement = sign(grad * prev)
        factor = select(agreement > 0, etaplus, select(agreement < 0, etaminus, select(agreement == 0, 1.0, agreement)))
        step_size *= factor
        clamp_(step_size, step_size_min, step_size_max)
        grad = select(factor == etaminus, 0.0, grad)
        param += (-1 * sign(grad)) * step_size
        assign_(prev, grad)
