"""``torch.nn.modules.utils``: ``_single``, ``_pair``, ``_triple``, ``_quadruple`` (tidu/nn/_tuples.py).

>>> from tidu.nn.modules.utils import _pair
>>> _pair(3)
(3, 3)
"""

from .._tuples import _ntuple, _pair, _quadruple, _reverse_repeat_tuple, _single, _triple

__all__ = ["_ntuple", "_pair", "_quadruple", "_reverse_repeat_tuple", "_single", "_triple"]
