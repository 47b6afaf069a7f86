"""The 3-D layers (and the circular pads of every rank) against PyTorch from identical weights:
repr, state_dict, outputs, input and parameter gradients, running statistics; the functional
3-D names, F.pad's 3-D modes, interpolate on 5-D input and PyTorch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tidu
from tests.test_torch_oracle import assert_same_error

CASES = [
    ("Conv3d", (2, 3, 3), {}, (2, 2, 4, 5, 4)),
    ("Conv3d", (4, 4, (2, 3, 1)), {"padding": "same", "dilation": (1, 2, 1), "groups": 2}, (1, 4, 4, 5, 3)),
    ("Conv3d", (2, 3, 2), {"stride": (2, 1, 2), "padding": (1, 0, 1), "bias": False}, (2, 5, 4, 5)),
    ("Conv3d", (2, 2, 3), {"padding": 1, "padding_mode": "reflect"}, (1, 2, 3, 4, 5)),
    ("Conv3d", (2, 2, (3, 2, 3)), {"padding": (1, 2, 1), "padding_mode": "replicate"}, (1, 2, 3, 3, 4)),
    ("Conv3d", (2, 3, 2), {"padding": "same", "padding_mode": "circular"}, (1, 2, 3, 4, 3)),
    ("ConvTranspose3d", (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": (1, 0, 1), "groups": 2},
     (1, 4, 2, 3, 2)),
    ("ConvTranspose3d", (2, 3, (1, 2, 2)), {"dilation": (1, 2, 1), "bias": False}, (2, 2, 3, 2)),
    ("MaxPool3d", (2,), {}, (2, 2, 4, 4, 5)),
    ("MaxPool3d", (3,), {"stride": 2, "padding": 1, "dilation": (1, 1, 2), "ceil_mode": True}, (1, 2, 5, 6, 7)),
    ("AvgPool3d", (2,), {}, (2, 2, 4, 4, 5)),
    ("AvgPool3d", ((3, 2, 3),), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
     (1, 2, 5, 4, 6)),
    ("AvgPool3d", (3,), {"stride": 1, "padding": 1, "divisor_override": 4}, (1, 4, 4, 3)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 2, 5, 3, 7)),
    ("AdaptiveAvgPool3d", (2,), {}, (2, 3, 4, 5)),
    ("AdaptiveMaxPool3d", ((3, 2, None),), {}, (2, 2, 5, 3, 4)),
    ("LPPool3d", (2, 2), {}, (1, 2, 4, 4, 5)),
    ("LPPool3d", (1, (2, 1, 2)), {"stride": 1, "ceil_mode": True}, (2, 3, 3, 4)),
    ("LPPool3d", (float("inf"), 2), {}, (1, 2, 4, 4, 4)),
    ("BatchNorm3d", (3,), {}, (2, 3, 2, 3, 2)),
    ("BatchNorm3d", (3,), {"momentum": None, "affine": False}, (2, 3, 2, 2, 3)),
    ("InstanceNorm3d", (2,), {"affine": True, "track_running_stats": True}, (2, 2, 3, 2, 3)),
    ("InstanceNorm3d", (2,), {}, (2, 3, 2, 3)),
    ("ConstantPad3d", ((1, 0, 2, 1, 0, 2), 3.5), {}, (1, 2, 2, 3, 2)),
    ("ZeroPad3d", (1,), {}, (2, 2, 2, 3)),
    ("ReflectionPad3d", ((2, 1, 1, 0, 1, 2),), {}, (1, 2, 3, 3, 4)),
    ("ReplicationPad3d", ((2, 0, 1, 3, 0, 1),), {}, (2, 2, 3, 2)),
    ("CircularPad1d", ((2, 1),), {}, (2, 2, 4)),
    ("CircularPad2d", (1,), {}, (2, 3, 4)),
    ("CircularPad3d", ((1, 2, 0, 1, 2, 0),), {}, (1, 2, 3, 3, 3)),
    ("Dropout3d", (0.5,), {}, (2, 3, 2, 2, 2)),
]


def _ids(value: object) -> str:
    return str(value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), CASES, ids=_ids)
def test_module_matches_torch(name: str, args: tuple, kwargs: dict, shape: tuple, dtype: str) -> None:
    ref = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    mod = getattr(tidu.nn, name)(*args, **kwargs).to(getattr(tidu, dtype))
    if name == "Dropout3d":  # random masks differ between libraries: both are the identity in eval
        ref.eval()
        mod.eval()
    assert repr(mod) == repr(ref)
    state = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    assert list(mod.state_dict()) == list(state)
    mod.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    xt, xr = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = mod(xt), ref(xr)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    assert out.dtype is getattr(tidu, dtype) and tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tol)
    w = np.random.default_rng(1).standard_normal(tuple(expected.shape)).astype(dtype)
    (out * tidu.tensor(w)).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), **tol)
    for (pname, p), (_, q) in zip(mod.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=pname, **tol)
    for (bname, b), (_, c) in zip(mod.named_buffers(), ref.named_buffers()):
        np.testing.assert_allclose(b.numpy(), c.numpy(), err_msg=bname, **tol)


def test_batchnorm3d_eval_and_a_second_step_match_torch() -> None:
    ref, mod = torch.nn.BatchNorm3d(2).double(), tidu.nn.BatchNorm3d(2).double()
    rng = np.random.default_rng(2)
    for _ in range(2):
        x = rng.standard_normal((3, 2, 2, 3, 2))
        mod(tidu.tensor(x))
        ref(torch.tensor(x))
    mod.eval()
    ref.eval()
    x = rng.standard_normal((1, 2, 2, 2, 2))
    np.testing.assert_allclose(mod(tidu.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    assert int(mod.num_batches_tracked) == int(ref.num_batches_tracked) == 2


def test_conv_transpose3d_output_size_matches_torch() -> None:
    ref, mod = torch.nn.ConvTranspose3d(2, 3, 3, stride=2).double(), tidu.nn.ConvTranspose3d(2, 3, 3, stride=2).double()
    mod.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((1, 2, 2, 3, 2))
    out, expected = mod(tidu.tensor(x), output_size=(6, 7, 5)), ref(torch.tensor(x), output_size=(6, 7, 5))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)


def test_max_pool3d_with_indices_then_unpool_matches_torch() -> None:
    x = np.random.default_rng(4).standard_normal((2, 2, 5, 4, 6))
    xt, xr = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    pool, unpool = tidu.nn.MaxPool3d(2, return_indices=True), tidu.nn.MaxUnpool3d(2)
    (out, idx), (ref, ref_idx) = pool(xt), torch.nn.MaxPool3d(2, return_indices=True)(xr)
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    up, ref_up = unpool(out, idx, output_size=(5, 4, 6)), torch.nn.MaxUnpool3d(2)(ref, ref_idx, output_size=(5, 4, 6))
    np.testing.assert_array_equal(up.detach().numpy(), ref_up.detach().numpy())
    (up * up).sum().backward()
    (ref_up * ref_up).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)
    assert repr(unpool) == repr(torch.nn.MaxUnpool3d(2))


def test_adaptive_max_pool3d_indices_match_torch() -> None:
    x = np.random.default_rng(5).standard_normal((2, 3, 5, 4, 7))
    out, idx = F.adaptive_max_pool3d(torch.tensor(x), (2, 3, 4), return_indices=True)
    ours, our_idx = tidu.nn.functional.adaptive_max_pool3d(tidu.tensor(x), (2, 3, 4), return_indices=True)
    np.testing.assert_array_equal(ours.numpy(), out.numpy())
    np.testing.assert_array_equal(our_idx.numpy(), idx.numpy())


def test_dropout3d_drops_whole_channels() -> None:
    tidu.manual_seed(0)
    for shape, channels in [((4, 8, 2, 2, 3), 32), ((8, 2, 3, 2), 8)]:
        y = tidu.nn.functional.dropout3d(tidu.ones(shape), 0.5)
        per_channel = y.reshape(channels, -1).numpy()
        assert set(np.unique(per_channel)) <= {0.0, 2.0}
        assert (per_channel.min(axis=1) == per_channel.max(axis=1)).all()
        assert 0 < (per_channel[:, 0] == 0).sum() < channels
    assert tidu.nn.Dropout3d(0.3).train()(tidu.ones(2, 2, 1, 1, 1)).shape == (2, 2, 1, 1, 1)


def test_dropout3d_warns_as_torch_on_other_ranks() -> None:
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        y = tidu.nn.functional.dropout3d(tidu.ones(6, 4), 0.5)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        F.dropout3d(torch.ones(6, 4), 0.5)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    rows = y.numpy()
    assert (rows.min(axis=1) == rows.max(axis=1)).all()  # dim 0 is the channel dim, as PyTorch's


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_3d_modes_match_torch(mode: str) -> None:
    x = np.random.default_rng(6).standard_normal((2, 2, 3, 4, 3))
    pads = (1, 2, 0, 3, 2, 1)
    xt, xr = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref = tidu.nn.functional.pad(xt, pads, mode=mode), F.pad(xr, pads, mode=mode)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    c = np.random.default_rng(7).standard_normal(tuple(ref.shape))
    (out * tidu.tensor(c)).sum().backward()
    (ref * torch.tensor(c)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(("mode", "kw"), [
    ("nearest", dict(scale_factor=(2, 1.5, 0.5))),
    ("nearest", dict(size=(5, 3, 4))),
    ("nearest-exact", dict(size=(3, 5, 2))),
    ("trilinear", dict(scale_factor=1.7)),
    ("trilinear", dict(size=(5, 2, 6), align_corners=True)),
    ("area", dict(size=(2, 3, 2))),
])
def test_interpolate_5d_matches_torch(mode: str, kw: dict) -> None:
    x = np.random.default_rng(8).standard_normal((2, 2, 3, 4, 3))
    xt, xr = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, ref = tidu.nn.functional.interpolate(xt, mode=mode, **kw), F.interpolate(xr, mode=mode, **kw)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12, atol=1e-12)
    c = np.random.default_rng(9).standard_normal(tuple(ref.shape))
    (out * tidu.tensor(c)).sum().backward()
    (ref * torch.tensor(c)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_functional_3d_names_match_torch() -> None:
    x, w = np.random.default_rng(10).standard_normal((1, 2, 4, 4, 4)), np.ones((3, 2, 2, 2, 2))
    for name, args in [("conv3d", (w,)), ("conv_transpose3d", (w.transpose(1, 0, 2, 3, 4),)), ("max_pool3d", (2,)),
                       ("avg_pool3d", (2,)), ("adaptive_avg_pool3d", (3,)), ("adaptive_max_pool3d", (3,)),
                       ("lp_pool3d", (3, 2))]:
        ours, ref = (getattr(module, name)(lib.tensor(x), *[lib.tensor(a) if isinstance(a, np.ndarray) else a
                                                            for a in args])
                     for lib, module in ((tidu, tidu.nn.functional), (torch, F)))
        if name == "lp_pool3d":  # x ** 3 of negative entries: NaN in both where a window sums below zero
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12, equal_nan=True)
        else:
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)


def _z(*shape: int) -> str:
    return f"L.zeros({', '.join(map(str, shape))})"


BAD = [
    f"L.nn.BatchNorm3d(2)({_z(2, 2, 3, 3)})",
    f"L.nn.InstanceNorm3d(2)({_z(2, 3, 3)})",
    f"L.nn.CircularPad3d(1)({_z(2, 2)})",
    f"L.nn.CircularPad2d(1)({_z(2, 2)})",
    f"L.nn.CircularPad1d(1)({_z(2)})",
    f"L.nn.InstanceNorm3d(3, affine=True)({_z(1, 2, 2, 2, 2)})",
    f"F.adaptive_avg_pool3d({_z(2, 2)}, 2)",
    f"F.adaptive_max_pool3d({_z(2, 2)}, 2)",
    f"F.adaptive_avg_pool3d({_z(1, 2, 3, 4, 5)}, (2, 3))",
    f"F.max_unpool3d({_z(1, 1, 2, 2, 2)}, L.full((1, 1, 2, 2, 2), 100), 2)",
    f"F.max_unpool3d({_z(1, 1, 2, 2, 2)}, L.zeros((1, 1, 2, 2, 2), dtype=L.int64), 2, output_size=(9, 9, 9))",
    f"F.dropout3d({_z(1, 1, 2, 2, 2)}, 1.5)",
    "L.nn.Conv3d(3, 4, 2, groups=2)",
    "L.nn.Conv3d(2, 4, 2, padding='same', stride=2)",
    "L.nn.ConvTranspose3d(2, 4, 2, padding_mode='reflect')",
]


@pytest.mark.parametrize("call", BAD)
def test_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda lib: {"F": F if lib is torch else tidu.nn.functional})
