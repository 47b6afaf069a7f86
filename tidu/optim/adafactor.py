"""Adafactor (Shazeer and Stern), PyTorch 2.13's variant: factored second moments for matrices."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..ops.metadata import finfo
from ..tensor import Tensor
from .optimizer import Optimizer, buffer, lerp_, new_step, next_step, state_like


class Adafactor(Optimizer):
    """Adafactor as PyTorch's ``torch.optim.Adafactor``; for step ``t``::

        beta2_t = 1 - t**beta2_decay;  rho = min(lr, 1 / sqrt(t))
        alpha = max(eps2, rms(param)) * rho
        param *= 1 - lr * weight_decay
        matrices (the last two dims):  R = lerp(R, mean(g**2, -1), 1 - beta2_t)
                                       C = lerp(C, mean(g**2, -2), 1 - beta2_t)
                                       v = R @ C / max(mean(R, -2), eps1)
        vectors and scalars:           v = lerp(v, g**2, 1 - beta2_t)
        u = g / sqrt(max(v, eps1**2));  param -= alpha / max(1, rms(u) / d) * u

    Args:
        params: tensors or parameter groups.
        lr: learning rate, the cap on the relative step ``rho`` (default 1e-2).
        beta2_decay: the exponent of the second-moment decay (default -0.8, must be <= 0).
        eps: ``(eps1, eps2)``: eps1 (default ``None``: the dtype's machine epsilon) guards
            the variance, eps2 (default 1e-3) the smallest parameter scale.
        d: the clipping threshold of the update's RMS (default 1.0).
        weight_decay: decoupled weight decay (default 0).
        maximize: ascend the objective instead.

    State: ``step`` (a float32 scalar tensor), and ``row_var``/``col_var`` for tensors of two
    or more dims, ``variance`` for the others. As PyTorch, ``eps1=None`` takes the machine
    epsilon of the first parameter of a group that has a gradient, for the whole group.

    >>> import tidu
    >>> w = tidu.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    >>> opt = tidu.optim.Adafactor([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([[ 0.9044, -1.7067],
            [ 2.7892,  0.4461]], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: tuple[float | None, float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        self._eps1: dict[int, float] = {}  # a group's eps1 when its eps[0] is None (see the class docstring)
        return super().step(closure)

    def _update(self, param: Any, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = new_step()
            if grad.ndim > 1:
                state["row_var"] = state_like(grad[..., :1])
                state["col_var"] = state_like(grad[..., :1, :])
            else:
                state["variance"] = state_like(grad)
        lr, d, weight_decay = float(group["lr"]), group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = self._eps1.setdefault(id(group), _eps_of(param))
        step = next_step(state)
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step**0.5))
        alpha = max(eps2, _norm(param) / (_numel(param) ** 0.5)) * rho_t
        if weight_decay != 0:
            param *= 1 - lr * weight_decay
        if grad.ndim > 1:
            row_var, col_var = buffer(state["row_var"]), buffer(state["col_var"])
            lerp_(row_var, _norm_sq(grad, -1) / grad.shape[-1], one_minus_beta2_t)
            lerp_(col_var, _norm_sq(grad, -2) / grad.shape[-2], one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate /= _clamp_min(_mean(row_var, -2), eps1)
        else:
            variance = buffer(state["variance"])
            lerp_(variance, grad * grad, one_minus_beta2_t)
            var_estimate = variance
        update = grad / _sqrt(_clamp_min(var_estimate, eps1 * eps1))
        denom = max(1.0, _norm(update) / ((_numel(update) ** 0.5) * d))
        param -= (alpha / denom) * update


# the helpers take numpy arrays on the CPU, detached tensors on the GPU (optimizer.buffer)
def _eps_of(x: Any) -> float:
    """The machine epsilon of ``x``'s dtype (bfloat16's too: numpy has none)."""
    return finfo(x.dtype).eps if isinstance(x, Tensor) else float(np.finfo(x.dtype).eps)


def _numel(x: Any) -> int:
    return x.numel() if isinstance(x, Tensor) else x.size


def _norm(x: Any) -> float:
    return float(x.norm()) if isinstance(x, Tensor) else float(np.sqrt(np.vdot(x, x)))


def _norm_sq(x: Any, axis: int) -> Any:
    """``norm(x, dim=axis, keepdim=True) ** 2``, as PyTorch rounds it (the square of the norm)."""
    if isinstance(x, Tensor):
        return (x * x).sum(dim=axis, keepdim=True).sqrt().square()
    return np.square(np.sqrt(np.sum(x * x, axis=axis, keepdims=True)))


def _mean(x: Any, axis: int) -> Any:
    return x.mean(dim=axis, keepdim=True) if isinstance(x, Tensor) else x.mean(axis=axis, keepdims=True)


def _clamp_min(x: Any, low: float) -> Any:
    return x.clamp(min=low) if isinstance(x, Tensor) else np.maximum(x, x.dtype.type(low))


def _sqrt(x: Any) -> Any:
    return x.sqrt() if isinstance(x, Tensor) else np.sqrt(x)
