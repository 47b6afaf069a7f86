"""PyTorch's legacy constructors (tidu/legacy.py) against torch: ``Tensor(...)``, the typed
classes, ``Tensor.new`` and ``Tensor.type`` with a class."""

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

# calls whose values are defined (not uninitialized memory), compared with PyTorch's
VALUE_CALLS = [
    "L.Tensor([1, 2])", "L.Tensor([[1.5], [2]])", "L.Tensor((1, 2))", "L.Tensor([True, False])", "L.Tensor([])",
    "L.Tensor()", "L.Tensor(np.array([1, 2], np.int64))", "L.Tensor(np.array([[0.25]]))",
    "L.Tensor(L.tensor([1, 2]))", "L.Tensor(L.tensor(3.0))", "L.Tensor(data=[1])",
    "L.Tensor([1, 2], device='cpu')",
    "L.FloatTensor([1, 2])", "L.DoubleTensor([1, 2])", "L.LongTensor([1.7, -2])", "L.IntTensor(np.array([1.5]))",
    "L.BoolTensor([1, 0])", "L.ByteTensor([-1, 3])", "L.CharTensor([-5])", "L.ShortTensor([7])",
    "L.LongTensor(L.tensor([1, 2]))", "L.FloatTensor(np.array([1, 2], np.float32))", "L.FloatTensor()",
    "L.tensor([1.0, 2.0]).new([1, 2])", "L.tensor([1, 2]).new([1.5, 2])", "L.tensor([1.0]).new()",
    "L.tensor([1.0]).new(np.array([3, 4]))", "L.tensor([1.0]).new(L.tensor([5.0]))",
    "L.zeros(2).type(L.LongTensor)", "L.ones(2, dtype=L.int64).type(L.DoubleTensor)",
    "L.zeros(2).type('torch.IntTensor')", "L.Tensor.new(L.tensor([1.0]), [3])",
]

# uninitialized results: shape and dtype only
SHAPE_CALLS = [
    "L.Tensor(2, 3)", "L.Tensor(2, 3, 4)", "L.Tensor(L.Size([2]))", "L.Tensor(L.Size([]))", "L.Tensor(np.int64(2))",
    "L.Tensor(size=(2,))", "L.Tensor(0)", "L.LongTensor(L.Size([2, 1]))", "L.ShortTensor(2)", "L.ByteTensor(1, 2)",
    "L.tensor([1, 2]).new(2, 3)", "L.tensor([1.0]).new(L.Size([2]))", "L.tensor([1.0]).new(2, device='cpu')",
]

ERROR_CALLS = [
    "L.Tensor(2.5)", "L.Tensor(None)", "L.Tensor(True)", "L.Tensor('ab')", "L.Tensor(-1)", "L.Tensor(2, -1)",
    "L.Tensor(2, [1])", "L.Tensor(2, 3.0)", "L.ByteTensor([300])", "L.CharTensor([200])",
    "L.Tensor([[1], [2, 3]])",
]
# PyTorch's messages name its own types or list why each signature did not match: the class only
ERROR_CLASS_CALLS = [
    "L.Tensor(3, requires_grad=True)", "L.FloatTensor(2, dtype=L.float64)", "L.Tensor([1], [2])",
    "L.Tensor(L.tensor([1.0]), 2)", "L.tensor([1.0]).new([1, 2], dtype=L.int64)",
    "L.LongTensor(L.tensor([1.0, 2]))", "L.FloatTensor(L.tensor([1, 2]))", "L.tensor([1.0]).new(L.tensor([1, 2]))",
]


def _run(call: str, lib: object) -> object:
    return eval(call, {"L": lib, "np": np})  # noqa: S307 - the tests' own calls


@pytest.mark.parametrize("call", VALUE_CALLS)
def test_values_match_pytorch(call: str) -> None:
    out, ref = _run(call, tidu), _run(call, torch)
    assert type(out) is tidu.Tensor
    assert str(out.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    assert tuple(out.shape) == tuple(ref.shape)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


@pytest.mark.parametrize("call", SHAPE_CALLS)
def test_uninitialized_shapes_match_pytorch(call: str) -> None:
    out, ref = _run(call, tidu), _run(call, torch)
    assert type(out) is tidu.Tensor
    assert str(out.dtype).split(".")[1] == str(ref.dtype).split(".")[1]
    assert tuple(out.shape) == tuple(ref.shape)


@pytest.mark.parametrize("call", ERROR_CALLS)
def test_errors_match_pytorch(call: str) -> None:
    assert_same_error(call)


@pytest.mark.parametrize("call", ERROR_CLASS_CALLS)
def test_error_classes_match_pytorch(call: str) -> None:
    assert_same_error(call, same_message=False)


def test_default_dtype_is_followed() -> None:
    for lib in (tidu, torch):
        lib.set_default_dtype(lib.float64)
        try:
            assert str(lib.Tensor([1]).dtype).endswith("float64")
            assert str(lib.Tensor(2).dtype).endswith("float64")
            assert str(lib.FloatTensor([1]).dtype).endswith("float32")
        finally:
            lib.set_default_dtype(lib.float32)


@pytest.mark.parametrize("lib", [tidu, torch], ids=["tidu", "torch"])
def test_isinstance_checks_dtype_and_device(lib: object) -> None:
    x = lib.zeros(2)
    assert isinstance(x, lib.FloatTensor) and isinstance(x, lib.Tensor)
    assert not isinstance(x, lib.DoubleTensor) and not isinstance(x, lib.cuda.FloatTensor)
    assert isinstance(lib.nn.Parameter(x), lib.FloatTensor)
    assert isinstance(lib.tensor([1]), lib.LongTensor) and isinstance(lib.tensor([True]), lib.BoolTensor)
    assert not isinstance([1.0], lib.FloatTensor)
    assert not issubclass(lib.FloatTensor, lib.Tensor)
    assert type(lib.FloatTensor([1])) is lib.Tensor
    assert lib.FloatTensor.dtype is lib.float32 and lib.LongTensor.dtype is lib.int64
    assert lib.FloatTensor.__name__ == "FloatTensor" and lib.FloatTensor.is_cuda is False


def test_tensor_of_a_tensor_aliases_its_storage() -> None:
    x = tidu.tensor([1.0, 2.0])
    y = tidu.Tensor(x)
    assert y is not x
    y[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    z = x.new(x)
    z[1] = 7.0
    assert x.tolist() == [5.0, 7.0]


def test_tensor_of_a_tensor_that_requires_grad_keeps_the_graph() -> None:
    results = []
    for lib in (tidu, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.Tensor(x)
        assert y.requires_grad and y.grad_fn is not None
        (y * y).sum().backward()
        results.append(x.grad.tolist())
    assert results[0] == results[1]


def test_sequences_are_copied() -> None:
    a = np.array([1.0, 2.0], np.float32)
    t = tidu.Tensor(a)
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]


def test_internal_constructor_wraps_its_array() -> None:
    """tidu's own ``Tensor(array, dtype)`` keeps the array itself (no copy, no conversion)."""
    a = np.array([1, 2], np.int64)
    t = tidu.Tensor(a, tidu.int64)
    assert t.numpy() is a and t.dtype is tidu.int64


def test_new_follows_dtype_and_device() -> None:
    x = tidu.tensor([1, 2], dtype=tidu.int32)
    assert x.new([1.9]).dtype is tidu.int32 and x.new(3).dtype is tidu.int32
    assert x.new(3).device == x.device
