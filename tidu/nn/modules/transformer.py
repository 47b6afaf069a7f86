"""``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``, ``TransformerDecoder``
and ``Transformer`` (PyTorch's structure and parameter names)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ... import ops
from ...core import dtypes
from .. import functional as F
from .. import init
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm


def _activation(activation: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if isinstance(activation, str):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _attention_block(attn: MultiheadAttention, drop: Dropout, x: Any, source: Any, mask: Any, padding: Any,
                     is_causal: bool) -> Any:
    return drop(attn(x, source, source, attn_mask=mask, key_padding_mask=padding, need_weights=False,
                     is_causal=is_causal)[0])


def _feed_forward(layer: Any, drop: Dropout, x: Any) -> Any:
    return drop(layer.linear2(layer.dropout(layer.activation(layer.linear1(x)))))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and a LayerNorm (after by
    default, before with ``norm_first``), with PyTorch's submodules: ``self_attn``, ``linear1``,
    ``dropout``, ``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``.

    >>> import tidu
    >>> layer = tidu.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(tidu.ones(3, 5, 8)).shape
    tidu.Size([3, 5, 8])
    >>> list(layer.state_dict())[:2]
    ['self_attn.in_proj_weight', 'self_attn.in_proj_bias']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Any], Any] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)
        # PyTorch's fast-path flag: 1 for ReLU, 2 for GELU, 0 for another activation
        if self.activation is F.relu or isinstance(self.activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif self.activation is F.gelu or isinstance(self.activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0

    def forward(self, src: Any, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Any:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x: Any, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Any:
        return _attention_block(self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask, is_causal)

    def _ff_block(self, x: Any) -> Any:
        return _feed_forward(self, self.dropout2, x)


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0``, ``layers.1``, ...), then ``norm``.

    >>> import tidu
    >>> layer = tidu.nn.TransformerEncoderLayer(8, 2, 16)
    >>> encoder = tidu.nn.TransformerEncoder(layer, num_layers=2)
    >>> encoder(tidu.ones(5, 3, 8)).shape
    tidu.Size([5, 3, 8])
    """

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Any, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Any:
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return out if self.norm is None else self.norm(out)


def _check_causal_hint(mask: Any, is_causal: bool) -> None:
    if is_causal and mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")


class TransformerDecoderLayer(Module):
    """Self-attention over ``tgt``, attention to ``memory``, then a feed-forward block, each with a
    residual and a LayerNorm (after by default, before with ``norm_first``), with PyTorch's
    submodules: ``self_attn``, ``multihead_attn``, ``linear1``, ``dropout``, ``linear2``,
    ``norm1``-``norm3``, ``dropout1``-``dropout3``.

    >>> import tidu
    >>> layer = tidu.nn.TransformerDecoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
    >>> layer(tidu.ones(3, 4, 8), tidu.ones(3, 6, 8)).shape
    tidu.Size([3, 4, 8])
    >>> [k for k in layer.state_dict() if k.startswith("multihead_attn")][:2]
    ['multihead_attn.in_proj_weight', 'multihead_attn.in_proj_bias']
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Any], Any] = F.relu, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Any:
        _check_causal_hint(tgt_mask, tgt_is_causal)
        _check_causal_hint(memory_mask, memory_is_causal)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
        return self.norm3(x + self._ff_block(x))

    def _sa_block(self, x: Any, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Any:
        return _attention_block(self.self_attn, self.dropout1, x, x, attn_mask, key_padding_mask, is_causal)

    def _mha_block(self, x: Any, memory: Any, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Any:
        return _attention_block(self.multihead_attn, self.dropout2, x, memory, attn_mask, key_padding_mask,
                                is_causal)

    def _ff_block(self, x: Any) -> Any:
        return _feed_forward(self, self.dropout3, x)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` (``layers.0``, ``layers.1``, ...), each attending
    to the same ``memory``, then ``norm``.

    >>> import tidu
    >>> decoder = tidu.nn.TransformerDecoder(tidu.nn.TransformerDecoderLayer(8, 2, 16), num_layers=2)
    >>> decoder(tidu.ones(4, 3, 8), tidu.ones(6, 3, 8)).shape
    tidu.Size([4, 3, 8])
    """

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Any:
    """The ``(sz, sz)`` float mask of ``-inf`` above the diagonal and 0 elsewhere."""
    dtype = dtypes.float32 if dtype is None else dtype
    return ops.triu(ops.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


class Transformer(Module):
    """An encoder-decoder transformer: ``encoder`` (a ``TransformerEncoder`` of
    ``num_encoder_layers`` layers and a final ``LayerNorm``) and ``decoder`` (likewise), with
    every weight of two or more dims initialised by ``xavier_uniform_``, as PyTorch's.

    >>> import tidu
    >>> model = tidu.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                             dim_feedforward=16, batch_first=True)
    >>> tgt_mask = tidu.nn.Transformer.generate_square_subsequent_mask(4)
    >>> model(tidu.ones(2, 5, 8), tidu.ones(2, 4, 8), tgt_mask=tgt_mask).shape
    tidu.Size([2, 4, 8])
    >>> tidu.nn.Transformer.generate_square_subsequent_mask(2)
    tensor([[0., -inf],
            [0., 0.]])
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Any], Any] = F.relu, custom_encoder: Any = None,
                 custom_decoder: Any = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*layer_args, dtype=dtype), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*layer_args, dtype=dtype), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None, memory_mask: Any = None,
                src_key_padding_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Any:
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(_generate_square_subsequent_mask)
