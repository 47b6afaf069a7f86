"""``tidu.nn.functional`` against PyTorch: values, gradients and dtypes (float32 and float64,
0-d, empty and non-contiguous inputs where they apply), higher-order gradients through the fused
primitives, and torch's errors for bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
import tidu.nn.functional as F
from tests.test_torch_oracle import Arg, T, assert_same_error, errors_of, run_both

FLOATS = ["float32", "float64"]


def _lib(x):  # noqa: ANN001, ANN202
    return tidu if isinstance(x, tidu.Tensor) else torch


def _F(x):  # noqa: ANN001, ANN202, N802
    return _lib(x).nn.functional


# name: (fn of the library's tensors, operand specs)
UNARY = {
    "relu": (lambda x: _F(x).relu(x), [(3, 4), (), (0, 2), T(3, 2)]),
    "gelu": (lambda x: _F(x).gelu(x), [(3, 4), (), T(3, 2)]),
    "gelu-tanh": (lambda x: _F(x).gelu(x, approximate="tanh"), [(3, 4), ()]),
    "silu": (lambda x: _F(x).silu(x), [(3, 4), (), T(2, 3)]),
    "sigmoid": (lambda x: _F(x).sigmoid(x), [(3, 4)]),
    "leaky-relu": (lambda x: _F(x).leaky_relu(x, 0.2), [(3, 4), (), T(2, 3)]),
    "elu": (lambda x: _F(x).elu(x, alpha=0.7), [(3, 4), ()]),
    "softplus": (lambda x: _F(x).softplus(x), [(3, 4), ()]),
    "softplus-threshold": (lambda x: _F(x).softplus(x * 20, beta=2.0, threshold=5.0), [(3, 4)]),
    "tanh": (lambda x: _F(x).tanh(x), [(3, 4)]),
    "softmax": (lambda x: _F(x).softmax(x, dim=-1), [(3, 4), (5,), (), (0, 3), (2, 0), T(3, 4)]),
    "softmax-dim0": (lambda x: _F(x).softmax(x, dim=0), [(3, 4, 2), T(3, 4)]),
    "log-softmax": (lambda x: _F(x).log_softmax(x, dim=1), [(3, 4), (2, 3, 2), T(4, 3), (0, 3)]),
    "log-softmax-0d": (lambda x: _F(x).log_softmax(x, dim=0), [()]),
    "layer-norm": (lambda x: _F(x).layer_norm(x, (x.shape[-1],)), [(3, 4), T(4, 3), (5,)]),
    "pad": (lambda x: _F(x).pad(x, (1, 2)), [(3, 4), (2,), T(2, 3)]),
    "pad-2d": (lambda x: _F(x).pad(x, (0, 1, 2, 0), value=-1.5), [(2, 3, 4)]),
    "pad-crop": (lambda x: _F(x).pad(x, (-1, 2, 1, -2)), [(3, 4), (2, 5, 4)]),
    "pad-zero": (lambda x: _F(x).pad(x, (0, 0)), [(3, 4)]),
    "selu": (lambda x: _F(x).selu(x), [(3, 4), ()]),
    "celu": (lambda x: _F(x).celu(x, alpha=0.5), [(3, 4), T(2, 3)]),  # PyTorch rounds 1/alpha to float32
    "softmin": (lambda x: _F(x).softmin(x, dim=1), [(3, 4), T(3, 2)]),
    "softmin-dtype": (lambda x: _F(x).softmin(x, 0, dtype=_lib(x).float64), [(3, 4)]),
    "softshrink": (lambda x: _F(x).softshrink(x, 0.7), [(3, 4), ()]),
    "hardshrink": (lambda x: _F(x).hardshrink(x, 0.7), [(3, 4), ()]),
    "tanhshrink": (lambda x: _F(x).tanhshrink(x), [(3, 4)]),
    "threshold": (lambda x: _F(x).threshold(x, 0.3, -2.0), [(3, 4), ()]),
    "glu": (lambda x: _F(x).glu(x), [(3, 4), T(4, 2)]),
    "glu-dim0": (lambda x: _F(x).glu(x, 0), [(4, 3, 2)]),
    "rms-norm": (lambda x: _F(x).rms_norm(x, (x.shape[-1],)), [(3, 4), T(4, 3), (5,)]),
    "rms-norm-2d": (lambda x: _F(x).rms_norm(x, (3, 4), eps=0.1), [(2, 3, 4)]),
    "instance-norm": (lambda x: _F(x).instance_norm(x), [(2, 3, 4), (2, 3, 2, 3)]),
    "pixel-shuffle": (lambda x: _F(x).pixel_shuffle(x, 2), [(2, 8, 3, 2), (4, 1, 3), (2, 1, 4, 2, 2)]),
    "pixel-unshuffle": (lambda x: _F(x).pixel_unshuffle(x, 2), [(2, 2, 4, 6), (1, 2, 2), (2, 1, 1, 4, 2)]),
    "max-pool1d": (lambda x: _F(x).max_pool1d(x, 3, 2, 1), [(2, 3, 7), (3, 8)]),
    "max-pool1d-ceil-dilated": (lambda x: _F(x).max_pool1d(x, 2, 2, 1, 2, ceil_mode=True), [(2, 3, 8)]),
    "avg-pool1d": (lambda x: _F(x).avg_pool1d(x, 3, 2, 1), [(2, 3, 7), (3, 8)]),
    "avg-pool1d-ceil-nopad": (lambda x: _F(x).avg_pool1d(x, 2, 3, 1, ceil_mode=True, count_include_pad=False),
                              [(2, 3, 8)]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_matches_torch(name, dtype):
    fn, specs = UNARY[name]
    for spec in specs:
        run_both(fn, None, [spec if isinstance(spec, Arg) else Arg(spec)], dtype)


MULTI = {
    "linear": (lambda x, w, b: _F(x).linear(x, w, b), [(5, 3), (4, 3), (4,)]),
    "linear-transposed": (lambda x, w: _F(x).linear(x, w), [T(3, 5), T(3, 4)]),
    "linear-batched": (lambda x, w, b: _F(x).linear(x, w, b), [(2, 5, 3), (4, 3), (4,)]),
    "linear-vector-weight": (lambda x, w: _F(x).linear(x, w), [(2, 3), (3,)]),
    "bilinear": (lambda a, b, w, c: _F(a).bilinear(a, b, w, c), [(4, 3), (4, 2), (5, 3, 2), (5,)]),
    "layer-norm-affine": (lambda x, w, b: _F(x).layer_norm(x, (2, 3), w, b, eps=1e-3), [(4, 2, 3), (2, 3), (2, 3)]),
    "batch-norm-train": (lambda x, w, b: _F(x).batch_norm(x, None, None, w, b, training=True), [(4, 3, 2), (3,), (3,)]),
    "sdpa": (lambda q, k, v: _F(q).scaled_dot_product_attention(q, k, v), [(2, 3, 4), (2, 5, 4), (2, 5, 6)]),
    "sdpa-4d-causal": (lambda q, k, v: _F(q).scaled_dot_product_attention(q, k, v, is_causal=True),
                       [(2, 2, 4, 3), (2, 2, 4, 3), (2, 2, 4, 3)]),
    "sdpa-scale": (lambda q, k, v: _F(q).scaled_dot_product_attention(q, k, v, scale=0.3), [(3, 4), (5, 4), (5, 2)]),
    "sdpa-float-mask": (lambda q, k, v, m: _F(q).scaled_dot_product_attention(q, k, v, attn_mask=m),
                        [(2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 5)]),
    "prelu": (lambda x, w: _F(x).prelu(x, w), [(3, 4, 2), (4,)]),
    "prelu-shared": (lambda x, w: _F(x).prelu(x, w), [(3, 4), (1,)]),
    "prelu-1d": (lambda x, w: _F(x).prelu(x, w), [(5,), (1,)]),
    "rms-norm-weight": (lambda x, w: _F(x).rms_norm(x, (2, 3), w), [(4, 2, 3), (2, 3)]),
    "instance-norm-affine": (lambda x, w, b: _F(x).instance_norm(x, weight=w, bias=b, eps=1e-3),
                             [(3, 2, 5), (2,), (2,)]),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(MULTI))
def test_multi_matches_torch(name, dtype):
    fn, specs = MULTI[name]
    run_both(fn, None, [s if isinstance(s, Arg) else Arg(s) for s in specs], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_activation_kinks_match_torch(dtype):
    x = np.array([-1.0, 0.0, 1.0, 40.0, -40.0], dtype)
    for name, kwargs in (("relu", {}), ("leaky_relu", {"negative_slope": 0.1}), ("elu", {}), ("softplus", {})):
        grads = []
        for lib in (tidu, torch):
            xt = lib.tensor(x, requires_grad=True)
            getattr(lib.nn.functional, name)(xt, **kwargs).sum().backward()
            grads.append(xt.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_eval_and_running_update(dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3, 2)).astype(dtype)
    mean, var = rng.normal(size=3).astype(dtype), rng.uniform(1, 2, 3).astype(dtype)
    stats = {lib: (lib.tensor(mean.copy()), lib.tensor(var.copy())) for lib in (tidu, torch)}
    for training in (True, False):
        outs = [lib.nn.functional.batch_norm(lib.tensor(x), *stats[lib], training=training, momentum=0.3)
                for lib in (tidu, torch)]
        np.testing.assert_allclose(outs[0].numpy(), outs[1].numpy(), rtol=1e-5, atol=1e-6)
        for a, b in zip(stats[tidu], stats[torch]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
            lib.nn.functional.batch_norm(lib.tensor(x), None, None, training=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sdpa_bool_mask(dtype):
    mask = np.random.default_rng(2).uniform(size=(3, 5)) > 0.4
    mask[:, 0] = True  # every query sees a key

    def fn(q, k, v):  # noqa: ANN001, ANN202
        return _F(q).scaled_dot_product_attention(q, k, v, attn_mask=_lib(q).tensor(mask))

    run_both(fn, None, [Arg((2, 3, 4)), Arg((2, 5, 4)), Arg((2, 5, 4))], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sdpa_fully_masked_rows_are_zero_like_torch(dtype):
    mask = np.array([[True, False, True], [False, False, False]])

    def fn(q, k, v):  # noqa: ANN001, ANN202
        return _F(q).scaled_dot_product_attention(q, k, v, attn_mask=_lib(q).tensor(mask))

    run_both(fn, None, [Arg((2, 2, 4)), Arg((2, 3, 4)), Arg((2, 3, 4))], dtype)


def test_sdpa_errors():
    q = tidu.ones(2, 3)
    with pytest.raises(RuntimeError, match="attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tidu.ones(2, 2), is_causal=True)
    with pytest.raises(RuntimeError, match="do not fit"):
        F.scaled_dot_product_attention(q, tidu.ones(2, 4), q)


def test_sdpa_dropout_uses_tidu_rng():
    q = tidu.randn(2, 4, 3)
    tidu.manual_seed(1)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    tidu.manual_seed(1)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert a.tolist() == b.tolist()
    assert a.tolist() != F.scaled_dot_product_attention(q, q, q).tolist()


def test_softmax_dtype_and_implicit_dim():
    x = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    ours = F.softmax(tidu.tensor(x), dim=1, dtype=tidu.float64)
    ref = torch.nn.functional.softmax(torch.tensor(x), dim=1, dtype=torch.float64)
    assert ours.dtype is tidu.float64
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        implicit = F.softmax(tidu.tensor(x))
    np.testing.assert_allclose(implicit.numpy(), torch.softmax(torch.tensor(x), 1).numpy(), rtol=1e-6)
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.log_softmax(tidu.ones(2, 3), dim=2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):  # PyTorch's class and text
        F.softmax(tidu.tensor([1, 2]), dim=0)


def test_log_softmax_of_inf_rows_like_torch():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]], np.float32)
    for fn in ("softmax", "log_softmax"):
        ours = getattr(F, fn)(tidu.tensor(x), dim=1).numpy()
        ref = getattr(torch.nn.functional, fn)(torch.tensor(x), dim=1).numpy()
        np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
        np.testing.assert_allclose(ours, ref, rtol=1e-6)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_second_order_matches_torch(fn):
    x = np.random.default_rng(0).normal(size=(2, 4))
    w = np.random.default_rng(1).normal(size=(2, 4))
    grads = []
    for lib in (tidu, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = (getattr(lib.nn.functional, fn)(xt, dim=1) * lib.tensor(w)).sum()
        (g,) = lib.autograd.grad(y, xt, create_graph=True)
        (g * g).sum().backward()
        grads.append(xt.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_forward_mode_through_cross_entropy():
    x = np.random.default_rng(0).normal(size=(3, 4))
    t = np.array([0, 3, 1])
    v = np.random.default_rng(1).normal(size=(3, 4))
    _, ours = tidu.func.jvp(lambda a: F.cross_entropy(a, tidu.tensor(t)), (tidu.tensor(x),), (tidu.tensor(v),))
    _, ref = torch.func.jvp(lambda a: torch.nn.functional.cross_entropy(a, torch.tensor(t)), (torch.tensor(x),),
                            (torch.tensor(v),))
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-10)


def test_one_hot_matches_torch():
    t = np.array([[0, 3], [2, 1]])
    for num in (-1, 5):
        ours = F.one_hot(tidu.tensor(t), num)
        ref = torch.nn.functional.one_hot(torch.tensor(t), num)
        assert ours.dtype is tidu.int64 and ours.tolist() == ref.tolist()
    assert F.one_hot(tidu.tensor([], dtype=tidu.int64), 3).shape == (0, 3)
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes"):
            lib.nn.functional.one_hot(lib.tensor([3]), 2)
        with pytest.raises(RuntimeError, match="Class values must be non-negative"):
            lib.nn.functional.one_hot(lib.tensor([-1]), 2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_functional(dtype):
    idx = np.array([[1, 0], [3, 3]])

    def fn(w):  # noqa: ANN001, ANN202
        return _F(w).embedding(_lib(w).tensor(idx), w, padding_idx=3)

    run_both(fn, None, [Arg((4, 3))], dtype)
    with pytest.raises(RuntimeError, match="scalar types: Long, Int"):
        F.embedding(tidu.tensor([1.0]), tidu.ones(2, 2))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pads", [((2, 3), (1, 2)), ((2, 3, 4), (2, 1)), ((2, 3, 4), (0, 3, 2, 1)),
                                        ((1, 2, 3, 4), (1, 1, 2, 0)), ((1, 1, 2, 3, 4), (1, 0, 0, 2, 1, 1)),
                                        ((2, 3, 4), (0, 0))])
def test_pad_edge_modes_match_torch(mode, shape, pads, dtype):
    run_both(lambda x: _F(x).pad(x, pads, mode=mode), None, [Arg(shape)], dtype)


def test_pad_edge_mode_errors_like_torch():
    for lib in (tidu, torch):
        F_ = lib.nn.functional
        with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D input tensor"):
            F_.pad(lib.ones(1, 2, 3, 4), (1, 2), mode="reflect")
        with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
            F_.pad(lib.ones(1, 2, 3), (3, 0), mode="reflect")
        with pytest.raises(RuntimeError, match="wrapping around more than once"):
            F_.pad(lib.ones(1, 2, 3), (4, 0), mode="circular")
        with pytest.raises(NotImplementedError):
            F_.pad(lib.ones(1, 2, 3), (1, 0), mode="mirror")


def test_pad_errors_like_torch():
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
            lib.nn.functional.pad(lib.ones(2, 2), (1,))
        with pytest.raises(RuntimeError, match="Padding length"):
            lib.nn.functional.pad(lib.ones(2), (1, 1, 1, 1))


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(1x3 and 4x2\)"):
        F.linear(tidu.ones(3), tidu.ones(2, 4))
    with pytest.raises(RuntimeError, match="bilinear"):
        F.bilinear(tidu.ones(2, 3), tidu.ones(2, 2), tidu.ones(4, 3, 3))


@pytest.mark.parametrize("shapes", [((3,), (3,), None), ((2, 3), (3,), None), ((2, 3), (3,), (1,)),
                                    ((3,), (3,), ()), ((2, 3), (3,), ()), ((2, 2, 3), (3,), ()), ((2, 2, 3), (3,), (1,)),
                                    ((2, 3), (4, 3), (4,)), ((3,), (4, 3), (1,))])
def test_linear_of_a_1d_weight_takes_no_bias_as_in_torch(shapes: tuple) -> None:
    x, w, b = shapes
    results = []
    for lib in (torch, tidu):
        args = [lib.ones(x) * 0.5, lib.ones(w) * 2.0, None if b is None else lib.ones(b)]
        try:
            results.append(lib.nn.functional.linear(*args).tolist())
        except RuntimeError as e:
            results.append(str(e).split(" (linear")[0])
    assert results[1] == results[0]


def test_dropout_functional():
    x = tidu.ones(4)
    assert F.dropout(x, 0.0) is x and F.dropout(x, 0.9, training=False) is x
    with pytest.raises(ValueError, match="between 0 and 1, but got -0.1"):
        F.dropout(x, -0.1)


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
    dim=st.integers(-3, 2),
    dtype=st.sampled_from(FLOATS),
    data=st.data(),
)
def test_fuzz_softmax_and_cross_entropy(shape, dim, dtype, data):
    dim = dim % len(shape) if -len(shape) <= dim < len(shape) else 0
    for fn in ("softmax", "log_softmax"):
        run_both(lambda x, fn=fn: getattr(_F(x), fn)(x, dim=dim), None, [Arg(tuple(shape), low=-5, high=5)], dtype)
    classes = shape[1] if len(shape) > 1 else shape[0]
    target_shape = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    t = np.array(data.draw(st.lists(st.integers(0, classes - 1), min_size=int(np.prod(target_shape)),
                                    max_size=int(np.prod(target_shape))))).reshape(target_shape)
    smoothing = data.draw(st.sampled_from([0.0, 0.1]))

    def ce(x):  # noqa: ANN001, ANN202
        return _F(x).cross_entropy(x, _lib(x).tensor(t), label_smoothing=smoothing)

    run_both(ce, None, [Arg(tuple(shape))], dtype)


@pytest.mark.parametrize("weight, bias, name, shape", [((3,), (4,), "weight", [3]), ((1,), None, "weight", [1]),
                                                        (None, (3,), "bias", [3])])
def test_layer_norm_parameter_shapes_are_checked_like_torch(weight: tuple | None, bias: tuple | None, name: str,
                                                            shape: list) -> None:
    message = (f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape {shape} and "
               "normalized_shape = [4]")
    for lib in (torch, tidu):
        w = None if weight is None else lib.ones(*weight)
        b = None if bias is None else lib.ones(*bias)
        with pytest.raises(RuntimeError, match=message.replace("[", r"\[").replace("]", r"\]")):
            lib.nn.functional.layer_norm(lib.ones(2, 4), (4,), w, b)


def test_layer_norm_affine_primitive_names_both_shapes() -> None:
    from tidu.primitives.nn import layer_norm_affine

    with pytest.raises(RuntimeError, match=r"expected bias of shape \[4\] .* input \[2, 4\]\), got \[3\]"):
        layer_norm_affine.bind(tidu.ones(2, 4), tidu.ones(4), tidu.ones(3), k=1, eps=1e-5)
    with pytest.raises(RuntimeError, match="weight has dtype float64, input float32"):
        layer_norm_affine.bind(tidu.ones(2, 4), tidu.ones(4, dtype=tidu.float64), tidu.ones(4), k=1, eps=1e-5)


@pytest.mark.parametrize("fn,x,other,kwargs", [
    ("normalize", [[3.0, 4.0], [0.0, 0.0], [1e-13, 0.0]], None, {}),
    ("normalize", [[0.0, 1.0, 2.0], [3.0, -4.0, 5.0]], None, {"p": 1, "dim": 0}),
    ("normalize", [[0.0, 1.0, 2.0], [3.0, -4.0, 5.0]], None, {"p": float("inf")}),
    ("cosine_similarity", [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], [1.0, -1.0, 2.0], {"dim": -1}),
    ("cosine_similarity", [[[1.0, -2.0], [0.5, 3.0]], [[0.0, 0.0], [2.0, 2.0]]], [[[1.0, 2.0]], [[-1.0, 0.5]]], {}),
])
def test_normalize_and_cosine_similarity_match_torch(fn: str, x: list, other: list | None, kwargs: dict) -> None:
    """Values and gradients, zero vectors (a norm below eps) included."""
    results = []
    for lib in (torch, tidu):
        leaf = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        args = [leaf] if other is None else [leaf, lib.tensor(other, dtype=lib.float64)]
        out = getattr(lib.nn.functional, fn)(*args, **kwargs)
        (out * lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        results.append((out.detach().numpy(), leaf.grad.numpy()))
    for ours, ref in zip(results[1], results[0]):
        assert ours.shape == ref.shape
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-12)


_KINKS = [-7.0, -6.0, -4.0, -3.0, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 2.9, 3.0, 3.5, 6.0, 6.5, -200.0, 30.0]


@pytest.mark.parametrize("fn,kwargs", [
    ("hardtanh", {}), ("hardtanh", {"min_val": -2.0, "max_val": 3.0}), ("relu6", {}), ("hardsigmoid", {}),
    ("hardswish", {}), ("mish", {}), ("logsigmoid", {}), ("softsign", {}), ("selu", {}), ("celu", {"alpha": 0.5}),
    ("softshrink", {"lambd": 1.0}), ("hardshrink", {"lambd": 1.0}), ("tanhshrink", {}),
    ("threshold", {"threshold": 1.0, "value": -2.0}), ("prelu", {}),
])
def test_hard_and_smooth_activations_match_torch_at_their_kinks(fn: str, kwargs: dict) -> None:
    """Values, gradients (PyTorch's conventions at each kink) and second derivatives, float64."""
    results = []
    for lib in (torch, tidu):
        x = lib.tensor(_KINKS + [float("inf"), -float("inf")] * (fn not in ("mish", "softsign", "tanhshrink")), dtype=lib.float64,
                       requires_grad=True)
        if fn == "prelu":
            kwargs = {"weight": lib.tensor([0.3], dtype=lib.float64)}
        y = getattr(lib.nn.functional, fn)(x, **kwargs)
        weight = lib.arange(1, x.numel() + 1, dtype=lib.float64)
        (g,) = lib.autograd.grad(y, x, weight, create_graph=True)
        second = None
        if g.requires_grad and fn != "hardsigmoid":  # PyTorch has no derivative of hardsigmoid_backward
            second = lib.autograd.grad(g.sum(), x, allow_unused=True)[0]
        results.append((y.detach().numpy(), g.detach().numpy(), None if second is None else second.numpy()))
    (y_ref, g_ref, h_ref), (y, g, h) = results
    np.testing.assert_allclose(y, y_ref, rtol=1e-12, atol=0)
    # hardsigmoid: PyTorch's backward multiplies by 1/6 rounded to float32, even in float64
    # the ELU family: tidu's expm1 derivative is expm1(x) + 1, which cancels in the far negative tail
    elu_like = fn in ("selu", "celu")
    np.testing.assert_allclose(g, g_ref, rtol=1e-7 if fn == "hardsigmoid" else 1e-10 if elu_like else 1e-12,
                               atol=1e-80 if elu_like else 0)
    if h_ref is not None and np.any(h_ref):
        np.testing.assert_allclose(h, h_ref, rtol=1e-10, atol=1e-10)  # far tails: both near 0, differently


@pytest.mark.parametrize("fn,shapes,kwargs", [
    ("group_norm", [(3, 4, 5), (4,), (4,)], {"num_groups": 2}),
    ("group_norm", [(3, 4, 2, 3)], {"num_groups": 4, "eps": 1e-3}),
    ("group_norm", [(2, 6)], {"num_groups": 1}),
    ("adaptive_avg_pool2d", [(2, 3, 7, 5)], {"output_size": (3, 2)}),
    ("adaptive_avg_pool2d", [(2, 3, 7, 5)], {"output_size": 1}),
    ("adaptive_avg_pool2d", [(3, 7, 5)], {"output_size": (None, 4)}),
    ("adaptive_avg_pool2d", [(1, 2, 5, 4)], {"output_size": (8, 9)}),
    ("adaptive_avg_pool1d", [(2, 3, 7)], {"output_size": 3}),
    ("adaptive_avg_pool1d", [(3, 7)], {"output_size": 4}),
])
def test_group_norm_and_adaptive_pools_match_torch(fn: str, shapes: list, kwargs: dict) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (torch, tidu):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        if fn == "group_norm":
            out = lib.nn.functional.group_norm(xs[0], kwargs["num_groups"], *xs[1:], eps=kwargs.get("eps", 1e-5))
        else:
            out = getattr(lib.nn.functional, fn)(xs[0], **kwargs)
        weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=lib.float64)
        (out * weight).sum().backward()
        results.append([out.detach().numpy(), *[x.grad.numpy() for x in xs]])
    for ours, ref in zip(results[1], results[0]):
        assert ours.shape == ref.shape
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.group_norm(L.ones(2, 5, 3), 2)", "F.group_norm(L.ones(5), 5)", "F.group_norm(L.ones(2, 4, 3), 2, L.ones(3))",
    "L.nn.GroupNorm(2, 5)", "F.adaptive_avg_pool1d(L.ones(2), 1)", "F.hardtanh(L.ones(2), 1.0, -1.0)",
])
def test_group_norm_pool_and_activation_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"F": L.nn.functional})


_RESAMPLE = [
    ((2, 3, 5, 4), {"scale_factor": 2}), ((2, 3, 5, 4), {"size": (7, 3)}), ((2, 3, 5, 4), {"scale_factor": 0.7}),
    ((2, 3, 5, 4), {"size": (7, 3), "mode": "bilinear"}),
    ((2, 3, 5, 4), {"size": (7, 9), "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 4), {"scale_factor": 1.7, "mode": "bilinear"}),
    ((2, 3, 5, 4), {"scale_factor": (2.5, 0.6), "mode": "bilinear"}),
    ((2, 3, 5, 4), {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True}),
    ((2, 3, 7), {"scale_factor": 3, "mode": "linear"}), ((2, 3, 7), {"size": 4, "mode": "linear", "align_corners": True}),
    ((2, 3, 7), {"size": 1, "mode": "linear", "align_corners": True}), ((2, 3, 7), {"size": 10, "mode": "nearest-exact"}),
    ((2, 3, 5, 4), {"scale_factor": 1.3, "mode": "nearest-exact"}), ((2, 3, 5, 4), {"size": (3, 2), "mode": "area"}),
    ((1, 2, 3, 4, 5), {"scale_factor": 2, "mode": "trilinear"}), ((1, 2, 3, 4, 5), {"size": (2, 5, 3)}),
    ((2, 3, 5, 4), {"scale_factor": 2, "mode": "bicubic"}), ((2, 3, 5, 4), {"size": (3, 7), "mode": "bicubic"}),
    ((2, 3, 5, 4), {"size": (9, 6), "mode": "bicubic", "align_corners": True}),
    ((2, 3, 5, 4), {"scale_factor": (0.6, 1.7), "mode": "bicubic"}), ((1, 1, 1, 2), {"size": (3, 1), "mode": "bicubic"}),
    ((2, 3, 5, 4), {"size": (1, 2), "mode": "bicubic", "align_corners": True}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shape,kwargs", _RESAMPLE)
def test_interpolate_matches_torch(shape: tuple, kwargs: dict, dtype: str) -> None:
    """Values and gradients; source positions in the input's precision, as PyTorch's kernels."""
    x = np.random.default_rng(0).standard_normal(shape)
    results = []
    for lib in (torch, tidu):
        xt = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out = lib.nn.functional.interpolate(xt, **kwargs)
        weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=getattr(lib, dtype))
        (out * weight).sum().backward()
        results.append((out.detach().numpy(), xt.grad.numpy()))
    tol = 1e-12 if dtype == "float64" else 2e-6
    for ours, ref in zip(results[1], results[0]):
        assert ours.shape == ref.shape
        np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol)


def test_interpolate_on_cuda_matches_the_cpu() -> None:
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 4))
    outs = []
    for device in ("cpu", "cuda"):
        xt = tidu.tensor(x, device=device, requires_grad=True)
        out = tidu.nn.functional.interpolate(xt, scale_factor=1.5, mode="bilinear") + \
            tidu.nn.functional.interpolate(xt, size=(6, 6)).mean()
        out.sum().backward()
        outs.append((out.detach().cpu().numpy(), xt.grad.cpu().numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.interpolate(x, scale_factor=2, align_corners=True)", "F.interpolate(x)", "F.interpolate(x, size=2, scale_factor=2)",
    "F.interpolate(x[0], scale_factor=2, mode='bilinear')", "F.interpolate(x, scale_factor=2, mode='linear')",
    "F.interpolate(x, mode='foo', size=2)", "F.interpolate(x, size=(2, 2, 2))",
])
def test_interpolate_errors_match_torch(call: str) -> None:
    ref, ours = errors_of(call, lambda L: {"F": L.nn.functional, "x": L.ones(1, 1, 3, 4)})
    assert (ours[0], ours[1].split(" (got")[0]) == (ref[0], ref[1].split(" (got")[0])


@pytest.mark.parametrize("call", [
    "F.celu(L.ones(2), 0.0)", "F.prelu(L.ones(2, 3), L.ones(2))", "F.prelu(L.ones(()), L.ones(2))",
    "F.prelu(L.ones(2, 3), L.ones(1, 1))", "F.prelu(L.ones(3), L.ones(3))", "F.softshrink(L.ones(2), -1.0)",
    "F.glu(L.ones(2, 3))", "F.glu(L.ones(()))", "F.selu(L.tensor([1, 2]))", "F.glu(L.tensor([1, 2]))",
    "F.rms_norm(L.ones(2, 3), (4,))", "F.rms_norm(L.ones(2, 3), (3,), L.ones(2))",
    "F.instance_norm(L.ones(2, 3, 1))", "F.pixel_shuffle(L.ones(2, 3), 2)", "F.pixel_shuffle(L.ones(5, 2, 3), 2)",
    "F.pixel_unshuffle(L.ones(1, 3, 3), 2)", "F.pixel_unshuffle(L.ones(1, 4, 3), 2)",
    "F.pixel_shuffle(L.ones(4, 2, 3), 0)", "F.dropout1d(L.ones(2, 3, 4, 5))", "F.dropout1d(L.ones(2, 3), p=2)",
    "F.max_pool1d(L.ones(2, 3, 4, 5), 2)", "F.avg_pool1d(L.ones(2), 2)", "F.max_pool1d(L.ones(1, 3, 2), 3)",
    "F.avg_pool1d(L.ones(1, 3, 2), 3)", "F.max_pool1d(L.ones(1, 3, 5), 2, padding=2)",
    "F.avg_pool1d(L.ones(1, 3, 5), 2, padding=2)", "F.max_pool1d(L.ones(1, 3, 5), 0)",
    "F.avg_pool1d(L.ones(1, 3, 5), (2, 2))", "F.max_pool1d(L.ones(1, 3, 5, dtype=L.long), 2)",
])
def test_new_functional_errors_match_torch(call: str) -> None:
    ref, ours = errors_of(call, lambda L: {"F": L.nn.functional})
    assert (ours[0], ours[1].replace("tidu.", "torch.")) == ref


def test_max_pool1d_indices_match_torch() -> None:
    x = np.random.default_rng(0).standard_normal((2, 3, 9))
    ours = F.max_pool1d(tidu.tensor(x), 3, 2, 1, return_indices=True)
    ref = torch.nn.functional.max_pool1d(torch.tensor(x), 3, 2, 1, return_indices=True)
    assert ours[1].dtype is tidu.int64 and ours[1].tolist() == ref[1].tolist()
    np.testing.assert_array_equal(ours[0].numpy(), ref[0].numpy())


@pytest.mark.parametrize("fn,ndim,lead", [("dropout1d", 3, 2), ("dropout1d", 2, 1), ("dropout2d", 4, 2),
                                          ("dropout2d", 3, 2)])
def test_channel_dropout_structure_matches_torch(fn: str, ndim: int, lead: int) -> None:
    """Both libraries zero whole channels at rate p and scale the rest by 1/(1-p); the gradient is the
    same mask; not training, the input comes back."""
    shape = (40, 50, 3, 2)[:ndim] if lead == 2 else (4000, 3)
    p = 0.3
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=shape)
    for lib in (torch, tidu):
        lib.manual_seed(0)
        xt = lib.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(lib.nn.functional, fn)(xt, p)
        y.sum().backward()
        scale = (y / xt).detach().numpy().reshape(*shape[:lead], -1)
        assert np.allclose(scale, scale[..., :1])  # one draw per channel
        assert set(np.round(np.unique(scale), 12)) <= {0.0, round(1 / (1 - p), 12)}
        assert abs((scale[..., 0] == 0).mean() - p) < 0.05
        np.testing.assert_allclose(xt.grad.numpy(), (y / xt).detach().numpy())
        np.testing.assert_array_equal(getattr(lib.nn.functional, fn)(xt, p, training=False).detach().numpy(), x)


def test_gumbel_softmax_samples_follow_torch() -> None:
    """The argmax of a soft sample is categorical with probabilities softmax(logits) (Gumbel-max),
    in both libraries; hard samples are its one-hot; every soft sample sums to 1 along ``dim``."""
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    counts = []
    for lib in (torch, tidu):
        lib.manual_seed(0)
        x = lib.tensor(np.tile(logits, (20000, 1)).T.copy())  # the classes along dim 0
        soft = lib.nn.functional.gumbel_softmax(x, tau=0.5, dim=0)
        np.testing.assert_allclose(soft.sum(0).numpy(), 1.0, rtol=1e-12)
        lib.manual_seed(0)
        hard = lib.nn.functional.gumbel_softmax(x, tau=0.5, hard=True, dim=0)
        assert hard.dtype == soft.dtype and set(np.unique(hard.numpy())) == {0.0, 1.0}
        counts.append(np.bincount(soft.argmax(0).numpy(), minlength=4) / 20000)
        np.testing.assert_array_equal(hard.argmax(0).numpy(), soft.argmax(0).numpy())
    np.testing.assert_allclose(counts[1], counts[0], atol=0.015)
    np.testing.assert_allclose(counts[1], np.exp(logits), atol=0.015)


@pytest.mark.parametrize("tau", [1.0, 0.3])
def test_gumbel_softmax_gradients_are_the_soft_samples_like_torch(tau: float) -> None:
    """The soft sample's gradient is softmax's at its own sample (checked with torch's softmax backward
    at logits ``tau * log(sample)``); the hard sample passes the very same gradient (straight-through)."""
    rng = np.random.default_rng(0)
    logits, w = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    grads = []
    for hard in (False, True):
        tidu.manual_seed(3)
        x = tidu.tensor(logits, requires_grad=True)
        y = F.gumbel_softmax(x, tau=tau, hard=hard)
        (y * tidu.tensor(w)).sum().backward()
        grads.append((y.detach().numpy(), x.grad.numpy()))
    (soft, soft_grad), (hard, hard_grad) = grads
    np.testing.assert_array_equal(hard, np.eye(4)[soft.argmax(1)])
    np.testing.assert_array_equal(hard_grad, soft_grad)
    z = torch.tensor(tau * np.log(soft), requires_grad=True)
    (torch.softmax(z / tau, dim=1) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(soft_grad, z.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.leaky_relu(L.tensor([1, 2]))", "F.leaky_relu(L.tensor([True]))", "F.hardtanh(L.tensor([True, False]))",
    "F.binary_cross_entropy(L.tensor([0.5, 0.2]), L.tensor([2.0, 0.0]))",
    "F.binary_cross_entropy(L.tensor([1.5]), L.tensor([2.0]))",  # the input is checked first
])
def test_integer_activations_and_bce_targets_raise_like_pytorch(call: str) -> None:
    assert_same_error(call, lambda L: {"F": L.nn.functional})


@pytest.mark.parametrize("call", ["F.hardtanh(L.tensor([-3, 0, 3]), -0.5, 2.5)", "F.relu6(L.tensor([-3, 0, 7]))",
                                  "F.hardtanh(L.tensor([-3, 0, 3], dtype=L.int8))"])
def test_hardtanh_of_integers_clamps_in_their_dtype(call: str) -> None:
    ours, ref = (eval(call, {"L": L, "F": L.nn.functional}) for L in (tidu, torch))  # noqa: S307
    assert (str(ours.dtype).split(".")[-1], ours.tolist()) == (str(ref.dtype).split(".")[-1], ref.tolist())
