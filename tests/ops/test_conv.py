"""conv1d, conv2d, max_pool2d and avg_pool2d against PyTorch: values, gradients (input, weight,
bias), second order, forward mode, ties in max pooling, and PyTorch's errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tests.test_torch_oracle import FLOATS, Arg, run_both
from tidu.backends.cpu.conv import conv_general

sys.path.insert(0, str(Path(__file__).parents[1] / "primitives"))  # the op_db rows and their references
import op_db  # noqa: E402,F401 - first: it imports rows_conv when complete
from rows_conv import conv_ref  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

# float32 sums of up to ~100 products: BLAS and PyTorch's kernels round differently
TOL32 = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-10, "atol": 1e-12}}

# name: (input shape, weight shape, bias?, keyword arguments)
CONV = {
    "plain": ((2, 3, 6, 5), (4, 3, 3, 3), True, {}),
    "batch1-nonsquare": ((1, 2, 7, 6), (3, 2, 3, 2), True, {}),
    "stride-pad": ((2, 2, 7, 6), (3, 2, 3, 3), True, dict(stride=2, padding=1)),
    "tuple-args": ((1, 3, 9, 8), (2, 3, 3, 2), False, dict(stride=(2, 3), padding=(2, 1), dilation=(2, 1))),
    "same": ((2, 2, 6, 5), (3, 2, 3, 2), True, dict(padding="same")),
    "same-dilated": ((2, 2, 6, 5), (3, 2, 2, 3), True, dict(padding="same", dilation=2)),
    "valid": ((2, 2, 6, 5), (3, 2, 2, 3), False, dict(padding="valid")),
    "groups": ((2, 4, 7, 6), (6, 2, 3, 3), True, dict(stride=2, padding=1, groups=2)),
    "depthwise": ((2, 4, 5, 5), (4, 1, 3, 3), True, dict(groups=4, padding="same")),
    "depthwise-mult": ((1, 3, 6, 6), (6, 1, 2, 2), False, dict(groups=3, stride=2)),
    "everything": ((2, 6, 8, 7), (4, 3, 3, 3), True, dict(stride=3, padding=4, dilation=2, groups=2)),
    "1x1": ((2, 3, 4, 4), (5, 3, 1, 1), True, {}),
    "kernel-equals-input": ((2, 2, 3, 3), (2, 2, 3, 3), True, {}),
    "unbatched": ((3, 6, 5), (4, 3, 3, 3), True, dict(padding=1)),
    "empty-batch": ((0, 3, 6, 5), (4, 3, 3, 3), True, {}),
}
CONV1D = {
    "plain": ((2, 3, 10), (4, 3, 3), True, {}),
    "stride-pad-dilation": ((2, 3, 10), (4, 3, 3), True, dict(stride=3, padding=2, dilation=2)),
    "groups": ((1, 6, 9), (6, 2, 4), True, dict(stride=2, groups=3)),
    "same-even-kernel": ((2, 2, 7), (3, 2, 4), False, dict(padding="same")),
    "unbatched": ((3, 8), (2, 3, 2), True, dict(padding=(1,))),
}


def _conv_fn(lib: Any, nd: int, bias: bool, kw: dict) -> Any:
    conv = (F.conv1d if nd == 1 else F.conv2d) if lib is torch else (tidu.conv1d if nd == 1 else tidu.conv2d)
    if bias:
        return lambda x, w, b: conv(x, w, b, **kw)
    return lambda x, w: conv(x, w, **kw)


def _conv_args(xs: tuple, ws: tuple, bias: bool) -> list[Arg]:
    return [Arg(xs), Arg(ws)] + ([Arg((ws[0],))] if bias else [])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", CONV)
def test_conv2d_matches_torch(name: str, dtype: str) -> None:
    xs, ws, bias, kw = CONV[name]
    run_both(_conv_fn(tidu, 2, bias, kw), _conv_fn(torch, 2, bias, kw), _conv_args(xs, ws, bias), dtype,
             tol=TOL32[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", CONV1D)
def test_conv1d_matches_torch(name: str, dtype: str) -> None:
    xs, ws, bias, kw = CONV1D[name]
    run_both(_conv_fn(tidu, 1, bias, kw), _conv_fn(torch, 1, bias, kw), _conv_args(xs, ws, bias), dtype,
             tol=TOL32[dtype])


def test_conv2d_noncontiguous_operands() -> None:
    def fn(lib: Any) -> Any:
        conv = tidu.conv2d if lib is tidu else F.conv2d
        return lambda x, w: conv(x.permute(1, 0, 3, 2), w.transpose(2, 3), stride=(1, 2))

    run_both(fn(tidu), fn(torch), [Arg((3, 2, 5, 6)), Arg((4, 3, 2, 3))], "float64")


def test_top_level_names_match_torch() -> None:
    x, w = np.random.default_rng(0).standard_normal((2, 2, 5, 5)), np.ones((1, 2, 2, 2))
    for name in ("conv2d", "max_pool2d", "avg_pool2d"):  # torch has no top-level avg_pool2d; tidu does
        ours = getattr(tidu, name)(tidu.tensor(x), *([tidu.tensor(w)] if name == "conv2d" else [2]))
        ref = getattr(torch, name, getattr(F, name))(torch.tensor(x), *([torch.tensor(w)] if name == "conv2d" else [2]))
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)


def _second_order(fn_tidu: Any, fn_torch: Any, arrays: list[np.ndarray]) -> None:
    """Gradients of <grad(<out, c>), r> w.r.t. every input, in both libraries."""
    rng = np.random.default_rng(1)
    ours = [tidu.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out_t = fn_torch(*theirs)
    c = rng.standard_normal(tuple(out_t.shape))
    g_t = torch.autograd.grad((out_t * torch.tensor(c)).sum(), theirs, create_graph=True)
    g_o = tidu.autograd.grad((fn_tidu(*ours) * tidu.tensor(c)).sum(), ours, create_graph=True)
    r = [rng.standard_normal(a.shape) for a in arrays]
    gg_t = torch.autograd.grad(sum((g * torch.tensor(q)).sum() for g, q in zip(g_t, r)), theirs, allow_unused=True)
    inner = sum((g * tidu.tensor(q)).sum() for g, q in zip(g_o, r))
    if not inner.requires_grad:  # the gradient is constant in the inputs (max pooling): all zero
        gg_o = (None,) * len(ours)
    else:
        gg_o = tidu.autograd.grad(inner, ours, allow_unused=True)
    for a, b in zip(g_o + gg_o, g_t + gg_t):
        if a is None or b is None:  # one side knows the term is zero
            other = b if a is None else a
            assert other is None or not other.detach().numpy().any()
            continue
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["groups", "everything", "same-dilated"])
def test_conv2d_second_order_matches_torch(name: str) -> None:
    xs, ws, _, kw = CONV[name]
    rng = np.random.default_rng(0)
    _second_order(_conv_fn(tidu, 2, False, kw), _conv_fn(torch, 2, False, kw),
                  [rng.standard_normal(xs), rng.standard_normal(ws)])


def test_conv1d_forward_mode_matches_torch() -> None:
    rng = np.random.default_rng(2)
    x, w, tx, tw = (rng.standard_normal(s) for s in [(2, 4, 9), (4, 2, 3)] * 2)
    kw = dict(stride=2, padding=2, dilation=2, groups=2)
    out, tangent = tidu.func.jvp(lambda a, b: tidu.conv1d(a, b, **kw), (tidu.tensor(x), tidu.tensor(w)),
                                 (tidu.tensor(tx), tidu.tensor(tw)))
    ref, ref_t = torch.func.jvp(lambda a, b: F.conv1d(a, b, **kw), (torch.tensor(x), torch.tensor(w)),
                                (torch.tensor(tx), torch.tensor(tw)))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    np.testing.assert_allclose(tangent.numpy(), ref_t.numpy(), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 2), groups=st.sampled_from([1, 2]), cin=st.integers(1, 2), cout=st.integers(1, 2),
    h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 3), kw=st.integers(1, 3),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)), padding=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    dilation=st.tuples(st.integers(1, 2), st.integers(1, 2)),
)
def test_conv2d_fuzz(n, groups, cin, cout, h, w, kh, kw, stride, padding, dilation) -> None:  # noqa: ANN001
    for size, k, p, d in zip((h, w), (kh, kw), padding, dilation):
        if size + 2 * p < d * (k - 1) + 1:
            return
    kwargs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    args = [Arg((n, cin * groups, h, w)), Arg((cout * groups, cin, kh, kw)), Arg((cout * groups,))]
    run_both(_conv_fn(tidu, 2, True, kwargs), _conv_fn(torch, 2, True, kwargs), args, "float64")


# --- pooling ---------------------------------------------------------------------------------
POOL = {
    "k2": ((2, 3, 6, 6), dict(kernel_size=2)),
    "k2-odd-input": ((2, 3, 7, 5), dict(kernel_size=2)),
    "stride-pad": ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1)),
    "ceil": ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    "ceil-no-pad": ((1, 2, 8, 9), dict(kernel_size=(3, 2), stride=(2, 3), ceil_mode=True)),
    "ceil-last-window-dropped": ((2, 2, 5, 5), dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    "overlapping": ((1, 2, 5, 5), dict(kernel_size=3, stride=1, padding=1)),
    "nonsquare": ((2, 1, 6, 7), dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1))),
    "unbatched": ((3, 5, 5), dict(kernel_size=2, stride=1)),
    "empty-batch": ((0, 2, 4, 4), dict(kernel_size=2)),
}
MAX_ONLY = {"dilated": ((2, 2, 9, 8), dict(kernel_size=3, stride=2, padding=1, dilation=2)),
            "dilated-ceil": ((1, 1, 8, 8), dict(kernel_size=2, stride=3, dilation=(2, 3), ceil_mode=True))}
AVG_ONLY = {
    "no-pad-count": ((2, 2, 6, 6), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    "ceil-no-pad-count": ((2, 2, 7, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                             count_include_pad=False)),
    "divisor": ((2, 2, 6, 6), dict(kernel_size=3, stride=2, padding=1, divisor_override=2)),
}


def _pool(lib: Any, name: str, kw: dict) -> Any:
    fn = getattr(F if lib is torch else tidu, name)
    return lambda x: fn(x, **kw)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", [*POOL, *MAX_ONLY])
def test_max_pool2d_matches_torch(case: str, dtype: str) -> None:
    shape, kw = {**POOL, **MAX_ONLY}[case]
    run_both(_pool(tidu, "max_pool2d", kw), _pool(torch, "max_pool2d", kw), [Arg(shape)], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", [*POOL, *AVG_ONLY])
def test_avg_pool2d_matches_torch(case: str, dtype: str) -> None:
    shape, kw = {**POOL, **AVG_ONLY}[case]
    run_both(_pool(tidu, "avg_pool2d", kw), _pool(torch, "avg_pool2d", kw), [Arg(shape)], dtype, tol=TOL32[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", ["overlapping", "ceil", "stride-pad", "dilated"])
def test_max_pool2d_ties_send_the_gradient_to_the_first_maximum(case: str, dtype: str) -> None:
    shape, kw = {**POOL, **MAX_ONLY}[case]
    data = np.random.default_rng(3).integers(0, 3, size=shape).astype(dtype)  # many ties
    x, tx = tidu.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (out, idx), (ref, ref_idx) = tidu.max_pool2d(x, return_indices=True, **kw), F.max_pool2d(
        tx, return_indices=True, **kw)
    c = np.random.default_rng(4).standard_normal(tuple(ref.shape)).astype(dtype)
    (out * tidu.tensor(c)).sum().backward()
    (ref * torch.tensor(c)).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    assert idx.dtype is tidu.int64
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_max_pool2d_all_equal_window_and_nan() -> None:
    data = np.zeros((1, 1, 4, 4))
    data[0, 0, 2, 3] = np.nan
    x, tx = tidu.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    out, ref = tidu.max_pool2d(x, 2), F.max_pool2d(tx, 2)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_pool_second_order_and_forward_mode() -> None:
    data = np.random.default_rng(5).permutation(50).reshape(1, 2, 5, 5) / 7.0
    for name, kw in [("max_pool2d", dict(kernel_size=3, stride=2, padding=1)),
                     ("avg_pool2d", dict(kernel_size=2, stride=1, padding=1, count_include_pad=False))]:
        _second_order(_pool(tidu, name, kw), _pool(torch, name, kw), [data])
        t = np.random.default_rng(6).standard_normal(data.shape)
        _, tangent = tidu.func.jvp(_pool(tidu, name, kw), (tidu.tensor(data),), (tidu.tensor(t),))
        _, ref_t = torch.func.jvp(_pool(torch, name, kw), (torch.tensor(data),), (torch.tensor(t),))
        np.testing.assert_allclose(tangent.numpy(), ref_t.numpy(), rtol=1e-12, atol=1e-12)


def test_max_pool2d_feeds_a_small_cnn_step() -> None:
    """conv -> relu -> max_pool -> avg_pool -> sum, gradients of both weights vs PyTorch."""
    rng = np.random.default_rng(7)
    x, w1, w2 = rng.standard_normal((2, 1, 8, 8)), rng.standard_normal((4, 1, 3, 3)), rng.standard_normal((3, 4, 2, 2))

    def net(lib: Any) -> Any:
        nn = tidu if lib is tidu else F

        def fn(x, w1, w2):  # noqa: ANN001, ANN202
            h = nn.max_pool2d(nn.relu(nn.conv2d(x, w1, padding=1)), 2)
            return nn.avg_pool2d(nn.conv2d(h, w2, stride=1, padding="same"), 2, ceil_mode=True)

        return fn

    run_both(net(tidu), net(torch), [Arg(x.shape), Arg(w1.shape), Arg(w2.shape)], "float64")


# --- errors ----------------------------------------------------------------------------------
def _z(*shape: int, dtype: str = "float32") -> np.ndarray:
    return np.zeros(shape, dtype)


BAD_CONV = [
    ("channels", "conv2d", (_z(2, 4, 5, 5), _z(6, 3, 3, 3)), {}, r"expected input\[2, 4, 5, 5\] to have 3 channels"),
    ("kernel-too-big", "conv2d", (_z(2, 3, 2, 2), _z(6, 3, 3, 3)), {}, r"padded input size per channel: \(2 x 2\)"),
    ("input-rank", "conv2d", (_z(2, 3), _z(6, 3, 3, 3)), {}, r"Expected 3D \(unbatched\) or 4D \(batched\) input"),
    ("groups-divide", "conv2d", (_z(2, 4, 5, 5), _z(3, 2, 3, 3)), dict(groups=2), "divisible by 2 at dimension 0"),
    ("bias", "conv2d", (_z(2, 3, 5, 5), _z(6, 3, 3, 3), _z(5)), {}, "expected bias to be 1-dimensional with 6"),
    ("padding-string", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(padding="foo"), "Invalid padding string"),
    ("same-strided", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(padding="same", stride=2), "strided"),
    ("negative-padding", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(padding=-1), "negative padding"),
    ("zero-stride", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(stride=0), "non-positive stride"),
    ("zero-dilation", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(dilation=0), "non-positive dilation"),
    ("zero-groups", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(groups=0), "non-positive groups"),
    ("stride-length", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3)), dict(stride=(1, 2, 3)), "list of 2 values"),
    ("dtype", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3, dtype="float64")), {}, "should be the same"),
    ("bias-dtype", "conv2d", (_z(1, 3, 5, 5), _z(6, 3, 3, 3), _z(6, dtype="float64")), {}, "bias type"),
    ("out-channels", "conv2d", (_z(2, 3, 5, 5), _z(0, 3, 3, 3)), {}, "at least 1 at dimension 0"),
    ("conv1d-padding-length", "conv1d", (_z(2, 3, 5), _z(6, 3, 3)), dict(padding=(1, 1)), "list of 1 values"),
    ("conv1d-channels", "conv1d", (_z(2, 2, 5), _z(6, 3, 3)), {}, "to have 3 channels, but got 2"),
]


@pytest.mark.parametrize("case", BAD_CONV, ids=lambda c: c[0])
def test_conv_errors_match_torch(case: tuple) -> None:
    _, name, arrays, kw, message = case
    with pytest.raises(RuntimeError):
        getattr(F, name)(*[torch.tensor(a) for a in arrays], **kw)
    with pytest.raises(RuntimeError, match=message):
        getattr(tidu, name)(*[tidu.tensor(a) for a in arrays], **kw)


def test_conv_error_names_both_shapes_before_any_kernel_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from tidu.primitives.conv import conv_general_dilated

    monkeypatch.setitem(conv_general_dilated.impls, "cpu", lambda *a, **k: pytest.fail("kernel ran"))
    with pytest.raises(RuntimeError, match=r"input \[2, 3, 2, 2\], weight \[6, 3, 3, 3\]"):
        tidu.conv2d(tidu.zeros(2, 3, 2, 2), tidu.zeros(6, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"weight of size \[6, 3, 3, 3\], expected input\[2, 4, 5, 5\]"):
        tidu.conv2d(tidu.zeros(2, 4, 5, 5), tidu.zeros(6, 3, 3, 3))


BAD_POOL = [
    ("output-too-small", (_z(1, 1, 2, 2),), dict(kernel_size=3), r"Given input size: \(1x2x2\)\. Calculated output"),
    ("pad-too-big", (_z(1, 1, 5, 5),), dict(kernel_size=3, padding=2), "pad should be at most half"),
    ("zero-stride", (_z(1, 1, 5, 5),), dict(kernel_size=3, stride=0), "stride should not be zero"),
    ("empty-channels", (_z(1, 0, 5, 5),), dict(kernel_size=2), "Expected 3D or 4D"),
]


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("case", BAD_POOL, ids=lambda c: c[0])
def test_pool_errors_match_torch(case: tuple, op: str) -> None:
    _, arrays, kw, message = case
    with pytest.raises(RuntimeError):
        getattr(F, op)(*[torch.tensor(a) for a in arrays], **kw)
    with pytest.raises(RuntimeError, match=message):
        getattr(tidu, op)(*[tidu.tensor(a) for a in arrays], **kw)


def test_pool_rank_error() -> None:
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        tidu.max_pool2d(tidu.zeros(5, 5), 2)
    with pytest.raises(RuntimeError):
        F.max_pool2d(torch.zeros(5, 5), 2)


@settings(max_examples=25, deadline=None)
@given(
    op=st.sampled_from(["max_pool2d", "avg_pool2d"]), h=st.integers(1, 8), w=st.integers(1, 8),
    k=st.tuples(st.integers(1, 3), st.integers(1, 3)), stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    pad=st.tuples(st.integers(0, 1), st.integers(0, 1)), ceil_mode=st.booleans(), flag=st.booleans(),
    ties=st.booleans(),
)
def test_pool2d_fuzz(op, h, w, k, stride, pad, ceil_mode, flag, ties) -> None:  # noqa: ANN001
    if any(2 * p > kk for p, kk in zip(pad, k)):
        return
    kw = dict(kernel_size=k, stride=stride, padding=pad, ceil_mode=ceil_mode)
    kw[("count_include_pad" if op == "avg_pool2d" else "return_indices")] = flag
    data = np.random.default_rng(h * 10 + w).integers(0, 3, (2, 2, h, w)) if ties else \
        np.random.default_rng(h * 10 + w).standard_normal((2, 2, h, w))
    x = tidu.tensor(data.astype(np.float64), requires_grad=True)
    tx = torch.tensor(data.astype(np.float64), requires_grad=True)
    try:
        ref = getattr(F, op)(tx, **kw)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(tidu, op)(x, **kw)
        return
    out = getattr(tidu, op)(x, **kw)
    if op == "max_pool2d" and flag:
        (out, idx), (ref, ref_idx) = out, ref
        np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    c = np.random.default_rng(0).standard_normal(tuple(ref.shape))
    (out * tidu.tensor(c)).sum().backward()
    (ref * torch.tensor(c)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_max_pool2d_integer_input() -> None:
    data = np.random.default_rng(8).integers(-5, 5, (1, 2, 5, 5))
    out, ref = tidu.max_pool2d(tidu.tensor(data), 2, ceil_mode=True), F.max_pool2d(torch.tensor(data), 2, ceil_mode=True)
    assert out.dtype is tidu.int64
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


KERNEL_CASES = [  # (input, weight, strides, padding, lhs dilation, rhs dilation, groups, flip)
    ((2, 4, 6, 5), (6, 2, 3, 2), (2, 1), ((1, 2), (0, 1)), (1, 1), (1, 2), 2, False),
    ((1, 3, 5, 6), (2, 3, 2, 3), (3, 2), ((-1, 2), (2, -2)), (2, 3), (2, 1), 1, True),
    ((2, 2, 7, 4), (2, 1, 3, 3), (1, 3), ((4, 0), (3, 3)), (1, 2), (1, 1), 2, True),
    ((2, 3, 9), (4, 3, 2), (2,), ((-2, 3),), (3,), (2,), 1, False),
]


@pytest.mark.parametrize("method", ["im2col", "col2im"])
@pytest.mark.parametrize("case", KERNEL_CASES, ids=str)
def test_both_kernel_paths_match_the_reference(case: tuple, method: str) -> None:
    """Each of the kernel's two algorithms, on geometry only the AD rules produce (lhs dilation,
    negative padding, flipped kernels), against a loop over kernel offsets."""
    xs, ws, strides, padding, lhs_dil, rhs_dil, groups, flip = case
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    out = conv_general(x, w, window_strides=strides, padding=padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                       feature_group_count=groups, flip=flip, method=method)
    np.testing.assert_allclose(out, conv_ref(x, w, strides, padding, lhs_dil, rhs_dil, groups, flip), atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_transpose_functions_match_torch(dtype: str) -> None:
    """The top-level names (the layers and their cases are in tests/nn/test_conv_modules.py)."""
    from tests.test_torch_oracle import Arg, run_both

    run_both(lambda x, w: tidu.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
             lambda x, w: torch.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
             [Arg((1, 2, 3, 3)), Arg((2, 3, 3, 3))], dtype)
    run_both(lambda x, w: tidu.conv_transpose1d(x, w, dilation=2), lambda x, w: torch.conv_transpose1d(x, w, dilation=2),
             [Arg((2, 2, 5)), Arg((2, 1, 3))], dtype)
