"""Every tensor primitive, declared once: kernels, shape rule, JVP and transpose.

Importing this package registers each family in ``tidu.core.primitive.REGISTRY``.
"""

from . import creation, elementwise, linalg, reduce, structural
from ..core.primitive import REGISTRY

__all__ = ["REGISTRY", "creation", "elementwise", "linalg", "reduce", "structural"]
