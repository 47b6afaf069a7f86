"""Optimizer and state-dict hooks, Module utilities, ensembles, make_tensor, benchmark.Timer and
the attention backend switches, compared with PyTorch where it has them."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import tidu
from tests.nn.test_orthogonal import twin_linear


@pytest.mark.parametrize("name", ["SGD", "Adam", "LBFGS", "Adafactor"])
def test_step_hooks_run_as_torchs(name: str) -> None:
    events: dict[str, list] = {"tidu": [], "torch": []}
    for lib, key in ((tidu, "tidu"), (torch, "torch")):
        w = lib.ones(2, requires_grad=True)
        opt = getattr(lib.optim, name)([w], lr=0.1)
        log = events[key]
        pre = opt.register_step_pre_hook(lambda o, args, kwargs, log=log: log.append(("pre", len(args), dict(kwargs))))
        opt.register_step_post_hook(lambda o, args, kwargs, log=log: log.append(("post", len(args))))
        glob = importlib.import_module(f"{lib.__name__}.optim.optimizer").register_optimizer_step_pre_hook(
            lambda o, a, k, log=log: log.append("global"))

        def closure(w: object = w, opt: object = opt) -> object:
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        opt.step(closure)
        pre.remove()
        glob.remove()
        opt.step(closure=closure)
    assert events["tidu"] == events["torch"]


def test_step_pre_hook_may_replace_arguments() -> None:
    w = tidu.ones(1, requires_grad=True)
    opt = tidu.optim.SGD([w], lr=1.0)
    calls = []

    def closure() -> tidu.Tensor:
        calls.append(1)
        w.grad = tidu.ones(1)
        return w.sum()

    opt.register_step_pre_hook(lambda o, args, kwargs: ((o, closure), {}))
    opt.step()
    assert calls == [1] and float(w) == 0.0
    opt.register_step_pre_hook(lambda o, args, kwargs: "no")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_optimizer_state_dict_hooks_match_torch() -> None:
    seen: dict[str, list] = {"tidu": [], "torch": []}
    dicts = {}
    for lib, key in ((tidu, "tidu"), (torch, "torch")):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        w.grad = lib.ones(2)
        opt.step()
        log = seen[key]
        opt.register_state_dict_pre_hook(lambda o, log=log: log.append("sd-pre"))
        opt.register_state_dict_post_hook(lambda o, sd, log=log: {**sd, "extra": 1})
        opt.register_load_state_dict_pre_hook(lambda o, sd, log=log: log.append(sorted(sd)))
        opt.register_load_state_dict_post_hook(lambda o, log=log: log.append("load-post"), prepend=True)
        sd = opt.state_dict()
        dicts[key] = sorted(sd)
        opt.load_state_dict(sd)
    assert seen["tidu"] == seen["torch"] and dicts["tidu"] == dicts["torch"]


def test_module_state_dict_hooks_match_torch() -> None:
    logs: dict[str, list] = {"tidu": [], "torch": []}
    results = {}
    for lib, key in ((tidu, "tidu"), (torch, "torch")):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Linear(2, 1))
        log = logs[key]
        net[0].register_state_dict_pre_hook(lambda m, prefix, keep_vars, log=log: log.append(("pre", prefix)))
        net[1].register_state_dict_post_hook(lambda m, sd, prefix, meta, log=log: log.append(sd.pop(prefix + "bias")
                                                                                           is None))

        def rename(m: object, sd: dict, prefix: str, meta: object, strict: bool, missing: list, unexpected: list,
                   errors: list, log: list = log) -> None:
            log.append(("load-pre", prefix))
            if prefix + "b" in sd:
                sd[prefix + "bias"] = sd.pop(prefix + "b")

        net[1].register_load_state_dict_pre_hook(rename)
        net.register_load_state_dict_post_hook(lambda m, keys, log=log: log.append(("load-post", list(keys.missing_keys))))
        sd = net.state_dict()
        results[key] = list(sd)
        sd["1.b"] = sd["1.weight"][:, 0].clone()
        keys = net.load_state_dict(sd)
        log.append(str(keys))
        with pytest.raises(RuntimeError):
            net.load_state_dict({"0.weight": sd["0.weight"]})
    assert results["tidu"] == results["torch"]
    assert logs["tidu"] == logs["torch"]
    for lib in (tidu, torch):
        layer = lib.nn.Linear(1, 1)
        layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            layer.state_dict()


def test_load_post_hook_can_forgive_missing_keys() -> None:
    for lib in (tidu, torch):
        layer = lib.nn.Linear(1, 1)
        layer.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
        assert str(layer.load_state_dict({"weight": lib.ones(1, 1)})) == "<All keys matched successfully>"
        layer.register_load_state_dict_post_hook(lambda m, keys: keys)
        with pytest.raises(AssertionError, match="not expected to return new values"):
            layer.load_state_dict({"weight": lib.ones(1, 1)})


def test_module_utilities_match_torch() -> None:
    for lib in (tidu, torch):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.ReLU()))
        net.set_submodule("1.0", lib.nn.Tanh())
        assert type(net[1][0]).__name__ == "Tanh"
        with pytest.raises(AttributeError, match="has no attribute `x`"):
            net.set_submodule("x.y", lib.nn.Tanh())
        with pytest.raises(AttributeError, match="has no attribute `z`"):
            net.set_submodule("1.z", lib.nn.Tanh(), strict=True)
        with pytest.raises(ValueError, match="is not an nn.Module"):
            net.set_submodule("0", 3)
        assert net.half()[0].weight.dtype is lib.float16
        assert net.bfloat16()[0].bias.dtype is lib.bfloat16
        assert net.share_memory() is net
        empty = lib.nn.Linear(3, 2).to_empty(device="cpu")
        assert tuple(empty.weight.shape) == (2, 3) and isinstance(empty.weight, lib.nn.Parameter)
        assert net.compile() is None
    x = tidu.ones(1, 2)
    layer = tidu.nn.Linear(2, 1)
    before = layer(x)
    layer.compile()
    assert float(layer(x)) == float(before)


def test_ensemble_through_stack_module_state_matches_torch() -> None:
    pairs = [twin_linear((3, 2), seed) for seed in range(3)]
    x = np.random.default_rng(9).standard_normal((3, 4, 3))
    ours_params, ours_buffers = tidu.func.stack_module_state([p[0] for p in pairs])
    theirs_params, theirs_buffers = torch.func.stack_module_state([p[1] for p in pairs])
    assert sorted(ours_params) == sorted(theirs_params) and ours_buffers == theirs_buffers == {}
    base, tbase = pairs[0]
    out = tidu.func.vmap(lambda p, xx: tidu.func.functional_call(base, p, (xx,)))(ours_params, tidu.tensor(x))
    tout = torch.func.vmap(lambda p, xx: torch.func.functional_call(tbase, p, (xx,)))(theirs_params, torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    out.pow(2).sum().backward()
    tout.pow(2).sum().backward()
    for name in ours_params:
        np.testing.assert_allclose(ours_params[name].grad.numpy(), theirs_params[name].grad.numpy(), rtol=1e-10)
    with pytest.raises(RuntimeError, match="same class"):
        tidu.func.stack_module_state([tidu.nn.Linear(1, 1), tidu.nn.Tanh()])


@pytest.mark.parametrize(("dtype", "low", "high"), [("float32", None, None), ("float64", -1, 0.5), ("int64", None, None),
                                                    ("uint8", None, None), ("int8", -3, 3), ("bool", None, None)])
def test_make_tensor_ranges_match_torch(dtype: str, low: object, high: object) -> None:
    t = tidu.testing.make_tensor(50, 40, dtype=getattr(tidu, dtype), device="cpu", low=low, high=high)
    ref = torch.testing.make_tensor(50, 40, dtype=getattr(torch, dtype), device="cpu", low=low, high=high)
    assert t.dtype is getattr(tidu, dtype) and tuple(t.shape) == tuple(ref.shape)
    a, b = t.numpy().astype(np.float64), ref.numpy().astype(np.float64)
    assert a.min() >= b.min() - 1 and a.max() <= b.max() + 1 and a.min() < a.max()
    nc = tidu.testing.make_tensor(3, 4, dtype=getattr(tidu, dtype), device="cpu", noncontiguous=True)
    assert not nc.is_contiguous()
    assert not (tidu.testing.make_tensor(200, dtype=getattr(tidu, dtype), device="cpu", exclude_zero=True) == 0).any()
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="`low` must be less than `high`"):
            lib.testing.make_tensor(2, dtype=lib.float32, device="cpu", low=3, high=1)


def test_benchmark_timer() -> None:
    from tidu.utils.benchmark import Timer

    x = tidu.ones(4)
    timer = Timer("x * 2", globals={"x": x}, label="double", num_threads=1)
    once = timer.timeit(200)
    assert once.number_per_run == 200 and len(once.times) == 1 and once.mean == once.median > 0
    assert "double" in repr(once) and "1 measurement, 200 runs" in repr(once)
    many = timer.blocked_autorange(min_run_time=0.02)
    assert len(many.times) >= 1 and sum(many.raw_times) >= 0.02 and many.iqr >= 0
    adaptive = Timer(lambda: x + 1).adaptive_autorange(max_run_time=0.05)
    assert adaptive.median > 0
    assert tidu.get_num_threads() >= 1


def test_tuple_helpers_match_torch() -> None:
    from torch.nn.modules import utils as theirs

    from tidu.nn.modules import utils as ours

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4]):
            assert getattr(ours, name)(value) == getattr(theirs, name)(value)
    assert ours._reverse_repeat_tuple((1, 2), 2) == theirs._reverse_repeat_tuple((1, 2), 2)


def test_attention_backend_switches_match_torch() -> None:
    q = np.random.default_rng(0).standard_normal((1, 3, 4))
    for lib in (tidu, torch):
        tensor = lib.tensor(q)
        attention = lib.nn.attention
        with attention.sdpa_kernel([attention.SDPBackend.MATH, attention.SDPBackend.FLASH_ATTENTION]):
            out = lib.nn.functional.scaled_dot_product_attention(tensor, tensor, tensor)
        with attention.sdpa_kernel(attention.SDPBackend.FLASH_ATTENTION), pytest.raises(RuntimeError,
                                                                                          match="No available kernel"):
            lib.nn.functional.scaled_dot_product_attention(tensor, tensor, tensor)
        with attention.sdpa_kernel(attention.SDPBackend.EFFICIENT_ATTENTION), pytest.raises(RuntimeError,
                                                                                              match="No viable backend"):
            lib.nn.functional.scaled_dot_product_attention(tensor, tensor, tensor)
        with attention.sdpa_kernel([]), pytest.raises(RuntimeError, match="No viable backend"):
            lib.nn.functional.scaled_dot_product_attention(tensor, tensor, tensor)
        assert lib.backends.cuda.math_sdp_enabled()
        lib.backends.cuda.enable_math_sdp(False)
        try:
            assert not lib.backends.cuda.math_sdp_enabled()
            with pytest.raises(RuntimeError):
                lib.nn.functional.scaled_dot_product_attention(tensor, tensor, tensor)
        finally:
            lib.backends.cuda.enable_math_sdp(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.backends.cuda.sdp_kernel(enable_flash=False):
                assert not lib.backends.cuda.flash_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()
        np.testing.assert_allclose(np.asarray(out.detach().numpy()), lib.nn.functional.scaled_dot_product_attention(
            tensor, tensor, tensor).detach().numpy())
