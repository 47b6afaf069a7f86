"""``tidu.backends.cudnn``: PyTorch's cuDNN switches, which scripts set at their start.

tidu does not use cuDNN: its convolutions are its own kernels, which pick no algorithm by
benchmarking and give the same results run to run. So ``benchmark`` and ``deterministic`` change
nothing here; they keep the value a script sets, and ``is_available()`` is ``False``.

>>> import tidu
>>> tidu.backends.cudnn.benchmark = True
>>> tidu.backends.cudnn.is_available()
False
"""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    """``None``: no cuDNN is loaded (PyTorch's answer without it)."""
    return None
