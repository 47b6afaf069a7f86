"""``bitwise_left_shift``/``bitwise_right_shift`` and ``<<``/``>>`` (tidu/ops/math.py), against torch."""

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

INTS = ["uint8", "int8", "int16", "int32", "int64"]
DEVICES = ["cpu", "cuda"]


def _operands(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Values over the dtype's range, counts from -70 to 70: negative, in range, at and past the
    bit width (wrapped into the dtype, as PyTorch reads them)."""
    info = np.iinfo(name)
    rng = np.random.default_rng(len(name))
    values = np.concatenate([rng.integers(info.min, info.max, 200, endpoint=True), [info.min, info.max, 0, 1, -1]])
    counts = np.concatenate([rng.integers(-70, 70, 200), [info.bits - 1, info.bits, info.bits + 1, 63, 64]])
    return values.astype(name), counts.astype(np.int64).astype(name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", ["bitwise_left_shift", "bitwise_right_shift"])
def test_shift_matches_pytorch(op: str, dtype: str, device: str) -> None:
    a, b = _operands(dtype)
    ref = getattr(torch, op)(torch.tensor(a), torch.tensor(b))
    out = getattr(tidu, op)(tidu.tensor(a).to(device), tidu.tensor(b).to(device))
    assert out.device.type == device and out.dtype.name == dtype
    np.testing.assert_array_equal(out.cpu().numpy(), ref.numpy())


FORMS = [
    "x << y", "x >> y", "x << 3", "x >> 2", "5 << x", "300 >> x", "x << 300", "x.bitwise_left_shift(y)",
    "x.bitwise_right_shift(2)", "L.bitwise_left_shift(3, x)", "L.tensor([True, False]) << 1",
    "x << L.tensor(2)", "x << L.tensor([2])", "L.tensor(3) << x", "x.__rlshift__(3)", "x.__rrshift__(300)",
    "x << True", "x.to(L.int32) >> y", "L.tensor([1, 2], dtype=L.uint8) << L.tensor([1, 2], dtype=L.int8)",
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", INTS)
def test_operators_and_promotion_match_pytorch(form: str, dtype: str) -> None:
    results = []
    for lib in (tidu, torch):
        dt = getattr(lib, dtype)
        x = lib.tensor([1, 2, 100, 7], dtype=dt)
        y = lib.tensor([0, 3, 1, 9], dtype=dt)
        results.append(eval(form, {"L": lib, "x": x, "y": y}))  # noqa: S307 - the tests' own forms
    out, ref = results
    assert out.dtype.name == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize("form", ["x <<= y", "x >>= y", "x <<= 2", "x.bitwise_left_shift_(y)",
                                  "x.bitwise_right_shift_(1)"])
def test_in_place_forms_write_the_tensor(form: str) -> None:
    results = []
    for lib in (tidu, torch):
        x = lib.tensor([1, -2, 100, 7], dtype=lib.int16)
        y = lib.tensor([0, 3, 1, 9], dtype=lib.int16)
        before = x
        names = {"x": x, "y": y}
        exec(form, names)  # noqa: S102 - the tests' own forms
        assert names["x"] is before
        results.append(before.tolist())
    assert results[0] == results[1]


ERRORS = [
    "L.tensor([1, 2]) << 1.5", "L.tensor([1, 2]) << L.tensor([1.0])", "L.tensor([1.0]) << 1", "1.5 << L.tensor([1])",
    "L.tensor([1.0]) >> 1", "L.tensor([True]) << L.tensor([True])", "L.bitwise_right_shift(L.tensor([1.0]), 1)",
    "L.tensor([1.0], dtype=L.float64) >> L.tensor([1.0], dtype=L.float64)",
    "L.tensor([1], dtype=L.int8).bitwise_left_shift_(1.5)", "2**70 << L.tensor([1])",
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_match_pytorch(call: str) -> None:
    assert_same_error(call)


def test_shifts_are_not_differentiable() -> None:
    x = tidu.tensor([1, 2])
    assert not (x << 1).requires_grad
    assert tidu.primitives.elementwise.bitwise_left_shift.nondiff
