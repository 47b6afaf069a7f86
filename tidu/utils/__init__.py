"""Utilities with PyTorch's names: ``tidu.utils.data`` (datasets and loaders),
``tidu.utils.checkpoint`` (activation checkpointing) and ``tidu.utils.dlpack`` (exchange with
other array libraries)."""

from . import benchmark, checkpoint, data, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "dlpack", "hooks"]
