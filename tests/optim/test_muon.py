"""Muon against PyTorch's: parameters and state after each step on a few 2-D shapes, the
Newton-Schulz iteration itself, state_dict layout and loading, and the errors on bad input."""

import copy
import re

import numpy as np
import pytest
import torch
from torch.optim._muon import _zeropower_via_newtonschulz

import tidu
from tests.test_torch_oracle import assert_same_error
from tidu.optim.muon import orthogonalized

# wide, tall (NS runs on the transpose), square, and one row
SHAPES = [(3, 4), (6, 2), (5, 5), (1, 7)]
CASES = [
    dict(),
    dict(lr=0.02),
    dict(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.0),
    dict(lr=0.03, weight_decay=0.3, adjust_lr_fn="match_rms_adamw"),
    dict(lr=0.04, adjust_lr_fn="original", ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5), eps=1e-3),
    dict(lr=0.05, momentum=0.0),
]
TOL = {"float64": dict(rtol=1e-12, atol=1e-14), "float32": dict(rtol=2e-5, atol=1e-6)}


def _pair(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([tidu.tensor(a.copy(), requires_grad=True) for a in arrays],
            [torch.tensor(a.copy(), requires_grad=True) for a in arrays])


def _step_both(opt_t, opt_p, ours, theirs, rng):
    for a, b in zip(ours, theirs):
        g = rng.standard_normal(tuple(a.shape)).astype(a.dtype.np)
        a.grad, b.grad = tidu.tensor(g.copy()), torch.tensor(g.copy())
    opt_t.step()
    opt_p.step()


def _same(opt_t, opt_p, ours, theirs, dtype):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL[dtype])
        state_t, state_p = opt_t.state[a], opt_p.state[b]
        assert state_t.keys() == state_p.keys() == {"momentum_buffer"}
        buf_t, buf_p = state_t["momentum_buffer"], state_p["momentum_buffer"]
        assert buf_t.dtype.name == str(buf_p.dtype).removeprefix("torch.")
        np.testing.assert_allclose(buf_t.numpy(), buf_p.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()) or "defaults")
def test_every_step_and_state_match_torch(kwargs, dtype):
    ours, theirs = _pair(SHAPES, dtype)
    opt_t, opt_p = tidu.optim.Muon(ours, **kwargs), torch.optim.Muon(theirs, **kwargs)
    rng = np.random.default_rng(1)
    for _ in range(6):
        _step_both(opt_t, opt_p, ours, theirs, rng)
        _same(opt_t, opt_p, ours, theirs, dtype)


def test_tensor_lr_and_param_groups_as_torch():
    ours, theirs = _pair([(2, 3), (4, 2), (3, 3)], "float64", seed=2)

    def groups(lib, ps):
        return [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.01, "nesterov": False}]

    opt_t = tidu.optim.Muon(groups(tidu, ours), lr=tidu.tensor(0.05))
    opt_p = torch.optim.Muon(groups(torch, theirs), lr=torch.tensor(0.05))
    rng = np.random.default_rng(3)
    for _ in range(3):
        _step_both(opt_t, opt_p, ours, theirs, rng)
        _same(opt_t, opt_p, ours, theirs, "float64")
    sd_t, sd_p = opt_t.state_dict(), opt_p.state_dict()
    for g_t, g_p in zip(sd_t["param_groups"], sd_p["param_groups"]):
        assert list(g_t) == list(g_p)
        assert {k: v for k, v in g_t.items() if k != "lr"} == {k: v for k, v in g_p.items() if k != "lr"}
        assert float(g_t["lr"]) == float(g_p["lr"])
    assert sd_t["state"].keys() == sd_p["state"].keys()


def test_defaults_and_state_dict_layout_as_torch():
    ours, theirs = _pair([(3, 2)], "float32")
    opt_t, opt_p = tidu.optim.Muon(ours), torch.optim.Muon(theirs)
    assert opt_t.defaults == opt_p.defaults
    _step_both(opt_t, opt_p, ours, theirs, np.random.default_rng(4))
    sd_t, sd_p = opt_t.state_dict(), opt_p.state_dict()
    assert sd_t["param_groups"] == sd_p["param_groups"]
    np.testing.assert_array_equal(sd_t["state"][0]["momentum_buffer"].numpy(),
                                  sd_p["state"][0]["momentum_buffer"].numpy())
    assert repr(opt_t) == repr(opt_p)


def test_loading_torchs_state_dict_resumes_like_torch():
    _, theirs = _pair(SHAPES, "float64", seed=5)
    kwargs = dict(lr=0.03, weight_decay=0.05)
    opt_p = torch.optim.Muon(theirs, **kwargs)
    rng = np.random.default_rng(6)
    for _ in range(3):
        for b in theirs:
            b.grad = torch.tensor(rng.standard_normal(tuple(b.shape)))
        opt_p.step()
    saved = opt_p.state_dict()
    converted = {"state": {i: {k: tidu.tensor(v.numpy().copy()) for k, v in s.items()} for i, s in saved["state"].items()},
                 "param_groups": saved["param_groups"]}
    ours = [tidu.tensor(b.detach().numpy().copy(), requires_grad=True) for b in theirs]
    opt_t = tidu.optim.Muon(ours, lr=9.0)
    opt_t.load_state_dict(converted)
    opt_p = torch.optim.Muon(theirs, lr=9.0)
    opt_p.load_state_dict(copy.deepcopy(saved))
    for _ in range(3):
        _step_both(opt_t, opt_p, ours, theirs, rng)
        _same(opt_t, opt_p, ours, theirs, "float64")


@pytest.mark.parametrize("shape", [(2, 2), (3, 5), (7, 3), (8, 8)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_newton_schulz_matches_torch_bit_for_bit_on_small_matrices(shape, dtype):
    rng = np.random.default_rng(7)
    for scale in (1e-3, 1.0, 1e3):
        g = (rng.standard_normal(shape) * scale).astype(dtype)
        ref = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        ours = orthogonalized(tidu.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        np.testing.assert_array_equal(ours.numpy(), ref.float().numpy())


def test_newton_schulz_on_larger_matrices_within_bfloat16_rounding():
    """PyTorch's bfloat16 matmul sums in its own order: a value within float32 rounding of a
    bfloat16 tie may round the other way, and the iteration carries the difference on."""
    rng = np.random.default_rng(8)
    for shape in [(16, 32), (48, 24)]:
        g = rng.standard_normal(shape).astype(np.float32)
        ref = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7).float().numpy()
        ours = orthogonalized(tidu.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7).numpy()
        np.testing.assert_allclose(ours, ref, atol=2e-2)


def test_zero_and_tiny_updates_as_torch():
    for g in (np.zeros((3, 4), np.float32), np.diag([1e-30, 0.0, 0.0]).astype(np.float32)):
        ref = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        np.testing.assert_array_equal(orthogonalized(tidu.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7).numpy(),
                                      ref.float().numpy())


@pytest.mark.parametrize("kwargs", [dict(lr=-1.0), dict(momentum=-0.5), dict(weight_decay=-0.1),
                                    dict(adjust_lr_fn="rms")], ids=str)
def test_bad_arguments_raise_torchs_error(kwargs):
    assert_same_error(lambda L: L.optim.Muon([L.ones(2, 2, requires_grad=True)], **kwargs))


def test_tensor_lr_of_several_elements_raises_torchs_error():
    assert_same_error(lambda L: L.optim.Muon([L.ones(2, 2, requires_grad=True)], lr=L.tensor([0.1, 0.2])))


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4), ()], ids=str)
def test_parameters_not_2d_raise_torchs_error(shape):
    assert_same_error(lambda L: L.optim.Muon([L.zeros(shape, requires_grad=True)]), same_message=False)
    message = f"Muon only supports 2D parameters whereas we found a parameter with size: tidu.Size({list(shape)})"
    with pytest.raises(ValueError, match=re.escape(message)):
        tidu.optim.Muon([tidu.zeros(shape, requires_grad=True)])


def _stepped(L, p, **kwargs):
    opt = L.optim.Muon([p], **kwargs)
    p.grad = L.ones(tuple(p.shape), dtype=p.dtype)
    opt.step()


@pytest.mark.parametrize("call", [
    lambda L: _stepped(L, L.ones(2, 3, requires_grad=True), ns_steps=100),
    lambda L: _stepped(L, L.ones(2, 3, requires_grad=True), ns_coefficients=(1.0, 2.0)),
], ids=["ns_steps", "coefficients"])
def test_step_errors_as_torch(call):
    assert_same_error(call)


def test_a_vector_added_later_fails_at_the_step_as_torch():
    def call(L):
        w, b = L.ones(2, 3, requires_grad=True), L.ones(3, requires_grad=True)
        opt = L.optim.Muon([w])
        opt.add_param_group({"params": [b]})  # not checked here, as PyTorch
        (w.sum() + b.sum()).backward()
        opt.step()

    assert_same_error(call)
