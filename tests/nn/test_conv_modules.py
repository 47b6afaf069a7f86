"""Conv1d, Conv2d, MaxPool2d and AvgPool2d against PyTorch from identical weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

CASES = [
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("Conv1d", (4, 4, 2), {"groups": 2, "bias": False, "dilation": 2}, (1, 4, 7)),
    ("Conv2d", (3, 5, 3), {}, (2, 3, 6, 6)),
    ("Conv2d", (4, 4, (3, 5)), {"padding": "same", "dilation": 2, "groups": 2}, (1, 4, 7, 8)),
    ("Conv2d", (2, 6, 1), {"stride": (2, 1), "bias": False}, (3, 2, 5, 4)),
    ("Conv2d", (3, 2, 3), {"padding": 1, "padding_mode": "reflect"}, (2, 3, 6, 7)),
    ("Conv2d", (3, 2, (3, 2)), {"padding": (1, 2), "padding_mode": "replicate", "stride": 2}, (1, 3, 6, 7)),
    ("Conv2d", (2, 2, 3), {"padding": "same", "padding_mode": "circular", "dilation": 2}, (1, 2, 7, 6)),
    ("Conv1d", (2, 3, 4), {"padding": "same", "padding_mode": "reflect"}, (2, 2, 9)),
    ("ConvTranspose1d", (4, 2, 3), {"stride": 2, "output_padding": 1}, (2, 4, 5)),
    ("ConvTranspose1d", (4, 6, 3), {"padding": 2, "dilation": 2, "groups": 2, "bias": False}, (4, 7)),
    ("ConvTranspose2d", (4, 6, 3), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}, (2, 4, 5, 5)),
    ("ConvTranspose2d", (3, 2, (2, 3)), {"stride": (2, 1), "dilation": (1, 2)}, (1, 3, 4, 6)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (1, 2, 7, 7)),
    ("AvgPool2d", (2,), {}, (2, 3, 6, 6)),
    ("AvgPool2d", (3,), {"stride": 1, "padding": 1, "count_include_pad": False}, (1, 2, 5, 5)),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "args", "kwargs", "shape"), CASES, ids=lambda v: str(v))
def test_module_matches_torch(name: str, args: tuple, kwargs: dict, shape: tuple, dtype: str) -> None:
    ref = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    mod = getattr(tidu.nn, name)(*args, **kwargs).to(getattr(tidu, dtype))
    assert repr(mod) == repr(ref)
    state = {k: v.detach().numpy() for k, v in ref.state_dict().items()}
    assert sorted(mod.state_dict()) == sorted(state)
    mod.load_state_dict(state)
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    xt, xr = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = mod(xt), ref(xr)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), **tol)
    w = np.random.default_rng(1).standard_normal(tuple(expected.shape)).astype(dtype)
    (out * tidu.tensor(w)).sum().backward()
    (expected * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), xr.grad.numpy(), **tol)
    for (pname, p), (_, q) in zip(mod.named_parameters(), ref.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), err_msg=pname, **tol)


def test_default_init_follows_torch_bounds() -> None:
    conv = tidu.nn.Conv2d(3, 8, 3)
    bound = 1 / np.sqrt(3 * 9)
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    assert np.abs(conv.weight.detach().numpy()).max() <= bound  # kaiming_uniform_(a=sqrt(5)) gives the same bound
    assert conv.weight.detach().numpy().std() > bound / 4


@pytest.mark.parametrize(("kwargs", "message"), [({"groups": 2}, "in_channels must be divisible by groups"),
                                                 ({"padding": "full"}, "Invalid padding string"),
                                                 ({"padding": "same", "stride": 2}, "not supported for strided")])
def test_bad_arguments_raise_like_torch(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tidu.nn.Conv2d(3, 4, 3, **kwargs)
    with pytest.raises(ValueError):
        torch.nn.Conv2d(3, 4, 3, **kwargs)


def test_wrong_input_channels_name_the_shapes() -> None:
    with pytest.raises(RuntimeError, match=r"expected input\[1, 2, 5, 5\] to have 3 channels"):
        tidu.nn.Conv2d(3, 4, 3)(tidu.ones(1, 2, 5, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("xs", "ws", "kwargs"), [
    ((2, 4, 5, 5), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((2, 4, 5, 6), (4, 2, 3, 2), {"stride": (2, 1), "padding": (1, 0), "groups": 2, "dilation": (1, 2)}),
    ((4, 5, 5), (4, 3, 2, 2), {}),
    ((2, 4, 7), (4, 2, 3), {"stride": 3, "padding": 2, "output_padding": 1, "dilation": 2}),
    ((2, 6, 7), (6, 1, 3), {"groups": 3, "stride": 2}),
], ids=str)
def test_conv_transpose_matches_torch(xs: tuple, ws: tuple, kwargs: dict, dtype: str) -> None:
    from tests.test_torch_oracle import Arg, run_both

    name = f"conv_transpose{len(ws) - 2}d"
    out_channels = ws[1] * kwargs.get("groups", 1)
    run_both(lambda x, w, b: getattr(tidu.nn.functional, name)(x, w, b, **kwargs),
             lambda x, w, b: getattr(torch.nn.functional, name)(x, w, b, **kwargs),
             [Arg(xs), Arg(ws), Arg((out_channels,))], dtype)


def test_conv_transpose_second_derivative_matches_torch() -> None:
    out = []
    for L, F in ((torch, torch.nn.functional), (tidu, tidu.nn.functional)):  # noqa: N806 - the library
        x = L.tensor(np.linspace(-1, 1, 2 * 3 * 4).reshape(2, 3, 4), requires_grad=True)
        w = L.tensor(np.linspace(0.5, -0.5, 3 * 2 * 3).reshape(3, 2, 3), requires_grad=True)
        y = F.conv_transpose1d(x, w, stride=2).tanh().sum()
        gx, gw = L.autograd.grad(y, (x, w), create_graph=True)
        (h,) = L.autograd.grad((gx * gx).sum() + (gw * gw).sum(), w)
        out.append((gx.detach().numpy(), gw.detach().numpy(), h.numpy()))
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call", [
    "F.conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 3, 3, 3), stride=2, output_padding=2)",
    "F.conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(3, 3, 3, 3))",
    "F.conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 3, 3, 3), groups=3)",
    "F.conv_transpose2d(L.ones(4, 5), L.ones(4, 3, 3, 3))",
    "F.conv_transpose2d(L.ones(2, 4, 5, 5), L.ones(4, 3, 3, 3), bias=L.zeros(4))",
])
def test_conv_transpose_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda L: {"F": L.nn.functional})


def test_conv_transpose_output_size_and_padding_mode_errors() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        up = L.nn.ConvTranspose2d(4, 6, 3, stride=2)
        assert tuple(up(L.ones(1, 4, 5, 5), output_size=(1, 6, 12, 11)).shape) == (1, 6, 12, 11)
        with pytest.raises(ValueError, match="requested an output size of"):
            up(L.ones(1, 4, 5, 5), output_size=(13, 13))
        with pytest.raises(ValueError, match='Only "zeros" padding mode'):
            L.nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect")
        with pytest.raises(ValueError, match="padding_mode must be one of"):
            L.nn.Conv2d(2, 2, 3, padding_mode="wrap")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("shape", "kwargs"), [
    ((2, 3, 5, 6), {"kernel_size": (2, 3), "stride": (1, 2), "padding": 1, "dilation": (2, 1)}),
    ((3, 5, 6), {"kernel_size": 2}),
    ((1, 2, 7, 7), {"kernel_size": 3, "stride": 3}),
    ((1, 2, 8, 9), {"kernel_size": 3, "stride": 2, "padding": 1}),
], ids=str)
def test_unfold_and_fold_match_torch(shape: tuple, kwargs: dict, dtype: str) -> None:
    from tests.test_torch_oracle import Arg, run_both

    for L in (tidu, torch):  # noqa: N806 - the library: the modules' reprs and shapes
        unfold, fold = L.nn.Unfold(**kwargs), L.nn.Fold(shape[-2:], **kwargs)
        assert repr(unfold).startswith("Unfold(") and repr(fold).startswith(f"Fold(output_size={shape[-2:]}")
    run_both(lambda x: tidu.nn.functional.unfold(x, **kwargs), lambda x: torch.nn.functional.unfold(x, **kwargs),
             [Arg(shape)], dtype)
    run_both(lambda x: tidu.nn.Fold(shape[-2:], **kwargs)(tidu.nn.functional.unfold(x, **kwargs) * x.sum()),
             lambda x: torch.nn.Fold(shape[-2:], **kwargs)(torch.nn.functional.unfold(x, **kwargs) * x.sum()),
             [Arg(shape)], dtype)


@pytest.mark.parametrize("call", [
    "F.unfold(L.zeros(2, 3, 5, 6), 7)",
    "F.fold(L.zeros(2, 12, 20), (5, 7), 2)", "F.fold(L.zeros(2, 5, 20), (5, 6), 2)",
])
def test_unfold_and_fold_errors_match_torch(call: str) -> None:
    """(A 2-D input to ``unfold`` raises PyTorch's ``IndexError`` from inside; tidu's names the rule.)"""
    assert_same_error(call, lambda L: {"F": L.nn.functional})
