"""``tidu.distributed``: tidu runs in one process, on one device, so it has no process groups.

``is_available()`` is False (a PyTorch build without distributed support says the same), so
scripts that check it run on one process. The calls such scripts make behind a check answer as
PyTorch's do before a group exists; ``init_process_group`` raises.

>>> import tidu
>>> tidu.distributed.is_available(), tidu.distributed.is_initialized()
(False, False)
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["barrier", "get_rank", "get_world_size", "init_process_group", "is_available",
           "is_initialized", "is_torchelastic_launched"]

from .utils.data.distributed import _NO_PROCESS_GROUP as _NO_GROUP  # PyTorch's message, as the sampler's


def is_available() -> bool:
    """False: tidu has no distributed backend."""
    return False


def is_initialized() -> bool:
    """False: there is never a process group."""
    return False


def is_torchelastic_launched() -> bool:
    """Whether the process was started by ``torchrun`` (its ``TORCHELASTIC_RUN_ID`` is set)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: Any = None,
                       world_size: int = -1, rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Raise: tidu runs on one process and cannot join a process group.

    >>> import tidu
    >>> tidu.distributed.init_process_group("gloo")
    Traceback (most recent call last):
    ...
    RuntimeError: tidu runs on one process: it has no distributed backend, so init_process_group('gloo') cannot make a process group. Run the script as one process (without torchrun), or guard the call with tidu.distributed.is_available().
    """
    raise RuntimeError(f"tidu runs on one process: it has no distributed backend, so init_process_group({backend!r}) "
                       "cannot make a process group. Run the script as one process (without torchrun), or guard "
                       "the call with tidu.distributed.is_available().")


def get_rank(group: Any = None) -> int:
    """Raise PyTorch's ``ValueError``: there is no process group to have a rank in."""
    raise ValueError(_NO_GROUP)


def get_world_size(group: Any = None) -> int:
    """Raise PyTorch's ``ValueError``: there is no process group."""
    raise ValueError(_NO_GROUP)


def barrier(group: Any = None, async_op: bool = False, device_ids: Any = None) -> None:
    """Raise PyTorch's ``ValueError``: there is no process group to wait for."""
    raise ValueError(_NO_GROUP)

