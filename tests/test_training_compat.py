"""What older and everyday training scripts call, as PyTorch: the deprecated scalar-first
overloads, ``Variable``, ``torch.cpu.amp``, tensor hyperparameters, scheduler warnings,
``capturable`` on the CPU, loss argument checks."""

import warnings

import numpy as np
import pytest
import torch

import tidu


def test_deprecated_scalar_first_overloads_compute_and_warn():
    got = []
    for L in (tidu, torch):
        x, y = L.ones(2), L.full((2,), 3.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [x.add(2, y), L.add(x, 2, y), x.clone().add_(-0.1, y), x.clone().sub_(2, y), L.sub(x, 2, y),
                      L.addcmul(x, 0.5, y, y), x.clone().addcmul_(0.5, y, y), x.clone().addcdiv_(0.5, y, y)]
        assert all("deprecated" in str(w.message) for w in caught) and caught
        got.append([v.tolist() for v in values])
    np.testing.assert_allclose(got[0], got[1])


def test_variable_and_cpu_amp_autocast():
    for L in (tidu, torch):
        x = L.ones(2)
        v = L.autograd.Variable(x, requires_grad=True)
        assert v.requires_grad and v is not x and isinstance(x, L.autograd.Variable) and type(v) is L.Tensor
        with pytest.warns(FutureWarning, match="cpu.amp.autocast"):
            with L.cpu.amp.autocast(dtype=L.bfloat16):
                assert (L.ones(2, 2) @ L.ones(2, 2)).dtype is L.bfloat16


def test_tensor_hyperparameters_and_a_tensor_lr_the_scheduler_writes():
    results = []
    for L in (tidu, torch):
        w = L.nn.Parameter(L.tensor([1.0, 2.0], dtype=L.float64))
        lr = L.tensor(0.1)
        opt = L.optim.Adam([w], lr=lr, betas=(L.tensor(0.8), L.tensor(0.9)), eps=L.tensor(1e-8),
                           weight_decay=L.tensor(0.01))
        sched = L.optim.lr_scheduler.StepLR(opt, 1, 0.5)
        for _ in range(3):
            (w * w).sum().backward()
            opt.step()
            opt.zero_grad()
            sched.step()
        assert opt.param_groups[0]["lr"] is lr
        results.append((w.tolist(), lr.item()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-7)
    assert results[0][1] == results[1][1] == pytest.approx(0.0125)


def test_scheduler_before_optimizer_warns_and_capturable_refuses_the_cpu():
    for L in (tidu, torch):
        w = L.nn.Parameter(L.ones(1))
        opt = L.optim.SGD([w], lr=0.1)
        sched = L.optim.lr_scheduler.StepLR(opt, 1)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()
        w.grad = L.ones(1)
        adam = L.optim.Adam([w], lr=0.1, capturable=True)
        with pytest.raises(AssertionError, match="capturable=True"):
            adam.step()


def test_loss_argument_checks_as_pytorch():
    for L in (tidu, torch):
        F = L.nn.functional
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            F.binary_cross_entropy_with_logits(L.tensor([0.5, -1.0, 2.0]), L.tensor([0, 1, 1]))
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            F.mse_loss(L.ones(2), L.zeros(2), size_average=False)
        assert L.nn.init.calculate_gain("linear") == 1 and type(L.nn.init.calculate_gain("linear")) is int
        assert L.nn.init._calculate_correct_fan(L.ones(3, 4), "fan_out") == 3
