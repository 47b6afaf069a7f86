"""What PyTorch scripts call at their start and around their loop: ``compile``, the cuDNN and
matmul-precision switches, the random stream's state and ``fork_rng``, ``testing.assert_close``,
``amp`` (``autocast``, ``GradScaler``), ``utils.checkpoint``, the samplers and ``DataParallel``,
each against PyTorch's behaviour."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import tidu


def test_compile_returns_what_it_is_given_and_decorates() -> None:
    model = tidu.nn.Linear(2, 2)
    assert tidu.compile(model) is model
    assert tidu.compile(model, mode="reduce-overhead", fullgraph=True, dynamic=False) is model

    @tidu.compile(backend="inductor")
    def f(x: Any) -> Any:
        return x * 3

    assert f(tidu.tensor([2.0])).item() == 6.0
    with pytest.raises(RuntimeError, match="callable"):
        tidu.compile(3)


def test_backend_switches_as_scripts_set_them() -> None:
    tidu.backends.cudnn.benchmark = True
    tidu.backends.cudnn.deterministic = True
    assert tidu.backends.cudnn.benchmark and not tidu.backends.cudnn.is_available()
    for L in (torch, tidu):  # noqa: N806 - the library
        before = L.get_float32_matmul_precision()
        try:
            L.set_float32_matmul_precision("high")
            assert L.get_float32_matmul_precision() == "high"
            assert L.backends.cuda.matmul.allow_tf32 is True
            L.set_float32_matmul_precision("highest")
            assert L.backends.cuda.matmul.allow_tf32 is False
        finally:
            L.set_float32_matmul_precision(before)
        with pytest.warns(UserWarning, match="not one of 'highest', 'high', or 'medium'"):
            L.set_float32_matmul_precision("low")
        assert L.get_float32_matmul_precision() == before


def test_rng_state_and_fork_rng_restore_the_stream() -> None:
    tidu.manual_seed(5)
    state = tidu.get_rng_state()
    first = tidu.rand(4)
    tidu.set_rng_state(state)
    np.testing.assert_array_equal(tidu.rand(4).numpy(), first.numpy())
    tidu.random.manual_seed(5)
    with tidu.random.fork_rng():
        inside = tidu.randn(3)
    np.testing.assert_array_equal(tidu.randn(3).numpy(), inside.numpy())
    with tidu.random.fork_rng(enabled=False):
        tidu.rand(1)
    assert tidu.random.initial_seed() == 5


@pytest.mark.parametrize("call", [
    "L.testing.assert_close(L.tensor([1.0]), L.tensor([1.1]))",
    "L.testing.assert_close(L.tensor([1.0, float('nan')]), L.tensor([1.0, float('nan')]))",
    "L.testing.assert_close(L.tensor([1, 2]), L.tensor([1, 3]))",
    "L.testing.assert_close(L.tensor([1.0], dtype=L.float64), L.tensor([1.001], dtype=L.float64), rtol=0, atol=1e-4)",
    "L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64))",
    "L.testing.assert_close(L.ones(2), L.ones(3))",
    "L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0]), rtol=1e-3)",
])
def test_assert_close_fails_as_torch(call: str) -> None:
    from tests.test_torch_oracle import errors_of

    ref, ours = errors_of(call)
    assert ours[0] is ref[0]
    assert ours[1].replace("tidu.", "torch.") == ref[1]


def test_assert_close_passes_as_torch() -> None:
    for L in (torch, tidu):  # noqa: N806 - the library
        L.testing.assert_close(L.tensor([1.0, 2.0]), L.tensor([1.0, 2.0 + 1e-6]))
        L.testing.assert_close(L.tensor([1.0, float("nan")]), L.tensor([1.0, float("nan")]), equal_nan=True)
        L.testing.assert_close([L.tensor(1.0), {"a": L.tensor([2])}], [L.tensor(1.0), {"a": L.tensor([2])}])
        L.testing.assert_close(L.tensor([1.0]), L.tensor([1.0], dtype=L.float64), check_dtype=False)


def test_grad_scaler_follows_torch_s_schedule() -> None:
    runs = []
    for L in (torch, tidu):  # noqa: N806 - the library
        w = L.tensor([1.0, 2.0], requires_grad=True)
        opt = L.optim.SGD([w], lr=0.1)
        scaler = L.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        scales = []
        for i in range(6):
            opt.zero_grad()
            with L.autocast("cpu", enabled=i % 2 == 0):
                loss = (w * w).sum() * (float("inf") if i == 2 else 1.0)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        runs.append((w.detach().numpy().copy(), scales, scaler.state_dict()))
    np.testing.assert_allclose(runs[1][0], runs[0][0])
    assert runs[1][1] == runs[0][1] and runs[1][2] == runs[0][2]
    off = tidu.amp.GradScaler(enabled=False)
    loss = tidu.tensor(2.0)
    assert off.scale(loss) is loss and off.state_dict() == {} and off.get_scale() == 1.0
    assert tidu.cuda.amp.GradScaler(init_scale=8.0).get_scale() == 8.0
    with tidu.cuda.amp.autocast():
        assert (tidu.ones(2) * 2).dtype is tidu.float32


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_gives_the_module_s_values_and_gradients(reentrant: bool) -> None:
    nets = []
    for L in (torch, tidu):  # noqa: N806 - the library
        L.manual_seed(0)
        nets.append(L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 4), L.nn.Sigmoid(),
                                    L.nn.Linear(4, 1)).double())
    nets[1].load_state_dict({k: tidu.tensor(v.numpy()) for k, v in nets[0].state_dict().items()})
    out = []
    for L, net in zip((torch, tidu), nets):  # noqa: N806 - the library
        ck = importlib.import_module(f"{L.__name__}.utils.checkpoint")
        x = L.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            h = ck.checkpoint(lambda a, s, net=net: net[0](a) * s, x, 2.0, use_reentrant=reentrant)
            y = ck.checkpoint_sequential(net[1:], 2, h, use_reentrant=reentrant)
        y.sum().backward()
        out.append([y.detach().numpy(), x.grad.numpy(), *[p.grad.numpy() for p in net.parameters()]])
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpoint_replays_dropout_with_the_same_mask(reentrant: bool) -> None:
    tidu.manual_seed(3)
    x = tidu.ones(1000, requires_grad=True)
    y = tidu.utils.checkpoint.checkpoint(lambda t: tidu.nn.functional.dropout(t, 0.5) * t, x, use_reentrant=reentrant)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy() != 0, y.detach().numpy() != 0)
    with tidu.no_grad():
        assert not tidu.utils.checkpoint.checkpoint(lambda t: t * 2, x, use_reentrant=reentrant).requires_grad


def _checkpointed(L: Any) -> tuple:  # noqa: N803 - the library
    ck = importlib.import_module(f"{L.__name__}.utils.checkpoint")
    w = L.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    x = L.tensor(np.linspace(-0.5, 0.7, 6).reshape(2, 3), requires_grad=True)
    return w, x, ck.checkpoint(lambda a: (a @ w).tanh() * 2, x * 1.0, use_reentrant=False)


def test_checkpoint_without_reentry_keeps_the_functions_graph() -> None:
    """``use_reentrant=False``: ``autograd.grad`` of a parameter, a backward of some inputs only
    (the parameter's ``.grad`` untouched) and a double backward, as PyTorch's (the reentrant
    variant refuses the first and writes every ``.grad``)."""
    out = []
    for L in (tidu, torch):  # noqa: N806 - the library
        w, x, y = _checkpointed(L)
        (gw,) = L.autograd.grad(y.sum(), w)
        w2, x2, y2 = _checkpointed(L)
        y2.sum().backward(inputs=[x2])
        w3, x3, y3 = _checkpointed(L)
        (g3,) = L.autograd.grad(y3.sum(), w3, create_graph=True)
        (g3 * g3).sum().backward()
        out.append([gw.numpy(), x2.grad.numpy(), w2.grad is None, w3.grad.numpy(), x3.grad.numpy()])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_checkpoint_without_use_reentrant_warns_as_pytorch_does() -> None:
    for L in (tidu, torch):  # noqa: N806 - the library
        ck = importlib.import_module(f"{L.__name__}.utils.checkpoint")
        with pytest.warns(UserWarning, match="the use_reentrant parameter should be passed explicitly"):
            ck.checkpoint(lambda t: t.sin(), L.ones(2, requires_grad=True))


def test_weighted_and_subset_samplers() -> None:
    from tidu.utils.data import SubsetRandomSampler, WeightedRandomSampler, get_worker_info

    tidu.manual_seed(0)
    counts = np.bincount(list(WeightedRandomSampler([0.1, 0.9, 0.4], 20000)), minlength=3) / 20000
    np.testing.assert_allclose(counts, np.array([0.1, 0.9, 0.4]) / 1.4, atol=0.015)
    assert sorted(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False)) == [0, 1, 2]
    assert len(WeightedRandomSampler([1.0, 2.0], 7)) == 7
    assert sorted(SubsetRandomSampler([3, 5, 7])) == [3, 5, 7] and get_worker_info() is None
    for call, exc in [(lambda m: m.WeightedRandomSampler([0.1, 0.9], 3, replacement=False), RuntimeError),
                      (lambda m: m.WeightedRandomSampler([1.0], 0), ValueError),
                      (lambda m: m.WeightedRandomSampler([[1.0]], 1), ValueError)]:
        for module in (torch.utils.data, tidu.utils.data):
            with pytest.raises(exc):
                list(call(module))


def test_data_parallel_is_the_module_on_one_device() -> None:
    ref = torch.nn.DataParallel(torch.nn.Linear(2, 1))
    net = tidu.nn.DataParallel(tidu.nn.Linear(2, 1))
    assert repr(net) == repr(ref) and sorted(net.state_dict()) == sorted(ref.state_dict())
    net.load_state_dict({k: tidu.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    x = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(net(tidu.tensor(x)).detach().numpy(), ref(torch.tensor(x)).detach().numpy())
    assert net.module is net._modules["module"]


def test_flags_keep_what_is_set_as_torch() -> None:
    for lib in (torch, tidu):
        before = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        assert lib.is_warn_always_enabled() is True
        lib.set_warn_always(before)
        assert lib.is_anomaly_enabled() is False and lib.is_anomaly_check_nan_enabled() is True
        lib.set_anomaly_enabled(True, check_nan=False)
        assert lib.is_anomaly_enabled() is True and lib.is_anomaly_check_nan_enabled() is False
        lib.set_anomaly_enabled(False)
        assert lib.is_anomaly_enabled() is False and lib.is_anomaly_check_nan_enabled() is True
        assert isinstance(lib.get_num_interop_threads(), int) and lib.get_num_interop_threads() >= 1


def test_set_num_interop_threads_is_kept_and_set_once_as_torch() -> None:
    import subprocess
    import sys

    script = """
import sys, {lib} as L
try:
    L.set_num_interop_threads(0)
except RuntimeError as e:
    print(e)
L.set_num_interop_threads(3)
print(L.get_num_interop_threads())
try:
    L.set_num_interop_threads(2)
except RuntimeError as e:
    print(e)
"""
    outputs = [subprocess.run([sys.executable, "-c", script.format(lib=lib)], capture_output=True, text=True,
                              check=True).stdout for lib in ("torch", "tidu")]
    assert outputs[1] == outputs[0]
    assert "3\n" in outputs[1]


def test_set_default_tensor_type_sets_the_dtype_as_torch() -> None:
    try:
        for ours, theirs in ((tidu.DoubleTensor, torch.DoubleTensor), ("torch.DoubleTensor", "torch.DoubleTensor"),
                             ("tidu.FloatTensor", "torch.FloatTensor")):
            with pytest.warns(UserWarning, match="deprecated"):
                tidu.set_default_tensor_type(ours)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.set_default_tensor_type(theirs)
            assert str(tidu.get_default_dtype()).split(".")[1] == str(torch.get_default_dtype()).split(".")[1]
            assert str(tidu.tensor([1.0]).dtype).split(".")[1] == str(torch.tensor([1.0]).dtype).split(".")[1]
        for bad, error in ((tidu.LongTensor, TypeError), ("torch.LongTensor", TypeError), (tidu.float64, TypeError),
                           ("foo.FloatTensor", ModuleNotFoundError), ("torch.NoSuchTensor", AttributeError)):
            torch_bad = bad if isinstance(bad, str) else {tidu.LongTensor: torch.LongTensor}.get(bad, torch.float64)
            with pytest.raises(error):
                tidu.set_default_tensor_type(bad)
            with pytest.raises(error):
                torch.set_default_tensor_type(torch_bad)
    finally:
        tidu.set_default_dtype(tidu.float32)
        torch.set_default_dtype(torch.float32)


def test_set_default_tensor_type_with_a_cuda_type_moves_the_default_device() -> None:
    try:
        with pytest.warns(UserWarning):
            tidu.set_default_tensor_type(tidu.cuda.DoubleTensor)  # the simulator (conftest)
        t = tidu.zeros(1)
        assert t.device.type == "cuda" and t.dtype is tidu.float64
        with pytest.warns(UserWarning):
            tidu.set_default_tensor_type("torch.FloatTensor")
        t = tidu.zeros(1)
        assert t.device.type == "cpu" and t.dtype is tidu.float32
    finally:
        tidu.set_default_device("cpu")
        tidu.set_default_dtype(tidu.float32)


def test_top_level_aliases() -> None:
    assert tidu.GradScaler is tidu.amp.GradScaler and torch.GradScaler is torch.amp.GradScaler
    assert tidu.set_flush_denormal(True) is False and tidu.set_flush_denormal(False) is False
    with pytest.raises(TypeError, match="mode"):
        tidu.set_flush_denormal("yes")
