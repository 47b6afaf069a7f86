"""Memory formats and layouts (``tidu.core.formats``) against PyTorch: the objects, the checks of
them, and the values (tidu keeps row-major storage; docs/guides/pytorch-differences.md)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def test_objects_and_constants_match_torch() -> None:
    for name in FORMATS:
        ours, ref = getattr(tidu, name), getattr(torch, name)
        assert isinstance(ours, tidu.memory_format) and repr(ours) == repr(ref).replace("torch.", "tidu.")
    assert isinstance(tidu.strided, tidu.layout) and repr(tidu.strided) == "tidu.strided"
    assert tidu.zeros(2).layout is tidu.strided and torch.zeros(2).layout is torch.strided
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        ours, ref = getattr(tidu, name), getattr(torch, name)
        assert ours is ref or ours == ref or (np.isnan(ours) and np.isnan(ref)), name
    assert tidu.arange(3)[:, tidu.newaxis].shape == torch.arange(3)[:, torch.newaxis].shape


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5), (2, 3, 2, 4, 5), (1, 3, 1, 1), (2, 1, 4, 5)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_values_and_errors_match_torch(shape: tuple, fmt: str) -> None:
    """Each call that takes a memory format: the same values, or the same error."""
    calls = [
        lambda L, x: x.contiguous(memory_format=getattr(L, fmt)),
        lambda L, x: x.to(memory_format=getattr(L, fmt)),
        lambda L, x: x.to(L.float64, memory_format=getattr(L, fmt)),
        lambda L, x: x.clone(memory_format=getattr(L, fmt)),
        lambda L, x: L.clone(x, memory_format=getattr(L, fmt)),
        lambda L, x: L.zeros_like(x, memory_format=getattr(L, fmt)),
        lambda L, x: L.ones_like(x, memory_format=getattr(L, fmt), layout=L.strided),
        lambda L, x: L.full_like(x, 2.0, memory_format=getattr(L, fmt)),
        lambda L, x: L.empty_like(x, memory_format=getattr(L, fmt)).zero_(),
        lambda L, x: L.rand_like(x, memory_format=getattr(L, fmt)) * 0,
        lambda L, x: L.randn_like(x, memory_format=getattr(L, fmt)) * 0,
        lambda L, x: L.randint_like(x, 3, memory_format=getattr(L, fmt)) * 0,
    ]
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    for call in calls:
        try:
            ref = call(torch, torch.tensor(data))
        except Exception:  # noqa: BLE001 - then tidu must raise the same
            assert_same_error(lambda L, call=call: call(L, L.tensor(data)))
            continue
        out = call(tidu, tidu.tensor(data))
        assert tuple(out.shape) == tuple(ref.shape) and str(out.dtype)[5:] == str(ref.dtype)[6:]
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        assert out.is_contiguous()  # tidu: row-major whatever the format


def test_is_contiguous_follows_torch_on_the_same_strides() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        x = L.zeros(2, 3, 4, 5)
        nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # channels-last strides in both
        assert nhwc.stride() == (60, 1, 15, 3)
        assert nhwc.is_contiguous(memory_format=L.channels_last) and not nhwc.is_contiguous()
        assert not x.is_contiguous(memory_format=L.channels_last) and x.is_contiguous(memory_format=L.contiguous_format)
        assert L.zeros(2, 1, 4, 5).is_contiguous(memory_format=L.channels_last)  # size-1 channels: either
        assert not L.zeros(2, 3, 4).is_contiguous(memory_format=L.channels_last)
        y = L.zeros(2, 3, 2, 4, 5).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3)
        assert y.is_contiguous(memory_format=L.channels_last_3d)
    # where PyTorch makes channels-last storage, tidu's stays row-major (pytorch-differences.md)
    assert not tidu.zeros(2, 3, 4, 5).contiguous(memory_format=tidu.channels_last).is_contiguous(
        memory_format=tidu.channels_last)


def test_bad_arguments_raise_like_torch() -> None:
    for call in ["L.zeros(2, 3).contiguous(memory_format=None)", "L.zeros(2, 3).is_contiguous(memory_format=1)",
                 "L.zeros(2, 3).contiguous(memory_format='channels_last')",
                 "L.zeros_like(L.zeros(2), memory_format='x')", "L.zeros_like(L.zeros(2), layout='strided')",
                 "L.zeros(2, layout=1)", "L.ones(2, layout=1)", "L.empty(2, layout=1)", "L.full((2,), 1.0, layout=1)",
                 "L.nn.Conv2d(1, 1, 1).to(memory_format=L.channels_last_3d)", "L.zeros(2, 3).to(memory_format=L.channels_last)"]:
        assert_same_error(call, same_message=False)
    assert_same_error("L.zeros(2, 3).to(memory_format=L.channels_last)")
    assert tidu.zeros(2, layout=tidu.strided).shape == (2,)


def test_model_to_channels_last_runs_and_matches_torch() -> None:
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 2 * 3, 2)).double()
    model = tidu.nn.Sequential(tidu.nn.Conv2d(3, 4, 3), tidu.nn.BatchNorm2d(4), tidu.nn.ReLU(), tidu.nn.Flatten(),
                               tidu.nn.Linear(4 * 2 * 3, 2)).double()
    model.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    assert model.to(memory_format=tidu.channels_last) is model
    ref = ref.to(memory_format=torch.channels_last)
    data = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    x = tidu.tensor(data, requires_grad=True)
    xt = torch.tensor(data, requires_grad=True)
    out = model(x.to(memory_format=tidu.channels_last))
    out_ref = ref(xt.to(memory_format=torch.channels_last))
    np.testing.assert_allclose(out.detach().numpy(), out_ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.sum().backward()
    out_ref.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model[0].weight.grad.numpy(), ref[0].weight.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_contiguous_with_preserve_format_copies_nothing() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        x = L.zeros(2, 3)
        assert x.contiguous(memory_format=L.preserve_format) is x
    assert_same_error("L.zeros(2, 3).t().contiguous(memory_format=L.preserve_format)")
