"""Random training loops against PyTorch: models, losses, optimizers, schedulers and clipping.

Each loop is drawn from a seed: a model (an MLP, a small CNN with BatchNorm, GroupNorm and
pooling, a 1-D CNN, an LSTM, GRU or RNN, or an embedding and a transformer layer) and its activations, a loss, an optimizer with its options and parameter groups, a scheduler,
gradient clipping, gradient accumulation over two micro-batches, and ``train()``/``eval()``
switches. It runs ``STEPS`` steps in tidu and in PyTorch from the same initial state, in float64;
every step compares the loss, the model's output in ``eval()`` mode, and the learning rates, and
the end compares every parameter and buffer (BatchNorm's running statistics included) and the
optimizer's state.

    python tests/optim/test_random_training.py FIRST LAST [cpu|cuda]   # more loops than the suite runs

On ``cuda`` (Numba's simulator in CI) tidu runs on the GPU, against PyTorch on the CPU.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
import torch

import tidu

STEPS = 4
TOL = {"rtol": 1e-8, "atol": 1e-10}
# parameters, eval() outputs and optimizer state of a model with zero directions (``draw``)
NOISY = {"rtol": 1e-8, "atol": 1e-7}
# not Hardsigmoid: PyTorch's backward multiplies by 1/6 rounded to float32, even in float64 (3e-8 apart;
# tests/nn/test_functional.py compares it at that tolerance)
ACTIVATIONS = ["ReLU", "GELU", "GELU_tanh", "SiLU", "Tanh", "Sigmoid", "ELU", "LeakyReLU", "Softplus", "Hardtanh",
               "ReLU6", "Hardswish", "Mish", "LogSigmoid", "Softsign"]
OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta", "Rprop", "ASGD"]
SCHEDULERS = ["none", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "LambdaLR",
              "ReduceLROnPlateau", "ConstantLR", "PolynomialLR", "MultiplicativeLR", "CyclicLR", "SequentialLR",
              "ChainedScheduler"]
LOSSES = ["ce", "ce_smooth", "ce_weight", "nll", "mse", "l1", "bce", "bce_logits", "ce_sum"]


def draw(seed: int) -> dict[str, Any]:
    """A training loop's description (plain data: both libraries build from it)."""
    rng = np.random.default_rng(seed)

    def pick(options: list) -> Any:
        return options[int(rng.integers(len(options)))]

    def chance(p: float) -> bool:
        return bool(rng.random() < p)

    kind = pick(["mlp", "mlp", "cnn", "conv1d", "seq", "rnn"])
    layers: list[tuple] = []
    if kind == "mlp":
        width = 6
        inputs = rng.standard_normal((8, width))
        for _ in range(int(rng.integers(1, 5))):
            k = pick(["linear", "linear", "act", "act", "layernorm", "batchnorm", "dropout", "softmax", "identity"])
            if k == "linear":
                out = int(rng.integers(3, 8))
                layers.append(("Linear", width, out, chance(0.8)))
                width = out
            elif k == "act":
                layers.append(("act", pick(ACTIVATIONS)))
            elif k == "layernorm":
                layers.append(("LayerNorm", width, chance(0.7), pick([1e-5, 1e-3])))
            elif k == "batchnorm":
                layers.append(("BatchNorm1d", width, chance(0.7), pick([0.1, 0.3]), chance(0.8)))
            elif k == "dropout":
                layers.append(("Dropout0",))
            elif k == "softmax":
                layers.append((pick(["Softmax", "LogSoftmax"]),))
            else:
                layers.append(("Identity",))
        layers.append(("Linear", width, 3, True))
    elif kind == "cnn":
        channels, size = 2, 8
        inputs = rng.standard_normal((4, channels, size, size))
        for _ in range(int(rng.integers(1, 4))):
            k = pick(["conv", "conv", "act", "batchnorm", "groupnorm", "pool", "adaptive"])
            if k == "conv":
                out = pick([2, 3, 4])
                kernel, stride, padding = pick([1, 3]), pick([1, 2]), pick([0, 1])
                if size + 2 * padding < kernel:
                    continue
                groups = 2 if channels % 2 == 0 and out % 2 == 0 and chance(0.3) else 1
                layers.append(("Conv2d", channels, out, kernel, stride, padding, chance(0.7), groups))
                channels, size = out, (size + 2 * padding - kernel) // stride + 1
            elif k == "act":
                layers.append(("act", pick(ACTIVATIONS)))
            elif k == "batchnorm":
                layers.append(("BatchNorm2d", channels, chance(0.7), pick([0.1, 0.3]), chance(0.8)))
            elif k == "groupnorm":
                layers.append(("GroupNorm", pick([g for g in (1, 2) if channels % g == 0]), channels, chance(0.7)))
            elif k == "adaptive":
                size = pick([1, 2, 3])
                layers.append(("AdaptiveAvgPool2d", size))
            elif size >= 2:
                layers.append((pick(["MaxPool2d", "AvgPool2d"]), 2))
                size //= 2
        layers += [("Flatten",), ("Linear", channels * size * size, 3, True)]
    elif kind == "conv1d":
        channels, length = 3, 10
        inputs = rng.standard_normal((4, channels, length))
        out, kernel, stride, padding = pick([2, 4]), pick([1, 3]), pick([1, 2]), pick([0, 1])
        layers.append(("Conv1d", channels, out, kernel, stride, padding, chance(0.7)))
        length = (length + 2 * padding - kernel) // stride + 1
        layers += [("act", pick(ACTIVATIONS)), ("Flatten",), ("Linear", out * length, 3, True)]
    elif kind == "rnn":
        inputs = rng.standard_normal((4, 5, 3))
        cell, layers_n, bidirectional = pick(["LSTM", "GRU", "RNN"]), pick([1, 2]), chance(0.4)
        layers.append(("Recurrent", cell, 3, 4, layers_n, bidirectional))
        layers.append(("Linear", 4 * (2 if bidirectional else 1), 3, True))
    else:
        inputs = rng.integers(0, 10, (4, 5))
        layers.append(("Embedding", 10, 8))
        layers.append(("Encoder", 8, 2, 16, pick(["relu", "gelu"]), chance(0.5), chance(0.3)))
        layers.append(("MeanSeq",))
        layers.append(("Linear", 8, 3, True))
    # BatchNorm (a bias before it is cancelled) and attention's key bias leave directions whose exact
    # gradient is zero: they get rounding noise, different in each library. Adam divides it by its
    # own size plus 1e-8 (a step near 1e-9, which eval() mode's running statistics pass on: the
    # comparison's ``NOISY``); Adagrad (eps 1e-10) and RMSprop would make it a full-sized step, and
    # weight decay added to Adam's gradient would feed it back until it is one. Those run on
    # models without such directions.
    zero_directions = any(layer[0] in ("BatchNorm1d", "BatchNorm2d", "GroupNorm", "Encoder") for layer in layers)
    optimizer = pick(["SGD", "Adam", "AdamW", "ASGD"] if zero_directions else OPTIMIZERS)
    options: dict[str, Any] = {}
    if optimizer == "SGD":
        options["lr"] = 0.05
        if chance(0.6):
            options["momentum"] = 0.9
            if chance(0.5):
                options["nesterov"] = True
            elif chance(0.5):
                options["dampening"] = 0.1
    elif optimizer in ("Adam", "AdamW"):
        options["lr"] = 0.01
        options["amsgrad"] = chance(0.3)
        if chance(0.3):
            options["betas"] = (0.8, 0.99)
    elif optimizer == "RMSprop":
        options.update(lr=0.01, centered=chance(0.5), momentum=pick([0.0, 0.5]), alpha=pick([0.99, 0.9]))
    elif optimizer == "Adagrad":
        options.update(lr=0.05, lr_decay=pick([0.0, 0.01]), initial_accumulator_value=pick([0.0, 0.1]))
    elif optimizer in ("NAdam", "RAdam"):
        options.update(lr=0.01, decoupled_weight_decay=chance(0.5))
        if optimizer == "NAdam" and chance(0.5):
            options["momentum_decay"] = 0.01
    elif optimizer == "Adamax":
        options.update(lr=0.01, betas=pick([(0.9, 0.999), (0.8, 0.99)]))
    elif optimizer == "Adadelta":
        options.update(lr=pick([1.0, 0.5]), rho=pick([0.9, 0.8]))
    elif optimizer == "Rprop":
        options.update(lr=0.01, etas=pick([(0.5, 1.2), (0.3, 1.5)]), step_sizes=pick([(1e-6, 50), (1e-4, 0.05)]))
    else:
        options.update(lr=0.05, lambd=pick([1e-4, 1e-2]), t0=pick([1e6, 2]))
    if chance(0.4) and optimizer != "Rprop" and (optimizer != "Adam" or not zero_directions):
        options["weight_decay"] = pick([0.01, 0.1])
    if optimizer != "Adagrad" and chance(0.15):
        options["maximize"] = True
    return {
        "kind": kind,
        "layers": layers,
        "zero_directions": zero_directions,
        "inputs": inputs,
        "labels": rng.integers(0, 3, inputs.shape[0]),
        "targets": rng.uniform(0, 1, (inputs.shape[0], 3)),
        "second": rng.standard_normal(inputs.shape) if kind != "seq" else rng.integers(0, 10, inputs.shape),
        "loss": pick(LOSSES),
        "optimizer": optimizer,
        "options": options,
        "groups": chance(0.3),  # weights and the rest in two groups, the rest at half the rate
        "scheduler": pick(SCHEDULERS),
        "clip": pick(["none", "none", "norm", "norm_inf", "value"]),
        "accumulate": chance(0.3),
        "set_to_none": chance(0.5),
        "eval_every": chance(0.5),
        "seed": int(rng.integers(1 << 30)),
        # drawn last: the draws above stay those of earlier versions of this test
        "hook": pick(["none", "none", "param", "forward", "backward"]),  # on the first parameter, or first layer
        "freeze": chance(0.2),  # the first parameter frozen (requires_grad_(False)) from the third step
        "resume": chance(0.2),  # the optimizer's state_dict loaded back before the third step
    }


def _activation(nn: Any, name: str) -> Any:
    if name == "GELU_tanh":
        return nn.GELU(approximate="tanh")
    if name == "ELU":
        return nn.ELU(alpha=0.7)
    if name == "LeakyReLU":
        return nn.LeakyReLU(0.2)
    if name == "Softplus":
        return nn.Softplus(beta=2.0, threshold=5.0)
    if name == "Hardtanh":
        return nn.Hardtanh(-0.5, 1.5)
    return getattr(nn, name)()


def build(lib: Any, spec: dict[str, Any]) -> Any:
    """The model ``spec`` describes, in ``lib``, in float64."""
    nn = lib.nn

    class MeanSeq(nn.Module):
        def forward(self, x: Any) -> Any:
            return x.mean(1)

    class Recurrent(nn.Module):  # the last time step's output of a batch-first recurrent layer
        def __init__(self, cell: str, size: int, hidden: int, layers: int, bidirectional: bool) -> None:
            super().__init__()
            self.layer = getattr(nn, cell)(size, hidden, num_layers=layers, batch_first=True,
                                           bidirectional=bidirectional)

        def forward(self, x: Any) -> Any:
            return self.layer(x)[0][:, -1]

    modules = []
    for layer in spec["layers"]:
        name, args = layer[0], layer[1:]
        if name == "act":
            modules.append(_activation(nn, args[0]))
        elif name == "Linear":
            modules.append(nn.Linear(args[0], args[1], bias=args[2]))
        elif name == "LayerNorm":
            modules.append(nn.LayerNorm(args[0], elementwise_affine=args[1], eps=args[2]))
        elif name in ("BatchNorm1d", "BatchNorm2d"):
            modules.append(getattr(nn, name)(args[0], affine=args[1], momentum=args[2], track_running_stats=args[3]))
        elif name == "Dropout0":
            modules.append(nn.Dropout(0.0))
        elif name in ("Softmax", "LogSoftmax"):
            modules.append(getattr(nn, name)(dim=1))
        elif name == "Conv2d":
            c, o, k, s, p, bias, g = args
            modules.append(nn.Conv2d(c, o, k, stride=s, padding=p, bias=bias, groups=g))
        elif name == "Conv1d":
            c, o, k, s, p, bias = args
            modules.append(nn.Conv1d(c, o, k, stride=s, padding=p, bias=bias))
        elif name in ("MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"):
            modules.append(getattr(nn, name)(args[0]))
        elif name == "GroupNorm":
            modules.append(nn.GroupNorm(args[0], args[1], affine=args[2]))
        elif name == "Embedding":
            modules.append(nn.Embedding(args[0], args[1]))
        elif name == "Encoder":
            d, heads, ff, activation, norm_first, no_bias = args
            modules.append(nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.0, activation=activation,
                                                      batch_first=True, norm_first=norm_first, bias=not no_bias))
        elif name == "MeanSeq":
            modules.append(MeanSeq())
        elif name == "Recurrent":
            modules.append(Recurrent(*args))
        else:
            modules.append(getattr(nn, name)())
    return nn.Sequential(*modules).double()


def _loss(lib: Any, spec: dict[str, Any], out: Any, labels: Any, targets: Any) -> Any:
    F = lib.nn.functional  # noqa: N806 - PyTorch's spelling
    kind = spec["loss"]
    if kind == "ce":
        return F.cross_entropy(out, labels)
    if kind == "ce_smooth":
        return F.cross_entropy(out, labels, label_smoothing=0.1)
    if kind == "ce_weight":
        return lib.nn.CrossEntropyLoss(weight=lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, device=out.device))(out, labels)
    if kind == "ce_sum":
        return F.cross_entropy(out, labels, reduction="sum") / 8
    if kind == "nll":
        return F.nll_loss(F.log_softmax(out, dim=1), labels)
    if kind == "mse":
        return F.mse_loss(out, targets)
    if kind == "l1":
        return F.l1_loss(out, targets)
    if kind == "bce":
        return F.binary_cross_entropy(lib.sigmoid(out), targets)
    return F.binary_cross_entropy_with_logits(out, targets, pos_weight=lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64, device=out.device))


def _scheduler(lib: Any, name: str, optimizer: Any) -> Any:
    s = lib.optim.lr_scheduler
    if name == "none":
        return None
    if name == "StepLR":
        return s.StepLR(optimizer, 2, gamma=0.5)
    if name == "MultiStepLR":
        return s.MultiStepLR(optimizer, [1, 3], gamma=0.3)
    if name == "ExponentialLR":
        return s.ExponentialLR(optimizer, 0.9)
    if name == "CosineAnnealingLR":
        return s.CosineAnnealingLR(optimizer, 3, eta_min=0.001)
    if name == "LinearLR":
        return s.LinearLR(optimizer, start_factor=0.5, total_iters=3)
    if name == "LambdaLR":
        return s.LambdaLR(optimizer, lambda epoch: 1.0 / (1 + epoch))
    if name == "ConstantLR":
        return s.ConstantLR(optimizer, factor=0.5, total_iters=2)
    if name == "PolynomialLR":
        return s.PolynomialLR(optimizer, total_iters=3, power=2.0)
    if name == "MultiplicativeLR":
        return s.MultiplicativeLR(optimizer, lambda epoch: 0.8)
    if name == "CyclicLR":  # cycles momentum (or beta1) where the optimizer has one
        cycle_momentum = "momentum" in optimizer.defaults or "betas" in optimizer.defaults
        return s.CyclicLR(optimizer, 0.005, 0.02, step_size_up=1, step_size_down=2, mode="triangular2",
                          cycle_momentum=cycle_momentum, base_momentum=0.8, max_momentum=0.9)
    if name == "SequentialLR":
        warmup = s.LinearLR(optimizer, start_factor=0.5, total_iters=2)
        return s.SequentialLR(optimizer, [warmup, s.ExponentialLR(optimizer, 0.9)], milestones=[2])
    if name == "ChainedScheduler":
        return s.ChainedScheduler([s.ConstantLR(optimizer, factor=0.5, total_iters=2), s.StepLR(optimizer, 1, 0.9)])
    return s.ReduceLROnPlateau(optimizer, factor=0.5, patience=0)


def _param_groups(model: Any, spec: dict[str, Any]) -> Any:
    if not spec["groups"]:
        return model.parameters()
    weights = [p for name, p in model.named_parameters() if name.endswith("weight")]
    rest = [p for name, p in model.named_parameters() if not name.endswith("weight")]
    groups = [{"params": weights}]
    if rest:
        groups.append({"params": rest, "lr": spec["options"]["lr"] / 2})
    return groups


def _input(lib: Any, array: np.ndarray, device: str) -> Any:
    if array.dtype.kind == "i":
        return lib.tensor(array, device=device)
    return lib.tensor(array, dtype=lib.float64, device=device)


def _host(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy().copy()


def _hook(kind: str, model: Any) -> None:
    """A user's hook: the first parameter's gradient halved (``param``), or on the first layer, its
    output scaled (``forward``) or the gradient of its inputs halved (``backward``)."""
    first = model[0]
    if kind == "param":
        next(model.parameters()).register_hook(lambda g: g * 0.5)
    elif kind == "forward":
        first.register_forward_hook(lambda m, args, out: out * 0.75 if not isinstance(out, tuple) else None)
    elif kind == "backward":
        first.register_full_backward_hook(
            lambda m, grad_in, grad_out: tuple(None if g is None else g * 0.5 for g in grad_in))


def run(lib: Any, spec: dict[str, Any], state: dict[str, np.ndarray], device: str = "cpu") -> dict[str, Any]:
    """``STEPS`` training steps of ``spec`` in ``lib`` on ``device`` from ``state``: what the test compares."""
    model = build(lib, spec).to(device)
    model.load_state_dict({k: lib.tensor(v, device=device) for k, v in state.items()})
    optimizer = getattr(lib.optim, spec["optimizer"])(_param_groups(model, spec), **spec["options"])
    scheduler = _scheduler(lib, spec["scheduler"], optimizer)
    x, second = _input(lib, spec["inputs"], device), _input(lib, spec["second"], device)
    labels = lib.tensor(spec["labels"], device=device)
    targets = lib.tensor(spec["targets"], dtype=lib.float64, device=device)
    record: dict[str, Any] = {"loss": [], "lr": [], "eval": []}
    _hook(spec.get("hook", "none"), model)
    for step in range(STEPS):
        if step == 2 and spec.get("freeze"):
            next(model.parameters()).requires_grad_(False)
        if step == 2 and spec.get("resume"):
            optimizer.load_state_dict(optimizer.state_dict())
        optimizer.zero_grad(set_to_none=spec["set_to_none"])
        loss = _loss(lib, spec, model(x), labels, targets)
        if spec["accumulate"]:  # two micro-batches, each half the loss
            (loss / 2).backward()
            loss2 = _loss(lib, spec, model(second), labels, targets)
            (loss2 / 2).backward()
            loss = (loss + loss2) / 2
        else:
            loss.backward()
        if spec["clip"] == "norm":
            record.setdefault("norm", []).append(float(lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)))
        elif spec["clip"] == "norm_inf":
            norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.1, norm_type=float("inf"))
            record.setdefault("norm", []).append(float(norm))
        elif spec["clip"] == "value":
            lib.nn.utils.clip_grad_value_(model.parameters(), 0.05)
        optimizer.step()
        if scheduler is not None:
            if spec["scheduler"] == "ReduceLROnPlateau":
                scheduler.step(float(loss))
            else:
                scheduler.step()
        record["loss"].append(float(loss))
        record["lr"].append([g["lr"] for g in optimizer.param_groups])
        if spec["eval_every"]:
            model.eval()
            with lib.no_grad():
                record["eval"].append(_host(model(second)))
            model.train()
    record["state"] = {k: _host(v) for k, v in model.state_dict().items()}
    opt_state = optimizer.state_dict()["state"]
    record["optimizer"] = {(i, k): np.asarray(_host(v) if hasattr(v, "numpy") else v, dtype=np.float64)
                           for i, s in opt_state.items() for k, v in s.items()}
    return record


def compare(seed: int, device: str = "cpu") -> None:
    """Run the loop of ``seed`` in PyTorch on the CPU and in tidu on ``device``, and compare them
    (raises on a difference)."""
    spec = draw(seed)
    torch.manual_seed(spec["seed"])
    state = {k: v.detach().numpy().copy() for k, v in build(torch, spec).state_dict().items()}
    expected = run(torch, spec, state)
    got = run(tidu, spec, state, device)
    where = f"seed {seed} on {device}: {spec['kind']} {spec['layers']} {spec['loss']} {spec['optimizer']} {spec['options']} " \
            f"{spec['scheduler']} clip={spec['clip']} groups={spec['groups']} accumulate={spec['accumulate']} " \
            f"hook={spec['hook']} freeze={spec['freeze']} resume={spec['resume']}"
    np.testing.assert_allclose(got["loss"], expected["loss"], **TOL, err_msg=f"loss, {where}")
    np.testing.assert_allclose(got["lr"], expected["lr"], rtol=1e-12, err_msg=f"lr, {where}")
    np.testing.assert_allclose(got.get("norm", []), expected.get("norm", []), **TOL, err_msg=f"norm, {where}")
    tol = NOISY if spec["zero_directions"] else TOL
    for i, (a, b) in enumerate(zip(got["eval"], expected["eval"], strict=True)):
        np.testing.assert_allclose(a, b, **tol, err_msg=f"eval output at step {i}, {where}")
    assert got["state"].keys() == expected["state"].keys(), where
    for k, v in expected["state"].items():
        assert got["state"][k].dtype == v.dtype, f"{k} dtype, {where}"
        np.testing.assert_allclose(got["state"][k], v, **tol, err_msg=f"{k}, {where}")
    assert got["optimizer"].keys() == expected["optimizer"].keys(), where
    for k, v in expected["optimizer"].items():
        np.testing.assert_allclose(got["optimizer"][k], v, **tol, err_msg=f"optimizer state {k}, {where}")


@pytest.mark.parametrize("seed", range(24))
def test_random_training_loop_matches_torch(seed: int) -> None:
    compare(seed)


# an MLP with BatchNorm, a CNN with GroupNorm and BatchNorm, a recurrent layer; a transformer layer takes
# 45 s in the simulator (the command above runs it, on the GPU)
@pytest.mark.parametrize("seed", [21, 9, 0])
def test_random_training_loop_on_cuda_matches_torch(seed: int) -> None:
    compare(seed, "cuda")


if __name__ == "__main__":
    first, last = int(sys.argv[1]), int(sys.argv[2])
    device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
    failed = 0
    for s in range(first, last):
        try:
            compare(s, device)
        except Exception as e:  # noqa: BLE001 - report every failing seed
            failed += 1
            print(f"FAIL {s}: {type(e).__name__}: {str(e)[:600]}", flush=True)
    print(f"{last - first} loops, {failed} failed")
