"""``MultiheadAttention``'s ``add_bias_kv``, ``add_zero_attn``, causal hint and mask checks, and
``merge_masks``, against PyTorch with PyTorch's weights: outputs, weights and every gradient."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

from . import check_module

MASKS = ("none", "attn", "padding", "both")


def _masks(L: Any, which: str, batch_first: bool) -> dict:
    attn = L.tensor(np.triu(np.ones((3, 5), bool), 2)) if which in ("attn", "both") else None
    padding = L.tensor([[False] * 4 + [True], [False] * 5]) if which in ("padding", "both") else None
    return {"attn_mask": attn, "key_padding_mask": padding}


@pytest.mark.parametrize(("bias_kv", "zero_attn", "kdim", "batch_first"), [
    (kv, za, kd, bf) for kv, za, kd, bf in itertools.product((True, False), (True, False), (None, 3), (False, True))
    if kv or za])
@pytest.mark.parametrize("need_weights", [True, False])
def test_bias_kv_and_zero_attn_match_torch(bias_kv: bool, zero_attn: bool, kdim: int | None, batch_first: bool,
                                           need_weights: bool) -> None:
    width = kdim or 4
    shapes = [(3, 2, 4), (5, 2, width), (5, 2, width)]
    if batch_first:
        shapes = [(s[1], s[0], s[2]) for s in shapes]
    for which in MASKS:
        def call(m: Any, args: list, which: str = which) -> Any:
            L = tidu if isinstance(m, tidu.nn.Module) else torch
            return m(*args, need_weights=need_weights, **_masks(L, which, batch_first))

        def make(L: Any) -> Any:
            return L.nn.MultiheadAttention(4, 2, add_bias_kv=bias_kv, add_zero_attn=zero_attn, kdim=kdim, vdim=kdim,
                                           batch_first=batch_first)

        mod, ref = check_module(lambda: make(torch), lambda: make(tidu), shapes, "float64", call=call)
        assert [n for n, _ in mod.named_parameters()] == [n for n, _ in ref.named_parameters()]


def test_bias_kv_parameters_like_torch() -> None:
    for L in (tidu, torch):
        L.manual_seed(0)
        mha = L.nn.MultiheadAttention(8, 2, add_bias_kv=True)
        assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
                                          "out_proj.bias"]
        assert tuple(mha.bias_k.shape) == (1, 1, 8) and mha.bias_k.requires_grad
        assert 0.1 < float(mha.bias_v.std()) < 1.2  # xavier_normal_ of a (1, 1, 8): std 1/3
        assert mha.add_zero_attn is False and L.nn.MultiheadAttention(8, 2).bias_k is None
    check_module(lambda: torch.nn.MultiheadAttention(4, 1, add_bias_kv=True, add_zero_attn=True),
                 lambda: tidu.nn.MultiheadAttention(4, 1, add_bias_kv=True, add_zero_attn=True),
                 [(3, 4), (5, 4), (5, 4)], "float64")


def test_causal_hint_without_weights_matches_torch() -> None:
    mask = np.triu(np.ones((4, 4), bool), 1)
    for kw in ({"add_bias_kv": True}, {"add_zero_attn": True}, {}):
        check_module(lambda kw=kw: torch.nn.MultiheadAttention(4, 2, **kw), lambda kw=kw: tidu.nn.MultiheadAttention(4, 2, **kw),
                     [(4, 2, 4)] * 3, "float64",
                     call=lambda m, a: m(*a, need_weights=False, is_causal=True,
                                         attn_mask=(tidu if isinstance(m, tidu.nn.Module) else torch).tensor(mask)))


@pytest.mark.parametrize("call", [
    "L.nn.MultiheadAttention(4, 2)(x, x, x, is_causal=True)",
    "L.nn.MultiheadAttention(4, 2)(x, x, x, attn_mask=L.zeros(3, 3, dtype=L.int64))",
    "L.nn.MultiheadAttention(4, 2)(x, x, x, key_padding_mask=L.zeros(1, 3, dtype=L.int32))",
    "L.nn.MultiheadAttention(4, 2, kdim=3)(x, x, x)",
    "L.nn.MultiheadAttention(4, 2, vdim=3)(x, x, x)",
    "L.nn.MultiheadAttention(4, 2)(x, x[:2], x)",
    "L.nn.MultiheadAttention(4, 2)(x, x, x, key_padding_mask=L.zeros(1, 2, dtype=L.bool))",
    "L.nn.MultiheadAttention(4, 2)(x, x, x, attn_mask=L.zeros(1, 1, 3, 3, dtype=L.bool))",
    "L.nn.MultiheadAttention(4, 2)(x[0], x, x)",
    "L.nn.MultiheadAttention(4, 2)(x[:, 0], x[:, 0], x[:, 0], attn_mask=L.zeros(1, 3, 3))",
    "L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(4, 2, 8), 1, enable_nested_tensor=False)(x, is_causal=True)",
])
def test_attention_argument_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"x": L.ones(3, 1, 4)}, same_message=False)


def test_merge_masks_matches_torch() -> None:
    results = []
    for L in (tidu, torch):
        mha = L.nn.MultiheadAttention(4, 2, batch_first=True)
        q = L.zeros(2, 3, 4)
        attn = L.tensor(np.triu(np.full((3, 3), -np.inf), 1), dtype=L.float32)
        padding = L.tensor([[0.0, 0.0, -np.inf], [0.0, 0.0, 0.0]], dtype=L.float32)
        merged = [mha.merge_masks(a, p, q) for a, p in ((None, None), (None, padding), (attn, None), (attn, padding),
                                                        (attn.expand(4, 3, 3), padding))]
        results.append([(None if m is None else m.tolist(), kind) for m, kind in merged])
    assert results[0] == results[1]
