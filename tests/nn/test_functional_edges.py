"""``nn.functional`` at the edges where a plain composition's derivative is not PyTorch's: saturated
probabilities, every target ignored, clamps on the border, zero windows; and arguments and
dtypes that differed. Each against PyTorch."""

import numpy as np
import pytest
import torch

import tidu


def grads(lib, make, arrays, wrt, dtype="float64"):
    """``make(lib, *tensors)``'s value and the gradients of its sum in the tensors ``wrt``."""
    ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=i in wrt) for i, a in enumerate(arrays)]
    out = make(lib, *ts)
    gs = lib.autograd.grad(out.sum(), [ts[i] for i in wrt], allow_unused=True) if wrt else []
    return out.detach().numpy(), [None if g is None else g.numpy() for g in gs]


def assert_like_torch(make, arrays, wrt, rtol=1e-7, dtype="float64"):
    ours, theirs = grads(tidu, make, arrays, wrt, dtype), grads(torch, make, arrays, wrt, dtype)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=rtol, atol=1e-12)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12)


def test_binary_cross_entropy_derivatives_are_pytorchs_at_saturated_probabilities():
    """PyTorch's ``(x - t) / max(x (1 - x), 1e-12)``: finite at 0 and 1 (the clamped logs'
    derivative is NaN there), and PyTorch's second derivatives inside (0, 1)."""
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.3, 0.9, 1e-20, 1 - 1e-15])
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.2, 0.5, 0.3, 0.4])
    w = np.arange(1.0, 9.0)
    assert_like_torch(lambda L, x, t, w: L.nn.functional.binary_cross_entropy(x, t, w, reduction="none"), [p, y, w], [0])
    assert_like_torch(lambda L, x, t: L.nn.functional.binary_cross_entropy(x, t), [p[4:6], y[4:6]], [0, 1])
    assert_like_torch(lambda L, x, t: L.nn.functional.binary_cross_entropy(x, t), [p[:4], y[:4]], [0], dtype="float32")
    for lib in (tidu, torch):  # second derivatives inside (0, 1), the mixed one too
        x = lib.tensor(p[4:6], requires_grad=True)
        t = lib.tensor(y[4:6], requires_grad=True)
        (gx,) = lib.autograd.grad(lib.nn.functional.binary_cross_entropy(x, t, reduction="sum"), x, create_graph=True)
        second = lib.autograd.grad(gx.sum(), (x, t))
        if lib is tidu:
            ours = [g.numpy() for g in second]
        else:
            for a, b in zip(ours, second):
                np.testing.assert_allclose(a, b.numpy(), rtol=1e-10)


@pytest.mark.parametrize("make", [
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([-100, -100])),
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor([-100, -100]), label_smoothing=0.1),
    lambda L, x: L.nn.functional.nll_loss(x[0], L.tensor(1), ignore_index=1),
    lambda L, x: L.nn.functional.cross_entropy(x.reshape(1, 3, 2), L.tensor([[-100, -100]])),
], ids=["ignored", "ignored_smoothed", "unbatched", "spatial"])
def test_a_mean_over_no_counted_target_is_nan_with_zero_gradients(make):
    """Every target ignored (or weighted 0): the loss is NaN and the gradient 0, as PyTorch's (a
    batch of padding must not poison the parameters)."""
    x = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    ours, theirs = grads(tidu, make, [x], [0]), grads(torch, make, [x], [0])
    assert np.isnan(ours[0]) and np.isnan(theirs[0])
    np.testing.assert_array_equal(ours[1][0], theirs[1][0])
    assert not ours[1][0].any()


def test_piecewise_constant_functions_have_exact_zero_derivatives():
    """``sign``, ``floor``... carry zeros (a select), not ``0 * dx``: an infinite cotangent through
    them (``sqrt`` at 0 in ``lp_pool``'s all-zero windows) gives 0, not NaN."""
    x = np.array([0.0, 1.5, -2.0])
    assert_like_torch(lambda L, x: (L.sign(x) * L.relu(x)) ** 0.5, [x], [0])
    assert_like_torch(lambda L, x: L.floor(x) * x + L.round(x) + L.trunc(x) + L.ceil(x), [x], [0])
    windows = np.array([[[[0.0, 0, 1, 2], [0.0, 0, 3, 4]]]])
    assert_like_torch(lambda L, x: L.nn.functional.lp_pool2d(x, 2, 2), [windows], [0])
    assert_like_torch(lambda L, x: L.nn.functional.lp_pool1d(x[0], 3, 2), [windows], [0])


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_clamps_with_a_zero_derivative_on_the_border(padding_mode, align_corners):
    """PyTorch's clip counts the border itself as outside: an identity grid with ``align_corners``
    puts its corners there (a spatial transformer's start)."""
    image = np.arange(12.0).reshape(1, 1, 3, 4)
    theta = np.array([[[1.0, 0, 0], [0, 1.0, 0]]])

    def sample(L, x, th):
        grid = L.nn.functional.affine_grid(th, [1, 1, 3, 4], align_corners=align_corners)
        return L.nn.functional.grid_sample(x, grid, padding_mode=padding_mode, align_corners=align_corners)

    def sample_at(L, x, g):
        return L.nn.functional.grid_sample(x, g, padding_mode=padding_mode, align_corners=align_corners)

    if align_corners:
        assert_like_torch(sample, [image, theta], [0, 1])
    points = np.array([[[[0.75, 0.2], [1.3, -1.2]]]])
    assert_like_torch(sample_at, [image, points], [0, 1])


def test_weighted_mse_and_l1_mean_divides_by_the_weights_sum():
    x, w = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, 0.5], [0.5, 0.25]])
    for reduction in ("mean", "sum", "none"):
        for loss in ("mse_loss", "l1_loss", "huber_loss"):
            assert_like_torch(lambda L, x, w, loss=loss, reduction=reduction: getattr(L.nn.functional, loss)(
                x, L.zeros_like(x), weight=w, reduction=reduction), [x, w], [0])
    for lib in (tidu, torch):
        for loss in ("mse_loss", "l1_loss", "huber_loss"):
            with pytest.raises(ValueError, match="Weights and input must have the same size"):
                getattr(lib.nn.functional, loss)(lib.ones(2, 2), lib.zeros(2, 2), weight=lib.ones(2))


def test_constant_padding_keeps_integer_and_bool_dtypes():
    for make in (lambda L: L.nn.functional.pad(L.tensor([[1, 2, 3]]), (1, 1), value=3.7),
                 lambda L: L.nn.functional.pad(L.tensor([[True, False]]), (1, 1), value=1),
                 lambda L: L.nn.functional.pad(L.tensor([[1, 2]], dtype=L.int8), (1, 0), value=-2.9)):
        ours, theirs = make(tidu), make(torch)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("mode", ["replicate", "circular"])
@pytest.mark.parametrize("pad", [(-1, 2), (2, -1), (-2, -2), (-1, 2, 1, -1), (1, 1, -1, -1)])
def test_negative_padding_crops_before_replicating_or_wrapping(mode, pad):
    x = np.arange(12.0).reshape(1, 1, 3, 4) if len(pad) == 4 else np.arange(5.0).reshape(1, 1, 5)
    assert_like_torch(lambda L, x: L.nn.functional.pad(x, pad, mode=mode), [x], [0])


@pytest.mark.parametrize("mode,shape", [("linear", (1, 1, 3)), ("bilinear", (1, 1, 4, 3)), ("trilinear", (1, 1, 2, 4, 3)),
                                        ("nearest", (1, 1, 4, 3)), ("nearest", (1, 1, 3)), ("nearest-exact", (1, 1, 4, 3)),
                                        ("bicubic", (1, 1, 4, 3))])
def test_a_scale_factor_that_keeps_an_axis_size_follows_pytorch(mode, shape):
    """``floor(n * scale) == n``: PyTorch's linear kernels and its 2-D nearest one copy that axis;
    1-D and 3-D nearest, nearest-exact and bicubic resample it at ``1 / scale``."""
    x = np.random.default_rng(0).standard_normal(shape)
    copied = mode in ("linear", "bilinear", "trilinear") or mode == "nearest" and len(shape) == 4
    if copied:  # (where PyTorch resamples, its backward copies: its gradient is not its forward's)
        assert_like_torch(lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.3, mode=mode), [x], [0])
    ours, theirs = (L.nn.functional.interpolate(L.tensor(x), scale_factor=1.3, mode=mode) for L in (tidu, torch))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    "F.binary_cross_entropy(x, y, w64)", "F.binary_cross_entropy(x, y.double())", "F.binary_cross_entropy(x.double(), y)",
    "F.binary_cross_entropy_with_logits(x, y, pos_weight=w64)", "F.binary_cross_entropy_with_logits(x, y, weight=w64)",
    "F.cross_entropy(x[None], L.tensor([1]), weight=w64)", "F.nll_loss(x[None], L.tensor([1]), weight=w64)",
    "F.multi_margin_loss(x[None], L.tensor([1]), weight=w64)", "F.soft_margin_loss(x, y.double())",
    "F.huber_loss(x, y.double())", "F.cross_entropy(x[None].double(), L.tensor([1]), weight=L.tensor([1.0, 2.0]))",
    "F.cross_entropy(x[None], L.tensor([1]), weight=L.tensor([1.0, 2.0]), label_smoothing=0.1)",
])
def test_losses_take_weights_and_targets_of_other_dtypes_as_pytorch(call):
    """A float64 weight (or target) with a float32 input: cast to the input's dtype, or PyTorch's error."""
    got = []
    for L in (tidu, torch):
        env = {"L": L, "F": L.nn.functional, "x": L.tensor([0.3, 0.6]), "y": L.tensor([0.0, 1.0]),
               "w64": L.tensor([1.0, 2.0], dtype=L.float64)}
        try:
            out = eval(call, env)  # noqa: S307 - the calls above
            got.append((str(out.dtype).split(".")[-1], round(out.item(), 5)))
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


def test_cdist_inf_gives_each_tied_largest_coordinate_the_whole_gradient():
    assert_like_torch(lambda L, x, y: L.cdist(x, y, p=float("inf")), [np.array([[1.0, 0.0], [0.5, 3.0]]),
                                                                      np.array([[2.0, 1.0], [0.0, 0.0]])], [0, 1])


def test_scale_grad_by_freq_divides_each_rows_gradient_by_its_count():
    idx = np.array([[1, 1, 2], [1, 0, 2]])
    w = np.arange(18.0).reshape(6, 3)
    for padding_idx in (None, 1):
        assert_like_torch(lambda L, w, padding_idx=padding_idx: L.nn.functional.embedding(
            L.tensor(idx), w, padding_idx=padding_idx, scale_grad_by_freq=True), [w], [0])
    # embedding_bag: the documented rule (PyTorch's CPU kernel divides by the counts of other rows)
    for mode, per_row in (("sum", [1.0, 1.0, 1.0, 0, 0, 1.0]), ("mean", [1 / 4, (2 / 3 + 1 / 4) / 3, (1 / 3 + 1 / 4) / 2, 0, 0, 1 / 4])):
        weight = tidu.tensor(w, requires_grad=True)
        tidu.nn.functional.embedding_bag(tidu.tensor([1, 1, 2, 1, 0, 2, 5]), weight, tidu.tensor([0, 3]), mode=mode,
                                         scale_grad_by_freq=True).sum().backward()
        np.testing.assert_allclose(weight.grad.numpy()[:, 0], per_row)


def test_grouped_query_attention_repeats_key_and_value_heads():
    rng = np.random.default_rng(0)
    q, k, v = rng.random((1, 4, 3, 2)), rng.random((1, 2, 5, 2)), rng.random((1, 2, 5, 2))
    assert_like_torch(lambda L, q, k, v: L.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True,
                                                                                      is_causal=True), [q, k, v], [0, 1, 2])
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="must divide the number of heads"):
            lib.nn.functional.scaled_dot_product_attention(lib.rand(1, 3, 3, 2), lib.rand(1, 2, 5, 2),
                                                           lib.rand(1, 2, 5, 2), enable_gqa=True)


def test_linear_cross_entropy_conv_tbc_and_native_channel_shuffle():
    rng = np.random.default_rng(0)
    x, w, b = rng.random((4, 3)), rng.random((5, 3)), rng.random(5)
    assert_like_torch(lambda L, x, w, b: L.nn.functional.linear_cross_entropy(
        x, w, L.tensor([1, 0, 4, 2]), linear_bias=b, label_smoothing=0.1), [x, w, b], [0, 1, 2])
    assert_like_torch(lambda L, x, w, b: L.nn.functional.conv_tbc(x, w, b, 1),
                      [rng.random((5, 2, 3)), rng.random((3, 3, 4)), rng.random(4)], [0, 1, 2])
    assert_like_torch(lambda L, x: L.nn.functional.native_channel_shuffle(x, 2), [rng.random((1, 4, 2))], [])


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(3, 4), (2, 2), (11, 5), (1, 1)])
def test_antialiased_interpolation_matches_pytorch(mode, align_corners, size):
    """PyTorch's (and PIL's) antialiased resampling: each output a normalized sum under the filter
    widened by the downsampling factor."""
    x = np.random.default_rng(0).standard_normal((1, 2, 7, 9))
    assert_like_torch(lambda L, x: L.nn.functional.interpolate(x, size=size, mode=mode, align_corners=align_corners,
                                                               antialias=True), [x], [0], rtol=1e-9)
    assert_like_torch(lambda L, x: L.nn.functional.interpolate(x, scale_factor=0.3, mode=mode, antialias=True),
                      [x], [0], rtol=1e-9)
