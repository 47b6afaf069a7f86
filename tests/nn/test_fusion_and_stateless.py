"""nn.utils: BatchNorm folding, skip_init and functional_call, against PyTorch."""

import warnings

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _same_weights(ref, ours):
    ours.load_state_dict({k: tidu.tensor(v.detach().numpy().copy()) for k, v in ref.state_dict().items()})


def _bn(lib, n, affine=True):
    bn = lib.nn.BatchNorm2d(n, affine=affine).double() if n > 1 else lib.nn.BatchNorm1d(n, affine=affine).double()
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(np.linspace(-1, 1, n)))
        bn.running_var.copy_(lib.tensor(np.linspace(0.5, 2, n)))
        if affine:
            bn.weight.copy_(lib.tensor(np.linspace(0.5, 1.5, n)))
            bn.bias.copy_(lib.tensor(np.linspace(-0.2, 0.3, n)))
    return bn.eval()


@pytest.mark.parametrize("kind", ["conv", "conv_nobias", "convT", "linear", "linear_bn1"])
def test_fused_layers_match_torch(kind):
    rng = np.random.default_rng(0)
    x_conv, x_linear = rng.normal(size=(1, 2, 4, 4)), rng.normal(size=(5, 3))
    outs = []
    for lib in (torch, tidu):
        if kind.startswith("conv"):
            make = lib.nn.ConvTranspose2d if kind == "convT" else lib.nn.Conv2d
            torch.manual_seed(0)
            layer = make(2, 3, 2, bias=kind != "conv_nobias").double().eval()
            bn, x = _bn(lib, 3), x_conv
        else:
            layer = lib.nn.Linear(3, 4).double().eval()
            bn = _bn(lib, 1 if kind == "linear_bn1" else 4, affine=kind == "linear")
            x = x_linear
        if lib is tidu:
            _same_weights(outs[0][2], layer)
        if kind.startswith("conv"):
            fused = lib.nn.utils.fuse_conv_bn_eval(layer, bn, transpose=kind == "convT")
        else:
            fused = lib.nn.utils.fuse_linear_bn_eval(layer, bn) if kind == "linear" else None
            if fused is None:  # bn over one feature: PyTorch's broadcast case, through the weights function
                w, b = lib.nn.utils.fuse_linear_bn_weights(layer.weight, layer.bias, bn.running_mean,
                                                           bn.running_var, bn.eps, lib.ones(1).double(),
                                                           lib.zeros(1).double())
                fused = lib.nn.Linear(3, 4).double()
                fused.weight, fused.bias = w, b
        assert fused is not layer and isinstance(fused.weight, lib.nn.Parameter)
        outs.append((fused(lib.tensor(x)).detach().numpy(), fused.weight.requires_grad, layer))
    np.testing.assert_allclose(outs[1][0], outs[0][0], rtol=1e-12)
    assert outs[1][1] == outs[0][1]


def test_fusion_errors_as_torch():
    assert_same_error(lambda L: L.nn.utils.fuse_conv_bn_eval(L.nn.Conv2d(1, 2, 1), L.nn.BatchNorm2d(2)))
    assert_same_error(lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(2, 3).eval(), L.nn.BatchNorm1d(2).eval()))
    assert_same_error(lambda L: L.nn.utils.fuse_linear_bn_eval(
        L.nn.Linear(2, 3).eval(), L.nn.BatchNorm1d(3, track_running_stats=False).eval()))
    for lib in (tidu, torch):  # the weights function keeps dtypes and requires_grad
        w, b = lib.nn.utils.fuse_conv_bn_weights(lib.ones(2, 1, 1, dtype=lib.float64), lib.zeros(2),
                                                 lib.zeros(2), lib.ones(2), 1e-5, None, None)
        assert w.dtype == lib.float64 and b.dtype == lib.float32 and not w.requires_grad


def test_skip_init_as_torch():
    tidu.manual_seed(3)
    expected = tidu.rand(2)
    tidu.manual_seed(3)
    layer = tidu.nn.utils.skip_init(tidu.nn.Linear, in_features=5, out_features=4)
    assert tidu.equal(tidu.rand(2), expected)  # the random stream did not move
    assert isinstance(layer, tidu.nn.Linear) and layer.weight.shape == (4, 5) and layer.weight.requires_grad
    assert_same_error(lambda L: L.nn.utils.skip_init(int))
    assert_same_error(lambda L: L.nn.utils.skip_init(L.nn.ReLU))


def _model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 3)).double()
    m[2].weight = m[0].weight  # tied
    return m


def test_functional_call_matches_torch():
    ref, ours = _model(torch), _model(tidu)
    _same_weights(ref, ours)
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)
    results = []
    for lib, model in ((torch, ref), (tidu, ours)):
        weight = lib.tensor(w, requires_grad=True)
        params = ({"0.weight": weight}, {"2.bias": lib.tensor(b), "1.running_mean": lib.tensor(b)})
        out = lib.func.functional_call(model, params, lib.tensor(x))
        (out**2).sum().backward()
        untied = lib.func.functional_call(model.eval(), {"0.weight": weight}, (lib.tensor(x),), tie_weights=False)
        model.train()
        results.append([out.detach().numpy(), weight.grad.numpy(), untied.detach().numpy(),
                        model[1].running_mean.detach().numpy(), model[0].weight.detach().numpy()])
        assert model[0].weight is model[2].weight and isinstance(model[0].weight, lib.nn.Parameter)
    for ours_v, ref_v in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(ours_v, ref_v, rtol=1e-10, atol=1e-13)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = tidu.nn.utils.stateless.functional_call(ours, {"0.weight": tidu.tensor(w)}, (tidu.tensor(x),))
    assert caught and caught[0].category is FutureWarning
    assert out.shape == (4, 3) and ours[0].weight is ours[2].weight


def test_functional_call_errors_as_torch():
    call = "L.func.functional_call"
    assert_same_error(f"{call}(L.nn.Linear(2, 2), {{'weight': L.ones(2, 2)}}, L.ones(1, 2), strict=True)")
    assert_same_error(f"{call}(L.nn.Linear(2, 2), {{'weight': L.ones(2, 2), 'bias': L.ones(2), 'x': L.ones(1)}}, "
                      "L.ones(1, 2), strict=True)")
    assert_same_error(f"{call}(L.nn.Linear(2, 2), ({{'bias': L.ones(2)}}, {{'bias': L.ones(2)}}), L.ones(1, 2))")
    assert_same_error(f"{call}(L.nn.Linear(2, 2), [1], L.ones(1, 2))")
    assert_same_error(lambda L: L.func.functional_call(_model(L), {"0.weight": L.ones(3, 3), "2.weight": L.zeros(3, 3)},
                                                        L.ones(2, 3)))
