"""Utilities with PyTorch's names: ``tidu.utils.data`` (datasets and loaders) and
``tidu.utils.checkpoint`` (activation checkpointing)."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
