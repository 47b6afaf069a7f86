"""Kernels: arrays in, arrays out. No tensors, no autodiff."""
