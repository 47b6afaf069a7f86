"""``Module`` and ``Parameter``: registration, traversal, modes, state dicts, conversion, repr."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tidu import nn

from . import copy_weights, to_tidu


def _mlp(lib):  # noqa: ANN001, ANN202
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.norm = nn.BatchNorm1d(2)
        self.scale = nn.Parameter(tidu.ones(2))
        self.register_buffer("step", tidu.zeros(1))
        self.register_buffer("scratch", tidu.zeros(1), persistent=False)

    def forward(self, x):  # noqa: ANN001, ANN201
        return self.norm(self.fc(x)) * self.scale


class _TorchBlock(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.norm = torch.nn.BatchNorm1d(2)
        self.scale = torch.nn.Parameter(torch.ones(2))
        self.register_buffer("step", torch.zeros(1))
        self.register_buffer("scratch", torch.zeros(1), persistent=False)

    def forward(self, x):  # noqa: ANN001, ANN201
        return self.norm(self.fc(x)) * self.scale


def test_parameter_is_a_leaf_tensor_that_shares_storage():
    data = tidu.tensor([1.0, 2.0])
    p = nn.Parameter(data)
    assert isinstance(p, tidu.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert (p * 2).__class__ is tidu.Tensor
    with tidu.no_grad():
        p.mul_(3.0)
    assert data.tolist() == [3.0, 6.0]


def test_names_match_torch():
    block, ref = _Block(), _TorchBlock()
    for fn in ("named_parameters", "named_buffers", "named_children", "named_modules"):
        assert [n for n, _ in getattr(block, fn)()] == [n for n, _ in getattr(ref, fn)()], fn
    assert list(block.state_dict()) == list(ref.state_dict())
    assert len(list(block.parameters())) == 5 and len(list(block.parameters(recurse=False))) == 1
    assert len(list(block.buffers())) == 5 and len(list(block.children())) == 2
    assert [type(m).__name__ for m in block.modules()] == ["_Block", "Linear", "BatchNorm1d"]
    assert list(_mlp(tidu).state_dict()) == list(_mlp(torch).state_dict())


def test_shared_parameters_are_listed_once():
    fc = nn.Linear(2, 2)
    net = nn.Sequential(fc, fc)
    assert [n for n, _ in net.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(net.named_parameters(remove_duplicate=False))) == 4


def test_setattr_registration_and_deletion():
    m = nn.Module()
    m.w = nn.Parameter(tidu.zeros(2))
    m.sub = nn.Linear(1, 1)
    m.plain = tidu.zeros(1)
    assert [n for n, _ in m.named_parameters()] == ["w", "sub.weight", "sub.bias"]
    assert "plain" not in m.state_dict()
    m.w = None
    assert [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    del m.sub
    assert list(m.parameters()) == [] and not hasattr(m, "sub")
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'bias'"):
        nn.Linear(1, 1).bias = tidu.zeros(1)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        _ = m.nothing
    with pytest.raises(KeyError, match='buffer name can'):
        m.register_buffer("a.b", tidu.zeros(1))


def test_train_eval_and_requires_grad():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert net.training and net[1].training
    assert net.eval() is net and not net[1].training
    net.train()
    assert all(m.training for m in net.modules())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_zero_grad_and_apply():
    net = _mlp(tidu)
    net(tidu.ones(2, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "ReLU", "Linear", "Sequential"]
    net.apply(lambda m: nn.init.zeros_(m.bias) if isinstance(m, nn.Linear) else None)
    assert not net[2].bias.detach().numpy().any()


def test_state_dict_round_trip_from_torch():
    torch.manual_seed(0)
    ref = _mlp(torch)
    net = _mlp(tidu)
    result = net.load_state_dict({k: v.numpy() if k.endswith("bias") else to_tidu(v) for k, v in ref.state_dict().items()})
    assert result.missing_keys == [] and result.unexpected_keys == []
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), ref.state_dict()[k].numpy())
        assert not v.requires_grad
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(net(tidu.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    # state_dict tensors share storage; loading keeps the Parameter objects
    weight = net[0].weight
    net.load_state_dict(net.state_dict())
    assert net[0].weight is weight and weight.requires_grad


def test_load_state_dict_errors_like_torch():
    net, ref = _mlp(tidu), _mlp(torch)
    bad = {k: v for k, v in ref.state_dict().items() if k != "2.bias"}
    bad["extra"] = torch.zeros(1)
    bad["0.weight"] = torch.zeros(5, 4)
    with pytest.raises(RuntimeError) as theirs:
        ref.load_state_dict(bad)
    with pytest.raises(RuntimeError) as ours:
        net.load_state_dict({k: to_tidu(v) for k, v in bad.items()})
    msg = str(ours.value)
    assert msg.startswith("Error(s) in loading state_dict for Sequential:")
    for part in ('Missing key(s) in state_dict: "2.bias".', 'Unexpected key(s) in state_dict: "extra".',
                 "size mismatch for 0.weight: copying a param with shape tidu.Size([5, 4]) from checkpoint, "
                 "the shape in current model is tidu.Size([8, 4])."):
        assert part in msg
        assert part.replace("tidu.", "torch.") in str(theirs.value)
    ok = {k: to_tidu(v) for k, v in ref.state_dict().items() if k != "2.bias"}
    ok["extra"] = tidu.zeros(1)
    result = net.load_state_dict(ok, strict=False)
    assert result.missing_keys == ["2.bias"] and result.unexpected_keys == ["extra"]


def test_buffers_load_and_batchnorm_counter_dtype():
    torch.manual_seed(0)
    ref = _TorchBlock()
    ref(torch.randn(4, 3))
    block = _Block()
    copy_weights(ref, block)
    assert block.norm.num_batches_tracked.dtype is tidu.int64
    assert block.norm.num_batches_tracked.item() == 1
    np.testing.assert_allclose(block.norm.running_mean.numpy(), ref.norm.running_mean.numpy())


def test_to_float_double():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    net(tidu.ones(2, 2)).sum().backward()
    assert net.double() is net
    assert all(p.dtype is tidu.float64 for p in net.parameters())
    assert all(p.grad.dtype is tidu.float64 for p in net.parameters())
    assert net[1].running_mean.dtype is tidu.float64
    assert net[1].num_batches_tracked.dtype is tidu.int64
    assert net(tidu.ones(2, 2, dtype=tidu.float64)).dtype is tidu.float64
    net.to(tidu.float32)
    assert all(p.dtype is tidu.float32 for p in net.parameters()) and all(p.is_leaf for p in net.parameters())
    net.to("cpu")
    with pytest.raises(TypeError, match="floating point"):
        net.to(tidu.int64)
    layer = nn.Linear(2, 2, dtype=tidu.float64)
    assert layer.weight.dtype is tidu.float64 and layer.bias.dtype is tidu.float64


def test_repr_matches_torch():
    block, ref = _Block(), _TorchBlock()
    assert repr(block).replace("_Block", "X") == repr(ref).replace("_TorchBlock", "X")
    assert repr(_mlp(tidu)) == repr(_mlp(torch))
    for make in (lambda lib: lib.nn.LayerNorm((3, 4)), lambda lib: lib.nn.Embedding(5, 2, padding_idx=-1),
                 lambda lib: lib.nn.MultiheadAttention(4, 2), lambda lib: lib.nn.GELU("tanh"),
                 lambda lib: lib.nn.Dropout(0.2), lambda lib: lib.nn.Flatten(), lambda lib: lib.nn.Softmax(1),
                 lambda lib: lib.nn.BatchNorm2d(3, momentum=None), lambda lib: lib.nn.Bilinear(2, 3, 4),
                 lambda lib: lib.nn.ModuleDict({"a": lib.nn.ReLU()}), lambda lib: lib.nn.CrossEntropyLoss(),
                 lambda lib: lib.nn.LeakyReLU(), lambda lib: lib.nn.ELU(0.5), lambda lib: lib.nn.Softplus(2, 10),
                 lambda lib: lib.nn.TransformerEncoderLayer(8, 2, 16)):
        assert repr(make(tidu)) == repr(make(torch))


def test_containers():
    layers = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])
    layers.append(nn.Tanh())
    layers.insert(0, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "ReLU", "Tanh"]
    assert [type(m).__name__ for m in layers[1:3]] == ["Linear", "ReLU"]
    assert isinstance(layers[-1], nn.Tanh)
    del layers[0]
    assert [n for n, _ in layers.named_parameters()] == ["0.weight", "0.bias"]
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"]
    assert isinstance(seq[-1], nn.ReLU) and len(seq[:1]) == 1
    seq.append(nn.Sigmoid())
    assert len(seq) == 3
    heads = nn.ModuleDict()
    heads["x"] = nn.Linear(1, 1)
    heads.update([("y", nn.ReLU())])
    assert "x" in heads and list(heads) == ["x", "y"] and len(heads) == 2
    assert isinstance(heads.pop("y"), nn.ReLU)
    with pytest.raises(IndexError):
        layers[7]


def test_module_without_forward_and_call():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(tidu.ones(1))


def test_parameter_containers_match_torch_names():
    for lib in (tidu, torch):
        params = lib.nn.ParameterList([lib.ones(2), lib.nn.Parameter(lib.zeros(3))])
        params.append(lib.ones(1))
        holder = lib.nn.Module()
        holder.params = params
        holder.table = lib.nn.ParameterDict({"a": lib.ones(2)})
        holder.table["b"] = lib.zeros(1)
        names = [n for n, _ in holder.named_parameters()]
        assert names == ["params.0", "params.1", "params.2", "table.a", "table.b"]
        assert all(p.requires_grad for p in holder.parameters())
        assert len(params) == 3 and params[-1].shape == (1,) and "b" in holder.table
        assert list(holder.table.keys()) == ["a", "b"]


def _container_ops(L: Any) -> list:
    nn = L.nn
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    seq = nn.Sequential(a, b)
    out = [[type(m).__name__ for m in seq + nn.Sequential(c)], [type(m).__name__ for m in seq * 2],
           [type(m).__name__ for m in 2 * seq], (seq * 2)[0] is (seq * 2)[2]]
    seq2 = nn.Sequential(a)
    seq2 += nn.Sequential(b)
    seq2 *= 2
    seq2.insert(1, c)
    seq2.insert(-1, nn.Identity())
    popped = seq2.pop(0)
    seq2.extend([nn.ELU()])
    out += [[type(m).__name__ for m in seq2], type(popped).__name__, list(seq2._modules)]
    ml = nn.ModuleList([a]) + nn.ModuleList([b, c])
    out += [[type(m).__name__ for m in ml], type(ml.pop(1)).__name__, len(ml)]
    pl = nn.ParameterList([nn.Parameter(L.zeros(1))])
    pl += [nn.Parameter(L.ones(2))]
    pd = nn.ParameterDict({"x": nn.Parameter(L.zeros(1)), "y": nn.Parameter(L.ones(2))})
    pd |= {"z": nn.Parameter(L.ones(3))}
    out += [len(pl), list(reversed(pd)), pd.get("q", 5), tuple(pd.setdefault("w", nn.Parameter(L.zeros(4))).shape),
            pd.popitem()[0], list(pd.copy().keys()), list(pd.fromkeys(["a", "b"]).keys()), repr(pl).replace("torch", "tidu")]
    for bad in (lambda: seq + nn.ModuleList([a]), lambda: seq * 0, lambda: seq * 1.5, lambda: seq.insert(9, a)):
        try:
            bad()
            out.append("ok")
        except Exception as e:  # noqa: BLE001 - the class is compared with PyTorch's
            out.append(type(e).__name__)
    return out


def test_container_operators_and_methods_match_torch() -> None:
    assert _container_ops(tidu) == _container_ops(torch)


def test_forward_pre_hook_with_kwargs_and_prepend_match_torch() -> None:
    def run(L: Any) -> list:
        calls = []
        layer = L.nn.Linear(2, 2)

        def scale(module: Any, args: Any, kwargs: Any) -> Any:
            calls.append(("kwargs", sorted(kwargs)))
            return (args[0] * 2,), kwargs

        layer.register_forward_pre_hook(scale, with_kwargs=True)
        layer.register_forward_pre_hook(lambda m, args: calls.append("first"), prepend=True)
        layer.register_forward_pre_hook(lambda m, args, kwargs: 3, with_kwargs=True)
        try:
            layer(L.ones(1, 2))
        except RuntimeError as e:
            calls.append(str(e))
        return calls

    assert run(tidu) == run(torch)


def test_extra_state_is_saved_and_loaded_like_torch() -> None:
    def run(L: Any) -> list:
        class Counter(L.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = L.nn.Linear(1, 1)
                self.count = 3

            def get_extra_state(self) -> Any:
                return {"count": self.count}

            def set_extra_state(self, state: Any) -> None:
                self.count = state["count"]

        net = L.nn.Sequential(Counter())
        state = net.state_dict()
        fresh = L.nn.Sequential(Counter())
        fresh[0].count = 0
        fresh.load_state_dict(state)
        keys = fresh.load_state_dict({k: v for k, v in state.items() if "extra" not in k}, strict=False)
        return [list(state), state["0._extra_state"], fresh[0].count, list(keys.missing_keys)]

    assert run(tidu) == run(torch)
