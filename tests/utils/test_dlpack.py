"""DLPack exchange with numpy and PyTorch: zero-copy in both directions (objects and capsules),
PyTorch's errors, and deferred work finished before an export."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu
from tidu.utils.dlpack import from_dlpack, to_dlpack


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_torch_reads_tidu_memory_and_tidu_reads_torch_memory(dtype: str) -> None:
    ours = tidu.tensor(np.arange(6).reshape(2, 3).astype(dtype))
    theirs = torch.from_dlpack(ours)
    assert str(theirs.dtype).removeprefix("torch.") == dtype and tuple(theirs.shape) == (2, 3)
    theirs[0, 1] = 1 if dtype == "bool" else 9
    assert ours[0, 1].item() == theirs[0, 1].item()  # one memory

    source = torch.tensor(np.arange(4).astype(dtype))
    back = tidu.from_dlpack(source)
    assert str(back.dtype).removeprefix("tidu.") == dtype
    source[2] = 0
    np.testing.assert_array_equal(back.numpy(), source.numpy())


def test_capsules_both_ways() -> None:
    x = torch.arange(3.0)
    y = from_dlpack(torch.utils.dlpack.to_dlpack(x))
    x[1] = 5.0
    np.testing.assert_array_equal(y.numpy(), [0.0, 5.0, 2.0])
    z = torch.utils.dlpack.from_dlpack(to_dlpack(tidu.ones(2, 3) * 2))
    np.testing.assert_array_equal(z.numpy(), np.full((2, 3), 2.0, np.float32))


def test_numpy_round_trip_and_strided_views() -> None:
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    t = tidu.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(np.from_dlpack(t.t()), a.T)
    assert tidu.ones(2).__dlpack_device__() == (1, 0) == tuple(torch.ones(2).__dlpack_device__())


def test_deferred_work_is_done_before_export_and_after_a_write() -> None:
    a = tidu.ones(3) * 2
    b = a + 1  # queued, not run yet
    np.testing.assert_array_equal(np.from_dlpack(b), [3.0, 3.0, 3.0])
    source = np.ones(3)
    t = tidu.from_dlpack(source)
    doubled = t * 2  # reads memory another library may write: runs now
    source[0] = 10.0
    np.testing.assert_array_equal(doubled.numpy(), [2.0, 2.0, 2.0])


def test_errors() -> None:
    with pytest.raises(BufferError, match="require gradient") as ours:
        torch.from_dlpack(tidu.ones(2, requires_grad=True))
    with pytest.raises(BufferError) as ref:
        torch.from_dlpack(torch.ones(2, requires_grad=True))
    assert str(ours.value) == str(ref.value)
    capsule = torch.utils.dlpack.to_dlpack(torch.ones(2))
    from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="not consumed yet"):
        from_dlpack(capsule)  # a capsule is read once
    with pytest.raises(TypeError, match="__dlpack__"):
        tidu.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="uint16"):
        tidu.from_dlpack(np.arange(3, dtype=np.uint16))
