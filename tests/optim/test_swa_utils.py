"""swa_utils against PyTorch: averaged weights over a few training steps, SWALR's rates, update_bn."""

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2)).double()


def _copy_weights(src, dst):
    dst.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in src.state_dict().items()})


AVERAGERS = {
    "swa": lambda sw: {},
    "ema_multi": lambda sw: {"multi_avg_fn": sw.get_ema_multi_avg_fn(0.8)},
    "ema": lambda sw: {"avg_fn": sw.get_ema_avg_fn(0.7)},
    "swa_single": lambda sw: {"avg_fn": sw.get_swa_avg_fn()},
    "swa_multi": lambda sw: {"multi_avg_fn": sw.get_swa_multi_avg_fn()},
}


@pytest.mark.parametrize("use_buffers", [False, True])
@pytest.mark.parametrize("kind", list(AVERAGERS))
def test_averaged_model_matches_torch(kind, use_buffers):
    if kind == "swa_multi" and use_buffers:  # PyTorch's addcdiv_ refuses the int64 num_batches_tracked
        def run(L):
            model = _net(L)
            avg = L.optim.swa_utils.AveragedModel(model, multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn(),
                                                 use_buffers=True)
            avg.update_parameters(model)
            avg.update_parameters(model)
        assert_same_error(run)
        return
    models = {"torch": _net(torch)}
    models["tidu"] = _net(tidu)
    _copy_weights(models["torch"], models["tidu"])
    libs = {"torch": torch, "tidu": tidu}
    avg, opt = {}, {}
    for name, lib in libs.items():
        kwargs = AVERAGERS[kind](lib.optim.swa_utils)
        avg[name] = lib.optim.swa_utils.AveragedModel(models[name], use_buffers=use_buffers, **kwargs)
        opt[name] = lib.optim.SGD(models[name].parameters(), lr=0.3)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
        for name, lib in libs.items():
            opt[name].zero_grad()
            ((models[name](lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt[name].step()
            avg[name].update_parameters(models[name])
    ours, ref = avg["tidu"].state_dict(), avg["torch"].state_dict()
    assert list(ours) == list(ref)
    for key in ref:
        assert str(ours[key].dtype).split(".")[1] == str(ref[key].dtype).split(".")[1], key
        np.testing.assert_allclose(ours[key].numpy(), ref[key].numpy(), rtol=1e-12, atol=1e-12, err_msg=key)
    x = rng.normal(size=(2, 3))
    avg["tidu"].eval(), avg["torch"].eval()
    np.testing.assert_allclose(avg["tidu"](tidu.tensor(x)).detach().numpy(),
                               avg["torch"](torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_averaged_model_errors_and_copy():
    assert_same_error(lambda L: L.optim.swa_utils.AveragedModel(
        L.nn.Linear(1, 1), avg_fn=L.optim.swa_utils.get_swa_avg_fn(),
        multi_avg_fn=L.optim.swa_utils.get_swa_multi_avg_fn()))
    assert_same_error(lambda L: L.optim.swa_utils.get_ema_multi_avg_fn(1.5))
    assert_same_error(lambda L: L.optim.swa_utils.get_ema_avg_fn(-0.1))
    model = tidu.nn.Linear(2, 2)
    swa = tidu.optim.swa_utils.AveragedModel(model)
    assert swa.module.weight is not model.weight
    assert swa.n_averaged.dtype == tidu.int64 and list(swa.state_dict())[0] == "n_averaged"


def test_integer_buffers_averaged_as_torch():
    # use_buffers averages num_batches_tracked (int64) too, with the integer branch
    for lib_n in (lambda L: 2, lambda L: L.tensor(2)):
        assert_same_error(lambda L: L.optim.swa_utils.get_swa_multi_avg_fn()([L.tensor([3])], [L.tensor([1])],
                                                                              lib_n(L)))  # noqa: B023
    for make, n in ((lambda sw: sw.get_ema_multi_avg_fn(0.5), 2), (lambda sw: sw.get_ema_multi_avg_fn(0.3), 3)):
        outs = []
        for lib in (torch, tidu):
            a, c = [lib.tensor([3, 8])], [lib.tensor([10, 1])]
            make(lib.optim.swa_utils)(a, c, n)
            outs.append(a[0].tolist())
        assert outs[0] == outs[1]


SWALR_CASES = [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.05, 0.5], anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=0.2, anneal_epochs=0),
    dict(swa_lr=0.01, anneal_epochs=4, anneal_strategy="cos"),
]


@pytest.mark.parametrize("kwargs", SWALR_CASES)
def test_swalr_matches_torch(kwargs):
    rates = []
    for lib in (torch, tidu):
        opt = lib.optim.SGD([{"params": [lib.zeros(1, requires_grad=True)]},
                             {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.3}], lr=1.0)
        pre = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        sched = None
        seq = []
        for epoch in range(14):
            opt.step()
            if epoch < 3:
                pre.step()
            else:
                if sched is None:
                    sched = lib.optim.swa_utils.SWALR(opt, **kwargs)
                sched.step()
            seq.append([g["lr"] for g in opt.param_groups])
        seq.append(sched.get_last_lr())
        rates.append(seq)
    np.testing.assert_allclose(rates[1], rates[0], rtol=1e-15)
    assert "anneal_func" not in sched.state_dict()


def test_swalr_errors():
    opt = lambda L: L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.0)  # noqa: E731
    assert_same_error(lambda L: L.optim.swa_utils.SWALR(opt(L), swa_lr=0.1, anneal_strategy="exp"))
    assert_same_error(lambda L: L.optim.swa_utils.SWALR(opt(L), swa_lr=0.1, anneal_epochs=-1))
    assert_same_error(lambda L: L.optim.swa_utils.SWALR(opt(L), swa_lr=[0.1, 0.2]))


def test_update_bn_matches_torch():
    rng = np.random.default_rng(2)
    batches = [rng.normal(size=(4, 3, 5)) for _ in range(3)]
    results = []
    for lib in (torch, tidu):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv1d(3, 2, 1), lib.nn.BatchNorm1d(2, momentum=0.3),
                                  lib.nn.InstanceNorm1d(2, track_running_stats=True)).double()
        with lib.no_grad():
            model[0].weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3, 1) / 5))
            model[0].bias.copy_(lib.tensor([0.5, -1.0]))
        model[1].running_mean.fill_(5.0)
        model.eval()
        loader = [(lib.tensor(b), 0) for b in batches[:2]] + [lib.tensor(batches[2])]
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training and model[1].momentum == 0.3
        results.append([model[1].running_mean.numpy(), model[1].running_var.numpy(),
                        int(model[1].num_batches_tracked), model[2].running_mean.numpy()])
    for ref, ours in zip(*results, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-15)
