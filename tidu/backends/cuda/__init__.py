"""The CUDA backend: numba.cuda compiles, tidu launches (``launch``) and owns memory (``memory``).

``tidu.backends.cuda.matmul.allow_tf32`` (False by default) lets float32 matrix products use
TF32 tensor cores, as PyTorch's flag of the same name does.
"""

from .blas import matmul
from .runtime import is_available, simulated, synchronize

__all__ = ["is_available", "matmul", "simulated", "synchronize"]
