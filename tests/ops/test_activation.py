"""``tidu.softmax`` / ``tidu.log_softmax`` and their Tensor methods against PyTorch."""

from __future__ import annotations

import pytest
import torch

import tidu
from tests.test_torch_oracle import FLOATS, Arg, T, run_both


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize(("arg", "dim"), [(Arg((5,)), 0), (Arg((3, 4)), -1), (Arg((3, 4)), 0), (T(3, 4), 1),
                                          (Arg(()), 0), (Arg((2, 0, 3)), 1), (Arg((2, 3, 4)), 1)])
def test_matches_torch(name: str, arg: Arg, dim: int, dtype: str) -> None:
    run_both(lambda x: getattr(x, name)(dim) if isinstance(x, tidu.Tensor) else getattr(x, name)(dim),
             None, [arg], dtype)
    run_both(lambda x: getattr(tidu if isinstance(x, tidu.Tensor) else torch, name)(x, dim=dim), None, [arg], dtype)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_dtype_argument_and_integer_input(name: str) -> None:
    ints = [[1, 2, 3]]
    out = getattr(tidu, name)(tidu.tensor(ints), dim=1, dtype=tidu.float64)
    ref = getattr(torch, name)(torch.tensor(ints), dim=1, dtype=torch.float64)
    assert out.dtype is tidu.float64
    assert torch.allclose(torch.from_numpy(out.numpy()), ref)
    with pytest.raises(NotImplementedError, match="kernel_impl\" not implemented for 'Long'"):
        getattr(tidu, name)(tidu.tensor(ints), dim=1)
    with pytest.raises(NotImplementedError):
        getattr(torch, name)(torch.tensor(ints), dim=1)
    with pytest.raises(IndexError):
        getattr(tidu, name)(tidu.ones(2, 3), dim=2)
    with pytest.raises(IndexError):
        getattr(torch, name)(torch.ones(2, 3), dim=2)
