"""Optimizers and schedulers driving real tidu.nn models, step for step against PyTorch."""

import numpy as np
import pytest
import torch

import tidu


def _mlp(lib, state=None):
    model = lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
    if state is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    return model.double()


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
])
def test_ten_training_steps_with_a_scheduler_match_torch(name, kwargs):
    torch.manual_seed(0)
    state = {k: v.detach().numpy().copy() for k, v in _mlp(torch).state_dict().items()}
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 5)), rng.integers(0, 3, 16)
    runs = []
    for lib in (tidu, torch):
        model = _mlp(lib, state)
        opt = getattr(lib.optim, name)(model.parameters(), **kwargs)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        losses = []
        for _ in range(10):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    (ours_losses, ours), (theirs_losses, theirs) = runs
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=1e-10)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_module_state_and_optimizer_checkpoint_round_trip(tmp_path):
    model = _mlp(tidu)
    opt = tidu.optim.Adam(model.parameters(), lr=0.01)
    x = tidu.randn(4, 5, dtype=tidu.float64)
    model(x).sum().backward()
    opt.step()
    path = tmp_path / "checkpoint.safetensors"
    tidu.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 1}, path)
    checkpoint = tidu.load(path)
    assert list(checkpoint["model"]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    fresh = _mlp(tidu)
    fresh.load_state_dict(checkpoint["model"])
    fresh_opt = tidu.optim.Adam(fresh.parameters(), lr=0.5)
    fresh_opt.load_state_dict(checkpoint["optimizer"])
    for m, o in ((model, opt), (fresh, fresh_opt)):
        o.zero_grad()
        m(x).sum().backward()
        o.step()
    for a, b in zip(model.parameters(), fresh.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_saved_parameter_loads_as_a_parameter(tmp_path):
    p = tidu.nn.Parameter(tidu.randn(3))
    frozen = tidu.nn.Parameter(tidu.randn(2), requires_grad=False)
    tidu.save({"p": p, "frozen": frozen}, tmp_path / "p.safetensors")
    back = tidu.load(tmp_path / "p.safetensors")
    assert type(back["p"]) is tidu.nn.Parameter and back["p"].requires_grad
    assert type(back["frozen"]) is tidu.nn.Parameter and not back["frozen"].requires_grad
    np.testing.assert_array_equal(back["p"].detach().numpy(), p.detach().numpy())
