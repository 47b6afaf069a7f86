"""Muon: momentum orthogonalized by a Newton-Schulz iteration, for 2-D parameters."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..core import dtypes
from ..tensor import Tensor, of_array
from .optimizer import Optimizer, state_like

# Keller Jordan's quintic: the coefficients, steps and norm floor PyTorch defaults to
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
NS_STEPS = 5
EPS = 1e-7


class Muon(Optimizer):
    """Muon (Keller Jordan), PyTorch 2.13's update step::

        buf = lerp(buf, g, 1 - momentum)
        u = lerp(g, buf, momentum) if nesterov else buf
        O = NS(u)                                (in bfloat16, ``ns_steps`` iterations)
        param *= 1 - lr * weight_decay
        param -= adjusted_lr * O

    ``NS`` scales ``u`` (transposed when it has more rows than columns) to Frobenius norm 1
    (at least ``eps``), then repeats ``X = a X + (b G + c G @ G) @ X`` with ``G = X @ X.T``: its
    singular values go to about 1 and its singular vectors stay. ``adjusted_lr`` is
    ``lr * sqrt(max(1, A / B))`` for an ``A x B`` parameter (``adjust_lr_fn`` None or
    ``"original"``) or ``0.2 * lr * sqrt(max(A, B))`` (``"match_rms_adamw"``).

    Args:
        params: 2-D tensors or parameter groups (biases and embeddings want another optimizer).
        lr: learning rate (default 1e-3).
        weight_decay: decoupled weight decay (default 0.1).
        momentum: momentum factor (default 0.95).
        nesterov: Nesterov momentum (default True).
        ns_coefficients: ``(a, b, c)`` of the iteration (default ``(3.4445, -4.775, 2.0315)``).
        eps: the least norm the update is divided by (default 1e-7).
        ns_steps: iterations, fewer than 100 (default 5).
        adjust_lr_fn: ``None``, ``"original"`` or ``"match_rms_adamw"``.

    State: ``momentum_buffer``. Each bfloat16 result of ``NS`` is computed in float32 and rounded
    once, as PyTorch's CPU kernels do; their matrix products sum in another order, so a value
    within float32 rounding of a bfloat16 tie may round the other way (seen on matrices of a
    dozen rows and more), and the iteration carries that on as a few bfloat16 ulps.

    >>> import tidu
    >>> w = tidu.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> opt = tidu.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([[1.0684, 1.9184],
            [2.9266, 3.9753]], requires_grad=True)
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = NS_COEFFICIENTS,
        eps: float = EPS,
        ns_steps: int = NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:  # as PyTorch, only the groups given here are checked
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _update(self, param: Any, grad: Any, state: dict[str, Any], group: dict[str, Any]) -> None:
        param, grad = _tensor(param), _tensor(grad)
        if param.dtype.is_complex:
            raise RuntimeError("Muon does not support complex parameters")
        if not state:
            state["momentum_buffer"] = state_like(grad)
        if grad.ndim != 2:
            raise ValueError("Param gradient must be a 2D matrix")
        lr, momentum = group["lr"], group["momentum"]  # a tensor lr stays one: float32 products, as PyTorch's
        buf = state["momentum_buffer"].detach()
        buf.lerp_(grad, 1 - momentum)
        update = grad.lerp(buf, momentum) if group["nesterov"] else buf
        ortho = orthogonalized(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        param.mul_(float(1 - lr * group["weight_decay"]))
        param.add_(ortho, alpha=-float(adjusted_lr(lr, group["adjust_lr_fn"], tuple(param.shape))))


def _tensor(x: Any) -> Tensor:
    """A tensor on ``_update``'s array (numpy on the CPU) sharing its memory."""
    return x if isinstance(x, Tensor) else of_array(x)


def _bfloat16(x: Tensor) -> Tensor:
    """``x`` rounded to bfloat16, kept in float32."""
    return x.to(dtypes.bfloat16).to(dtypes.float32)


def orthogonalized(update: Tensor, coefficients: tuple[float, float, float], steps: int, eps: float) -> Tensor:
    """The Newton-Schulz iteration of ``Muon`` on a 2-D ``update``: about ``U V^T`` of its SVD
    ``U S V^T`` (singular values between 0.5 and 1.5), bfloat16 values in a float32 tensor.

    >>> import tidu
    >>> orthogonalized(tidu.tensor([[3.0, 0.0], [0.0, 1.0]]), NS_COEFFICIENTS, NS_STEPS, EPS)
    tensor([[0.7500, 0.0000],
            [0.0000, 1.1328]])
    """
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    x = _bfloat16(update)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    x = _bfloat16(x / _bfloat16(_bfloat16(x.norm()).clamp(min=eps)))
    for _ in range(steps):
        gram = _bfloat16(x @ x.T)
        poly = _bfloat16(b * gram + c * (gram @ gram))
        x = _bfloat16(a * x + poly @ x)
    return x.T if tall else x


def adjusted_lr(lr: Any, adjust_lr_fn: str | None, shape: tuple[int, ...]) -> Any:
    """The learning rate for an ``A x B`` parameter that gives updates of comparable RMS.

    >>> adjusted_lr(0.1, None, (8, 2)), adjusted_lr(0.1, "match_rms_adamw", (8, 2))
    (0.2, 0.05656854249492381)
    """
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * (0.2 * math.sqrt(max(rows, cols)))
    return lr
