"""Convolution and pooling (PyTorch's ``conv1d``, ``conv2d``, ``max_pool2d``, ``avg_pool2d``)."""

from __future__ import annotations

__all__: list[str] = []

METHODS: dict = {}
