"""The CUDA backend: numba.cuda compiles, tidu launches (``launch``) and owns memory (``memory``)."""

from .runtime import is_available, simulated, synchronize

__all__ = ["is_available", "simulated", "synchronize"]
