"""``tidu.multiprocessing``: Python's ``multiprocessing``, under PyTorch's name.

PyTorch's module adds sharing of tensor storage between processes; tidu's tensors cross a
process boundary as their pickles (copies), which is what Python's ``multiprocessing`` does with
them, so the names here are Python's own (``Process``, ``Queue``, ``Pool``, ``get_context``,
``set_start_method``...).

>>> import multiprocessing, tidu
>>> tidu.multiprocessing.get_context("spawn") is multiprocessing.get_context("spawn")
True
>>> tidu.multiprocessing.cpu_count() == multiprocessing.cpu_count()
True
"""

from multiprocessing import *  # noqa: F403
from multiprocessing import __all__  # noqa: F401
