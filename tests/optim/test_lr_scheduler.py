"""Each scheduler's learning-rate sequence equals PyTorch's, alone, chained and resumed."""

import copy
import math

import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

SCHEDULERS = [
    ("StepLR", dict(step_size=3)),
    ("StepLR", dict(step_size=2, gamma=0.5)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.5)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.5, total_iters=8)),
    ("CosineAnnealingLR", dict(T_max=7)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 1 / (1 + epoch))),
    ("LambdaLR", dict(lr_lambda=[lambda e: 0.9**e, lambda e: min(1.0, (e + 1) / 4)])),
    ("CosineAnnealingWarmRestarts", dict(T_0=3)),
    ("CosineAnnealingWarmRestarts", dict(T_0=2, T_mult=2, eta_min=0.01)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=26)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], epochs=2, steps_per_epoch=13, anneal_strategy="linear", three_phase=True,
                        pct_start=0.25, base_momentum=0.8)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=30, cycle_momentum=False, div_factor=10.0)),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.25, total_iters=3)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=7, power=2.5)),
    ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.95)),
    ("MultiplicativeLR", dict(lr_lambda=[lambda e: 0.9, lambda e: 1.0 if e < 5 else 0.5])),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3, step_size_down=5, mode="triangular2",
                      base_momentum=[0.7, 0.8], max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 0.5 * (1 + x % 3),
                      scale_mode="iterations", cycle_momentum=False)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 1 / x, mode="ignored")),
]


def _ids(case):
    return case[0] + "-" + ",".join(f"{k}={v}" for k, v in case[1].items() if k not in ("lr_lambda", "scale_fn"))


def _optimizers():
    groups = lambda lib: [  # noqa: E731
        {"params": [lib.zeros(2, requires_grad=True)]},
        {"params": [lib.zeros(1, requires_grad=True)], "lr": 0.3},
    ]
    return tidu.optim.SGD(groups(tidu), lr=0.1, momentum=0.9), torch.optim.SGD(groups(torch), lr=0.1, momentum=0.9)


def _lrs(opt, scheds, steps):
    out = [scheds[-1].get_last_lr()]
    for _ in range(steps):
        opt.step()
        for s in scheds:
            s.step()
        out.append(scheds[-1].get_last_lr())
    return out


@pytest.mark.parametrize("case", SCHEDULERS, ids=_ids)
def test_lr_sequence_matches_torch(case):
    name, kwargs = case
    opt_t, opt_p = _optimizers()
    ours = _lrs(opt_t, [getattr(tidu.optim.lr_scheduler, name)(opt_t, **kwargs)], 25)
    theirs = _lrs(opt_p, [getattr(torch.optim.lr_scheduler, name)(opt_p, **kwargs)], 25)
    assert ours == theirs
    assert [g["lr"] for g in opt_t.param_groups] == [g["lr"] for g in opt_p.param_groups]
    assert [g["momentum"] for g in opt_t.param_groups] == [g["momentum"] for g in opt_p.param_groups]


def test_chained_schedulers_match_torch():
    opt_t, opt_p = _optimizers()

    def chain(lib, opt):
        mod = lib.optim.lr_scheduler
        return [mod.StepLR(opt, step_size=4, gamma=0.5), mod.CosineAnnealingLR(opt, T_max=6)]

    assert _lrs(opt_t, chain(tidu, opt_t), 20) == _lrs(opt_p, chain(torch, opt_p), 20)


@pytest.mark.parametrize("case", SCHEDULERS, ids=_ids)
def test_state_dict_resumes_like_torch(case):
    name, kwargs = case
    results = []
    for lib, opt in zip((tidu, torch), _optimizers()):
        cls = getattr(lib.optim.lr_scheduler, name)
        sched = cls(opt, **kwargs)
        _lrs(opt, [sched], 6)
        saved = sched.state_dict()
        keys = sorted(saved)  # before loading: PyTorch's CyclicLR.load_state_dict pops from the dict it is given
        resumed = cls(opt, **kwargs)
        resumed.load_state_dict(saved)
        results.append((keys, _lrs(opt, [resumed], 8)))
    assert results[0] == results[1]


def test_step_with_epoch_uses_the_closed_form():
    opt_t, opt_p = _optimizers()
    ours = tidu.optim.lr_scheduler.CosineAnnealingLR(opt_t, T_max=10)
    theirs = torch.optim.lr_scheduler.CosineAnnealingLR(opt_p, T_max=10)
    with pytest.warns(UserWarning, match="epoch parameter"):
        ours.step(4)
    with pytest.warns(UserWarning):
        theirs.step(4)
    assert ours.get_last_lr() == theirs.get_last_lr()
    assert math.isclose(ours.get_last_lr()[0], 0.1 * (1 + math.cos(math.pi * 0.4)) / 2)


def test_bad_input():
    opt_t, opt_p = _optimizers()
    for lib, opt in ((tidu, opt_t), (torch, opt_p)):
        with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
            lib.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
        with pytest.raises(KeyError, match="initial_lr"):
            lib.optim.lr_scheduler.StepLR(opt, step_size=2, last_epoch=3)


def test_get_lr_outside_step_warns():
    opt_t, _ = _optimizers()
    sched = tidu.optim.lr_scheduler.LambdaLR(opt_t, lambda e: 1.0)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()


@pytest.mark.parametrize("kwargs", [
    dict(patience=2),
    dict(mode="max", factor=0.5, patience=1, threshold=0.05, threshold_mode="abs", cooldown=2, min_lr=[0.01, 0.02]),
    dict(patience=0, threshold_mode="abs", cooldown=1, min_lr=0.001, eps=1e-3),
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.9, 0.91, 0.92, 0.85, 0.85, 0.86, 0.87, 0.7, 0.71, 0.72, 0.73, 0.74, 0.75]
    sequences = []
    for lib, opt in zip((tidu, torch), _optimizers()):
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = []
        for i, m in enumerate(metrics):
            opt.step()
            sched.step(m)
            seq.append(sched.get_last_lr())
            if i == 7:
                resumed = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
                resumed.load_state_dict(sched.state_dict())
                sched = resumed
        sequences.append(seq)
    assert sequences[0] == sequences[1]


def test_reduce_lr_on_plateau_errors():
    opt_t, opt_p = _optimizers()
    for lib, opt in ((tidu, opt_t), (torch, opt_p)):
        mod = lib.optim.lr_scheduler
        with pytest.raises(ValueError, match="Factor should be < 1.0"):
            mod.ReduceLROnPlateau(opt, factor=1.0)
        with pytest.raises(ValueError, match="mode avg is unknown"):
            mod.ReduceLROnPlateau(opt, mode="avg")
        with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
            mod.ReduceLROnPlateau(opt, min_lr=[0.1])
        with pytest.raises(ValueError, match="Starting multiplicative factor"):
            mod.LinearLR(opt, start_factor=0)


def test_one_cycle_cycles_adams_beta1_and_warm_restarts_take_fractional_epochs_like_torch():
    results = []
    for lib in (tidu, torch):
        opt = lib.optim.Adam([lib.zeros(1, requires_grad=True)], lr=0.1, betas=(0.9, 0.99))
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=10, max_momentum=0.9)
        betas = []
        for _ in range(9):
            opt.step()
            sched.step()
            betas.append(opt.param_groups[0]["betas"])
        opt2 = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        restarts = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt2, T_0=2, T_mult=3)
        lrs = []
        for epoch in (0.5, 1.5, 2.0, 4.25, 7.9, 8.0, 20.5):
            restarts.step(epoch)
            lrs.append(restarts.get_last_lr())
        results.append((betas, lrs, restarts.last_epoch, restarts.T_i))
    assert results[0] == results[1]


@pytest.mark.parametrize("make", [
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0),
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=0),
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5),
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
    lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
])
def test_one_cycle_and_warm_restart_errors_match_torch(make):
    errors = []
    for lib in (torch, tidu):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError) as info:
            make(lib, opt)
        errors.append(str(info.value))
    assert errors[1] == errors[0]


def test_one_cycle_stepped_past_its_total_raises_like_torch():
    errors = []
    for lib in (torch, tidu):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        sched.step()
        sched.step()
        with pytest.raises(ValueError) as info:
            sched.step()
        errors.append(str(info.value))
    assert errors[1] == errors[0]


# schedulers of schedulers: ``make(lr_scheduler_module, optimizer)``
COMBINED = [
    ("sequential warmup, decay, cosine", lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=4), S.ExponentialLR(o, 0.9), S.CosineAnnealingLR(o, T_max=5)],
        milestones=[4, 10])),
    ("sequential of recursive and closed forms", lambda S, o: S.SequentialLR(
        o, [S.ExponentialLR(o, 0.5), S.MultiplicativeLR(o, lambda e: 0.8), S.ConstantLR(o, factor=0.5, total_iters=3),
            S.PolynomialLR(o, total_iters=4)], milestones=[2, 5, 12])),
    ("sequential with restarts and a cycle", lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o), S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
            S.CyclicLR(o, 0.01, 0.2, step_size_up=3)], milestones=[3, 12])),
    ("chained", lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=4), S.ExponentialLR(o, 0.9), S.StepLR(o, 3)])),
    ("chained with optimizer", lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, total_iters=3), S.PolynomialLR(o, total_iters=8, power=0.5), S.MultiplicativeLR(o, lambda e: 0.99)],
        optimizer=o)),
]


@pytest.mark.parametrize("make", [c[1] for c in COMBINED], ids=[c[0] for c in COMBINED])
def test_sequential_and_chained_match_torch_and_resume(make):
    results = []
    for lib, opt in zip((tidu, torch), _optimizers()):
        sched = make(lib.optim.lr_scheduler, opt)
        lrs = _lrs(opt, [sched], 14)
        saved = sched.state_dict()
        resumed = make(lib.optim.lr_scheduler, opt)
        resumed.load_state_dict(copy.deepcopy(saved))  # PyTorch's CyclicLR pops from the dict it loads
        lrs += _lrs(opt, [resumed], 16)
        momenta = [g["momentum"] for g in opt.param_groups]
        results.append((lrs, saved, resumed.state_dict(), momenta))
    assert results[0] == results[1]


def test_cyclic_lr_cycles_adams_beta1_and_saves_a_callable_scale_fn_like_torch():
    class Halving:
        def __init__(self):
            self.base = 2.0

        def __call__(self, x):
            return self.base ** -x

    results = []
    for lib in (tidu, torch):
        opt = lib.optim.Adam([lib.zeros(1, requires_grad=True)], lr=0.1, betas=(0.9, 0.99))
        sched = lib.optim.lr_scheduler.CyclicLR(opt, 0.001, 0.01, step_size_up=2, scale_fn=Halving(),
                                                base_momentum=0.85, max_momentum=0.95)
        betas, lrs = [], []
        for _ in range(9):
            opt.step()
            sched.step()
            betas.append(opt.param_groups[0]["betas"])
            lrs.append(sched.get_last_lr())
        saved = sched.state_dict()
        fn = Halving()
        fn.base = 3.0
        resumed = lib.optim.lr_scheduler.CyclicLR(opt, 0.001, 0.01, step_size_up=2, scale_fn=fn)
        resumed.load_state_dict(dict(saved))
        for _ in range(4):
            opt.step()
            resumed.step()
            lrs.append(resumed.get_last_lr())
        results.append((betas, lrs, saved, fn.base, opt.param_groups[0]["max_momentum"]))
    assert results[0] == results[1]
    assert results[0][2]["_scale_fn_custom"] == {"base": 2.0}


def test_closed_forms_of_constant_and_polynomial_match_torch():
    results = []
    for lib, opt in zip((tidu, torch), _optimizers()):
        mod = lib.optim.lr_scheduler
        lrs = []
        for sched in (mod.ConstantLR(opt, factor=0.5, total_iters=3), mod.PolynomialLR(opt, total_iters=6, power=2.0)):
            for epoch in (2, 3, 5, 7, 1):
                with pytest.warns(UserWarning, match="epoch parameter"):
                    sched.step(epoch)
                lrs.append(sched.get_last_lr())
        results.append(lrs)
    assert results[0] == results[1]


BAD_COMBINATIONS = [
    lambda S, o: S.ConstantLR(o, factor=1.5),
    lambda S, o: S.ConstantLR(o, factor=-0.1),
    lambda S, o: S.MultiplicativeLR(o, [lambda e: 1.0]),
    lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="linear"),
    lambda S, o: S.CyclicLR(o, [0.1, 0.2, 0.3], 1.0),
    lambda S, o: S.CyclicLR(o, 0.1, [1.0]),
    lambda S, o: S.CyclicLR(o, 0.1, 1.0, step_size_up=0),
    lambda S, o: S.CyclicLR(object(), 0.1, 1.0),
    lambda S, o: S.OneCycleLR(o, max_lr=[1.0]),
    lambda S, o: S.SequentialLR(o, [], []),
    lambda S, o: S.SequentialLR(o, [S.ConstantLR(o)], [3]),
    lambda S, o: S.SequentialLR(o, [object()], []),
    lambda S, o: S.SequentialLR(o, [S.ConstantLR(o), S.ReduceLROnPlateau(o)], [2]),
    lambda S, o: S.ChainedScheduler([]),
    lambda S, o: S.ChainedScheduler([object()]),
    lambda S, o: S.ChainedScheduler([S.ConstantLR(o), S.ReduceLROnPlateau(o)]),
]


@pytest.mark.parametrize("make", BAD_COMBINATIONS)
def test_new_scheduler_errors_match_torch(make):
    optimizers = dict(zip((torch, tidu), _optimizers()[::-1]))
    assert_same_error(lambda lib: make(lib.optim.lr_scheduler, optimizers[lib]))


@pytest.mark.parametrize("combinator", ["SequentialLR", "ChainedScheduler"])
def test_schedulers_of_another_optimizer_are_refused_like_torch(combinator):
    messages = []
    for lib in (torch, tidu):
        opt, other = (lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1) for _ in range(2))
        S = lib.optim.lr_scheduler  # noqa: N806
        schedulers = [S.ConstantLR(opt), S.ConstantLR(other)]
        with pytest.raises(ValueError) as info:
            if combinator == "SequentialLR":
                S.SequentialLR(opt, schedulers, [2])
            else:
                S.ChainedScheduler(schedulers)
        # the message shows the other optimizer's repr, which is each library's own
        messages.append(str(info.value).split(" has ")[0])
    assert messages[1] == messages[0] == (
        f"{combinator} expects all schedulers to belong to the same optimizer, but got scheduler ConstantLR at index 1"
    )
