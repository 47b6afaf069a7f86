"""The default device of the creation functions: ``set_default_device``, ``get_default_device``
and ``with tidu.device(...)``, as PyTorch's (its CPU side compared directly)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import pytest
import torch

import tidu


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    tidu.set_default_device(None)
    torch.set_default_device(None)


FACTORIES = {
    "tensor": lambda: tidu.tensor([1.0, 2.0]),
    "as_tensor": lambda: tidu.as_tensor(np.zeros(2)),
    "zeros": lambda: tidu.zeros(2, 3),
    "ones": lambda: tidu.ones(2),
    "empty": lambda: tidu.empty(2),
    "full": lambda: tidu.full((2,), 3.0),
    "arange": lambda: tidu.arange(4),
    "linspace": lambda: tidu.linspace(0, 1, 5),
    "logspace": lambda: tidu.logspace(0, 1, 5),
    "eye": lambda: tidu.eye(3),
    "rand": lambda: tidu.rand(2),
    "randn": lambda: tidu.randn(2),
    "randint": lambda: tidu.randint(0, 5, (3,)),
    "randperm": lambda: tidu.randperm(4),
    "tril_indices": lambda: tidu.tril_indices(3, 3),
    "Linear": lambda: tidu.nn.Linear(2, 3).weight,
    "BatchNorm1d": lambda: tidu.nn.BatchNorm1d(3).running_mean,
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories_follow_the_default_device(name: str) -> None:
    assert FACTORIES[name]().device.type == "cpu"
    tidu.set_default_device("cuda")
    assert FACTORIES[name]().device == tidu.device("cuda:0")
    tidu.set_default_device(None)
    assert FACTORIES[name]().device.type == "cpu"


def test_what_keeps_its_own_device() -> None:
    cpu = tidu.ones(2)
    with tidu.device("cuda"):
        assert tidu.from_numpy(np.zeros(2)).device.type == "cpu"  # shares host memory
        assert tidu.zeros_like(cpu).device.type == "cpu"
        assert tidu.as_tensor(cpu).device.type == "cpu"
        assert tidu.zeros(2, device="cpu").device.type == "cpu"
        # helpers made inside ops follow their inputs, not the default
        assert tidu.nn.functional.one_hot(tidu.tensor([0, 2], device="cpu")).device.type == "cpu"
        assert tidu.nn.functional.dropout(cpu, 0.5).device.type == "cpu"


def test_get_default_device_matches_torch() -> None:
    assert repr(tidu.get_default_device()) == repr(torch.get_default_device()) == "device(type='cpu')"
    tidu.set_default_device("cuda")
    assert tidu.get_default_device() == tidu.device("cuda", 0)  # PyTorch reports the index
    tidu.set_default_device(tidu.device("cpu"))
    torch.set_default_device(torch.device("cpu"))
    assert repr(tidu.get_default_device()) == repr(torch.get_default_device())


def test_device_context_nests_and_restores_as_torch() -> None:
    seen = {}
    for lib, inner in ((torch, "meta"), (tidu, "cuda")):
        with lib.device("cpu") as d:
            with lib.device(inner):
                with lib.device("cpu"):
                    first = lib.zeros(1).device.type
                second = lib.zeros(1).device.type
            third = lib.zeros(1).device.type
        seen[lib.__name__] = (repr(d), first, second == inner, third, lib.zeros(1).device.type)
    assert seen["tidu"] == seen["torch"]


def test_context_restores_after_an_error() -> None:
    with pytest.raises(ValueError, match="inside"), tidu.device("cuda"):
        raise ValueError("inside")
    assert tidu.zeros(1).device.type == "cpu"


def test_default_device_is_per_thread() -> None:
    tidu.set_default_device("cuda")
    other = []
    thread = threading.Thread(target=lambda: other.append(tidu.zeros(1).device.type))
    thread.start()
    thread.join()
    assert other == ["cpu"] and tidu.zeros(1).device.type == "cuda"


def test_training_step_under_a_cuda_default() -> None:
    tidu.manual_seed(0)
    with tidu.device("cuda"):
        model = tidu.nn.Sequential(tidu.nn.Linear(3, 4), tidu.nn.ReLU(), tidu.nn.Dropout(0.1), tidu.nn.Linear(4, 2))
        loss = tidu.nn.functional.cross_entropy(model(tidu.randn(5, 3)), tidu.tensor([0, 1, 1, 0, 1]))
        loss.backward()
    assert all(p.grad.device.type == "cuda" for p in model.parameters())


def test_bad_device_is_a_runtime_error_as_in_torch() -> None:
    for lib in (torch, tidu):
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            lib.set_default_device("gpu")
