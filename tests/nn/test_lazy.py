"""nn.Buffer, the uninitialized tensors and the lazy modules, against PyTorch."""

import copy

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error


def _to_tidu(sd):
    return {k: tidu.tensor(v.detach().numpy().copy()) for k, v in sd.items()}


def test_buffer_assignment_registers_as_torch():
    def make(L):
        class M(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = L.nn.Buffer(L.ones(2))
                self.b = L.nn.Buffer(L.zeros(3), persistent=False)
                self.c = L.ones(1)  # a plain tensor is an attribute, not a buffer
                self.register_buffer("d", L.nn.Buffer(L.ones(1), persistent=True), persistent=False)

        return M()

    ours, ref = make(tidu), make(torch)
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in ref.named_buffers()] == ["a", "b", "d"]
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["a"]
    ours.b = tidu.nn.Buffer(tidu.ones(3))  # reassigning a Buffer takes its persistence
    ref.b = torch.nn.Buffer(torch.ones(3))
    assert list(ours.state_dict()) == list(ref.state_dict()) == ["a", "b"]
    ours.a = tidu.zeros(2)  # a plain tensor into a buffer's name keeps it a buffer, persistent
    assert list(ours.state_dict()) == ["a", "b"] and ours.a.tolist() == [0.0, 0.0]
    for lib in (tidu, torch):
        t = lib.ones(2, requires_grad=True)
        b = lib.nn.Buffer(t)
        assert isinstance(b, lib.nn.Buffer) and isinstance(b, lib.Tensor) and b.requires_grad and b.is_leaf
        assert b.persistent and lib.nn.Buffer().shape == (0,)
        c = copy.deepcopy(lib.nn.Buffer(lib.ones(1), persistent=False))
        assert isinstance(c, lib.nn.Buffer) and c.persistent is False

    def clash(L):
        m = L.nn.Module()
        m.x = 1
        m.x = L.nn.Buffer(L.ones(1))

    assert_same_error(clash)


def test_uninitialized_tensors_as_torch():
    for lib in (tidu, torch):
        p = lib.nn.UninitializedParameter(dtype=lib.float64)
        assert repr(p) == "<UninitializedParameter>" and p.dtype == lib.float64 and p.requires_grad
        assert isinstance(p, lib.nn.Parameter) and lib.nn.parameter.is_lazy(p)
        p.materialize((2, 3))
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == lib.float64
        b = lib.nn.UninitializedBuffer(persistent=False)
        assert b.persistent is False and not b.requires_grad
        b.materialize((4,), dtype=lib.float64)
        assert type(b) is lib.Tensor and b.dtype == lib.float64 and not lib.nn.parameter.is_lazy(b)
        q = copy.deepcopy(lib.nn.UninitializedParameter(requires_grad=False))
        assert type(q) is lib.nn.UninitializedParameter and not q.requires_grad
    assert_same_error(lambda L: L.nn.UninitializedParameter().shape)
    assert_same_error(lambda L: L.nn.UninitializedBuffer().shape)


LAZY = [
    ("LazyLinear", (3,), {}, (4, 5)),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 6)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 6, 7)),
    ("LazyConv1d", (4, 2), {"groups": 2, "bias": False}, (6, 5)),
    ("LazyConv2d", (2, 3), {"stride": 2, "padding_mode": "reflect", "padding": 1}, (2, 3, 6, 6)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (2, 2), {"groups": 2}, (1, 4, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (5, 3)),
    ("LazyBatchNorm1d", (), {"affine": False, "momentum": None}, (4, 3, 2)),
    ("LazyBatchNorm2d", (), {"track_running_stats": False}, (3, 2, 4, 4)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyConv3d", (2, (1, 2, 2)), {"padding": (0, 1, 1)}, (2, 3, 2, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (1, 3, 2, 2, 2)),
    ("LazyBatchNorm3d", (), {}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY, ids=[f"{c[0]}-{c[2]}" for c in LAZY])
def test_lazy_module_materializes_as_torch(name, args, kwargs, shape):
    rng = np.random.default_rng(0)
    x0, x1 = rng.normal(size=shape), rng.normal(size=shape)
    ours, ref = getattr(tidu.nn, name)(*args, **kwargs).double(), getattr(torch.nn, name)(*args, **kwargs).double()
    assert repr(ours) == repr(ref)
    assert ours.has_uninitialized_params() == ref.has_uninitialized_params() is True
    assert list(ours.state_dict()) == list(ref.state_dict())
    assert {k: repr(v) for k, v in ours.state_dict().items() if tidu.nn.parameter.is_lazy(v)} == {
        k: repr(v) for k, v in ref.state_dict().items() if torch.nn.parameter.is_lazy(v)}
    ours(tidu.tensor(x0)), ref(torch.tensor(x0))
    assert type(ours).__name__ == type(ref).__name__ == name.removeprefix("Lazy")
    assert repr(ours) == repr(ref)
    assert not hasattr(ours, "_initialize_hook") and not ours._forward_pre_hooks
    ref_sd = ref.state_dict()
    assert list(ours.state_dict()) == list(ref_sd)
    for key, value in ours.state_dict().items():
        assert tuple(value.shape) == tuple(ref_sd[key].shape), key
        assert str(value.dtype).split(".")[1] == str(ref_sd[key].dtype).split(".")[1], key
        if "running" in key or "num_batches" in key:  # statistics of the same first batch
            np.testing.assert_allclose(value.numpy(), ref_sd[key].numpy(), rtol=1e-12, err_msg=key)
    ours.load_state_dict(_to_tidu(ref_sd))
    a, b = tidu.tensor(x1, requires_grad=True), torch.tensor(x1, requires_grad=True)
    out, expected = ours(a), ref(b)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    out.sum().backward(), expected.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_lazy_state_dict_round_trip_and_deepcopy():
    for lib in (tidu, torch):
        done = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        done(lib.ones(1, 4))
        lazy = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        twin = copy.deepcopy(lazy)
        assert twin[0].has_uninitialized_params() and twin[0].weight is not lazy[0].weight
        lazy.load_state_dict(done.state_dict())
        assert not lazy[0].has_uninitialized_params() and type(lazy[0]).__name__ == "LazyLinear"
        weight = lazy[0].weight.detach().clone()
        lazy(lib.ones(1, 4))  # the loaded weights are kept; the module becomes a Linear
        assert type(lazy[0]) is lib.nn.Linear and lazy[0].in_features == 4
        assert (lazy[0].weight == weight).all()
        # an uninitialized state dict loads into a lazy module and leaves it lazy
        fresh = lib.nn.Sequential(lib.nn.LazyLinear(3), lib.nn.ReLU(), lib.nn.LazyLinear(2))
        fresh.load_state_dict(twin.state_dict())
        assert fresh[0].has_uninitialized_params()

    def into_initialized(L):
        L.nn.Linear(2, 2).load_state_dict(L.nn.LazyLinear(2).state_dict())

    assert_same_error(into_initialized)


def test_optimizer_made_before_the_dry_run_as_torch():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    ref = torch.nn.Sequential(torch.nn.LazyLinear(3), torch.nn.Tanh(), torch.nn.LazyLinear(2)).double()
    ours = tidu.nn.Sequential(tidu.nn.LazyLinear(3), tidu.nn.Tanh(), tidu.nn.LazyLinear(2)).double()
    opts = [tidu.optim.Adam(ours.parameters(), lr=0.1), torch.optim.Adam(ref.parameters(), lr=0.1)]
    ref(torch.tensor(x)), ours(tidu.tensor(x))
    ours.load_state_dict(_to_tidu(ref.state_dict()))  # in place: the optimizer's tensors are the module's
    for _ in range(3):
        for lib, model, opt in ((tidu, ours, opts[0]), (torch, ref, opts[1])):
            opt.zero_grad()
            ((model(lib.tensor(x)) - lib.tensor(y)) ** 2).mean().backward()
            opt.step()
    for (k, a), (_, b) in zip(ours.named_parameters(), ref.named_parameters(), strict=True):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, err_msg=k)


def test_lazy_errors_as_torch():
    assert_same_error(lambda L: L.nn.LazyConv2d(4, 3)(L.ones(2, 3)), same_message=False)  # tidu.Size, torch.Size
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        tidu.nn.LazyConv2d(4, 3)(tidu.ones(2, 3))

    def mismatch(L):
        lazy = L.nn.LazyLinear(2)
        lazy.load_state_dict(L.nn.Linear(3, 2).state_dict())
        lazy(L.ones(1, 5))

    assert_same_error(mismatch)
    assert_same_error(lambda L: L.nn.LazyConv1d(4, 3, groups=2)(L.ones(1, 3, 5)))
    assert_same_error(lambda L: L.nn.LazyConvTranspose1d(4, 3)(L.ones(1, 2, 3, 5)), same_message=False)

    def half_initialized(L):
        class Half(L.nn.LazyLinear):
            def initialize_parameters(self, input):  # noqa: A002
                pass

        Half(2)(L.ones(1, 2))

    assert_same_error(half_initialized)
