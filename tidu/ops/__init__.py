"""PyTorch-named functions composed from the primitives.

Each module lists its public functions in ``__all__`` and its ``Tensor`` methods in
``METHODS`` (``tidu.ops.methods`` installs them); this package re-exports the functions.
"""

from . import arrange, calculus, complex, conv, copies, counting, creation, cumulative, diagonals, indexing, linalg, activation, math, metadata, order, pointwise, reduce, selection, shape, special, windows  # noqa: E402,I001
from ._operands import broadcast_shapes, broadcast_to, is_linear
from .arrange import *  # noqa: F403
from .calculus import *  # noqa: F403
from .complex import *  # noqa: F403
from .conv import *  # noqa: F403
from .copies import *  # noqa: F403
from .counting import *  # noqa: F403
from .creation import *  # noqa: F403
from .cumulative import *  # noqa: F403
from .diagonals import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .math import *  # noqa: F403
from .metadata import *  # noqa: F403
from .order import *  # noqa: F403
from .pointwise import *  # noqa: F403
from .reduce import *  # noqa: F403
from .selection import *  # noqa: F403
from .shape import *  # noqa: F403
from .special import *  # noqa: F403
from .activation import *  # noqa: F403
from .windows import *  # noqa: F403

__all__ = ["broadcast_shapes", "broadcast_to", "is_linear"]
for _module in (arrange, calculus, complex, conv, copies, counting, creation, cumulative, diagonals, indexing, linalg, activation, math, metadata, order, pointwise, reduce,
                selection, shape, special, windows):
    __all__ += _module.__all__
