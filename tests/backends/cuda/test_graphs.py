"""Compiled backward steps replayed as CUDA graphs (tidu/backends/cuda/graphs.py).

On a GPU the repeated steps below are captured and replayed; under the simulator (CI) graphs
are off and the same steps run their kernels one by one. Either way every pass's gradients
are the kernels' own (bit for bit against graphs switched off) and the CPU's (to rounding).
"""

from __future__ import annotations

import numpy as np
import pytest

import tidu
from tidu.autograd import compiled
from tidu.backends.cuda import graphs, memory
from tidu.backends.cuda.memory import CudaArray
from tidu.backends.cuda.runtime import runtime
from tidu.core import programs

F = tidu.nn.functional
PASSES = graphs.CAPTURE_AFTER + 3


@pytest.fixture(autouse=True)
def _compiled_steps_on(monkeypatch):
    """Graphs replay compiled steps: on even in a ``TIDU_CACHE=0`` run."""
    monkeypatch.setattr(programs, "ENABLED", True)


def _weights(device: str) -> dict[str, tidu.Tensor]:
    rng = np.random.default_rng(0)
    shapes = {"w1": (32, 16), "b1": (32,), "w2": (8, 32), "g": (32,), "beta": (32,)}
    return {k: tidu.tensor(rng.standard_normal(s) * 0.3, dtype=tidu.float32, device=device, requires_grad=True)
            for k, s in shapes.items()}


def _step(w: dict[str, tidu.Tensor], x: tidu.Tensor, labels: tidu.Tensor) -> list[np.ndarray]:
    """A small network's forward and backward: products, a layer norm, GELU, cross-entropy."""
    h = F.layer_norm(F.linear(x, w["w1"], w["b1"]), (32,), w["g"], w["beta"])
    loss = F.cross_entropy(F.gelu(h) @ w["w2"].t(), labels)
    loss.backward()
    grads = [t.grad for t in w.values()]
    for t in w.values():
        t.grad = None
    return [g.cpu().numpy() for g in grads]


def _inputs(k: int, device: str, transposed: bool = False) -> tuple[tidu.Tensor, tidu.Tensor]:
    rng = np.random.default_rng(k + 1)
    data = rng.standard_normal((16, 4)).astype(np.float32)
    x = tidu.tensor(data, device=device).t() if transposed else tidu.tensor(data.T.copy(), device=device)
    return x, tidu.tensor(rng.integers(0, 8, 4), device=device)


def _passes(device: str, monkeypatch: pytest.MonkeyPatch, enabled: bool, held: list) -> list[list[np.ndarray]]:
    monkeypatch.setattr(graphs, "ENABLED", enabled)
    monkeypatch.setattr(graphs, "TRIALS", PASSES)  # kept whatever its speed here
    compiled.clear()
    w = _weights(device)
    results = []
    for k in range(PASSES):
        x, labels = _inputs(k, device, transposed=k % 2 == 1)  # a view in every other pass
        results.append(_step(w, x, labels))
        held.append(w["w1"].grad)
    return results


def test_replayed_steps_give_the_kernels_and_the_cpus_gradients(monkeypatch):
    before = dict(graphs.STATS)
    replayed = _passes("cuda", monkeypatch, True, [])
    captured = graphs.STATS["captured"] - before["captured"]
    if runtime().simulated:
        assert captured == 0 and graphs.STATS["replayed"] == before["replayed"]
    else:
        assert captured == 1 and graphs.STATS["replayed"] - before["replayed"] == PASSES - graphs.CAPTURE_AFTER + 1
    kernels = _passes("cuda", monkeypatch, False, [])
    on_cpu = _passes("cpu", monkeypatch, False, [])
    for k in range(PASSES):
        for g, e, c in zip(replayed[k], kernels[k], on_cpu[k]):
            np.testing.assert_array_equal(g, e, err_msg=f"pass {k}")
            np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5, err_msg=f"pass {k}")
    assert not np.array_equal(replayed[-1][0], replayed[-2][0])  # each pass its own values


def _tanh_layer(w: dict[str, tidu.Tensor], x: tidu.Tensor) -> None:
    h = F.linear(x, w["w1"], w["b1"]).tanh()
    (h * h).sum().backward()  # a backward of three instructions


def test_a_passs_gradients_outlive_the_next_replay(monkeypatch):
    monkeypatch.setattr(graphs, "ENABLED", True)
    monkeypatch.setattr(graphs, "TRIALS", PASSES)
    monkeypatch.setattr(graphs, "MIN_PROGRAM", 1)
    compiled.clear()
    w = _weights("cuda")
    kept = []
    for k in range(PASSES):
        x, labels = _inputs(k, "cuda")
        _tanh_layer(w, x)
        kept.append((w["w1"].grad, x.cpu().numpy()))
        w["w1"].grad = w["b1"].grad = None
    for grad, x in kept:  # d/dW sum(tanh(x W^T + b)^2) = (2 t (1 - t^2))^T x
        t = np.tanh(x @ w["w1"].detach().cpu().numpy().T + w["b1"].detach().cpu().numpy())
        np.testing.assert_allclose(grad.cpu().numpy(), (2 * t * (1 - t * t)).T @ x, rtol=1e-4, atol=1e-5)


def _built(monkeypatch: pytest.MonkeyPatch) -> tuple[dict, tidu.Tensor, tidu.Tensor, list, compiled.Step]:
    """Weights, inputs, the gradients of one pass and the compiled step it built, graphs on."""
    monkeypatch.setattr(graphs, "ENABLED", True)
    compiled.clear()
    w = _weights("cuda")
    x, labels = _inputs(0, "cuda")
    expected = _step(w, x, labels)
    (step,) = compiled._steps.values()
    return w, x, labels, expected, step


def test_a_program_that_cannot_be_captured_runs_its_kernels(monkeypatch):
    w, x, labels, expected, step = _built(monkeypatch)
    program = step.fn

    def reads_the_host(values):  # a host constant copied in: a graph cannot hold it
        CudaArray.from_host(np.ones(1, np.float32))
        return program(values)

    monkeypatch.setattr(step, "fn", reads_the_host)
    before = dict(graphs.STATS)
    for _ in range(PASSES):
        got = _step(w, x, labels)
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g, e)
    simulated = runtime().simulated  # no capture tried there
    assert graphs.STATS["failed"] - before["failed"] == (0 if simulated else 1)
    assert step.replay is (None if simulated else False) and graphs.STATS["replayed"] == before["replayed"]


def test_a_graph_no_faster_than_the_kernels_is_dropped(monkeypatch):
    w, x, labels, expected, step = _built(monkeypatch)
    before = dict(graphs.STATS)
    for k in range(1, graphs.CAPTURE_AFTER + graphs.TRIALS + 2):
        if step.replay.__class__ is graphs.Replay:
            step.replay.eager = 0.0  # as if the kernels took no time
        for g, e in zip(_step(w, x, labels), expected):
            np.testing.assert_array_equal(g, e, err_msg=f"pass {k}")
    if runtime().simulated:
        assert step.replay is None and graphs.STATS == before
    else:
        assert step.replay is False and graphs.STATS["dropped"] - before["dropped"] == 1
        assert graphs.STATS["replayed"] - before["replayed"] == 1 + graphs.TRIALS  # the capture's launch, the trials


def test_a_short_program_is_not_captured(monkeypatch):
    monkeypatch.setattr(graphs, "ENABLED", True)
    monkeypatch.setattr(graphs, "MIN_PROGRAM", 100)  # three instructions fused, ten without fusion
    compiled.clear()
    w = _weights("cuda")
    before = dict(graphs.STATS)
    for k in range(PASSES):
        _tanh_layer(w, _inputs(k, "cuda")[0])
    (step,) = compiled._steps.values()
    assert len(step.program) < graphs.MIN_PROGRAM and graphs.STATS == before
    assert step.replay is (None if runtime().simulated else False)


@pytest.mark.parametrize("limit", ["inputs", "own memory"])
def test_a_step_over_the_memory_limit_runs_its_kernels(monkeypatch, limit):
    w, x, labels, expected, step = _built(monkeypatch)
    capture = graphs._capture

    def at_the_limit(step, values, eager, seen):  # the inputs alone over it, or only with the graph's own memory
        inputs = sum(v.nbytes for v in values)
        monkeypatch.setattr(graphs, "MAX_GRAPH_BYTES", inputs - 1 if limit == "inputs" else inputs)
        return capture(step, values, eager, None)  # every input copied into the graph's statics

    monkeypatch.setattr(graphs, "_capture", at_the_limit)
    before = dict(graphs.STATS)
    for k in range(PASSES):
        for g, e in zip(_step(w, x, labels), expected):
            np.testing.assert_array_equal(g, e, err_msg=f"pass {k}")
    simulated = runtime().simulated
    assert step.replay is (None if simulated else False) and graphs.STATS["captured"] == before["captured"]


def test_running_out_of_memory_gives_the_graphs_memory_back(monkeypatch):
    w, x, labels, expected, step = _built(monkeypatch)
    monkeypatch.setattr(graphs, "TRIALS", PASSES)
    for _ in range(graphs.CAPTURE_AFTER - 1):
        _step(w, x, labels)
    assert (step.replay.__class__ is graphs.Replay) is not runtime().simulated
    assert graphs.release_memory in memory.ON_OUT_OF_MEMORY
    with pytest.raises(tidu.cuda.OutOfMemoryError, match="out of memory"):
        tidu.empty(2**46, device="cuda")
    assert step.replay is None  # dropped (on a GPU), and captured again later
    for _ in range(graphs.CAPTURE_AFTER + 1):
        for g, e in zip(_step(w, x, labels), expected):
            np.testing.assert_array_equal(g, e)
    assert (step.replay.__class__ is graphs.Replay) is not runtime().simulated


def test_inputs_read_in_place_are_checked_on_every_pass(monkeypatch):
    """Inputs that stay where they were (the weights, the batch) are read in place; a pass whose
    weights moved runs the kernels, and ``MAX_MISSES`` such passes drop the graph, which is
    captured again copying every input. Every pass's gradients are the kernels'."""
    w, x, labels, expected, step = _built(monkeypatch)
    monkeypatch.setattr(graphs, "TRIALS", PASSES)
    before = dict(graphs.STATS)
    for k in range(graphs.CAPTURE_AFTER + 1):
        for g, e in zip(_step(w, x, labels), expected):
            np.testing.assert_array_equal(g, e, err_msg=f"pass {k}")
    simulated = runtime().simulated
    placed = graphs.STATS["in_place"] - before["in_place"]
    assert placed == 0 if simulated else placed > 0 and step.replay.in_place
    moved = {k: tidu.tensor(t.detach().cpu().numpy(), device="cuda", requires_grad=True) for k, t in w.items()}
    for k in range(graphs.MAX_MISSES + graphs.CAPTURE_AFTER + 1):
        for g, e in zip(_step(moved, x, labels), expected):
            np.testing.assert_array_equal(g, e, err_msg=f"moved, pass {k}")
    if simulated:
        assert graphs.STATS == before
    else:
        assert graphs.STATS["missed"] - before["missed"] == graphs.MAX_MISSES
        assert graphs.STATS["dropped"] - before["dropped"] == 1 and graphs.STATS["captured"] - before["captured"] == 2
        assert step.replay.__class__ is graphs.Replay and not step.replay.in_place  # every input copied now
