"""Helpers shared by the distributions: broadcasting parameters, the probs/logits conversions,
sums over rightmost dimensions and host draws wrapped as tensors."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

import tidu
from tidu.ops import creation


def broadcast_all(*values: Any) -> tuple[Any, ...]:
    """The tensors and numbers in ``values`` as tensors of one broadcast shape; numbers take the
    dtype and device of the first tensor, or the default dtype."""
    like = next((v for v in values if isinstance(v, tidu.Tensor)), None)
    if like is None:
        values = tuple(tidu.tensor(float(v)) for v in values)
    else:
        values = tuple(v if isinstance(v, tidu.Tensor) else tidu.tensor(float(v), dtype=like.dtype, device=like.device)
                       for v in values)
    return tuple(tidu.broadcast_tensors(*values))


def as_tensor(value: Any) -> Any:
    """A tensor of ``value`` (numbers take the default dtype)."""
    return value if isinstance(value, tidu.Tensor) else tidu.tensor(float(value))


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number)


def _clamp_probs(probs: Any) -> Any:
    eps = tidu.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Any, is_binary: bool = False) -> Any:
    """Logits of ``probs`` (clamped away from 0 and 1): log-odds when binary, else log-probabilities."""
    clamped = _clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits: Any, is_binary: bool = False) -> Any:
    """Probabilities of ``logits``: the sigmoid when binary, else the softmax over the last dimension."""
    return logits.sigmoid() if is_binary else tidu.softmax(logits, -1)


def sum_rightmost(value: Any, dim: int) -> Any:
    """``value`` summed over its ``dim`` rightmost dimensions."""
    return value.reshape(*value.shape[:-dim], -1).sum(-1) if dim > 0 else value


def trace_xxt(x: Any) -> Any:
    """``trace(X X^T)``: the sum of squares over the last two dimensions."""
    return (x ** 2).flatten(-2).sum(-1)


def one_hot(indices: Any, num_classes: int, like: Any) -> Any:
    """Indicator vectors of ``indices`` in the dtype and on the device of ``like``."""
    classes = tidu.arange(num_classes, device=indices.device)
    return (indices.unsqueeze(-1) == classes).to(like.dtype)


def from_host(draws: np.ndarray, like: Any) -> Any:
    """Host ``draws`` as a tensor of ``like``'s dtype and device."""
    return tidu.tensor(np.asarray(draws), dtype=like.dtype, device=like.device)


def host(value: Any) -> np.ndarray:
    """``value``'s numbers on the host, detached, in float64."""
    return value._values().astype(np.float64)


def stream() -> np.random.Generator:
    """tidu's default random stream (seeded by ``tidu.manual_seed``)."""
    return creation._stream(None)


def tiny(like: Any) -> float:
    return float(tidu.finfo(like.dtype).tiny)
