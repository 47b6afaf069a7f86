"""Utilities with PyTorch's names: ``tidu.utils.data`` (datasets and loaders),
``tidu.utils.checkpoint`` (activation checkpointing) and ``tidu.utils.dlpack`` (exchange with
other array libraries)."""

from . import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]
