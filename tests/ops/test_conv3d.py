"""conv3d, conv_transpose3d, max_pool3d and avg_pool3d against PyTorch: values, gradients of the
input, weight and bias, second order, ties, integer inputs and PyTorch's errors. (Finite
differences to second order: the 3-D rows of tests/primitives/rows_conv.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import tidu
from tests.ops.test_conv import TOL32, _pool, _second_order
from tests.test_torch_oracle import FLOATS, Arg, assert_same_error, run_both
from tidu.backends.cpu.conv import conv_general

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

# name: (input shape, weight shape, bias?, keyword arguments)
CONV3D = {
    "plain": ((2, 2, 4, 5, 3), (3, 2, 2, 3, 2), True, {}),
    "stride-pad-dilation": ((1, 2, 6, 5, 7), (2, 2, 3, 2, 3), True, dict(stride=(2, 1, 3), padding=(1, 2, 0),
                                                                            dilation=(1, 2, 2))),
    "same": ((1, 2, 4, 5, 4), (3, 2, 2, 3, 4), False, dict(padding="same", dilation=(2, 1, 1))),
    "valid": ((2, 1, 3, 4, 4), (2, 1, 3, 2, 2), True, dict(padding="valid")),
    "groups": ((2, 4, 4, 4, 3), (6, 2, 2, 2, 2), True, dict(stride=2, padding=1, groups=2)),
    "depthwise": ((1, 3, 3, 4, 4), (3, 1, 3, 3, 3), False, dict(groups=3, padding=1)),
    "unbatched": ((2, 3, 4, 3), (2, 2, 2, 2, 2), True, dict(padding=(0, 1, 1))),
    "empty-batch": ((0, 2, 3, 3, 3), (2, 2, 2, 2, 2), True, {}),
}
CONV_T3D = {
    "plain": ((2, 3, 2, 3, 2), (3, 2, 2, 2, 3), True, {}),
    "stride-pad-out": ((1, 2, 3, 2, 3), (2, 3, 3, 2, 2), True, dict(stride=(2, 3, 2), padding=(1, 0, 1),
                                                                    output_padding=(1, 2, 0))),
    "groups-dilation": ((1, 4, 2, 3, 2), (4, 1, 2, 2, 3), False, dict(groups=2, dilation=(2, 1, 2), stride=2)),
    "unbatched": ((2, 2, 2, 3), (2, 2, 2, 2, 2), True, dict(stride=2)),
}


def _fn(lib: Any, name: str, bias: bool, kw: dict) -> Any:
    conv = getattr(F if lib is torch else tidu, name)
    return (lambda x, w, b: conv(x, w, b, **kw)) if bias else (lambda x, w: conv(x, w, **kw))


def _args(xs: tuple, ws: tuple, bias: bool, out_channels: int) -> list[Arg]:
    return [Arg(xs), Arg(ws)] + ([Arg((out_channels,))] if bias else [])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", CONV3D)
def test_conv3d_matches_torch(name: str, dtype: str) -> None:
    xs, ws, bias, kw = CONV3D[name]
    run_both(_fn(tidu, "conv3d", bias, kw), _fn(torch, "conv3d", bias, kw), _args(xs, ws, bias, ws[0]), dtype,
             tol=TOL32[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", CONV_T3D)
def test_conv_transpose3d_matches_torch(name: str, dtype: str) -> None:
    xs, ws, bias, kw = CONV_T3D[name]
    out_channels = ws[1] * kw.get("groups", 1)
    run_both(_fn(tidu, "conv_transpose3d", bias, kw), _fn(torch, "conv_transpose3d", bias, kw),
             _args(xs, ws, bias, out_channels), dtype, tol=TOL32[dtype])


def test_conv3d_second_order_and_forward_mode_match_torch() -> None:
    xs, ws, _, kw = CONV3D["groups"]
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    _second_order(_fn(tidu, "conv3d", False, kw), _fn(torch, "conv3d", False, kw), [x, w])
    tx, tw = rng.standard_normal(xs), rng.standard_normal(ws)
    _, tangent = tidu.func.jvp(_fn(tidu, "conv3d", False, kw), (tidu.tensor(x), tidu.tensor(w)),
                               (tidu.tensor(tx), tidu.tensor(tw)))
    _, ref = torch.func.jvp(_fn(torch, "conv3d", False, kw), (torch.tensor(x), torch.tensor(w)),
                            (torch.tensor(tx), torch.tensor(tw)))
    np.testing.assert_allclose(tangent.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["im2col", "col2im"])
def test_both_kernel_paths_in_3d(method: str) -> None:
    """The kernel's two algorithms on geometry only the AD rules produce (lhs dilation, negative
    padding, a flipped kernel), against PyTorch's conv3d of the same input spread and padded."""
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((2, 4, 3, 4, 3)), rng.standard_normal((4, 2, 2, 3, 2))
    params = dict(window_strides=(1, 2, 1), padding=((1, 2), (2, 1), (-1, 1)), lhs_dilation=(2, 1, 2),
                  rhs_dilation=(1, 1, 2), feature_group_count=2, flip=True)
    out = conv_general(x, w, **params, method=method)
    spread = np.zeros((2, 4, 5, 4, 5))
    spread[:, :, ::2, :, ::2] = x
    padded = np.pad(spread, [(0, 0), (0, 0), (1, 2), (2, 1), (0, 1)])[..., 1:]
    ref = F.conv3d(torch.tensor(padded), torch.tensor(w[:, :, ::-1, ::-1, ::-1].copy()), stride=(1, 2, 1),
                   dilation=(1, 1, 2), groups=2)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-12, atol=1e-12)


# --- pooling ---------------------------------------------------------------------------------
POOL3D = {
    "k2": ((2, 2, 4, 4, 6), dict(kernel_size=2)),
    "stride-pad": ((1, 2, 5, 6, 5), dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 0))),
    "ceil": ((1, 2, 5, 5, 6), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    "unbatched": ((2, 4, 3, 5), dict(kernel_size=(2, 1, 2), stride=1)),
    "empty-batch": ((0, 2, 4, 4, 4), dict(kernel_size=2)),
}
MAX3D_ONLY = {"dilated": ((1, 2, 6, 7, 5), dict(kernel_size=2, stride=(1, 2, 2), padding=1, dilation=(2, 3, 1),
                                                 ceil_mode=True))}
AVG3D_ONLY = {
    "no-pad-count": ((1, 2, 5, 4, 6), dict(kernel_size=3, stride=2, padding=1, count_include_pad=False)),
    "ceil-no-pad-count": ((1, 1, 5, 6, 5), dict(kernel_size=(3, 2, 3), stride=2, padding=1, ceil_mode=True,
                                                count_include_pad=False)),
    "divisor": ((1, 2, 4, 4, 4), dict(kernel_size=3, stride=1, padding=1, divisor_override=5)),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", [*POOL3D, *MAX3D_ONLY])
def test_max_pool3d_matches_torch(case: str, dtype: str) -> None:
    shape, kw = {**POOL3D, **MAX3D_ONLY}[case]
    run_both(_pool(tidu, "max_pool3d", kw), _pool(torch, "max_pool3d", kw), [Arg(shape)], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", [*POOL3D, *AVG3D_ONLY])
def test_avg_pool3d_matches_torch(case: str, dtype: str) -> None:
    shape, kw = {**POOL3D, **AVG3D_ONLY}[case]
    run_both(_pool(tidu, "avg_pool3d", kw), _pool(torch, "avg_pool3d", kw), [Arg(shape)], dtype, tol=TOL32[dtype])


@pytest.mark.parametrize("case", ["ceil", "dilated", "stride-pad"])
def test_max_pool3d_indices_and_ties_match_torch(case: str) -> None:
    shape, kw = {**POOL3D, **MAX3D_ONLY}[case]
    data = np.random.default_rng(3).integers(0, 3, size=shape).astype("float64")  # many ties
    x, tx = tidu.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    (out, idx), (ref, ref_idx) = tidu.max_pool3d(x, return_indices=True, **kw), F.max_pool3d(
        tx, return_indices=True, **kw)
    c = np.random.default_rng(4).standard_normal(tuple(ref.shape))
    (out * tidu.tensor(c)).sum().backward()
    (ref * torch.tensor(c)).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    assert idx.dtype is tidu.int64
    np.testing.assert_array_equal(idx.numpy(), ref_idx.numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_pool3d_second_order_matches_torch() -> None:
    data = np.random.default_rng(5).permutation(96).reshape(1, 2, 4, 4, 3) / 7.0
    for name, kw in [("max_pool3d", dict(kernel_size=2, stride=1, padding=1)),
                     ("avg_pool3d", dict(kernel_size=2, stride=1, padding=1, count_include_pad=False))]:
        _second_order(_pool(tidu, name, kw), _pool(torch, name, kw), [data])


@pytest.mark.parametrize(("name", "shape"), [("max_pool3d", (1, 2, 4, 5, 4)), ("avg_pool3d", (1, 2, 4, 5, 4)),
                                           ("avg_pool2d", (2, 5, 4)), ("avg_pool1d", (2, 3, 7))])
def test_pool_integer_input(name: str, shape: tuple) -> None:
    data = np.random.default_rng(8).integers(-9, 9, shape)
    kw = dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)
    if name == "avg_pool1d":
        out, ref = tidu.nn.functional.avg_pool1d(tidu.tensor(data), **kw), F.avg_pool1d(torch.tensor(data), **kw)
        assert out.dtype is tidu.int64
        np.testing.assert_array_equal(out.numpy(), ref.numpy())
        return
    out, ref = getattr(tidu, name)(tidu.tensor(data), **kw), getattr(F, name)(torch.tensor(data), **kw)
    assert out.dtype is tidu.int64
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def _z(*shape: int) -> str:
    return f"L.zeros({', '.join(map(str, shape))})"


BAD = [
    f"F.conv3d({_z(2, 3)}, {_z(6, 3, 3, 3, 3)})",
    f"F.conv3d({_z(2, 4, 5, 5, 5)}, {_z(6, 3, 3, 3, 3)})",
    f"F.conv3d({_z(2, 3, 5, 5, 5)}, {_z(6, 3, 3, 3, 3)}, stride=(1, 2))",
    f"F.conv3d({_z(2, 4, 5, 5, 5)}, {_z(3, 2, 3, 3, 3)}, groups=2)",
    f"F.conv_transpose3d({_z(1, 2, 3, 3, 3)}, {_z(3, 2, 2, 2, 2)})",
    f"F.conv_transpose3d({_z(1, 2, 3, 3, 3)}, {_z(2, 2, 2, 2, 2)}, output_padding=2)",
    *(f"F.{op}({_z(1, 1, 2, 2, 2)}, 3)" for op in ("max_pool3d", "avg_pool3d")),
    *(f"F.{op}({_z(1, 1, 5, 5, 5)}, 3, padding=2)" for op in ("max_pool3d", "avg_pool3d")),
    f"F.max_pool3d({_z(1, 1, 5, 5, 5)}, 3, padding=-1)",
    f"F.avg_pool2d({_z(1, 1, 5, 5)}, 3, padding=-1)",
    *(f"F.{op}({_z(1, 1, 5, 5, 5)}, 3, stride=0)" for op in ("max_pool3d", "avg_pool3d")),
    *(f"F.{op}({_z(1, 1, 5, 5, 5)}, 0, stride=1)" for op in ("max_pool3d", "avg_pool3d")),
    *(f"F.{op}({_z(1, 0, 5, 5, 5)}, 2)" for op in ("max_pool3d", "avg_pool3d")),
    *(f"F.{op}({_z(5, 5)}, 2)" for op in ("max_pool3d", "avg_pool3d")),
    *(f"F.{op}({_z(1, 1, 5, 5, 5)}, {arg})" for op in ("max_pool3d", "avg_pool3d")
      for arg in ("(2, 2)", "2, stride=(1, 1)", "2, padding=(1, 1)")),
    *(f"F.{op}({_z(1, 1, 5, 5)}, {arg})" for op in ("max_pool2d", "avg_pool2d")
      for arg in ("(2, 2, 2)", "2, stride=(1, 1, 1)", "2, padding=(1, 1, 1)")),
    f"F.max_pool3d({_z(1, 1, 5, 5, 5)}, 2, dilation=0)",
    f"F.max_pool3d({_z(1, 1, 5, 5, 5)}, 2, dilation=(1, 1))",
    f"F.avg_pool3d({_z(1, 1, 2, 2, 3)}, (1, 1, 4), padding=(0, 0, 2))",
    f"F.avg_pool3d({_z(1, 1, 5, 5, 5)}, 2, divisor_override=0)",
]


@pytest.mark.parametrize("call", BAD)
def test_3d_errors_match_torch(call: str) -> None:
    assert_same_error(call, lambda lib: {"F": F if lib is torch else tidu.nn.functional})
