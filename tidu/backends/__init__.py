"""Kernels: arrays in, arrays out. No tensors, no autodiff.

``tidu.backends.cuda.matmul.allow_tf32`` is PyTorch's flag of the same name (importing the CUDA
backend loads no GPU library: that happens on first use); ``tidu.backends.cudnn`` holds PyTorch's
cuDNN switches, which change nothing in tidu (it does not use cuDNN).
"""

from . import cuda, cudnn, mps  # noqa: F401
