"""Every optimizer against PyTorch: parameters after 10 steps from identical values and gradients,
parameters and every state entry after each step, state_dict layout and round trip (PyTorch's
state_dict loaded included), param groups, zero_grad, and the errors on bad input."""

import copy

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

SHAPES = [(3, 4), (5,), ()]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, weight_decay=0.05)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, eps=1e-6, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-6, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, eps=1e-4, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(0.01, 0.1))),
    ("Rprop", dict(maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.1, beta2_decay=-0.5, eps=(1e-6, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.5, d=1.0, maximize=True)),
]
TOL = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=2e-5, atol=1e-6)}


def _ids(case):
    name, kwargs = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in kwargs.items())


def _pair(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [tidu.tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    return ours, theirs


def _run(opt_t, opt_p, ours, theirs, rng, steps, after_each=None):
    for _ in range(steps):
        for a, b in zip(ours, theirs):
            g = rng.standard_normal(a.shape).astype(a.dtype.np)
            a.grad = tidu.tensor(g.copy())
            b.grad = torch.tensor(g.copy())
        opt_t.step()
        opt_p.step()
        if after_each is not None:
            after_each()


def _same_state(opt_t, opt_p, ours, theirs):
    """Every state entry of every parameter: the same names, dtypes and values."""
    for a, b in zip(ours, theirs):
        state_t, state_p = opt_t.state[a], opt_p.state[b]
        assert state_t.keys() == state_p.keys()
        for key, value in state_p.items():
            assert state_t[key].dtype.name == str(value.dtype).removeprefix("torch."), key
            np.testing.assert_allclose(state_t[key].numpy(), value.numpy(), **TOL["float64"], err_msg=key)


def _close(ours, theirs, dtype):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_ten_steps_match_torch(case, dtype):
    name, kwargs = case
    ours, theirs = _pair(SHAPES, dtype)
    opt_t = getattr(tidu.optim, name)(ours, **kwargs)
    opt_p = getattr(torch.optim, name)(theirs, **kwargs)
    _run(opt_t, opt_p, ours, theirs, np.random.default_rng(1), 10)
    _close(ours, theirs, dtype)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_every_step_and_state_entry_match_torch(case):
    name, kwargs = case
    ours, theirs = _pair(SHAPES, "float64")
    opt_t = getattr(tidu.optim, name)(ours, **kwargs)
    opt_p = getattr(torch.optim, name)(theirs, **kwargs)

    def check():
        _close(ours, theirs, "float64")
        _same_state(opt_t, opt_p, ours, theirs)

    _run(opt_t, opt_p, ours, theirs, np.random.default_rng(4), 12, check)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_loading_torchs_state_dict_resumes_like_torch(case):
    """A state_dict saved by PyTorch (its tensors converted) loads and carries on as PyTorch does."""
    name, kwargs = case
    _, theirs = _pair(SHAPES, "float64")
    opt_p = getattr(torch.optim, name)(theirs, **kwargs)
    rng = np.random.default_rng(5)
    for _ in range(4):
        for b in theirs:
            b.grad = torch.tensor(rng.standard_normal(b.shape))
        opt_p.step()
    saved = opt_p.state_dict()
    converted = {
        "state": {i: {k: tidu.tensor(v.numpy().copy()) for k, v in s.items()} for i, s in saved["state"].items()},
        "param_groups": saved["param_groups"],
    }
    ours = [tidu.tensor(b.detach().numpy().copy(), requires_grad=True) for b in theirs]
    opt_t = getattr(tidu.optim, name)(ours, **{**kwargs, "lr": 7.0})
    opt_t.load_state_dict(converted)
    opt_p = getattr(torch.optim, name)(theirs, **{**kwargs, "lr": 7.0})  # loaded the same way (it casts)
    opt_p.load_state_dict(copy.deepcopy(saved))
    _run(opt_t, opt_p, ours, theirs, rng, 5, lambda: _same_state(opt_t, opt_p, ours, theirs))
    _close(ours, theirs, "float64")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_param_groups_and_state_dict_match_torch(case):
    """Two groups with their own options; the state_dict layout and values are PyTorch's."""
    name, kwargs = case
    ours, theirs = _pair([(2, 3), (4,), (3,)], "float64")
    lr = kwargs.get("lr", 1e-3)

    def groups(ps):
        return [{"params": ps[:2]}, {"params": ps[2:], "lr": lr / 2}]

    opt_t = getattr(tidu.optim, name)(groups(ours), **kwargs)
    opt_p = getattr(torch.optim, name)(groups(theirs), **kwargs)
    _run(opt_t, opt_p, ours, theirs, np.random.default_rng(2), 3)
    _close(ours, theirs, "float64")

    sd_t, sd_p = opt_t.state_dict(), opt_p.state_dict()
    assert sd_t["param_groups"] == sd_p["param_groups"]
    assert sd_t["state"].keys() == sd_p["state"].keys()
    for i, state in sd_p["state"].items():
        assert state.keys() == sd_t["state"][i].keys()
        for key, value in state.items():
            assert sd_t["state"][i][key].dtype.name == str(value.dtype).removeprefix("torch.")
            np.testing.assert_allclose(sd_t["state"][i][key].numpy(), value.numpy(), rtol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_state_dict_round_trip_resumes_like_torch(case):
    """Save after 3 steps, load into a fresh optimizer (made with another lr), run 3 more steps on
    both: each library's two runs agree with PyTorch's, and exactly where PyTorch's agree exactly
    (loading casts float32 scalar state such as NAdam's mu_product to the parameter's dtype)."""
    name, kwargs = case
    rng = np.random.default_rng(3)
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(6)]
    runs = []
    for lib, params in zip((tidu, torch), _pair(SHAPES, "float64")):
        opt = getattr(lib.optim, name)(params, **kwargs)

        def run(o, ps, gs, lib=lib):
            for step in gs:
                for p, g in zip(ps, step):
                    p.grad = lib.tensor(g)
                o.step()

        run(opt, params, grads[:3])
        saved = opt.state_dict()
        copies = [lib.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
        resumed = getattr(lib.optim, name)(copies, **{**kwargs, "lr": 123.0})
        resumed.load_state_dict(copy.deepcopy(saved) if lib is torch else saved)  # torch's shares the tensors
        assert resumed.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
        run(opt, params, grads[3:])
        run(resumed, copies, grads[3:])
        # the loaded state is a copy: stepping one optimizer does not move the other's state
        assert saved["state"] is not resumed.state_dict()["state"]
        runs.append([[p.detach().numpy().copy() for p in ps] for ps in (params, copies)])
    (ours, ours_resumed), (theirs, theirs_resumed) = runs
    for a, b, c, d in zip(ours, ours_resumed, theirs, theirs_resumed):
        np.testing.assert_allclose(a, c, **TOL["float64"])
        np.testing.assert_allclose(b, d, **TOL["float64"])
        if np.array_equal(c, d):
            np.testing.assert_array_equal(a, b)


def test_adafactor_batched_factors_and_the_groups_eps1():
    """A 3-d parameter (factored over its last two dims) and, with ``eps=(None, ...)``, the first
    parameter's machine epsilon for its whole group (PyTorch's loop): a float32 then a float64 one."""
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((3, 2)) * 1e-9]
    results = []
    for lib in (tidu, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        opt = lib.optim.Adafactor(params, lr=0.3, eps=(None, 1e-12))
        for step in range(5):
            for p, a in zip(params, arrays):
                p.grad = lib.tensor(np.cos(a * (step + 1)) * (1e-8 if a.dtype == np.float64 else 1))
            opt.step()
        results.append([p.detach().numpy() for p in params] + [opt.state[params[0]]["row_var"].numpy()])
    for ours, ref in zip(*results):
        assert ours.dtype == ref.dtype
        np.testing.assert_allclose(ours, ref, rtol=2e-5 if ours.dtype == np.float32 else 1e-12)


def test_adafactor_bad_arguments_as_torch():
    for kwargs in (dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)), dict(eps=(None, -1.0)), dict(d=0.5),
                   dict(weight_decay=-0.1)):
        assert_same_error(lambda L, kw=kwargs: L.optim.Adafactor([L.ones(2, requires_grad=True)], **kw))


def test_load_state_dict_casts_to_the_parameter_dtype():
    w64 = tidu.zeros(3, dtype=tidu.float64, requires_grad=True)
    opt = tidu.optim.Adam([w64])
    w64.grad = tidu.ones(3, dtype=tidu.float64)
    opt.step()
    w32 = tidu.zeros(3, requires_grad=True)
    opt32 = tidu.optim.Adam([w32])
    opt32.load_state_dict(opt.state_dict())
    state = opt32.state[w32]
    assert state["exp_avg"].dtype is tidu.float32
    assert state["step"].dtype is tidu.float32 and state["step"].item() == 1.0


def test_step_skips_parameters_without_grad_and_returns_closure_loss():
    a, b = tidu.ones(2, requires_grad=True), tidu.ones(2, requires_grad=True)
    opt = tidu.optim.Adam([a, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 2.0
    assert b.tolist() == [1.0, 1.0] and a.tolist() != [1.0, 1.0]
    assert b not in opt.state and a in opt.state


def test_step_bumps_the_version_counter_so_saved_values_are_guarded():
    w = tidu.ones(2, requires_grad=True)
    opt = tidu.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    w.grad = tidu.ones(2)
    version = w._version.value
    opt.step()
    assert w._version.value == version + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_zero_grad():
    w = tidu.ones(2, requires_grad=True)
    opt = tidu.optim.SGD([w], lr=0.1)
    opt.zero_grad()  # no grads yet: nothing to do
    (w * 3).sum().backward()
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and grad.tolist() == [0.0, 0.0]
    for history in ((w * 2).sum() * tidu.ones(2), (w * 2).sum().expand(2)):  # the second is read-only
        w.grad = history  # a gradient with a history: detached in place, then zeroed
        opt.zero_grad(set_to_none=False)
        assert w.grad is history and history.grad_fn is None and not history.requires_grad
        assert history.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_add_param_group_and_repr():
    a, b = tidu.zeros(2, requires_grad=True), tidu.zeros(2, requires_grad=True)
    opt = tidu.optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    assert "Parameter Group 1" in repr(opt) and "lr: 0.5" in repr(opt)


def _both(fn):
    """Run ``fn(lib)`` for tidu and torch; return the two exceptions (torch must raise too)."""
    errors = []
    for lib in (tidu, torch):
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - compared below
            errors.append(e)
        else:
            errors.append(None)
    return errors


BAD = [
    ("non-leaf", lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1),
     ValueError, "can't optimize a non-leaf Tensor"),
    ("empty", lambda lib: lib.optim.Adam([]), ValueError, "empty parameter list"),
    ("tensor", lambda lib: lib.optim.Adam(lib.ones(2, requires_grad=True)), TypeError, "iterable of Tensors"),
    ("not a tensor", lambda lib: lib.optim.Adam([1.0]), TypeError, "can only optimize Tensors"),
    ("set", lambda lib: lib.optim.Adam([{"params": {lib.ones(2, requires_grad=True)}}]), TypeError, "ordered collections"),
    ("negative lr", lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=-1.0),
     ValueError, "Invalid learning rate: -1.0"),
    ("nesterov", lambda lib: lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1, nesterov=True),
     ValueError, "Nesterov momentum requires a momentum and zero dampening"),
    ("beta", lambda lib: lib.optim.Adam([lib.ones(2, requires_grad=True)], betas=(1.0, 0.9)),
     ValueError, "Invalid beta parameter at index 0"),
    ("eps", lambda lib: lib.optim.RMSprop([lib.ones(2, requires_grad=True)], eps=-1.0),
     ValueError, "Invalid epsilon value"),
    ("weight decay", lambda lib: lib.optim.Adagrad([lib.ones(2, requires_grad=True)], weight_decay=-1.0),
     ValueError, "Invalid weight_decay value"),
    ("nadam momentum_decay", lambda lib: lib.optim.NAdam([lib.ones(2, requires_grad=True)], momentum_decay=-0.1),
     ValueError, "Invalid momentum_decay value: -0.1"),
    ("nadam lr", lambda lib: lib.optim.NAdam([lib.ones(2, requires_grad=True)], lr=-0.5),
     ValueError, "Invalid learning rate: -0.5"),
    ("radam eps", lambda lib: lib.optim.RAdam([lib.ones(2, requires_grad=True)], eps=-1e-8),
     ValueError, "Invalid epsilon value: -1e-08"),
    ("radam beta", lambda lib: lib.optim.RAdam([lib.ones(2, requires_grad=True)], betas=(0.9, 1.0)),
     ValueError, "Invalid beta parameter at index 1: 1.0"),
    ("adamax beta", lambda lib: lib.optim.Adamax([lib.ones(2, requires_grad=True)], betas=(-0.1, 0.9)),
     ValueError, r"Invalid beta parameter at index 0: -0.1"),
    ("adamax weight decay", lambda lib: lib.optim.Adamax([lib.ones(2, requires_grad=True)], weight_decay=-1),
     ValueError, "Invalid weight_decay value: -1"),
    ("adadelta rho", lambda lib: lib.optim.Adadelta([lib.ones(2, requires_grad=True)], rho=1.5),
     ValueError, "Invalid rho value: 1.5"),
    ("adadelta eps", lambda lib: lib.optim.Adadelta([lib.ones(2, requires_grad=True)], eps=-1.0),
     ValueError, "Invalid epsilon value: -1.0"),
    ("rprop etas", lambda lib: lib.optim.Rprop([lib.ones(2, requires_grad=True)], etas=(0.5, 0.9)),
     ValueError, "Invalid eta values: 0.5, 0.9"),
    ("rprop etaminus", lambda lib: lib.optim.Rprop([lib.ones(2, requires_grad=True)], etas=(0, 1.2)),
     ValueError, "Invalid eta values: 0, 1.2"),
    ("rprop lr", lambda lib: lib.optim.Rprop([lib.ones(2, requires_grad=True)], lr=-1e-2),
     ValueError, "Invalid learning rate: -0.01"),
    ("asgd weight decay", lambda lib: lib.optim.ASGD([lib.ones(2, requires_grad=True)], weight_decay=-0.5),
     ValueError, "Invalid weight_decay value: -0.5"),
    ("asgd empty", lambda lib: lib.optim.ASGD([]), ValueError, "empty parameter list"),
    ("twice", lambda lib: (lambda p: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(
        lib.ones(2, requires_grad=True)), ValueError, "more than one parameter group"),
    ("scheduler on non-optimizer", lambda lib: lib.optim.lr_scheduler.StepLR(object(), 2),
     TypeError, "object is not an Optimizer"),
]


@pytest.mark.parametrize("name,fn,cls,match", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_torchs_error(name, fn, cls, match):
    ours, theirs = _both(fn)
    assert isinstance(theirs, cls), theirs
    assert isinstance(ours, cls), ours
    with pytest.raises(cls, match=match):
        raise ours


def test_load_state_dict_mismatches():
    a, b = tidu.zeros(2, requires_grad=True), tidu.zeros(2, requires_grad=True)
    opt = tidu.optim.SGD([a, b], lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict(tidu.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).state_dict())
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        opt.load_state_dict(tidu.optim.SGD([a], lr=0.1).state_dict())
    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        tidu.optim.Optimizer([a], {"lr": tidu.optim.optimizer.required})


def test_named_parameters_as_torch():
    groups = []
    for lib in (tidu, torch):
        named = [("a", lib.ones(2, requires_grad=True)), ("b", lib.ones(3, requires_grad=True))]
        opt = lib.optim.Adam(named, lr=0.1)
        groups.append(opt.state_dict()["param_groups"])
        with pytest.raises(ValueError, match="should be with/without names"):
            opt.add_param_group({"params": [lib.ones(1, requires_grad=True)]})
        with pytest.raises(ValueError, match="Some param names are missing"):
            lib.optim.SGD([("a", lib.ones(1, requires_grad=True)), lib.ones(1, requires_grad=True)], lr=0.1)
    assert groups[0] == groups[1] and groups[0][0]["param_names"] == ["a", "b"]
