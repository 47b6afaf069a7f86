"""``tidu.multiprocessing`` is Python's ``multiprocessing``; tidu tensors cross its queues as
pickles."""

from __future__ import annotations

import multiprocessing

import tidu


def test_it_is_pythons_module() -> None:
    assert tidu.multiprocessing.Process is multiprocessing.Process
    assert tidu.multiprocessing.get_context("spawn") is multiprocessing.get_context("spawn")
    assert set(tidu.multiprocessing.__all__) == set(multiprocessing.__all__)


def test_a_tensor_crosses_a_queue() -> None:
    queue = tidu.multiprocessing.get_context("spawn").Queue()
    x = tidu.arange(4.0)
    queue.put(x)
    y = queue.get(timeout=30)
    queue.close()
    assert y.tolist() == x.tolist() and y.dtype is x.dtype
