"""Attention for ``tidu.nn.functional``: ``scaled_dot_product_attention`` and
``multi_head_attention_forward`` (the computation of ``nn.MultiheadAttention``)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import ops
from ..core import dtypes
from ..core.half import computed_in_float32
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


@computed_in_float32(mixed=True)  # (a float32 mask with half q, k, v: PyTorch computes)
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
    if enable_gqa:  # grouped-query attention: each key and value head serves a group of query heads
        key, value = _grouped(query, key), _grouped(query, value)
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
        if attn_mask.dtype is not dtypes.bool_ and not attn_mask.dtype.is_floating_point:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {dtypes.C_NAMES.get(attn_mask.dtype.name, attn_mask.dtype.name)} and "
                               f" query.dtype: {dtypes.C_NAMES.get(query.dtype.name, query.dtype.name)} instead.")
        if attn_mask.dtype is dtypes.bool_:
            scores = ops.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
    weights = softmax(scores, dim=-1) if attn_mask is None else _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)


def _grouped(query: Any, kv: Any) -> Any:
    """``kv``'s heads (dim -3) repeated to ``query``'s count, each ``Hq / Hkv`` times in a row."""
    if query.ndim < 3 or kv.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{kv.ndim}, {kv.ndim - 1}], but got -3)")
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if kv_heads == heads:
        return kv
    if heads % kv_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
    return ops.repeat_interleave(kv, heads // kv_heads, dim=-3)


def _float_mask(mask: Any, dtype: Any) -> Any:
    """A boolean mask (True = masked out) as ``-inf``/0 to add; a float mask as is."""
    if mask.dtype is dtypes.bool_:
        return ops.where(mask, float("-inf"), 0.0).to(dtype)
    return mask.to(dtype)


def _canonical_mask(mask: Any, name: str, other: Any, other_name: str, dtype: Any) -> Any:
    """``mask`` as a float mask to add (PyTorch's ``_canonical_mask``): boolean or floating only,
    with a warning when its type differs from the ``other`` mask's."""
    if mask is None:
        return None
    if mask.dtype is not dtypes.bool_ and not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and mask.dtype is not other.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    return _float_mask(mask, dtype) if mask.dtype is dtypes.bool_ else mask


def _check_shapes(query: Any, key: Any, value: Any, key_padding_mask: Any, attn_mask: Any, num_heads: int) -> bool:
    """PyTorch's ``_mha_shape_check``: whether the inputs are batched, raising on ranks that do not fit."""
    if query.ndim not in (2, 3):
        raise AssertionError(
            f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {query.ndim - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _in_projection(query: Any, key: Any, value: Any, weights: tuple, biases: tuple) -> tuple[Any, Any, Any]:
    """``query``, ``key`` and ``value`` through their projections, whose shapes are checked first."""
    e = query.shape[-1]
    for what, w, width in zip(("query", "key", "value"), weights, (e, key.shape[-1], value.shape[-1])):
        if tuple(w.shape) != (e, width):
            raise AssertionError(f"expecting {what} weights shape of {(e, width)}, but got {w.shape}")
    for what, b in zip(("query", "key", "value"), biases):
        if b is not None and tuple(b.shape) != (e,):
            raise AssertionError(f"expecting {what} bias shape of {(e,)}, but got {b.shape}")
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _pad_key(mask: Any) -> Any:
    """A float mask with one more key column, 0 (attended): the bias or zero key appended."""
    return None if mask is None else ops.cat([mask, mask.new_zeros((*mask.shape[:-1], 1))], -1)


def _static(t: Any, name: str, rows: int, head: int) -> Any:
    if t.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {t.shape[0]}")
    if t.shape[2] != head:
        raise AssertionError(f"expecting {name}.size(2) of {head}, but got {t.shape[2]}")
    return t


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
    ``bias_k`` and ``bias_v`` (``(1, 1, E)``) are appended to the projected keys and values,
    ``add_zero_attn`` appends a zero key and value per head (the masks get a column that
    attends); ``static_k`` and ``static_v`` (``(N*H, S, E/H)``) replace the projected ones.

    >>> import tidu
    >>> e = 2
    >>> x, w, b = tidu.ones(3, 1, e), tidu.ones(3 * e, e), tidu.zeros(3 * e)
    >>> out, attn = tidu.nn.functional.multi_head_attention_forward(
    ...     x, x, x, e, 1, w, b, None, None, False, 0.0, tidu.ones(e, e), tidu.zeros(e))
    >>> out.shape, attn.shape
    (tidu.Size([3, 1, 2]), tidu.Size([1, 3, 3]))
    """
    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    q_len, bsz, embed = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the causal mask is made below, as PyTorch's attention does with the hint
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype)
        is_causal = is_causal and key_padding_mask is None
    if embed != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed}")
    if embed % num_heads:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight and key.shape[:2] != value.shape[:2]:
        raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if key.shape[1] != bsz:
        raise RuntimeError(f"key batch size {key.shape[1]} does not match query batch size {bsz}")
    head = embed // num_heads
    if use_separate_proj_weight:
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        weights = (in_proj_weight[:embed], in_proj_weight[embed:2 * embed], in_proj_weight[2 * embed:])
    biases = (None,) * 3 if in_proj_bias is None else tuple(in_proj_bias.chunk(3))
    q, k, v = _in_projection(query, key, value, weights, biases)

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (q_len, key.shape[0]):
                raise RuntimeError(
                    f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {(q_len, key.shape[0])}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, q_len, key.shape[0]):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, q_len, key.shape[0])}.")
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else "bias_v is set but bias_k is None")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k, v = ops.cat([k, bias_k.repeat(1, bsz, 1)]), ops.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    q = q.reshape(q_len, bsz * num_heads, head).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.shape[0], bsz * num_heads, head).transpose(0, 1)
    else:
        k = _static(static_k, "static_k", bsz * num_heads, head)
    if static_v is None:
        v = v.reshape(v.shape[0], bsz * num_heads, head).transpose(0, 1)
    else:
        v = _static(static_v, "static_v", bsz * num_heads, head)
    if add_zero_attn:
        k = ops.cat([k, ops.zeros((bsz * num_heads, 1, head), dtype=k.dtype, device=k.device)], 1)
        v = ops.cat([v, ops.zeros((bsz * num_heads, 1, head), dtype=v.dtype, device=v.device)], 1)
        attn_mask, key_padding_mask = _pad_key(attn_mask), _pad_key(key_padding_mask)
    k_len = k.shape[1]
    mask = attn_mask
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != k_len:
            raise AssertionError(
                f"Expected key_padded_mask.shape[1] to be {k_len}, but got {key_padding_mask.shape[1]}")
        pad_mask = key_padding_mask.reshape(bsz, 1, 1, k_len).expand(bsz, num_heads, 1, k_len)
        pad_mask = pad_mask.reshape(bsz * num_heads, 1, k_len)
        mask = pad_mask if mask is None else mask + pad_mask
    if is_causal and mask is None:
        mask = _float_mask(~_causal_mask(q_len, k_len, query.device), q.dtype)

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
