"""tidu.train: meganeura's seed tests carried over, plus Session, Trainer, loader, progress and plots."""

import logging
import sys

import numpy as np
import pytest
import torch

import tidu
from tidu.train import (
    Batch,
    DataLoader,
    EpochStats,
    LossHistory,
    MetricCallback,
    Optimizer,
    StepMetrics,
    TrainConfig,
    Trainer,
    TrainHistory,
    build_session,
    plot_loss,
)


# --- meganeura's seed tests ---------------------------------------------------------------------
def test_train_config_default():
    config = TrainConfig()
    assert config.learning_rate == 0.01
    assert config.log_interval == 100
    assert config.data_input == "x"
    assert config.label_input == "labels"
    assert config.optimizer is None and config.resolved_optimizer() == Optimizer.sgd(0.01) == Optimizer()


def test_optimizer_constructors():
    assert Optimizer.adam(0.5) == Optimizer("adam", 0.5, 0.9, 0.999, 1e-8)
    assert Optimizer.sgd(0.5).kind == "sgd" and Optimizer.sgd(0.5).learning_rate == 0.5
    with pytest.raises(ValueError, match="'sgd' or 'adam'"):
        Optimizer("lbfgs")


def test_train_history_final_loss():
    h = TrainHistory()
    assert h.final_loss() is None
    h.epochs.append(EpochStats(epoch=0, avg_loss=2.5, steps=10))
    h.epochs.append(EpochStats(epoch=1, avg_loss=1.2, steps=10))
    assert h.final_loss() == 1.2


def test_epoch_stats_fields():
    stats = EpochStats(epoch=3, avg_loss=0.42, steps=100)
    assert stats.epoch == 3
    assert abs(stats.avg_loss - 0.42) < 1e-6
    assert stats.steps == 100


def test_session_simple():
    """The seed's simple training graph: x[4,3] @ w[3,2] -> mean; one parameter, one gradient."""
    rng = np.random.default_rng(0)
    w = tidu.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
    session = build_session(lambda x: x @ w, lambda y, _labels: y.mean(), params={"w": w})
    x = rng.standard_normal((4, 3)).astype(np.float32)
    session.set_input("x", x)
    session.set_input("labels", np.zeros(1, np.float32))
    session.step()
    assert session.param_names() == ["w"]
    expected_grad = np.repeat(x.sum(0)[:, None] / 8, 2, axis=1)
    np.testing.assert_allclose(session.read_param_grad("w"), expected_grad, rtol=1e-6)
    assert session.read_loss() == pytest.approx(float((x @ (session.read_param("w") + 0.01 * expected_grad)).mean()))


def test_session_mlp():
    """The seed's MLP graph: 784-128-10 with bias, relu and cross entropy on one-hot labels:
    three parameters get gradients, two inputs are read."""
    rng = np.random.default_rng(0)
    w1 = tidu.tensor(rng.standard_normal((784, 128)).astype(np.float32) * 0.05, requires_grad=True)
    b1 = tidu.zeros(128, requires_grad=True)
    w2 = tidu.tensor(rng.standard_normal((128, 10)).astype(np.float32) * 0.05, requires_grad=True)
    session = build_session(lambda x: (x @ w1 + b1).relu() @ w2, tidu.nn.functional.cross_entropy,
                            params={"w1": w1, "b1": b1, "w2": w2})
    session.set_input("x", rng.standard_normal((4, 784)))
    session.set_input("labels", np.eye(10, dtype=np.float32)[[1, 3, 5, 7]])
    session.step()
    assert sorted(session._inputs) == ["labels", "x"]
    assert [session.read_param_grad(n).shape for n in session.param_names()] == [(784, 128), (128,), (128, 10)]
    assert session.read_loss() > 0


# --- a small MLP written with tidu ops (no tidu.nn needed) -------------------------------------
class MLP:
    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            w = (rng.uniform(-1, 1, (fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32)
            self.layers.append((tidu.tensor(w, requires_grad=True), tidu.zeros(fan_out, requires_grad=True)))

    def named_parameters(self):
        for i, (w, b) in enumerate(self.layers):
            yield f"{i}.weight", w
            yield f"{i}.bias", b

    def __call__(self, x):
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = x.relu()
        return x


def mse(out, labels):
    return ((out - labels) ** 2).mean()


def blobs(n=96, seed=0):
    """Three separable classes in 4-d, labels one-hot (meganeura's label layout)."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, 3, n)
    centers = np.eye(3, 4) * 3
    data = (centers[classes] + rng.standard_normal((n, 4)) * 0.3).astype(np.float32)
    return data, np.eye(3, dtype=np.float32)[classes]


class Recorder(MetricCallback):
    def __init__(self):
        self.steps, self.epochs = [], []

    def on_step(self, metrics):
        self.steps.append(metrics)

    def on_epoch(self, stats):
        self.epochs.append(stats)


def test_trainer_loss_decreases_and_callbacks_see_every_step(caplog):
    data, labels = blobs()
    loader = DataLoader(data, labels, sample_size=4, label_size=3, batch_size=16)
    session = build_session(MLP([4, 16, 3]), mse)
    recorder, losses = Recorder(), LossHistory()
    with caplog.at_level(logging.INFO, logger="tidu.train"):
        history = Trainer(session, TrainConfig(learning_rate=0.1, log_interval=2)).train(
            loader, epochs=8, callbacks=[recorder, losses])
    assert [s.epoch for s in history.epochs] == list(range(8))
    assert all(s.steps == 6 for s in history.epochs)
    assert history.epochs[-1].avg_loss < 0.5 * history.epochs[0].avg_loss
    assert history.final_loss() == history.epochs[-1].avg_loss
    assert [(m.epoch, m.step) for m in recorder.steps] == [(e, s) for e in range(8) for s in range(6)]
    assert losses.losses == [m.loss for m in recorder.steps]
    assert recorder.epochs == history.epochs
    for stats in history.epochs:
        step_losses = [m.loss for m in recorder.steps if m.epoch == stats.epoch]
        assert stats.avg_loss == pytest.approx(sum(step_losses) / len(step_losses))
    assert session.step_count == 48
    messages = [r.getMessage() for r in caplog.records]
    assert f"epoch 0: avg_loss = {history.epochs[0].avg_loss:.4f} (6 steps)" in messages
    assert sum("step" in m and "loss =" in m and m.startswith("  epoch") for m in messages) == 8 * 3
    assert f"  epoch 1 step 2: loss = {recorder.steps[8].loss:.4f}" in messages


def test_log_interval_zero_logs_only_epochs(caplog):
    data, labels = blobs(32)
    session = build_session(MLP([4, 3]), mse)
    with caplog.at_level(logging.INFO, logger="tidu.train"):
        Trainer(session, TrainConfig(log_interval=0)).train(DataLoader(data, labels, 4, 3, 8), epochs=2)
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["epoch 0", "epoch 1"]


def test_learning_rate_alias_really_sets_sgd():
    data, labels = blobs(8)
    ours = build_session(MLP([4, 3]), mse)
    before = {n: ours.read_param(n) for n in ours.param_names()}
    Trainer(ours, TrainConfig(learning_rate=0.25)).train_epoch(DataLoader(data, labels, 4, 3, 8), 0)
    assert ours.optimizer.param_groups[0]["lr"] == 0.25
    # the same step by hand: plain SGD at 0.25 from the same weights
    model = MLP([4, 3])
    loss = mse(model(tidu.tensor(data[DataLoader(data, labels, 4, 3, 8).indices])), tidu.tensor(labels))
    loss.backward()
    for (name, p) in model.named_parameters():
        np.testing.assert_allclose(ours.read_param(name), before[name] - 0.25 * p.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_session_adam_steps_match_torch():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))
    w0 = rng.standard_normal((3, 2))
    w = tidu.tensor(w0.copy(), requires_grad=True)
    session = build_session(lambda t: t @ w, mse, params={"w": w})
    session.set_adam(0.05, beta1=0.8)
    wt = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.Adam([wt], lr=0.05, betas=(0.8, 0.999))
    for _ in range(5):
        session.set_input("x", tidu.tensor(x))
        session.set_input("labels", tidu.tensor(y))
        session.step()
        opt.zero_grad()
        loss = ((torch.tensor(x) @ wt - torch.tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        assert session.read_loss() == pytest.approx(loss.item(), rel=1e-12)
    np.testing.assert_allclose(session.read_param("w"), wt.detach().numpy(), rtol=1e-12)
    assert session.read_param_grad("w").shape == (3, 2)


def test_checkpoint_round_trip(tmp_path):
    data, labels = blobs(32)
    session = build_session(MLP([4, 8, 3], seed=1), mse)
    trainer = Trainer(session, TrainConfig(optimizer=Optimizer.adam(0.01), log_interval=0))
    trainer.train(DataLoader(data, labels, 4, 3, 8), epochs=2)
    path = tmp_path / "ckpt.safetensors"
    session.save_checkpoint(path)

    restored = build_session(MLP([4, 8, 3], seed=2), mse)
    restored.load_checkpoint(path)
    assert restored.step_count == session.step_count == 8
    assert type(restored.optimizer) is tidu.optim.Adam
    for name in session.param_names():
        np.testing.assert_array_equal(restored.read_param(name), session.read_param(name))
    for a, b in zip(session.optimizer.state.values(), restored.optimizer.state.values()):
        np.testing.assert_array_equal(a["exp_avg_sq"].numpy(), b["exp_avg_sq"].numpy())
        assert a["step"].item() == b["step"].item() == 8
    # both continue identically
    for s in (session, restored):
        Trainer(s, TrainConfig(optimizer=Optimizer.adam(0.01), log_interval=0)).train_epoch(
            DataLoader(data, labels, 4, 3, 8), 5)
    for name in session.param_names():
        np.testing.assert_array_equal(restored.read_param(name), session.read_param(name))


def test_checkpoint_mismatches(tmp_path):
    session = build_session(MLP([4, 8, 3]), mse)
    path = tmp_path / "ckpt.safetensors"
    session.save_checkpoint(path)
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight: copying a param with shape \(4, 8\)"):
        build_session(MLP([4, 5, 3]), mse).load_checkpoint(path)
    with pytest.raises(RuntimeError, match=r"Unexpected parameter\(s\) in checkpoint: \['1.weight', '1.bias'\]"):
        build_session(MLP([4, 8]), mse).load_checkpoint(path)
    tidu.save({"w": tidu.ones(2)}, tmp_path / "other.safetensors")
    with pytest.raises(RuntimeError, match="not a tidu.train session checkpoint"):
        session.load_checkpoint(tmp_path / "other.safetensors")


def test_session_switches_optimizers_and_keeps_adam_moments():
    session = build_session(MLP([4, 3]), mse)
    assert type(session.optimizer) is tidu.optim.SGD
    session.set_adam(0.1)
    adam = session.optimizer
    session.set_adam(0.2, beta2=0.9)
    assert session.optimizer is adam and adam.param_groups[0]["betas"] == (0.9, 0.9)
    session.set_learning_rate(0.3)
    assert adam.param_groups[0]["lr"] == 0.3
    session.set_sgd(0.4)
    assert type(session.optimizer) is tidu.optim.SGD and session.optimizer.param_groups[0]["lr"] == 0.4


def test_session_errors():
    session = build_session(MLP([4, 3]), mse)
    with pytest.raises(RuntimeError, match="no step has run yet"):
        session.read_loss()
    with pytest.raises(KeyError, match="session input 'x' is not set"):
        session.step()
    session.set_input("x", np.ones((2, 4)))
    session.set_input("labels", np.ones((2, 3)))
    assert session._inputs["x"].dtype is tidu.float32
    bad = build_session(MLP([4, 3]), lambda out, y: out - y)
    bad.set_input("x", np.ones((2, 4)))
    bad.set_input("labels", np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"the loss must be a one-element tensor, got \(2, 3\)"):
        bad.step()
    with pytest.raises(TypeError, match="cannot find the parameters"):
        build_session(lambda x: x, mse)
    with pytest.raises(ValueError, match="must be a tensor that requires grad"):
        build_session(lambda x: x, mse, params=[tidu.ones(2)])
    with pytest.raises(KeyError, match="no parameter named 'nope'"):
        session.read_param("nope")
    with pytest.raises(RuntimeError, match="size mismatch for 0.bias"):
        session.set_parameter("0.bias", np.ones(4))
    session.set_parameter("0.bias", np.ones(3))
    assert session.read_param("0.bias").tolist() == [1.0, 1.0, 1.0]


def test_trainer_accepts_any_iterable_of_batches():
    data, labels = blobs(40)
    loader = tidu.utils.data.DataLoader(
        tidu.utils.data.TensorDataset(tidu.tensor(data), tidu.tensor(labels)), batch_size=10, shuffle=True)
    trainer = Trainer(build_session(MLP([4, 3]), mse), TrainConfig(learning_rate=0.1, log_interval=0))
    first = trainer.train_epoch(loader, 0)
    history = trainer.train([Batch(data, labels)] * 3, epochs=2)
    assert first.steps == 4 and [e.steps for e in history.epochs] == [3, 3]
    assert trainer.session() is trainer.session_mut() is trainer.into_session()
    assert Trainer(trainer.session()).train_epoch([], 0) == EpochStats(0, 0.0, 0)


# --- meganeura's array loader --------------------------------------------------------------------
def test_array_loader():
    data = np.arange(22, dtype=np.float32)
    loader = DataLoader(data, np.arange(11), sample_size=2, label_size=1, batch_size=3)
    assert len(loader) == 11 and not loader.is_empty() and loader.num_batches() == 3
    batches = []
    while (b := loader.next_batch()) is not None:
        batches.append(b)
    assert len(batches) == 3  # the last partial batch (2 samples) is dropped
    assert batches[1].data.tolist() == [[6, 7], [8, 9], [10, 11]] and batches[1].labels.tolist() == [[3], [4], [5]]
    assert loader.next_batch() is None
    loader.reset()
    assert loader.next_batch().labels.tolist() == [[0], [1], [2]]

    loader.shuffle(7)
    once = loader.indices.copy()
    assert sorted(once.tolist()) == list(range(11)) and once.tolist() != list(range(11))
    again = DataLoader(data, np.arange(11), 2, 1, 3)
    again.shuffle(7)
    assert again.indices.tolist() == once.tolist()  # deterministic per seed
    again.shuffle(7)
    assert again.indices.tolist() != once.tolist()  # and cumulative
    loader.reset()
    first = loader.next_batch()
    assert first.labels[:, 0].tolist() == once[:3].tolist()
    assert first.data[:, 0].tolist() == (2 * once[:3]).tolist()
    assert [lab[:, 0].tolist() for _, lab in loader] == [once[3:6].tolist(), once[6:9].tolist()]


@pytest.mark.parametrize("args,match", [
    (([1.0] * 7, [0.0] * 3, 2, 1, 1), "data length not divisible by sample_size"),
    (([1.0] * 6, [0.0] * 5, 2, 2, 1), "labels length not divisible by label_size"),
    (([1.0] * 6, [0.0] * 3, 2, 1, 4), r"dataset \(3 samples\) smaller than batch_size \(4\)"),
    (([1.0] * 6, [0.0] * 4, 2, 1, 1), "data has 3 samples but labels has 4"),
    (([1.0] * 6, [0.0] * 3, 0, 1, 1), "must be positive"),
])
def test_array_loader_validation(args, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(*args)


# --- progress bar and plots ------------------------------------------------------------------------
def _short_run(progress):
    data, labels = blobs(32)
    Trainer(build_session(MLP([4, 3]), mse), TrainConfig(log_interval=0, progress=progress)).train(
        DataLoader(data, labels, 4, 3, 8), epochs=1)


def test_progress_bar_on_request_only(capsys, monkeypatch):
    _short_run(True)
    assert "epoch 0" in capsys.readouterr().err
    _short_run(None)  # stderr is not a terminal under pytest
    _short_run(False)
    assert capsys.readouterr().err == ""
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # tqdm not installed: no bar, no error
    _short_run(True)
    assert capsys.readouterr().err == ""


def test_plot_loss_writes_a_png(tmp_path, monkeypatch):
    history = TrainHistory([EpochStats(0, 2.0, 3), EpochStats(1, 1.0, 3)])
    path = history.plot(str(tmp_path / "loss.png"), step_losses=[3.0, 2.0, 1.5, 1.2, 1.0, 0.8])
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match="plotting the loss needs matplotlib: pip install matplotlib"):
        plot_loss(tmp_path / "no.png", history)


def test_step_metrics_fields():
    assert StepMetrics(1, 2, 0.5) == StepMetrics(epoch=1, step=2, loss=0.5)
