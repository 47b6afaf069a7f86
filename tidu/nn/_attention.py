"""Attention for ``tidu.nn.functional``: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (the computation of ``nn.MultiheadAttention``)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ops
from ..core import dtypes
from ..tensor import Tensor, placed
from . import attention
from .functional import dropout, linear, softmax

_EVERY_BACKEND = len(attention.ENABLED)


def _causal_mask(q_len: int, k_len: int, device: Any) -> Tensor:
    return placed(np.tril(np.ones((q_len, k_len), bool)), None, device)


def _safe_softmax(scores: Any) -> Any:
    """Softmax over the last dim that gives 0 (and gradient 0) on rows masked entirely to
    ``-inf``, where a plain softmax gives NaN (PyTorch's ``_safe_softmax`` of attention)."""
    if scores.device.type == "cpu":
        data = scores._values()
        dead = data.max(axis=-1, keepdims=True) == -np.inf if data.size else np.zeros(data.shape[:-1] + (1,), bool)
        if not dead.any():
            return softmax(scores, dim=-1)
        rows = Tensor(dead, dtypes.bool_)
    else:  # on the GPU the rows are found on the device: no host round trip to decide
        rows = ops.amax(scores.detach(), dim=-1, keepdim=True) == float("-inf")
    return ops.where(rows, 0.0, softmax(ops.where(rows, 0.0, scores), dim=-1))


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Any:
    """``softmax(q k^T * scale + mask) v`` over the last two dims ``(*, L, E)``, ``(*, S, E)``,
    ``(*, S, Ev)``. A boolean ``attn_mask`` marks the pairs that take part (True); a float one is
    added to the scores. ``is_causal`` masks the upper triangle. A query whose keys are all
    masked gets a zero output (and zero gradient), as PyTorch's.

    >>> import tidu
    >>> q = k = tidu.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    >>> v = tidu.tensor([[[1.0], [2.0]]])
    >>> tidu.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    tensor([[[1.0000],
             [1.6698]]])
    """
    if len(attention.ENABLED) != _EVERY_BACKEND:  # a backend switched off (``nn.attention``)
        attention.check_enabled()
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dims")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"scaled_dot_product_attention: query {tuple(query.shape)}, key {tuple(key.shape)} and value "
            f"{tuple(value.shape)} do not fit ((*, L, E), (*, S, E), (*, S, Ev))"
        )
    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention: enable_gqa is not supported")
    q_len, k_len = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    # PyTorch's math path: each operand scaled by sqrt(scale) before the product, which so saves
    # scaled copies (a key written in place afterwards leaves the backward intact)
    factor = math.sqrt(abs(scale))
    scores = ops.matmul(query * (-factor if scale < 0 else factor), key.transpose(-2, -1) * factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        attn_mask = _causal_mask(q_len, k_len, query.device)
    if attn_mask is not None:
        if attn_mask.dtype is dtypes.bool_:
            scores = ops.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1) if attn_mask is None else _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)


def _float_mask(mask: Any, dtype: Any) -> Any:
    """A boolean mask (True = masked out) as ``-inf``/0 to add; a float mask as is."""
    if mask.dtype is dtypes.bool_:
        return ops.where(mask, float("-inf"), 0.0).to(dtype)
    return mask.to(dtype)


def multi_head_attention_forward(
    query: Any, key: Any, value: Any, embed_dim_to_check: int, num_heads: int, in_proj_weight: Any,
    in_proj_bias: Any, bias_k: Any, bias_v: Any, add_zero_attn: bool, dropout_p: float, out_proj_weight: Any,
    out_proj_bias: Any, training: bool = True, key_padding_mask: Any = None, need_weights: bool = True,
    attn_mask: Any = None, use_separate_proj_weight: bool = False, q_proj_weight: Any = None,
    k_proj_weight: Any = None, v_proj_weight: Any = None, static_k: Any = None, static_v: Any = None,
    average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Any, Any]:
    """The computation of ``nn.MultiheadAttention`` (PyTorch's signature) on sequence-first
    ``(L, N, E)`` inputs or unbatched ``(L, E)``; returns ``(output, weights or None)``.
    ``bias_k``, ``bias_v``, ``add_zero_attn``, ``static_k`` and ``static_v`` are not supported.

    >>> import tidu
    >>> e = 2
    >>> x, w, b = tidu.ones(3, 1, e), tidu.ones(3 * e, e), tidu.zeros(3 * e)
    >>> out, attn = tidu.nn.functional.multi_head_attention_forward(
    ...     x, x, x, e, 1, w, b, None, None, False, 0.0, tidu.ones(e, e), tidu.zeros(e))
    >>> out.shape, attn.shape
    (tidu.Size([3, 1, 2]), tidu.Size([1, 3, 3]))
    """
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: bias_k, bias_v, add_zero_attn, static_k and "
                                  "static_v are not supported")
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    q_len, bsz, embed = query.shape
    k_len = key.shape[0]
    if embed != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed}")
    if embed % num_heads:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != bsz:
        raise AssertionError(
            f"key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)} or query batch {bsz}"
        )
    head = embed // num_heads
    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = in_proj_weight[:embed], in_proj_weight[embed:2 * embed], in_proj_weight[2 * embed:]
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias[:embed], in_proj_bias[embed:2 * embed], in_proj_bias[2 * embed:]
    q = linear(query, w_q, b_q).reshape(q_len, bsz * num_heads, head).transpose(0, 1)
    k = linear(key, w_k, b_k).reshape(k_len, bsz * num_heads, head).transpose(0, 1)
    v = linear(value, w_v, b_v).reshape(k_len, bsz * num_heads, head).transpose(0, 1)

    if is_causal and attn_mask is None:
        attn_mask = ~_causal_mask(q_len, k_len, query.device)
    mask = None
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (q_len, k_len):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(q_len, k_len)}."
                )
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, q_len, k_len):
            raise RuntimeError(
                f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                f"{(bsz * num_heads, q_len, k_len)}."
            )
        mask = _float_mask(attn_mask, q.dtype)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, k_len):
            raise AssertionError(
                f"expecting key_padding_mask shape of {(bsz, k_len)}, but got {tuple(key_padding_mask.shape)}"
            )
        pad_mask = _float_mask(key_padding_mask, q.dtype).reshape(bsz, 1, 1, k_len)
        pad_mask = pad_mask.expand(bsz, num_heads, 1, k_len).reshape(bsz * num_heads, 1, k_len)
        mask = pad_mask if mask is None else mask + pad_mask

    scores = ops.matmul(q * (1.0 / math.sqrt(head)), k.transpose(1, 2))
    if mask is not None:
        scores = scores + mask
    # Without weights PyTorch takes its fused attention path, whose softmax is the safe one.
    weights = softmax(scores, dim=-1) if need_weights or mask is None else _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=training)
    out = ops.matmul(weights, v).transpose(0, 1).reshape(q_len * bsz, embed)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(q_len, bsz, embed)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, q_len, k_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
