"""Utilities with PyTorch's names: ``tidu.utils.data`` (datasets and loaders)."""

from . import data

__all__ = ["data"]
