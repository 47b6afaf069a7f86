"""``MultiheadAttention`` (PyTorch's parameter names, so state dicts match)."""

from __future__ import annotations

from typing import Any

from ... import ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import Linear
from .module import Module


class NonDynamicallyQuantizableLinear(Linear):
    """The ``Linear`` of ``MultiheadAttention.out_proj`` (PyTorch's class name, for the repr)."""


class MultiheadAttention(Module):
    """Multi-head attention ``softmax(Q K^T / sqrt(d)) V`` over ``num_heads`` heads.

    Parameters ``in_proj_weight (3E, E)`` (or ``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ
    from ``embed_dim``), ``in_proj_bias (3E,)`` and ``out_proj`` as PyTorch's.
    Inputs are ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched ``(L, E)``; returns
    ``(output, weights)``, the weights averaged over heads unless ``average_attn_weights=False``
    (``None`` when ``need_weights=False``). ``attn_mask`` (``(L, S)`` or ``(N*H, L, S)``) and
    ``key_padding_mask`` (``(N, S)``): True or ``-inf`` marks a pair that does not attend.
    ``add_bias_kv`` appends learned ``bias_k``, ``bias_v`` (``(1, 1, E)``) to the keys and values,
    ``add_zero_attn`` a zero key and value.

    >>> import tidu
    >>> mha = tidu.nn.MultiheadAttention(4, 2, batch_first=True)
    >>> x = tidu.ones(3, 5, 4)
    >>> out, weights = mha(x, x, x)
    >>> out.shape, weights.shape
    (tidu.Size([3, 5, 4]), tidu.Size([3, 5, 5]))
    >>> list(mha.state_dict())
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ops.empty(3 * embed_dim, embed_dim, dtype=dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(ops.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(ops.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(ops.empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ops.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(ops.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(ops.empty((1, 1, embed_dim), dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for bias in (self.bias_k, self.bias_v):
            if bias is not None:
                init.xavier_normal_(bias)

    def forward(self, query: Any, key: Any, value: Any, key_padding_mask: Any = None, need_weights: bool = True,
                attn_mask: Any = None, average_attn_weights: bool = True, is_causal: bool = False) -> tuple[Any, Any]:
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        return out, weights

    def merge_masks(self, attn_mask: Any, key_padding_mask: Any, query: Any) -> tuple[Any, int | None]:
        """One ``(N, H, L, L)`` mask from ``attn_mask`` (``(L, L)`` or ``(N*H, L, L)``) and
        ``key_padding_mask`` (``(N, L)``) of a batch-first self-attention ``query``, with its type
        (1: padding only, 2: an attention mask; ``None``: no mask), as PyTorch's fast path."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            merged, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            batch, length, _ = query.shape
            mask_type = 2
            if attn_mask.ndim == 3:
                merged = attn_mask.reshape(batch, -1, length, length)
            else:
                merged = attn_mask.reshape(1, 1, length, length).expand(batch, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.reshape(batch, 1, 1, length).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
