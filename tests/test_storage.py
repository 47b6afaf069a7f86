"""Tensor.untyped_storage() and Tensor.storage() against PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tidu


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16"])
def test_storages_match_torch(dtype: str) -> None:
    values = np.arange(12).reshape(3, 4) % 5
    ours = tidu.tensor(values).to(getattr(tidu, dtype))
    theirs = torch.tensor(values).to(getattr(torch, dtype))
    for view, tview in ((ours, theirs), (ours[1:, 2], theirs[1:, 2]), (ours.t(), theirs.t())):
        s, ts = view.untyped_storage(), tview.untyped_storage()
        assert (s.nbytes(), s.size(), len(s), s.element_size()) == (ts.nbytes(), ts.size(), len(ts), ts.element_size())
        assert s.tolist() == ts.tolist() and s[5] == ts[5] and s[2:6] == ts[2:6].tolist()
        assert s.data_ptr() == ours.data_ptr() and s == ours.untyped_storage() and not s.is_shared()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, tt = view.storage(), tview.storage()
        assert (t.size(), len(t), t.element_size(), t.nbytes()) == (tt.size(), len(tt), tt.element_size(), tt.nbytes())
        assert t.tolist() == tt.tolist() and t[3] == tt[3] and t.data_ptr() == view.untyped_storage().data_ptr()
    assert ours.untyped_storage() != tidu.tensor(values).untyped_storage()


def test_bfloat16_storage_elements() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = tidu.tensor([1.5, -2.0]).to(tidu.bfloat16).storage()
        theirs = torch.tensor([1.5, -2.0]).to(torch.bfloat16).storage()
    assert ours.tolist() == theirs.tolist() and ours.nbytes() == theirs.nbytes()
    assert tidu.tensor([1.5]).to(tidu.bfloat16).untyped_storage().tolist() == \
        torch.tensor([1.5]).to(torch.bfloat16).untyped_storage().tolist()


def test_typed_storage_warns_as_torch_once() -> None:
    import tidu.storage as module

    module._TYPED_WARNED = False
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        tidu.ones(2).storage()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tidu.ones(2).storage()


def test_cuda_storage_reads_device_memory() -> None:
    assert tidu.cuda.is_available(), "tests/conftest.py turns Numba's CUDA simulator on where there is no GPU"
    x = tidu.arange(4.0, device="cuda")
    s = x[2:].untyped_storage()
    assert s.device.type == "cuda" and s.nbytes() == 16 and s.tolist() == tidu.arange(4.0).untyped_storage().tolist()
