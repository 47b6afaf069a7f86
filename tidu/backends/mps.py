"""``tidu.backends.mps``: PyTorch's Apple-GPU (Metal) backend switch, which device-selection code
asks about (``"cuda" if ... else "mps" if tidu.backends.mps.is_available() else "cpu"``).

tidu has no Metal backend, so both answers are ``False``, as PyTorch's are on a machine without it.

>>> import tidu
>>> tidu.backends.mps.is_available(), tidu.backends.mps.is_built()
(False, False)
"""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
