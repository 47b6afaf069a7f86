"""``Module`` registration order, ``load_state_dict`` (``assign``, versions and ``_metadata``, the
private hooks), buffers, the module-wide forward hooks and ``to``'s arguments against PyTorch."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _orders(m: Any) -> list[list[str]]:
    return [list(m.state_dict()), [n for n, _ in m.named_parameters()], [n for n, _ in m.named_modules()],
            [n for n, _ in m.named_buffers()], repr(m).replace("torch.", "").split("\n")]


def _same(build: Callable[[Any], Any]) -> None:
    """``build(library)`` gives the same names, in the same order, in both libraries."""
    assert _orders(build(tidu)) == _orders(build(torch))


def test_reassigned_parameter_keeps_its_place() -> None:
    def build(L: Any) -> Any:
        m = L.nn.Linear(2, 3)
        m.weight = L.nn.Parameter(L.zeros(3, 2))
        return m

    _same(build)
    assert list(build(tidu).state_dict()) == ["weight", "bias"]


def test_reassigned_submodule_and_tied_weights_keep_their_place() -> None:
    def build(L: Any) -> Any:
        s = L.nn.Module()
        s.a, s.b, s.c = L.nn.Linear(1, 1), L.nn.Linear(1, 1), L.nn.Linear(1, 1)
        s.a = L.nn.Linear(1, 1)
        s.c.weight = s.b.weight  # tied
        s.b.weight = s.a.weight
        return s

    _same(build)


def test_names_moving_between_registries_follow_torch() -> None:
    def build(L: Any) -> Any:
        m = L.nn.Module()
        m.p0 = L.nn.Parameter(L.zeros(1))
        m.register_buffer("b", L.zeros(1), persistent=False)
        m.register_buffer("kept", L.zeros(1))
        m.sub = L.nn.Linear(1, 1)
        m.plain = 3
        m.p1 = L.nn.Parameter(L.zeros(1))
        m.b = L.nn.Parameter(L.ones(2))  # buffer -> parameter: appended, no longer a buffer
        m.sub = L.nn.Parameter(L.ones(3))  # module -> parameter
        m.plain = L.nn.Parameter(L.ones(4))  # attribute -> parameter
        m.p0 = None
        m.p0 = L.nn.Parameter(L.ones(5))  # back in its place
        m.kept = L.ones(2)  # a buffer stays a buffer
        m.p2 = L.nn.Linear(1, 1)
        m.kept = L.nn.Linear(1, 1)  # buffer -> module
        return m

    _same(build)
    for L in (tidu, torch):
        m = L.nn.Module()
        m.register_buffer("b", L.zeros(1), persistent=False)
        m.b = L.ones(1)
        assert "b" not in m.state_dict()
    assert_same_error(lambda L: setattr(L.nn.Linear(1, 1), "weight", L.nn.Linear(1, 1)), same_message=False)


def _containers(L: Any) -> list:
    params = L.nn.ParameterList([L.nn.Parameter(L.zeros(1)), L.nn.Parameter(L.zeros(2)), L.zeros(4)])
    params[0] = L.nn.Parameter(L.zeros(3))
    params[-1] = L.ones(5)
    pdict = L.nn.ParameterDict({"a": L.zeros(1), "b": L.zeros(2), "c": None})
    pdict["a"] = L.zeros(3)
    pdict["c"] = L.zeros(4)
    mlist = L.nn.ModuleList([L.nn.Linear(1, 1), L.nn.ReLU(), L.nn.Tanh()])
    mlist[0] = L.nn.Linear(1, 2)
    mdict = L.nn.ModuleDict({"x": L.nn.ReLU(), "y": L.nn.Tanh()})
    mdict["x"] = L.nn.Linear(1, 1)
    seq = L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh(), L.nn.Sigmoid())
    seq[0] = L.nn.Linear(2, 2)
    seq[-1] = L.nn.Linear(2, 1)
    return [[tuple(p.shape) for p in params], [n for n, _ in params.named_parameters()],
            [(k, tuple(v.shape)) for k, v in pdict.items()], list(pdict.state_dict()),
            [type(m).__name__ for m in mlist], list(mlist.state_dict()), list(mdict.keys()), list(mdict.state_dict()),
            [type(m).__name__ for m in seq], list(seq.state_dict())]


def test_container_setitem_keeps_the_order() -> None:
    ours, ref = _containers(tidu), _containers(torch)
    assert ours == ref
    assert ours[0] == [(3,), (2,), (5,)]


def test_load_state_dict_assign_keeps_the_saved_tensors() -> None:
    results = []
    for L in (tidu, torch):
        m = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.BatchNorm1d(3))
        m[0].bias.requires_grad_(False)
        saved = {k: L.ones(tuple(v.shape), dtype=L.float64) if v.dtype.is_floating_point else v
                 for k, v in m.state_dict().items()}
        keys = m.load_state_dict(saved, assign=True)
        results.append([str(keys), str(m[0].weight.dtype), m[0].weight.requires_grad, m[0].bias.requires_grad,
                        type(m[0].weight).__name__, str(m[1].running_mean.dtype), m[1].running_mean is saved["1.running_mean"],
                        m[0](L.ones(1, 2, dtype=L.float64)).tolist()])
        given = L.nn.Parameter(L.ones(3, 2, dtype=L.float64), requires_grad=False)
        m[0].load_state_dict({"weight": given, "bias": L.zeros(3)}, assign=True)
        results[-1] += [m[0].weight is given, m[0].weight.requires_grad]
    ours, ref = results
    assert [x.replace("tidu.", "") if isinstance(x, str) else x for x in ours] == [
        x.replace("torch.", "") if isinstance(x, str) else x for x in ref]
    assert ours[1] == "tidu.float64"


def test_state_dict_metadata_holds_module_versions() -> None:
    def meta(L: Any) -> dict:
        sd = L.nn.Sequential(L.nn.Linear(1, 1), L.nn.Sequential(L.nn.BatchNorm1d(1), L.nn.InstanceNorm1d(1))
                             ).state_dict()
        return dict(sd._metadata)

    assert meta(tidu) == meta(torch) == {"": {"version": 1}, "0": {"version": 1}, "1": {"version": 1},
                                         "1.0": {"version": 2}, "1.1": {"version": 2}}


def test_batchnorm_loads_checkpoints_without_num_batches_tracked() -> None:
    results = []
    for L in (tidu, torch):
        bn = L.nn.BatchNorm1d(2)
        bn.num_batches_tracked.fill_(7)
        old = {k: v + 1 for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
        results.append([str(bn.load_state_dict(old)), int(bn.num_batches_tracked), bn.running_var.tolist()])
        old = OrderedDict(old)
        old._metadata = {"": {"version": 2}}  # a version-2 checkpoint must have it
        with pytest.raises(RuntimeError, match='Missing key.*"num_batches_tracked"'):
            bn.load_state_dict(old)
        net = L.nn.Sequential(L.nn.BatchNorm1d(2))
        sd = net.state_dict()
        del sd["0.num_batches_tracked"]
        sd._metadata["0"] = {"version": 1}
        results[-1].append(str(net.load_state_dict(sd)))
    assert results[0] == results[1]
    assert results[0][1] == 7


def test_private_state_dict_hooks_match_torch() -> None:
    logs = []
    for L in (tidu, torch):
        log: list = []
        net = L.nn.Sequential(L.nn.Linear(1, 1))
        net[0]._register_state_dict_hook(lambda m, sd, prefix, meta: {k.upper(): v for k, v in sd.items()})
        net._register_state_dict_hook(lambda m, sd, prefix, meta, log=log: log.append(sorted(sd)))

        def rename(sd: dict, prefix: str, *rest: Any, log: list = log) -> None:
            log.append((prefix, len(rest)))
            if prefix + "w" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "w")

        net[0]._register_load_state_dict_pre_hook(rename)
        net[0]._register_load_state_dict_pre_hook(lambda m, sd, prefix, *rest, log=log: log.append(type(m).__name__),
                                                  with_module=True)
        log.append(list(net.state_dict()))
        log.append(str(net.load_state_dict({"0.w": L.ones(1, 1), "0.bias": L.ones(1)})))
        log.append(type(net.load_state_dict({"0.weight": L.ones(1, 1)}, strict=False)).__name__)
        logs.append(log)
    assert logs[0] == logs[1]
    assert logs[0][-1] == "_IncompatibleKeys"
    net, seen = tidu.nn.Linear(1, 1), []
    net.register_load_state_dict_pre_hook(lambda m, *rest: seen.append(m))
    copied = copy.deepcopy(net)
    copied.load_state_dict(net.state_dict())
    assert seen == [copied]


def test_assigned_buffer_is_a_plain_tensor() -> None:
    for L in (tidu, torch):
        m = L.nn.Module()
        buf = L.nn.Buffer(L.ones(1), persistent=False)
        m.b = buf
        m.register_buffer("c", L.nn.Buffer(L.zeros(1)))
        assert type(m.b) is L.Tensor and type(m.c) is L.Tensor and m.b is buf
        assert list(m.state_dict()) == ["c"] and [n for n, _ in m.named_buffers()] == ["b", "c"]


def test_module_wide_forward_hooks_match_torch() -> None:
    logs = []
    for L in (tidu, torch):
        from importlib import import_module

        mm = import_module(L.__name__ + ".nn.modules.module")
        log: list = []
        net = L.nn.Sequential(L.nn.Linear(1, 1), L.nn.ReLU())
        net[1].register_forward_hook(lambda m, args, out, log=log: log.append(("own", type(m).__name__)))
        handles = [
            mm.register_module_forward_pre_hook(lambda m, args, log=log: log.append(("pre", type(m).__name__))),
            mm.register_module_forward_hook(lambda m, args, out, log=log: log.append(("post", type(m).__name__))),
            mm.register_module_forward_hook(lambda m, args, kwargs, out, log=log: log.append(("kw", sorted(kwargs))),
                                            with_kwargs=True),
            mm.register_module_forward_pre_hook(lambda m, args, relu=L.nn.ReLU: (args[0] * 0,) if isinstance(m, relu)
                                                else None),
        ]
        out = net(L.ones(1, 1))
        for h in handles:
            h.remove()
        net(L.ones(1, 1))
        logs.append([log, out.tolist()])
    assert logs[0] == logs[1]


@pytest.mark.parametrize("args", ["L.float64, L.float32", "'cpu', 'cpu'", "L.float64, 1"])
def test_module_to_rejects_what_torch_rejects(args: str) -> None:
    assert_same_error(f"L.nn.Linear(1, 1).to({args})", same_message=False)


def test_module_to_accepts_torch_forms() -> None:
    for L in (tidu, torch):
        m = L.nn.Linear(1, 1)
        assert m.to("cpu", L.float64).weight.dtype == L.float64
        assert m.to(L.zeros(1, dtype=L.float32), non_blocking=True).weight.dtype == L.float32
        assert m.to(L.float64, False).weight.dtype == L.float64
        assert m.to(device="cpu", dtype=L.float32).weight.dtype == L.float32


def test_old_weight_norm_state_dict_loads_into_the_parametrization() -> None:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        olds = [torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double()),
                tidu.nn.utils.weight_norm(tidu.nn.Linear(4, 3).double())]
    with torch.no_grad():
        olds[0].weight_g.mul_(2.0)
    olds[1].load_state_dict({k: tidu.tensor(v.numpy()) for k, v in olds[0].state_dict().items()})
    results = []
    for L, old in zip((torch, tidu), olds):
        new = L.nn.utils.parametrizations.weight_norm(L.nn.Linear(4, 3).double())
        keys = new.load_state_dict(old.state_dict())
        x = L.tensor(np.linspace(-1, 1, 8).reshape(2, 4))
        results.append((str(keys), new(x).detach().numpy(), old(x).detach().numpy()))
    assert results[0][0] == results[1][0] == "<All keys matched successfully>"
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-12)
    np.testing.assert_allclose(results[1][1], results[1][2], rtol=1e-12)
