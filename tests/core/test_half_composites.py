"""Half-precision inputs through functions tidu composes of several ops: computed in float32 and
rounded once (``core.half.computed_in_float32``), as PyTorch's kernels compute them, so a sum of
squares does not overflow float16, a mean of large values stays finite and an activation's
derivative is rounded once. Each against PyTorch."""

import numpy as np
import pytest
import torch

import tidu


def outcome(make, lib):
    try:
        out = make(lib)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    outs = out if isinstance(out, tuple | list) else (out,)
    return [(str(o.dtype).split(".")[-1], o.detach().float().numpy().tolist()) for o in outs]


CASES = {
    "bf16 grad accumulation": "x = L.tensor([1.0, 2.0], dtype=L.bfloat16, requires_grad=True); (x * 3).sum().backward(); "
                              "(x * 0.5).sum().backward(); out = x.grad",
    "f16 norms": "v = L.tensor([[300., 400.]], dtype=L.float16); out = (v.norm(), L.linalg.vector_norm(v), "
                 "F.normalize(v), F.cosine_similarity(v, v), F.pairwise_distance(v, 0 * v), "
                 "L.tensor([1e-4, 1e-4], dtype=L.float16).norm())",
    "f16 clip_grad_norm_": "p = L.nn.Parameter(L.zeros(1000, dtype=L.float16)); p.grad = L.full((1000,), 10.0, "
                          "dtype=L.float16); out = (L.nn.utils.clip_grad_norm_([p], 1.0), p.grad[:3])",
    "f16 var std": "x = L.zeros(100, dtype=L.float16); x[0] = 300.0; out = (x.var(), x.std(), "
                   "L.tensor([1e-4, -1e-4, 2e-4, 0.0], dtype=L.float16).std())",
    "f16 batch_norm": "y = L.tensor([[0.0], [1000.0]], dtype=L.float16).repeat(2, 1); "
                      "out = F.batch_norm(y, None, None, training=True)",
    "f16 bce": "x = L.tensor([0.2, 0.7, 0.0, 1.0], dtype=L.float16, requires_grad=True); "
               "l = F.binary_cross_entropy(x, L.tensor([0.0, 1.0, 1.0, 0.0], dtype=L.float16), reduction='none'); "
               "l.sum().backward(); out = (l, x.grad)",
    "conv of mixed dtypes": "out = F.conv1d(L.ones(1, 2, 5, dtype=L.bfloat16), L.ones(2, 2, 3))",
    "sdpa with a float32 mask": "q = L.ones(1, 2, 3, 4, dtype=L.bfloat16); out = F.scaled_dot_product_attention(q, q, q, "
                                "attn_mask=L.zeros(3, 3))",
    "norm layers with float32 parameters": "x = L.ones(2, 4, dtype=L.bfloat16); out = (L.nn.LayerNorm(4)(x), "
                                           "F.group_norm(x[None], 2, L.ones(2), L.zeros(2)))",
    "f16 means": "x = L.full((8,), 30000.0, dtype=L.float16); out = (x.mean(), F.avg_pool1d(x[None], 4), "
                 "F.l1_loss(x, -x), L.addcdiv(x, x, L.full((8,), 0.25, dtype=L.float16), value=0.1))",
    "bias that cancels": "x = L.tensor([[[1.0, 2.0, 3.0]]], dtype=L.bfloat16); w = L.full((1, 1, 3), 0.337, "
                         "dtype=L.bfloat16); out = (F.conv1d(x, w, L.tensor([-1.99], dtype=L.bfloat16)), "
                         "L.addmm(L.tensor([-1.99], dtype=L.bfloat16), x[0], w[0].t()))",
    "sinc": "out = L.sinc(L.tensor([0.7, 2.2], dtype=L.float16))",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_half_composites_are_pytorchs(name):
    def make(L):
        env = {"L": L, "F": L.nn.functional}
        exec(CASES[name], env)  # noqa: S102 - the cases above
        return env["out"]

    ours, theirs = outcome(make, tidu), outcome(make, torch)
    if isinstance(theirs, str):
        assert ours == theirs
        return
    assert [o[0] for o in ours] == [t[0] for t in theirs]
    for (_, a), (_, b) in zip(ours, theirs):
        np.testing.assert_allclose(np.array(a, float), np.array(b, float), rtol=2**-8, atol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["elu", "celu", "selu", "silu", "mish", "hardswish", "tanhshrink", "softplus",
                                  "logsigmoid", "gelu"])
def test_activation_gradients_round_once(name, dtype):
    x32 = np.linspace(-3.1, 2.9, 13).astype(np.float32)
    grads = []
    for L in (tidu, torch):
        x = L.tensor(x32).to(getattr(L, dtype)).requires_grad_()
        getattr(L.nn.functional, name)(x).float().sum().backward()
        grads.append(x.grad.float().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=2 ** -7 if dtype == "bfloat16" else 2 ** -9, atol=2e-3)


def test_bfloat16_gradcheck():
    for L in (tidu, torch):
        x = L.tensor([1.5, 2.0], dtype=L.bfloat16, requires_grad=True)
        assert L.autograd.gradcheck(lambda a: a * 2, (x,), eps=0.125, atol=0.1, rtol=0.1, raise_exception=False)
