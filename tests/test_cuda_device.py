"""Tensors on ``device='cuda'`` (the simulator in CI, a GPU through the device tool): placement,
transfers and their gradients, views and in-place writes, errors naming both devices, printing,
zero-copy export, and the same gradients as on the CPU."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import tidu

pytestmark = pytest.mark.skipif(not tidu.cuda.is_available(), reason="needs a GPU or the CUDA simulator")


def test_creation_places_tensors_on_the_device() -> None:
    for x in (tidu.zeros(2, 3, device="cuda"), tidu.ones(2, device=tidu.device("cuda")),
              tidu.full((2,), 7.0, device="cuda:0"), tidu.tensor([1, 2], device="cuda"),
              tidu.arange(4, device="cuda"), tidu.randn(3, device="cuda"), tidu.eye(2, device="cuda")):
        assert x.device == tidu.device("cuda", 0) and x.is_cuda
    like = tidu.zeros_like(tidu.ones(2, device="cuda"))
    assert like.device.type == "cuda" and like.tolist() == [0.0, 0.0]
    assert tidu.ones(2, device="cuda").new_zeros(3).device.type == "cuda"
    assert tidu.full((2,), 2.5, device="cuda").tolist() == [2.5, 2.5]
    assert tidu.tensor([True, False], device="cuda").tolist() == [True, False]


def test_transfers_round_trip_and_are_differentiable() -> None:
    host = tidu.tensor([1.0, -2.0, 3.0], requires_grad=True)
    dev = host.cuda()
    assert dev.device.type == "cuda" and dev.grad_fn is not None
    back = (dev * dev).cpu()
    assert back.device.type == "cpu" and back.tolist() == [1.0, 4.0, 9.0]
    back.backward(tidu.ones(3))
    assert host.grad.device.type == "cpu" and host.grad.tolist() == [2.0, -4.0, 6.0]
    assert dev.to("cuda") is dev and host.to("cpu") is host
    assert host.detach().to("cuda", tidu.float64).dtype is tidu.float64


def test_leaf_on_the_device_gets_its_gradient_there() -> None:
    x = tidu.tensor([0.5, 1.0, 2.0], device="cuda", requires_grad=True)
    y = (x * 3 + 1).exp() / x
    y.backward(tidu.ones_like(y))
    xt = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float32, requires_grad=True)
    ((xt * 3 + 1).exp() / xt).backward(torch.ones(3))
    assert x.grad.device.type == "cuda"
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-6)


def test_mixing_devices_names_both() -> None:
    a, b = tidu.ones(2), tidu.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="cuda:0 and cpu|cpu and cuda:0"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        tidu.matmul(tidu.ones(2, 2, device="cuda"), tidu.ones(2, 2))


def test_zero_dim_cpu_tensors_join_device_operands() -> None:
    x = tidu.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    s = tidu.tensor(3.0, requires_grad=True)
    y = x * s
    assert y.device.type == "cuda" and y.tolist() == [3.0, 6.0]
    y.backward(tidu.ones(2, device="cuda"))
    assert s.grad.device.type == "cpu" and s.grad.item() == 3.0
    assert x.grad.tolist() == [3.0, 3.0]


def test_numpy_needs_cpu_first() -> None:
    x = tidu.ones(2, device="cuda")
    with pytest.raises(TypeError, match="Use Tensor.cpu"):
        x.numpy()
    assert x.cpu().numpy().tolist() == [1.0, 1.0]
    assert tidu.ones(1, device="cuda").item() == 1.0


def test_printing_shows_the_device() -> None:
    assert repr(tidu.tensor([1.0, 2.0], device="cuda")) == "tensor([1., 2.], device='cuda:0')"
    assert repr(tidu.tensor([1, 2], device="cuda", dtype=tidu.int32)) == (
        "tensor([1, 2], device='cuda:0', dtype=tidu.int32)"
    )
    x = tidu.tensor([1.0], device="cuda", requires_grad=True)
    assert repr(x * 2) == "tensor([2.], device='cuda:0', grad_fn=<mul>)"


def test_views_share_storage_and_writes_reach_the_base() -> None:
    base = tidu.arange(6.0, device="cuda").reshape(2, 3)
    t = base.t()
    assert not t.is_contiguous() and t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    column = base[:, 1]
    column.mul_(10)
    assert base.tolist() == [[0.0, 10.0, 2.0], [3.0, 40.0, 5.0]]
    base += 1
    assert column.tolist() == [11.0, 41.0]
    wide = tidu.ones(3, device="cuda").expand(2, 3)
    assert (wide + base).tolist() == [[2.0, 12.0, 4.0], [5.0, 42.0, 7.0]]


def test_in_place_ops_keep_gradients_right() -> None:
    def run(device: str) -> list:
        x = tidu.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
        y = x * 2
        y.add_(1)
        y[1:] *= y[:2].detach()
        y.backward(tidu.ones(3, device=device))
        return x.grad.tolist()

    assert run("cuda") == run("cpu")


def test_cuda_array_interface_is_zero_copy() -> None:
    x = tidu.arange(4.0, device="cuda")
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (4,) and cai["typestr"] == "<f4"
    assert tidu.as_tensor(x) is x
    with pytest.raises(AttributeError):
        tidu.ones(2).__cuda_array_interface__  # noqa: B018


def test_dlpack_on_the_device_points_to_the_cuda_array_interface() -> None:
    x = tidu.arange(4.0, device="cuda")
    assert x.__dlpack_device__() == (2, 0)
    with pytest.raises(BufferError, match="__cuda_array_interface__"):
        x.__dlpack__()

    class Producer:  # a CUDA array of another library: DLPack and the interface
        def __init__(self, t: tidu.Tensor) -> None:
            self.__cuda_array_interface__ = t.__cuda_array_interface__
            self.copy_to_host = t.cpu().numpy  # what the simulator reads (its arrays have no interface)

        def __dlpack__(self, **_: object) -> None:
            raise AssertionError("read through __cuda_array_interface__")

        def __dlpack_device__(self) -> tuple[int, int]:
            return (2, 0)

    back = tidu.from_dlpack(Producer(x))
    assert back.device.type == "cuda" and back.tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("dtype", [tidu.float32, tidu.float64, tidu.int32, tidu.int64, tidu.bool])
def test_elementwise_dtypes_match_cpu(dtype) -> None:
    rng = np.random.default_rng(0)
    a = tidu.tensor(rng.integers(-5, 6, (3, 4)), dtype=dtype)
    b = tidu.tensor(rng.integers(1, 6, (3, 4)), dtype=dtype)
    ops = [lambda x, y: x == y, lambda x, y: x < y, lambda x, y: tidu.maximum(x, y), lambda x, y: tidu.where(x > y, x, y)]
    if dtype is not tidu.bool:
        ops += [lambda x, y: x + y, lambda x, y: x * y, lambda x, y: -x, lambda x, y: x // y, lambda x, y: x % y,
                lambda x, y: x.abs(), lambda x, y: x.float() / y]
    for op in ops:
        cpu = op(a, b)
        gpu = op(a.cuda(), b.cuda())
        assert gpu.device.type == "cuda" and gpu.dtype is cpu.dtype
        np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), rtol=1e-6)


def test_rounding_and_conversions_match_cpu() -> None:
    x = tidu.tensor([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, -3.7, 3.7, 1e20, float("inf"), float("nan")])
    for op in (tidu.round, tidu.floor, tidu.ceil, tidu.trunc, tidu.sign, lambda t: t.bool().float(),
               lambda t: t.double()):
        cpu, gpu = op(x).numpy(), op(x.cuda()).cpu().numpy()
        np.testing.assert_array_equal(gpu, cpu)
        np.testing.assert_array_equal(np.signbit(gpu), np.signbit(cpu))
    finite = x[:9]  # float -> int of values out of range is undefined (in C, numpy and PyTorch)
    np.testing.assert_array_equal(finite.cuda().long().cpu().numpy(), finite.long().numpy())


def test_out_of_memory_is_a_clear_error_and_the_process_goes_on() -> None:
    with pytest.raises(tidu.cuda.OutOfMemoryError, match="out of memory"):
        tidu.empty(2**46, device="cuda")
    assert issubclass(tidu.cuda.OutOfMemoryError, RuntimeError)
    assert (tidu.ones(3, device="cuda") * 2).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("make", [
    lambda ps: tidu.optim.SGD(ps, lr=0.1),
    lambda ps: tidu.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
    lambda ps: tidu.optim.Adam(ps, lr=0.05, amsgrad=True),
    lambda ps: tidu.optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    lambda ps: tidu.optim.Adagrad(ps, lr=0.1),
], ids=["sgd", "sgd-momentum", "adam", "rmsprop", "adagrad"])
def test_training_steps_match_the_cpu(make) -> None:
    """An MLP with cross-entropy trained a few steps on each device: same losses and weights."""
    def train(device: str) -> tuple[list[float], list[np.ndarray]]:
        tidu.manual_seed(0)
        model = tidu.nn.Sequential(tidu.nn.Linear(6, 8), tidu.nn.ReLU(), tidu.nn.Linear(8, 3)).to(device)
        opt = make(model.parameters())
        rng = np.random.default_rng(0)
        x = tidu.tensor(rng.standard_normal((5, 6)), dtype=tidu.float32, device=device)
        y = tidu.tensor(rng.integers(0, 3, 5), device=device)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = tidu.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]

    (l_cpu, w_cpu), (l_gpu, w_gpu) = train("cpu"), train("cuda")
    np.testing.assert_allclose(l_gpu, l_cpu, rtol=1e-5)
    for a, b in zip(w_gpu, w_cpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_cross_entropy_copies_a_target_to_the_host_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """The class-index check is made on a host copy (a synchronization) the first time a target is
    seen, and again only after the target was written; out-of-range classes still raise."""
    from tidu.backends.cuda.memory import CudaArray

    copies = []
    to_host = CudaArray.copy_to_host
    monkeypatch.setattr(CudaArray, "copy_to_host", lambda self: copies.append(self.shape) or to_host(self))
    logits = tidu.randn(4, 3, device="cuda")
    target = tidu.tensor([0, 2, 1, 2], device="cuda")
    for _ in range(3):
        tidu.nn.functional.cross_entropy(logits, target)
    assert copies == [(4,)]
    target[1] = 3  # written: checked again, and refused
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        tidu.nn.functional.cross_entropy(logits, target)
    target[1] = 1
    tidu.nn.functional.cross_entropy(logits, target)
    assert len(copies) == 3
    shared = tidu.tensor([0, 2, 1, 2], device="cuda")
    assert shared.__cuda_array_interface__  # handed out: another library may write it, no version
    for _ in range(2):
        tidu.nn.functional.cross_entropy(logits, shared)
    assert len(copies) == 5, "a target shared with another library is checked at every use"


def test_backward_seed_launches_nothing_and_never_leaks_into_a_grad(monkeypatch: pytest.MonkeyPatch) -> None:
    """``loss.backward()`` seeds with a cached array of ones (no fill launch per step); a ``.grad``
    that would be that array gets a copy of its own, so writing into it changes no later seed."""
    from tidu.backends.cuda import elementwise

    x = tidu.tensor([0.5, -1.0], device="cuda", requires_grad=True)
    (x * x).sum().backward()
    fills = []
    fill = elementwise.fill
    monkeypatch.setattr(elementwise, "fill", lambda **kw: fills.append(kw) or fill(**kw))
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [1.0, -2.0]
    leaf = tidu.tensor(2.0, device="cuda", requires_grad=True)
    leaf.backward()
    leaf.grad.mul_(5.0)  # its own memory
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [1.0, -2.0] and leaf.grad.item() == 5.0 and not fills


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_linear_weight_gradient_is_the_product_itself(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled backward computes the weight's gradient as a product in the weight's layout
    (no transposed view): ``.grad`` is the matrix product's own array, with the right values."""
    from tidu.autograd import compiled
    from tidu.core import programs

    monkeypatch.setattr(programs, "ENABLED", True)  # about the compiled step, even under TIDU_CACHE=0

    tidu.manual_seed(0)
    layer = tidu.nn.Linear(4, 3).to(device)
    x = tidu.randn(5, 4, device=device)
    for _ in range(2):
        layer.zero_grad()
        layer(x).square().sum().backward()
    step = next(reversed(compiled._steps.values()))
    made = {o: instr for instr in step.program for o in instr.outs}
    products = [made[slot].app.prim.name for _, slot, _ in step.results if slot in made and made[slot].app]
    assert "dot_general" in products and "transpose" not in products
    expected = (2 * (x @ layer.weight.t() + layer.bias)).t() @ x
    np.testing.assert_allclose(layer.weight.grad.cpu().numpy(), expected.detach().cpu().numpy(), rtol=1e-5)


def test_load_state_dict_copies_across_devices() -> None:
    """A state on one device loads into a module on the other (PyTorch's ``copy_``), keeping the
    module's device and dtype; it was an AttributeError from the copy kernel."""
    cpu = tidu.nn.Linear(3, 2)
    gpu = tidu.nn.Linear(3, 2, dtype=tidu.float64).cuda()
    gpu.load_state_dict(cpu.state_dict())
    assert gpu.weight.device.type == "cuda" and gpu.weight.dtype is tidu.float64
    np.testing.assert_allclose(gpu.weight.detach().cpu().numpy(), cpu.weight.detach().numpy(), rtol=1e-7)
    back = tidu.nn.Linear(3, 2)
    back.load_state_dict(gpu.state_dict())
    assert back.bias.device.type == "cpu" and back.bias.dtype is tidu.float32
    np.testing.assert_allclose(back.bias.detach().numpy(), cpu.bias.detach().numpy(), rtol=1e-7)


def test_memory_counters_follow_the_tensors() -> None:
    """Bytes of live tensors' blocks (512-byte rounded), the peak since reset, and the reserved
    bytes; PyTorch's memory_stats keys agree with them. The collector is held off: freeing an
    earlier test's arrays during this one would move the counters under it."""
    gc.collect()
    gc.disable()
    try:
        _check_memory_counters()
    finally:
        gc.enable()


def _check_memory_counters() -> None:
    tidu.cuda.synchronize()
    tidu.cuda.empty_cache()
    ooms = tidu.cuda.memory_stats()["num_ooms"]  # an earlier test may have run out on purpose
    before = tidu.cuda.memory_allocated()
    tidu.cuda.reset_peak_memory_stats()
    assert tidu.cuda.max_memory_allocated() == before
    x = tidu.ones(1000, device="cuda")  # 4000 bytes: a block of 4096
    assert tidu.cuda.memory_allocated() == before + 4096
    assert tidu.cuda.max_memory_allocated() == before + 4096
    assert tidu.cuda.memory_reserved() >= tidu.cuda.memory_allocated()
    stats = tidu.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == before + 4096
    assert stats["allocated_bytes.all.peak"] == tidu.cuda.max_memory_allocated()
    assert stats["reserved_bytes.all.current"] == tidu.cuda.memory_reserved()
    assert stats["reserved_bytes.all.peak"] == tidu.cuda.max_memory_reserved() >= tidu.cuda.memory_reserved()
    assert stats["allocation.all.current"] >= 1 and stats["num_ooms"] == ooms
    del x
    assert tidu.cuda.memory_allocated() == before
    assert tidu.cuda.max_memory_allocated() == before + 4096
    assert tidu.cuda.memory_stats()["allocation.all.current"] == stats["allocation.all.current"] - 1
    tidu.cuda.reset_peak_memory_stats()
    assert tidu.cuda.max_memory_allocated() == before


def test_device_queries_streams_and_seeds() -> None:
    assert tidu.cuda.is_initialized()
    tidu.cuda.init()
    tidu.cuda.set_device(0)
    tidu.cuda.set_device("cuda:0")
    with pytest.raises(ValueError, match="tidu uses one GPU"):
        tidu.cuda.set_device(1)
    props = tidu.cuda.get_device_properties(0)
    assert props.name == tidu.cuda.get_device_name() and props.total_memory > 0 and props.multi_processor_count >= 1
    assert tidu.cuda.get_device_capability() == (props.major, props.minor)
    free, total = tidu.cuda.mem_get_info()
    assert 0 <= free <= total == props.total_memory
    s = tidu.cuda.current_stream()
    assert s == tidu.cuda.default_stream() and s.query()
    with tidu.cuda.stream(tidu.cuda.Stream()):
        y = tidu.ones(2, device="cuda") * 3
    s.wait_stream(tidu.cuda.Stream())
    s.synchronize()
    assert y.tolist() == [3.0, 3.0]
    state = tidu.cuda.get_rng_state()
    a = tidu.rand(3, device="cuda")
    tidu.cuda.set_rng_state(state)
    assert tidu.rand(3, device="cuda").tolist() == a.tolist()
    tidu.cuda.seed_all()
    tidu.cuda.seed()
    assert tidu.cuda.initial_seed() == tidu.initial_seed()


def test_without_a_device_queries_raise_and_counters_read_zero() -> None:
    """In a process without CUDA (no simulator, and no driver here, or a check of the driver's
    answer where there is one): PyTorch's CUDA build raises on device queries, and its memory
    counters read 0 before CUDA is set up."""
    import subprocess
    import sys

    script = """
import tidu
c = tidu.cuda
print(c.memory_allocated(), c.max_memory_allocated(), c.memory_reserved(), c.memory_stats(), c.is_initialized())
for f in (c.get_device_properties, c.get_device_capability, c.mem_get_info, c.current_stream, c.init):
    try:
        f()
        print("ok")
    except RuntimeError as e:
        print(type(e).__name__)
"""
    env = {**__import__("os").environ, "NUMBA_ENABLE_CUDASIM": "0"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env).stdout
    lines = out.splitlines()
    assert lines[0] == "0 0 0 {} False"
    has_gpu = "ok" in lines[1:]
    assert lines[1:] == (["ok"] * 5 if has_gpu else ["RuntimeError"] * 5)


def test_view_as_a_dtype_and_out_on_the_device() -> None:
    """``view(dtype)`` shares the device memory; ``out=`` writes a device result into a device tensor."""
    x = tidu.tensor([1.0, -2.0, 3.0], device="cuda")
    bits = x.view(tidu.int32)
    assert bits.device == x.device and bits.tolist() == np.array([1.0, -2.0, 3.0], np.float32).view(np.int32).tolist()
    bits[0] = int(np.array(2.0, np.float32).view(np.int32))
    assert x.tolist() == [2.0, -2.0, 3.0]
    out = tidu.empty(3, device="cuda")
    assert tidu.add(x, 1, out=out) is out and out.tolist() == [3.0, -1.0, 4.0]
    with pytest.raises(RuntimeError, match="Expected out tensor to have device"):
        tidu.add(x, 1, out=tidu.empty(3))
