"""Every layer against PyTorch from identical weights: forward values, parameter and input
gradients, in float32 and float64; train/eval behaviour; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import errors_of
from tidu import nn

from . import DTYPES, check_module, close, copy_weights

FLOATS = ["float32", "float64"]


def _both(make):  # noqa: ANN001, ANN202
    return lambda: make(torch), lambda: make(tidu)


# name: (constructor taking the library, input specs)
LAYERS = {
    "linear": (lambda lib: lib.nn.Linear(4, 3), [(5, 4)]),
    "linear-3d": (lambda lib: lib.nn.Linear(4, 3), [(2, 5, 4)]),
    "linear-1d": (lambda lib: lib.nn.Linear(4, 3), [(4,)]),
    "linear-nobias": (lambda lib: lib.nn.Linear(4, 3, bias=False), [(5, 4)]),
    "linear-empty": (lambda lib: lib.nn.Linear(4, 3), [(0, 4)]),
    "bilinear": (lambda lib: lib.nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)]),
    "bilinear-3d": (lambda lib: lib.nn.Bilinear(3, 2, 4, bias=False), [(2, 5, 3), (2, 5, 2)]),
    "mlp": (lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 8), lib.nn.Tanh(),
                                          lib.nn.Linear(8, 2)), [(6, 4)]),
    "relu": (lambda lib: lib.nn.ReLU(), [(3, 4)]),
    "gelu": (lambda lib: lib.nn.GELU(), [(3, 4)]),
    "gelu-tanh": (lambda lib: lib.nn.GELU(approximate="tanh"), [(3, 4)]),
    "silu": (lambda lib: lib.nn.SiLU(), [(3, 4)]),
    "tanh": (lambda lib: lib.nn.Tanh(), [(3, 4)]),
    "leaky-relu": (lambda lib: lib.nn.LeakyReLU(0.3), [(3, 4)]),
    "elu": (lambda lib: lib.nn.ELU(alpha=0.5), [(3, 4)]),
    "softplus": (lambda lib: lib.nn.Softplus(beta=2.0, threshold=3.0), [(3, 4)]),
    "sigmoid": (lambda lib: lib.nn.Sigmoid(), [(3, 4)]),
    "softmax": (lambda lib: lib.nn.Softmax(dim=1), [(3, 4)]),
    "softmax-0": (lambda lib: lib.nn.Softmax(dim=0), [(3, 4, 2)]),
    "log-softmax": (lambda lib: lib.nn.LogSoftmax(dim=-1), [(3, 4)]),
    "flatten": (lambda lib: lib.nn.Flatten(), [(2, 3, 4)]),
    "flatten-mid": (lambda lib: lib.nn.Flatten(0, 1), [(2, 3, 4)]),
    "identity": (lambda lib: lib.nn.Identity(), [(2, 3)]),
    "layernorm": (lambda lib: lib.nn.LayerNorm(4), [(3, 4)]),
    "layernorm-2d": (lambda lib: lib.nn.LayerNorm((3, 4)), [(2, 3, 4)]),
    "layernorm-noaffine": (lambda lib: lib.nn.LayerNorm(4, elementwise_affine=False), [(2, 3, 4)]),
    "layernorm-nobias": (lambda lib: lib.nn.LayerNorm(4, bias=False), [(3, 4)]),
    "batchnorm1d": (lambda lib: lib.nn.BatchNorm1d(3), [(5, 3)]),
    "batchnorm1d-3d": (lambda lib: lib.nn.BatchNorm1d(3), [(4, 3, 2)]),
    "batchnorm1d-noaffine": (lambda lib: lib.nn.BatchNorm1d(3, affine=False), [(5, 3)]),
    "batchnorm2d": (lambda lib: lib.nn.BatchNorm2d(2), [(3, 2, 3, 2)]),
    "batchnorm2d-nostats": (lambda lib: lib.nn.BatchNorm2d(2, track_running_stats=False), [(3, 2, 2, 2)]),
    "encoder-layer": (lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), [(5, 3, 8)]),
    "encoder-layer-prenorm-gelu": (lambda lib: lib.nn.TransformerEncoderLayer(
        8, 4, 12, dropout=0.0, activation="gelu", norm_first=True, batch_first=True), [(3, 5, 8)]),
    "encoder": (lambda lib: lib.nn.TransformerEncoder(
        lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, norm=lib.nn.LayerNorm(8),
        enable_nested_tensor=False), [(4, 2, 8)]),
    "mha": (lambda lib: lib.nn.MultiheadAttention(4, 2), [(3, 2, 4), (5, 2, 4), (5, 2, 4)]),
    "mha-batch-first": (lambda lib: lib.nn.MultiheadAttention(6, 3, batch_first=True), [(2, 3, 6)] * 3),
    "mha-unbatched": (lambda lib: lib.nn.MultiheadAttention(4, 1, bias=False), [(3, 4), (2, 4), (2, 4)]),
    "mha-kdim-vdim": (lambda lib: lib.nn.MultiheadAttention(4, 2, kdim=3, vdim=5), [(3, 2, 4), (6, 2, 3), (6, 2, 5)]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(LAYERS))
def test_layer_matches_torch(name, dtype):
    make, inputs = LAYERS[name]
    check_module(*_both(make), inputs, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", [n for n in LAYERS if n.startswith("batchnorm")])
def test_batchnorm_eval_uses_running_stats(name, dtype):
    make, inputs = LAYERS[name]
    mod, ref = check_module(*_both(make), inputs, dtype)
    check_module(*_both(make), inputs, dtype, train=False)


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("dtype", FLOATS)
def test_batchnorm_running_stats_follow_torch(momentum, dtype):
    torch.manual_seed(0)
    ref = torch.nn.BatchNorm2d(3, momentum=momentum).to(DTYPES[dtype][1])
    bn = nn.BatchNorm2d(3, momentum=momentum).to(DTYPES[dtype][0])
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = rng.normal(2.0, 3.0, size=(4, 3, 2, 2)).astype(dtype)
        close(bn(tidu.tensor(x)), ref(torch.tensor(x)), dtype)
    for key, value in ref.state_dict().items():
        ours = bn.state_dict()[key]
        if key == "num_batches_tracked":
            assert ours.item() == value.item() == 4 and ours.dtype is tidu.int64
        else:
            close(ours, value, dtype, what=key)
    bn.eval()
    ref.eval()
    x = rng.normal(size=(2, 3, 2, 2)).astype(dtype)
    close(bn(tidu.tensor(x)), ref(torch.tensor(x)), dtype)
    assert bn.num_batches_tracked.item() == 4


def test_batchnorm_running_stats_are_not_recorded():
    bn = nn.BatchNorm1d(2)
    x = tidu.randn(4, 2, requires_grad=True)
    bn(x).sum().backward()
    assert not bn.running_mean.requires_grad and bn.running_mean.grad_fn is None


def test_batchnorm_errors_like_torch():
    for lib in (torch, tidu):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            lib.nn.BatchNorm1d(3)(lib.ones(1, 3))
        with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
            lib.nn.BatchNorm2d(3)(lib.ones(2, 3))
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 1, 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_matches_torch(dtype):
    idx = np.array([[0, 3, 4], [4, 1, 0]])
    check_module(*_both(lambda lib: lib.nn.Embedding(5, 3)), [idx], dtype)
    _, ref = check_module(*_both(lambda lib: lib.nn.Embedding(5, 3, padding_idx=4)), [idx], dtype)
    assert not ref.weight.grad[4].any()
    check_module(*_both(lambda lib: lib.nn.Embedding(5, 3, padding_idx=-1)), [np.array(2)], dtype)


def test_embedding_init_and_errors():
    tidu.manual_seed(0)
    emb = nn.Embedding(200, 50, padding_idx=3)
    w = emb.weight.detach().numpy()
    assert not w[3].any() and abs(w.std() - 1) < 0.05 and abs(w.mean()) < 0.05
    with pytest.raises(IndexError, match="index out of range in self"):
        emb(tidu.tensor([200]))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.Embedding(200, 50)(torch.tensor([200]))
    frozen = nn.Embedding.from_pretrained(tidu.ones(2, 3))
    assert not frozen.weight.requires_grad and frozen(tidu.tensor([1])).tolist() == [[1.0, 1.0, 1.0]]


def test_dropout_train_and_eval():
    tidu.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = tidu.ones(200, 50, requires_grad=True)
    y = drop(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.02
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75)
    drop.eval()
    assert drop(x) is x
    assert not nn.Dropout(1.0)(x).detach().numpy().any()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        torch.nn.Dropout(1.5)


def test_dropout_follows_tidu_seed():
    tidu.manual_seed(3)
    a = nn.Dropout()(tidu.ones(20))
    tidu.manual_seed(3)
    b = nn.Dropout()(tidu.ones(20))
    assert a.tolist() == b.tolist()


def test_linear_wrong_feature_size():
    for lib in (torch, tidu):
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x5 and 4x3\)"):
            lib.nn.Linear(4, 3)(lib.ones(2, 5))
        with pytest.raises(RuntimeError, match=r"cannot be multiplied \(6x5 and 4x3\)"):
            lib.nn.Linear(4, 3)(lib.ones(2, 3, 5))


def test_linear_default_init_bounds():
    tidu.manual_seed(0)
    layer = nn.Linear(16, 400)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.24
    assert np.abs(b).max() <= 0.25 and np.abs(b).max() > 0.24
    assert abs(w.std() - 0.25 / np.sqrt(3)) < 0.01


def test_multihead_attention_masks_and_weights():
    torch.manual_seed(0)
    q_len, k_len, n = 3, 4, 2
    key_padding = np.array([[False, False, True, False], [False, True, False, False]])
    attn_bool = np.triu(np.ones((q_len, k_len), bool), k=1)
    attn_float = np.random.default_rng(1).normal(size=(n * 2, q_len, k_len)).astype(np.float32)

    def call(kind):  # noqa: ANN001, ANN202
        def run(mod, args):  # noqa: ANN001, ANN202
            lib = tidu if isinstance(mod, tidu.nn.Module) else torch
            kwargs = {"key_padding_mask": lib.tensor(key_padding)}
            if kind == "bool":
                kwargs["attn_mask"] = lib.tensor(attn_bool)
            elif kind == "float":
                kwargs["attn_mask"] = lib.tensor(attn_float)
            elif kind == "heads":
                kwargs["average_attn_weights"] = False
            elif kind == "no-weights":
                kwargs["need_weights"] = False
            return mod(*args, **kwargs)

        return run

    for kind in ("bool", "float", "heads", "no-weights"):
        check_module(*_both(lambda lib: lib.nn.MultiheadAttention(4, 2)), [(q_len, n, 4), (k_len, n, 4),
                                                                          (k_len, n, 4)], call=call(kind))


def test_multihead_attention_fully_padded_sequence_like_torch():
    padding = np.array([[True, True, True], [False, True, False]])

    def call(mod, args):  # noqa: ANN001, ANN202
        lib = tidu if isinstance(mod, tidu.nn.Module) else torch
        return mod(*args, key_padding_mask=lib.tensor(padding), need_weights=False)

    check_module(*_both(lambda lib: lib.nn.MultiheadAttention(4, 2)), [(2, 2, 4), (3, 2, 4), (3, 2, 4)],
                 "float64", call=call)


def test_multihead_attention_dropout_only_in_training():
    mha = nn.MultiheadAttention(4, 2, dropout=0.5).eval()
    x = tidu.randn(3, 1, 4)
    a, _ = mha(x, x, x)
    b, _ = mha(x, x, x)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("dtype", FLOATS)
def test_transformer_block_matches_torch(dtype):
    """A pre-norm transformer block made of tidu layers, against the same torch layers."""

    def block(lib):  # noqa: ANN001, ANN202
        class Block(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.ln1 = lib.nn.LayerNorm(8)
                self.attn = lib.nn.MultiheadAttention(8, 2, batch_first=True)
                self.ln2 = lib.nn.LayerNorm(8)
                self.mlp = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.GELU(), lib.nn.Linear(16, 8))

            def forward(self, x):  # noqa: ANN001, ANN202
                h = self.ln1(x)
                mask = lib.tensor(np.triu(np.ones((x.shape[1], x.shape[1]), bool), k=1))
                x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
                return x + self.mlp(self.ln2(x))

        return Block()

    check_module(*_both(block), [(2, 5, 8)], dtype)


def test_layers_in_float64_stay_float64():
    net = nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3), nn.GELU()).double()
    out = net(tidu.ones(2, 3, dtype=tidu.float64))
    assert out.dtype is tidu.float64


def test_parameters_are_copied_exactly():
    torch.manual_seed(1)
    ref = torch.nn.MultiheadAttention(4, 2)
    mha = nn.MultiheadAttention(4, 2)
    copy_weights(ref, mha)
    for (k, v), (k2, v2) in zip(mha.state_dict().items(), ref.state_dict().items()):
        assert k == k2
        np.testing.assert_array_equal(v.numpy(), v2.numpy())


def _sgd_steps(lib, model, x, y, steps=5, lr=0.1):  # noqa: ANN001, ANN202
    """Plain SGD written with the public Module API (the optimizers live in tidu.optim)."""
    losses = []
    for _ in range(steps):
        model.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with lib.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * lr)
        losses.append(loss.item())
    return losses


def test_training_steps_follow_torch():
    def net(lib):  # noqa: ANN001, ANN202
        return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.BatchNorm1d(16), lib.nn.GELU(), lib.nn.Linear(16, 4))

    torch.manual_seed(0)
    ref = net(torch).double()
    model = net(tidu).double()
    copy_weights(ref, model)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 6)), rng.integers(0, 4, size=12)
    ours = _sgd_steps(tidu, model, tidu.tensor(x), tidu.tensor(y))
    theirs = _sgd_steps(torch, ref, torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert ours[-1] < ours[0]
    for (k, v), (k2, v2) in zip(model.state_dict().items(), ref.state_dict().items()):
        assert k == k2
        np.testing.assert_allclose(v.numpy(), v2.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


def test_tiny_language_model_steps_follow_torch():
    def lm(lib):  # noqa: ANN001, ANN202
        class LM(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.emb = lib.nn.Embedding(7, 8)
                self.attn = lib.nn.MultiheadAttention(8, 2, batch_first=True)
                self.norm = lib.nn.LayerNorm(8)
                self.head = lib.nn.Linear(8, 7)

            def forward(self, idx):  # noqa: ANN001, ANN202
                h = self.emb(idx)
                out, _ = self.attn(h, h, h, need_weights=False, is_causal=True,
                                   attn_mask=lib.tensor(np.triu(np.ones((idx.shape[1],) * 2, bool), k=1)))
                logits = self.head(self.norm(h + out))
                return logits.transpose(1, 2)

        return LM()

    torch.manual_seed(0)
    ref = lm(torch).double()
    model = lm(tidu).double()
    copy_weights(ref, model)
    rng = np.random.default_rng(1)
    seq = rng.integers(0, 7, size=(3, 6))
    x, y = seq[:, :-1], seq[:, 1:]
    ours = _sgd_steps(tidu, model, tidu.tensor(x), tidu.tensor(y), steps=3)
    theirs = _sgd_steps(torch, ref, torch.tensor(x), torch.tensor(y), steps=3)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_embedding_max_norm_like_torch():
    w = np.random.default_rng(0).normal(size=(5, 3)) * 3
    idx = np.array([1, 1, 2])
    ref = torch.nn.Embedding(5, 3, _weight=torch.tensor(w), max_norm=1.0)
    emb = nn.Embedding(5, 3, _weight=tidu.tensor(w), max_norm=1.0)
    close(emb(tidu.tensor(idx)), ref(torch.tensor(idx)), "float64")
    close(emb.weight, ref.weight, "float64")
    assert emb.weight.is_leaf


def test_layer_shape_errors_like_torch():
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\]"):
            lib.nn.LayerNorm(4)(lib.ones(2, 3))
        x = lib.ones(3, 2, 5)
        with pytest.raises(AssertionError, match="was expecting embedding dimension of 4, but got 5"):
            lib.nn.MultiheadAttention(4, 2)(x, x, x)
        x = lib.ones(3, 2, 4)
        with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
            lib.nn.MultiheadAttention(4, 2)(x, x, x, attn_mask=lib.ones(2, 2, dtype=lib.bool))
        with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the"):
            lib.nn.Embedding(3, 2)(lib.tensor([1.0]))


def test_gradient_penalty_through_layers_matches_torch():
    """Second order: the gradient of ||d loss / d x||^2 through LayerNorm, GELU and log_softmax
    (cross entropy with label smoothing), with respect to every parameter."""

    def net(lib):  # noqa: ANN001, ANN202
        return lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.LayerNorm(6), lib.nn.GELU(), lib.nn.Linear(6, 3))

    torch.manual_seed(0)
    ref = net(torch).double()
    model = net(tidu).double()
    copy_weights(ref, model)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(5, 4)), rng.integers(0, 3, size=5)
    for lib, m in ((tidu, model), (torch, ref)):
        xt = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(m(xt), lib.tensor(y), label_smoothing=0.1)
        (g,) = lib.autograd.grad(loss, xt, create_graph=True)
        (g * g).sum().backward()
    for (k, p), (_, q) in zip(model.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


def test_transformer_encoder_masks_and_repr_match_torch():
    causal = np.triu(np.ones((4, 4), bool), k=1)
    padding = np.array([[False, False, False, True], [False, False, False, False]])

    def make(lib):  # noqa: ANN001, ANN202
        layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        return lib.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    def call(mod, args):  # noqa: ANN001, ANN202
        lib = tidu if isinstance(mod, tidu.nn.Module) else torch
        return mod(*args, mask=lib.tensor(causal), src_key_padding_mask=lib.tensor(padding))

    check_module(*_both(make), [(2, 4, 8)], "float64", call=call)
    assert repr(make(tidu)) == repr(make(torch))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_new_activation_norm_and_pool_modules_match_torch():
    x = np.random.default_rng(0).standard_normal((2, 4, 5, 3))
    for make in [lambda L: L.nn.Hardtanh(-2.0, 2.0), lambda L: L.nn.ReLU6(), lambda L: L.nn.Hardsigmoid(),
                 lambda L: L.nn.Hardswish(), lambda L: L.nn.Mish(), lambda L: L.nn.LogSigmoid(), lambda L: L.nn.Softsign(),
                 lambda L: L.nn.GroupNorm(2, 4), lambda L: L.nn.GroupNorm(4, 4, affine=False),
                 lambda L: L.nn.GroupNorm(1, 4, bias=False), lambda L: L.nn.AdaptiveAvgPool2d((2, None)),
                 lambda L: L.nn.AdaptiveAvgPool2d(1), lambda L: L.nn.AdaptiveAvgPool1d(2),
                 lambda L: L.nn.Upsample(scale_factor=2), lambda L: L.nn.Upsample(size=(3, 4), mode="bilinear"),
                 lambda L: L.nn.Upsample(scale_factor=(2, 1.5), mode="bilinear", align_corners=True)]:
        ours, ref = make(tidu).double(), make(torch).double()
        assert repr(ours) == repr(ref)
        assert list(ours.state_dict()) == list(ref.state_dict())
        data = x[0] if isinstance(ref, torch.nn.AdaptiveAvgPool1d) else x  # (N, C, L)
        np.testing.assert_allclose(ours(tidu.tensor(data)).detach().numpy(), ref(torch.tensor(data)).detach().numpy(),
                                   rtol=1e-12, atol=1e-12)


NEW_LAYERS = {
    "selu": (lambda L: L.nn.SELU(), [(3, 4)]),
    "celu": (lambda L: L.nn.CELU(0.5), [(3, 4)]),
    "prelu": (lambda L: L.nn.PReLU(), [(3, 4)]),
    "prelu-channels": (lambda L: L.nn.PReLU(3, init=0.1), [(2, 3, 4)]),
    "softmin": (lambda L: L.nn.Softmin(dim=1), [(3, 4)]),
    "softmax2d": (lambda L: L.nn.Softmax2d(), [(2, 3, 2, 2)]),
    "softshrink": (lambda L: L.nn.Softshrink(0.3), [(3, 4)]),
    "hardshrink": (lambda L: L.nn.Hardshrink(0.3), [(3, 4)]),
    "tanhshrink": (lambda L: L.nn.Tanhshrink(), [(3, 4)]),
    "threshold": (lambda L: L.nn.Threshold(0.2, -1.0), [(3, 4)]),
    "glu": (lambda L: L.nn.GLU(1), [(3, 4)]),
    "rmsnorm": (lambda L: L.nn.RMSNorm(4), [(3, 4)]),
    "rmsnorm-2d-noaffine": (lambda L: L.nn.RMSNorm((3, 4), eps=1e-3, elementwise_affine=False), [(2, 3, 4)]),
    "instancenorm1d": (lambda L: L.nn.InstanceNorm1d(3), [(2, 3, 5)]),
    "instancenorm1d-unbatched": (lambda L: L.nn.InstanceNorm1d(3, affine=True), [(3, 5)]),
    "instancenorm2d-affine-stats": (lambda L: L.nn.InstanceNorm2d(2, affine=True, track_running_stats=True),
                                    [(3, 2, 3, 2)]),
    "unflatten": (lambda L: L.nn.Unflatten(1, (2, 3)), [(4, 6)]),
    "pixelshuffle": (lambda L: L.nn.PixelShuffle(2), [(2, 8, 2, 3)]),
    "pixelunshuffle": (lambda L: L.nn.PixelUnshuffle(2), [(2, 2, 4, 2)]),
    "maxpool1d": (lambda L: L.nn.MaxPool1d(3, 2, 1), [(2, 3, 7)]),
    "avgpool1d": (lambda L: L.nn.AvgPool1d(2, padding=1, count_include_pad=False), [(2, 3, 7)]),
    "zeropad2d": (lambda L: L.nn.ZeroPad2d((1, 0, 2, 1)), [(2, 3, 4)]),
    "zeropad1d": (lambda L: L.nn.ZeroPad1d(2), [(2, 3)]),
    "constantpad1d": (lambda L: L.nn.ConstantPad1d((0, 2), 1.5), [(2, 3, 4)]),
    "constantpad2d": (lambda L: L.nn.ConstantPad2d(1, -1.0), [(2, 3, 4)]),
    "reflectionpad1d": (lambda L: L.nn.ReflectionPad1d((2, 1)), [(2, 3, 4)]),
    "reflectionpad2d": (lambda L: L.nn.ReflectionPad2d(1), [(2, 3, 4)]),
    "replicationpad1d": (lambda L: L.nn.ReplicationPad1d(3), [(3, 4)]),
    "replicationpad2d": (lambda L: L.nn.ReplicationPad2d((0, 2, 1, 0)), [(1, 2, 3, 4)]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(NEW_LAYERS))
def test_new_layers_match_torch(name, dtype):
    make, inputs = NEW_LAYERS[name]
    ours, ref = check_module(*_both(make), inputs, dtype)
    assert repr(ours) == repr(ref)
    for (key, a), (_, b) in zip(ours.state_dict().items(), ref.state_dict().items()):  # init and running stats
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=key)


@pytest.mark.parametrize("dtype", FLOATS)
def test_instancenorm_running_stats_and_eval_follow_torch(dtype):
    def make(lib):  # noqa: ANN001, ANN202
        return lib.nn.InstanceNorm1d(3, momentum=0.3, track_running_stats=True).to(DTYPES[dtype][0 if lib is tidu else 1])

    ours, ref = make(tidu), make(torch)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.normal(1.0, 2.0, size=(4, 3, 5)).astype(dtype)
        close(ours(tidu.tensor(x)), ref(torch.tensor(x)), dtype)
    for (key, a), (_, b) in zip(ours.state_dict().items(), ref.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, err_msg=key)
    ours.eval()
    ref.eval()
    x = rng.normal(size=(2, 3, 5)).astype(dtype)
    close(ours(tidu.tensor(x)), ref(torch.tensor(x)), dtype)


def test_new_module_reprs_and_errors_match_torch():
    for make in [lambda L: L.nn.PReLU(3, 0.1), lambda L: L.nn.Threshold(0.1, 20, inplace=True),
                 lambda L: L.nn.SELU(inplace=True), lambda L: L.nn.InstanceNorm1d(3),
                 lambda L: L.nn.MaxPool1d(3, 2, 1, 2, True, True), lambda L: L.nn.AvgPool1d(3, 2, 1, True, False),
                 lambda L: L.nn.Dropout1d(), lambda L: L.nn.Dropout2d(0.3), lambda L: L.nn.GLU()]:
        assert repr(make(tidu)) == repr(make(torch))
    for call in ["L.nn.InstanceNorm1d(3)(L.ones(2, 3, 2, 2))", "L.nn.InstanceNorm1d(4, affine=True)(L.ones(2, 3, 2))",
                 "L.nn.Softmax2d()(L.ones(2, 3))", "L.nn.ReflectionPad1d(3)(L.ones(1, 2, 3))",
                 "L.nn.Dropout2d(2)", "L.nn.ZeroPad2d(1)(L.ones(3))"]:
        ref, ours = errors_of(call)
        assert (ours[0], ours[1].split("\n")[0].split(" (mode")[0]) == (ref[0], ref[1].split("\n")[0].split(" (mode")[0])
    for lib in (torch, tidu):
        with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
            lib.nn.InstanceNorm1d(4)(lib.ones(2, 3, 2))


def test_channel_dropout_modules_train_and_eval():
    for cls in (nn.Dropout1d, nn.Dropout2d):
        drop = cls(0.4)
        x = tidu.ones(30, 20, 2, 2)[..., 0] if cls is nn.Dropout1d else tidu.ones(30, 20, 2, 2)
        y = drop(x).numpy().reshape(600, -1)
        np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.6], rtol=1e-6)
        assert (y == y[:, :1]).all()
        assert drop.eval()(x) is x


def _lib(mod):  # noqa: ANN001, ANN202
    return tidu if isinstance(mod, tidu.nn.Module) else torch


DECODERS = {
    "decoder-layer": (lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), [(4, 2, 8), (5, 2, 8)]),
    "decoder-layer-prenorm-gelu-batch-first": (lambda L: L.nn.TransformerDecoderLayer(
        8, 4, 12, dropout=0.0, activation="gelu", norm_first=True, batch_first=True), [(2, 4, 8), (2, 3, 8)]),
    "decoder-layer-callable-nobias": (lambda L: L.nn.TransformerDecoderLayer(
        8, 2, 12, dropout=0.0, activation=L.nn.functional.silu, bias=False), [(3, 2, 8), (4, 2, 8)]),
    "decoder-layer-unbatched": (lambda L: L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), [(4, 8), (3, 8)]),
    "decoder": (lambda L: L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 2,
                                                  norm=L.nn.LayerNorm(8)), [(4, 2, 8), (5, 2, 8)]),
    "transformer": (lambda L: L.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0), [(5, 2, 8), (4, 2, 8)]),
    "transformer-prenorm-batch-first": (lambda L: L.nn.Transformer(
        8, 4, 1, 2, 12, dropout=0.0, activation="gelu", batch_first=True, norm_first=True), [(2, 5, 8), (2, 3, 8)]),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(DECODERS))
def test_decoder_layers_match_torch(name, dtype):
    make, inputs = DECODERS[name]
    ours, ref = check_module(*_both(make), inputs, dtype, train=False)
    assert repr(ours) == repr(ref)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
@pytest.mark.parametrize("mask_kind", ["bool", "float"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_masks_match_torch(mask_kind, batch_first):
    s_len, t_len, n = 5, 4, 2
    src_pad = np.array([[False] * 4 + [True], [False] * 5])
    tgt_pad = np.array([[False] * 4, [False] * 3 + [True]])
    mem_mask = np.zeros((t_len, s_len), bool)
    mem_mask[0, 1] = True

    def call(mod, args):  # noqa: ANN001, ANN202
        L = _lib(mod)  # noqa: N806
        causal = L.nn.Transformer.generate_square_subsequent_mask(t_len, dtype=args[0].dtype)
        memory_mask = L.tensor(mem_mask)
        if mask_kind == "bool":
            causal = causal.isinf()
        else:
            memory_mask = L.zeros(t_len, s_len, dtype=args[0].dtype).masked_fill(memory_mask, float("-inf"))
        return mod(*args, tgt_mask=causal, memory_mask=memory_mask, src_key_padding_mask=L.tensor(src_pad),
                   tgt_key_padding_mask=L.tensor(tgt_pad), memory_key_padding_mask=L.tensor(src_pad),
                   tgt_is_causal=True)

    shapes = [(n, s_len, 8), (n, t_len, 8)] if batch_first else [(s_len, n, 8), (t_len, n, 8)]
    check_module(*_both(lambda L: L.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, batch_first=batch_first)), shapes,
                 "float64", train=False, call=call)


def test_decoder_masks_match_torch():
    causal = np.triu(np.ones((4, 4), bool), k=1)
    padding = np.array([[False, False, True], [False, False, False]])

    def make(L):  # noqa: ANN001, N803, ANN202
        return L.nn.TransformerDecoder(L.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, norm_first=True), 2)

    def call(mod, args):  # noqa: ANN001, ANN202
        L = _lib(mod)  # noqa: N806
        return mod(*args, tgt_mask=L.tensor(causal), memory_key_padding_mask=L.tensor(padding))

    check_module(*_both(make), [(4, 2, 8), (3, 2, 8)], "float64", train=False, call=call)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor")
def test_transformer_init_mask_and_errors_like_torch():
    tidu.manual_seed(0)
    model = nn.Transformer(16, 2, 1, 1, 32)
    ref = torch.nn.Transformer(16, 2, 1, 1, 32)
    assert [(k, tuple(v.shape)) for k, v in model.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert (model.d_model, model.nhead, model.batch_first) == (16, 2, False)
    for name, p in model.named_parameters():
        w = p.detach().numpy()
        if name.endswith("norm1.weight"):
            assert (w == 1).all()
        elif name.endswith("in_proj_bias"):
            assert not w.any()
        elif p.ndim == 2:  # xavier_uniform_ everywhere, also on the Linear layers
            bound = np.sqrt(6 / sum(w.shape))
            assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound, name
    for dtype in (None, "float64"):
        ours = nn.Transformer.generate_square_subsequent_mask(5, dtype=getattr(tidu, dtype or "float32"))
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=getattr(torch, dtype or "float32"))
        close(ours, theirs, dtype or "float32")
    for L in (torch, tidu):  # noqa: N806
        t = L.nn.Transformer(8, 2, 1, 1, 16)
        with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
            t(L.ones(3, 2, 8), L.ones(3, 3, 8))
        with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
            t(L.ones(3, 2, 8), L.ones(3, 2, 6))
        with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
            L.nn.TransformerDecoderLayer(8, 2, 16)(L.ones(3, 2, 8), L.ones(3, 2, 8), tgt_is_causal=True)
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            L.nn.TransformerDecoderLayer(8, 2, activation="tanh")


def test_transformer_decoder_dropout_only_in_training():
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.5)
    x, mem = tidu.randn(3, 2, 8), tidu.randn(4, 2, 8)
    assert layer.eval()(x, mem).tolist() == layer(x, mem).tolist()
    assert layer.train()(x, mem).tolist() != layer(x, mem).tolist()
