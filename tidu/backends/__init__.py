"""Kernels: arrays in, arrays out. No tensors, no autodiff.

``tidu.backends.cuda.matmul.allow_tf32`` is PyTorch's flag of the same name (importing the CUDA
backend loads no GPU library: that happens on first use).
"""

from . import cuda  # noqa: F401
