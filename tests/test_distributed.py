"""``tidu.distributed``: one process, no process group; the answers of PyTorch's before a group
exists."""

from __future__ import annotations

import pytest
import torch
import torch.distributed

import tidu


def test_no_process_group() -> None:
    assert tidu.distributed.is_available() is False
    assert tidu.distributed.is_initialized() is torch.distributed.is_initialized() is False
    assert tidu.distributed.is_torchelastic_launched() is torch.distributed.is_torchelastic_launched()


def test_init_process_group_raises_saying_why() -> None:
    with pytest.raises(RuntimeError, match=r"tidu runs on one process.*init_process_group\('nccl'\)"):
        tidu.distributed.init_process_group(backend="nccl", rank=0, world_size=2)


@pytest.mark.parametrize("name", ["get_rank", "get_world_size", "barrier"])
def test_group_queries_raise_pytorchs_error(name: str) -> None:
    with pytest.raises(ValueError) as ours:
        getattr(tidu.distributed, name)()
    with pytest.raises(ValueError) as theirs:
        getattr(torch.distributed, name)()
    assert str(ours.value) == str(theirs.value)
