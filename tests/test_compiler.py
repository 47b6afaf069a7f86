"""``tidu.compiler``: nothing is ever compiling, and ``disable`` gives back what it is given."""

from __future__ import annotations

import pytest
import torch

import tidu


def test_queries_as_pytorch_outside_compilation() -> None:
    for name in ("is_compiling", "is_dynamo_compiling", "is_exporting"):
        assert getattr(tidu.compiler, name)() is getattr(torch.compiler, name)() is False
    assert tidu.compiler.reset() is None


def test_disable_and_allow_in_graph_return_the_function() -> None:
    def f(x):
        return x * 2

    assert tidu.compiler.disable(f) is f and tidu.compiler.disable(reason="io")(f) is f
    assert tidu.compiler.allow_in_graph(f) is f
    assert tidu.compiler.compile is tidu.compile
    with pytest.raises(AssertionError, match="fn must be callable"):
        tidu.compiler.disable(3)
    with pytest.raises(AssertionError, match="fn must be callable"):
        torch.compiler.disable(3)
