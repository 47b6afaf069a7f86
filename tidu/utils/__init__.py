"""Utilities with PyTorch's names: ``tidu.utils.data`` (datasets and loaders),
``tidu.utils.checkpoint`` (activation checkpointing), ``tidu.utils.dlpack`` (exchange with
other array libraries), ``tidu.utils.hooks`` and ``tidu.utils.benchmark`` (``Timer``; imported
at its first use, as PyTorch's is)."""

from typing import Any

from . import checkpoint, data, dlpack, hooks

__all__ = ["benchmark", "checkpoint", "data", "dlpack", "hooks"]


def __getattr__(name: str) -> Any:
    if name == "benchmark":
        import importlib

        return importlib.import_module(".benchmark", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
