"""AdaptiveLogSoftmaxWithLoss and SyncBatchNorm (one process) against PyTorch, with the same weights."""

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _pair(*args, **kwargs):
    ref = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours = tidu.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs).double()
    ours.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    return ours, ref


@pytest.mark.parametrize("kwargs", [dict(cutoffs=[3, 6]), dict(cutoffs=[2], div_value=2.0, head_bias=True)])
def test_adaptive_log_softmax_matches_torch(kwargs):
    ours, ref = _pair(8, 10, **kwargs)
    assert repr(ours) == repr(ref)
    rng = np.random.default_rng(0)
    x, target = rng.normal(size=(7, 8)), np.array([0, 4, 9, 2, 7, 5, 1])
    a, b = tidu.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = ours(a, tidu.tensor(target)), ref(b, torch.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    np.testing.assert_allclose(out.output.detach().numpy(), expected.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), expected.loss.item(), rtol=1e-12)
    (out.loss + out.output[1]).backward()
    (expected.loss + expected.output[1]).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-14)
    for (name, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14, err_msg=name)
    np.testing.assert_allclose(ours.log_prob(tidu.tensor(x)).detach().numpy(),
                               ref.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    single = ours(tidu.tensor(x[0]), tidu.tensor(target[5])), ref(torch.tensor(x[0]), torch.tensor(target[5]))
    assert single[0].output.shape == single[1].output.shape == ()
    np.testing.assert_allclose(single[0].output.item(), single[1].output.item(), rtol=1e-12)


def test_adaptive_predict_matches_torch_in_every_branch():
    ours, ref = _pair(4, 6, cutoffs=[2])
    with torch.no_grad():  # head column 2 (the cluster) wins where x[:, 0] > 0
        ref.head.weight.copy_(torch.tensor([[0.0, 1, 0, 0], [0, 0, 1, 0], [5, 0, 0, 0]]))
    ours.load_state_dict({k: tidu.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    rng = np.random.default_rng(1)
    x = rng.normal(size=(9, 4))
    for rows in (x[:, 0] < -0.5, x[:, 0] > 0.5, np.ones(9, bool)):  # none, all, some in the tail
        xs = x[rows] if rows.any() else x[:1] * np.array([-1.0, 1, 1, 1])
        got, want = ours.predict(tidu.tensor(xs)), ref.predict(torch.tensor(xs))
        assert got.dtype == tidu.int64 and got.tolist() == want.tolist()


def test_adaptive_errors_as_torch():
    for cutoffs in ([], [5, 3], [0, 4], [3, 10], [2, 2]):
        assert_same_error(lambda L, c=cutoffs: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, c))
    asm = "L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])"
    assert_same_error(f"{asm}(L.ones(2, 4), L.tensor([0, 10]))")
    assert_same_error(f"{asm}(L.ones(2, 4), L.tensor([0]))")
    assert_same_error(f"{asm}(L.ones(2, 4), L.tensor([[0]]))")
    assert_same_error(f"{asm}(L.ones(2, 4), L.tensor(1))", same_message=False)  # the sizes print as torch.Size


def test_sync_batchnorm_behaves_as_batchnorm_on_one_process():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3, 5, 2))
    results = []
    for lib in (tidu, torch):
        bn = lib.nn.SyncBatchNorm(3, momentum=0.3).double()
        a = lib.tensor(x, requires_grad=True)
        out = bn(a)
        (out * lib.tensor(np.arange(x.size, dtype=float).reshape(x.shape))).sum().backward()
        bn.eval()
        results.append([out.detach().numpy(), a.grad.numpy(), bn.running_mean.numpy(), bn.running_var.numpy(),
                        bn(lib.tensor(x)).detach().numpy()])
    for ours, ref in zip(*results, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12)
    assert repr(tidu.nn.SyncBatchNorm(3, affine=False)) == repr(torch.nn.SyncBatchNorm(3, affine=False))
    assert_same_error("L.nn.SyncBatchNorm(3)(L.ones(3))")
    assert_same_error("L.nn.SyncBatchNorm(0)(L.ones(2, 0))")


def test_convert_sync_batchnorm_as_torch():
    nets = []
    for lib in (tidu, torch):
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3, bias=False),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(4, affine=False), lib.nn.InstanceNorm1d(4)))
        net.eval()
        weight, running = net[1].weight, net[1].running_mean
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert converted is net and converted[1].weight is weight and converted[1].running_mean is running
        assert not converted[1].training and isinstance(converted[2][1], lib.nn.InstanceNorm1d)
        nets.append(repr(converted))
        alone = lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(2))
        assert type(alone) is lib.nn.SyncBatchNorm
    assert nets[0] == nets[1]
