"""Conv1d, Conv2d, MaxPool2d and AvgPool2d against PyTorch from identical weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

CASES = [
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("Conv1d", (4, 4, 2), {"groups": 2, "bias": False, "dilation": 2}, (1, 4, 7)),
    ("Conv2d", (3, 5, 3), {}, (2, 3, 6, 6)),
    ("Conv2d", (4, 4, (3, 5)), {"padding": "same", "dilation": 2, "groups": 2}, (1, 4, 7, 8)),
    ("Conv2d", (2, 6, 1), {"stride": (2, 1), "bias": False}, (3, 2, 5, 4)),
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
