"""A size given as one number or as one per dimension, as a tuple; ``tidu.nn.modules.utils``
(PyTorch's ``torch.nn.modules.utils``) and ``nn.functional`` read it.

>>> from tidu.nn.modules.utils import _pair, _triple
>>> _pair(3), _pair((1, 2)), _triple(2)
((3, 3), (1, 2), (2, 2, 2))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def _ntuple(n: int, name: str = "parse") -> Callable[[Any], tuple]:
    """``value -> tuple``: an iterable as its tuple, anything else repeated ``n`` times."""

    def parse(value: Any) -> tuple:
        if isinstance(value, Iterable) and not isinstance(value, str):
            return tuple(value)
        return (value,) * n

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    """Each element of ``t``, from the last, repeated ``n`` times: (1, 2), 2 -> (2, 2, 1, 1)."""
    return tuple(x for x in reversed(t) for _ in range(n))
