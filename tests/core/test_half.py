"""float16 and bfloat16 (Note [half precision], tidu/core/half.py) against PyTorch.

Promotion among every pair of dtypes; conversions bit for bit (ties, inf, NaN, subnormals,
float64's double rounding); a table of calls run forward and backward in both libraries on half
inputs, whose values, gradients and dtypes must agree to the dtype's rounding; creation,
printing, numpy, ``item``, ``save``/``load``, ``finfo``, autocast; the errors PyTorch raises for
ops it has no half kernel for; and a half computation on the CUDA device.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import _name, assert_same_error
from tidu.core import dtypes

ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
HALF = ["float16", "bfloat16"]
TOL = {"float16": {"rtol": 2e-3, "atol": 1e-3}, "bfloat16": {"rtol": 1.6e-2, "atol": 1e-2}}


@pytest.mark.parametrize("a,b", list(itertools.product(ALL, ALL)))
def test_promote_types_is_pytorchs_table(a: str, b: str) -> None:
    assert _name(tidu.promote_types(getattr(tidu, a), getattr(tidu, b))) == _name(
        torch.promote_types(getattr(torch, a), getattr(torch, b)))


def _result_dtypes(L: Any, h: str) -> dict[str, str]:
    x = L.ones(2, dtype=getattr(L, h))
    other = L.bfloat16 if h == "float16" else L.float16
    calls = {
        "scalar float": x + 1.5, "scalar int": x + 2, "0-d float32": x + L.tensor(1.5),
        "0-d float64": x + L.tensor(1.5, dtype=L.float64), "float32 tensor": x + L.ones(2),
        "int tensor": L.arange(2) + x, "int tensor, 0-d half": L.arange(2) + x[0],
        "other half": x + L.ones(2, dtype=other), "0-d other half": x + L.ones((), dtype=other),
        "bool tensor": L.ones(2, dtype=L.bool) * x,
    }
    return {k: _name(v.dtype) for k, v in calls.items()}


@pytest.mark.parametrize("h", HALF)
def test_result_type_with_zero_dim_tensors_and_scalars(h: str) -> None:
    assert _result_dtypes(tidu, h) == _result_dtypes(torch, h)


def _bits(t: Any) -> np.ndarray:
    """A tensor's storage bits (uint16) in either library, every NaN as bfloat16's ``0x7FC0`` or
    float16's ``0x7E00``: PyTorch's own NaN bits differ between its vectorized and scalar loops
    (a float32 NaN becomes bfloat16 ``0xFFFF`` in the one, ``0x7FC0`` in the other)."""
    if isinstance(t, torch.Tensor):
        bits, nan = t.reshape(-1).view(torch.int16).numpy().view(np.uint16).copy(), t.isnan().reshape(-1).numpy()
        canonical = 0x7FC0 if t.dtype is torch.bfloat16 else 0x7E00
    else:
        bits, nan = t._host().reshape(-1).view(np.uint16).copy(), tidu.isnan(t).reshape(-1).numpy()
        canonical = 0x7FC0 if t.dtype is tidu.bfloat16 else 0x7E00
    bits[nan] = canonical
    return bits


SPECIAL = [0.0, -0.0, 1.0, -2.5, 65504.0, 65520.0, 70000.0, -1e9, 3.4e38, np.inf, -np.inf, np.nan, -np.nan,
           6e-8, 3e-8, 1e-7, 6.1e-5, 1e-40, -1e-45, 1.00390625, 1.01171875, 1.0009765625, 1.00048828125,
           1.000732421875, 2049.0, 0.1, 1 / 3, 3.14159265358979]


@pytest.mark.parametrize("h", HALF)
@pytest.mark.parametrize("source", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_conversions_match_pytorch_bit_for_bit(h: str, source: str) -> None:
    values = np.array(SPECIAL + [-v for v in SPECIAL], np.float64)
    if source not in ("float32", "float64"):
        values = np.nan_to_num(values, posinf=2**20, neginf=-(2**20)).clip(-2**31, 2**31 - 1)
        if source in ("uint8", "bool"):
            values = np.abs(values) % 256
        values = np.trunc(values)
    dt = np.dtype(source if source != "bool" else np.bool_)
    ref = torch.from_numpy(values.astype(dt)).to(getattr(torch, h))
    ours = tidu.from_numpy(values.astype(dt)).to(getattr(tidu, h))
    np.testing.assert_array_equal(_bits(ours), _bits(ref))
    # and back: every half value widens exactly
    for target in ("float32", "float64", "int64", "bool"):
        ref_back = ref[~ref.isnan()].to(getattr(torch, target)) if target in ("int64", "bool") else ref.to(
            getattr(torch, target))
        ours_back = (ours[~ours.isnan()] if target in ("int64", "bool") else ours).to(getattr(tidu, target))
        if target == "int64":  # out-of-range floats to integers are undefined in C++; compare the ones in range
            keep = ref[~ref.isnan()].abs() < 2**62
            ref_back, ours_back = ref_back[keep], ours_back[tidu.from_numpy(keep.numpy())]
        np.testing.assert_array_equal(ours_back.numpy(), ref_back.numpy())


def test_half_to_half_and_creation_round_like_pytorch() -> None:
    values = [1.0009765625, 3.14159, 65504.0, 1e-5, -7.3e-3, 1e38]
    for a, b in itertools.permutations(HALF):
        ref = torch.tensor(values, dtype=getattr(torch, a)).to(getattr(torch, b))
        ours = tidu.tensor(values, dtype=getattr(tidu, a)).to(getattr(tidu, b))
        np.testing.assert_array_equal(_bits(ours), _bits(ref))
    for h in HALF:
        for make in (lambda L, d: L.tensor(values, dtype=d), lambda L, d: L.full((3,), 0.1, dtype=d),
                     lambda L, d: L.arange(0, 1, 0.1, dtype=d), lambda L, d: L.tensor(np.array(values), dtype=d),
                     lambda L, d: L.linspace(-1, 1, 7, dtype=d), lambda L, d: L.eye(3, dtype=d),
                     lambda L, d: L.zeros(2, 3, dtype=d), lambda L, d: L.ones(4, dtype=d),
                     lambda L, d: L.scalar_tensor(2.7, dtype=d), lambda L, d: L.tensor(1.1, dtype=d),
                     lambda L, d: L.full_like(L.ones(2), 1.7, dtype=d), lambda L, d: L.zeros_like(L.ones(2, dtype=d)),
                     lambda L, d: L.ones_like(L.ones(2, dtype=d))):
            ours, ref = make(tidu, getattr(tidu, h)), make(torch, getattr(torch, h))
            assert _name(ours.dtype) == _name(ref.dtype) and tuple(ours.shape) == tuple(ref.shape)
            np.testing.assert_array_equal(_bits(ours), _bits(ref))


@pytest.mark.parametrize("h", HALF)
def test_random_draws_are_float32_draws_rounded(h: str) -> None:
    dt = getattr(tidu, h)
    for draw in (tidu.randn, tidu.rand):
        tidu.manual_seed(3)
        a = draw(5, 4, dtype=dt)
        tidu.manual_seed(3)
        b = draw(5, 4).to(dt)
        assert a.dtype is dt
        np.testing.assert_array_equal(_bits(a), _bits(b))
    assert tidu.randn_like(tidu.ones(3, dtype=dt)).dtype is dt and tidu.rand_like(tidu.ones(3), dtype=dt).dtype is dt


def _inputs(L: Any, h: str, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    d = getattr(L, h)

    def leaf(*shape: int, low: float = -2.0, high: float = 2.0) -> Any:
        return L.tensor(rng.uniform(low, high, shape).astype(np.float32)).to(d).requires_grad_()

    return {"x": leaf(3, 4), "y": leaf(3, 4), "p": leaf(3, 4, low=0.2, high=3.0), "w": leaf(5, 4), "b": leaf(5),
            "img": leaf(2, 3, 6, 6), "k": leaf(4, 3, 3, 3), "g": leaf(4), "beta": leaf(4)}


def _fn(L: Any, name: str) -> Callable:
    F = L.nn.functional
    return {
        "neg-exp-tanh": lambda v: (-v["x"]).exp() + v["y"].tanh(),
        "sin-cos-sigmoid": lambda v: v["x"].sin() * v["y"].cos() + v["x"].sigmoid(),
        "log-sqrt-rsqrt": lambda v: v["p"].log() + v["p"].sqrt() - v["p"].rsqrt(),
        "div-pow": lambda v: v["x"] / v["p"] + v["p"] ** 1.5,
        "relu-gelu-silu": lambda v: F.relu(v["x"]) + F.gelu(v["y"]) + F.silu(v["x"]),
        "scalar-ops": lambda v: (v["x"] * 3 + 0.5) / 7 - 1.25,
        "broadcast-add": lambda v: v["x"] + v["g"],
        "sum": lambda v: v["x"].sum(),
        "sum-dim": lambda v: (v["x"] * v["y"]).sum(1),
        "mean": lambda v: v["x"].mean(0),
        "amax": lambda v: v["x"].amax(1),
        "matmul": lambda v: v["x"] @ v["w"].T,
        "linear": lambda v: F.linear(v["x"], v["w"], v["b"]),
        "softmax": lambda v: L.softmax(v["x"], dim=1),
        "log-softmax": lambda v: F.log_softmax(v["x"], dim=0),
        "layer-norm": lambda v: F.layer_norm(v["x"], (4,), v["g"], v["beta"]),
        "conv2d": lambda v: F.conv2d(v["img"], v["k"][:, :, :2, :2], padding=1),
        "indexing": lambda v: v["x"][1:, ::2] * v["x"][[0, 2, 1]][:2, 1:3],
        "cat-stack": lambda v: L.cat([v["x"], v["y"] * 2], 0) * 1.5,
        "where": lambda v: L.where(v["x"] > v["y"], v["x"], v["y"] * v["y"]),
        "reshape-transpose": lambda v: v["x"].reshape(4, 3).t() * v["y"],
        "mse": lambda v: F.mse_loss(v["x"], v["y"]),
        "cross-entropy": lambda v: F.cross_entropy(v["x"], L.tensor([0, 3, 1])),
        "cumsum": lambda v: v["x"].cumsum(1),
        "abs-clamp": lambda v: v["x"].abs().clamp(0.3, 1.5) + v["y"].clamp(min=0),
        "max-min": lambda v: L.maximum(v["x"], v["y"]) - L.minimum(v["x"], v["y"]),
        "logcumsumexp": lambda v: L.logcumsumexp(v["x"], 1),
        "max-pool": lambda v: F.max_pool1d(v["x"].unsqueeze(0), 2),
    }[name]


CASES = ["neg-exp-tanh", "sin-cos-sigmoid", "log-sqrt-rsqrt", "div-pow", "relu-gelu-silu", "scalar-ops",
         "broadcast-add", "sum", "sum-dim", "mean", "amax", "matmul", "linear", "softmax", "log-softmax",
         "layer-norm", "conv2d", "indexing", "cat-stack", "where", "reshape-transpose", "mse", "cross-entropy",
         "cumsum", "abs-clamp", "max-min", "logcumsumexp", "max-pool"]


def _close(out: Any, ref: Any, h: str, what: str, scale: float = 1.0) -> None:
    assert _name(out.dtype) == _name(ref.dtype), (what, out.dtype, ref.dtype)
    assert tuple(out.shape) == tuple(ref.shape), what
    tol = {k: v * scale for k, v in TOL[h].items()}
    np.testing.assert_allclose(out.detach().float().numpy(), ref.detach().float().numpy(), err_msg=what, **tol)


@pytest.mark.parametrize("h", HALF)
@pytest.mark.parametrize("case", CASES)
def test_forward_and_backward_match_pytorch(case: str, h: str) -> None:
    ours_in, ref_in = _inputs(tidu, h, 0), _inputs(torch, h, 0)
    out, ref = _fn(tidu, case)(ours_in), _fn(torch, case)(ref_in)
    # an op or two of rounding in a half dtype between PyTorch's fused kernels and tidu's composed ones
    scale = 4.0 if case in ("layer-norm", "cross-entropy", "log-softmax", "conv2d", "sum") else 2.0
    _close(out, ref, h, "output", scale)
    seed = np.random.default_rng(1).uniform(0.5, 1.5, tuple(ref.shape)).astype(np.float32)
    out.backward(tidu.tensor(seed).to(out.dtype))
    ref.backward(torch.tensor(seed).to(ref.dtype))
    for k, r in ref_in.items():
        if r.grad is None:
            assert ours_in[k].grad is None, k
            continue
        _close(ours_in[k].grad, r.grad, h, f"grad of {k}", 4 * scale)


@pytest.mark.parametrize("h", HALF)
def test_comparisons_and_integer_results(h: str) -> None:
    for L in (tidu, torch):
        d = getattr(L, h)
        x = L.tensor([1.0, 2.0, -3.0, 2.0], dtype=d)
        y = L.tensor([1.0001, 2.0, -4.0, 5.0])  # 1.0001 rounds to 1.0 in both halves, not in float32
        got = [(x == y).tolist(), (x < 2).tolist(), (x >= x[1]).tolist(), x.argmax().item(), x.argsort().tolist(),
               (x != y.to(d)).tolist(), x.sort().values.tolist(), x.max().item(), L.isnan(x / 0 * 0).tolist()]
        if L is tidu:
            ours = got
        else:
            assert ours == got


# ops whose results are found on the host from the values (a bfloat16 tensor's storage holds bits:
# each must read its values, ``Tensor._values``), and results made there in the input's dtype
HOST_READS = [
    "L.signbit(x)", "L.frexp(x).mantissa", "L.frexp(x).exponent", "x.nonzero()", "L.isin(x, x[3:4])",
    "L.unique(x)", "L.unique(x, return_inverse=True, return_counts=True)[1]", "L.searchsorted(x.sort().values, x)",
    "L.bucketize(x, x.sort().values)", "x.mode().values", "x.mode().indices", "L.histc(x, 4)",
    "L.histogram(x.float(), 3).hist", "L.copysign(L.ones(6), x)",
    "L.nn.functional.max_pool1d(x.reshape(1, 1, 6), 2)", "L.tensor(x, dtype=L.float32)",
    "L.normal(x + 1, L.zeros(6, dtype=x.dtype))", "L.bernoulli(L.tensor([0.0, 1.0], dtype=x.dtype))",
    "x.reshape(2, 3).scatter_reduce(0, L.tensor([[1, 0, 1]]), x[:3].reshape(1, 3) - 9, 'amax')",
    "L.nn.functional.binary_cross_entropy(x.abs() / 4, L.ones(6, dtype=x.dtype))",
    "x.clone().apply_(lambda a: 2 * a - 1)", "x.clone().map_(x.flip(0), lambda a, b: a - b)",
]


@pytest.mark.parametrize("h", HALF)
@pytest.mark.parametrize("call", HOST_READS)
def test_ops_found_on_the_host_read_half_values(call: str, h: str) -> None:
    results = []
    for L in (tidu, torch):
        x = L.tensor([-1.5, 0.0, -0.0, 2.0, -3.25, 0.5], dtype=getattr(L, h))
        out = eval(call, {"L": L, "x": x})  # noqa: S307 - the table above
        results.append((_name(out.dtype), out.float().numpy() if out.dtype.is_floating_point else out.numpy()))
    assert results[0][0] == results[1][0], call
    np.testing.assert_array_equal(results[0][1], results[1][1], err_msg=call)
    assert np.array_equal(np.signbit(results[0][1]), np.signbit(results[1][1])), call  # -0.0 kept


@pytest.mark.parametrize("h", HALF)
def test_embedding_max_norm_renormalizes_half_weights(h: str) -> None:
    rows = []
    for L in (tidu, torch):
        emb = L.nn.Embedding(3, 2, max_norm=1.0).to(getattr(L, h))
        with L.no_grad():
            emb.weight.copy_(L.tensor([[3.0, 4.0], [-3.0, -4.0], [0.1, 0.1]]))
        emb(L.tensor([0, 1]))
        rows.append(emb.weight.detach().float().numpy())
    np.testing.assert_array_equal(*rows)


@pytest.mark.parametrize("h", HALF)
def test_higher_order_and_vector_calls(h: str) -> None:
    """Rules see half avals: a second derivative and a JVP run through the same widening."""
    d = getattr(tidu, h)
    x = tidu.tensor([0.5, -1.0, 2.0], dtype=d, requires_grad=True)
    (g,) = tidu.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    (gg,) = tidu.autograd.grad(g.sum(), x)
    tx = torch.tensor([0.5, -1.0, 2.0], dtype=getattr(torch, h), requires_grad=True)
    (tg,) = torch.autograd.grad((tx.sin() * tx).sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    _close(g, tg, h, "grad", 2)
    _close(gg, tgg, h, "second derivative", 4)
    _, tangent = tidu.func.jvp(lambda v: v.exp() * 2, (x.detach(),), (tidu.ones(3, dtype=d),))
    _, ttangent = torch.func.jvp(lambda v: v.exp() * 2, (tx.detach(),), (torch.ones(3, dtype=getattr(torch, h)),))
    _close(tangent, ttangent, h, "jvp", 2)


def test_a_training_loop_in_half_runs_the_compiled_backward() -> None:
    """Repeated steps take the cached backward program (its fusion leaves half calls out) and the
    forward's deferral (which takes none): losses as in PyTorch's loop."""
    losses = {}
    for L in (tidu, torch):
        L.manual_seed(0)
        rng = np.random.default_rng(0)
        w = L.tensor(rng.normal(size=(4, 8)).astype(np.float32)).to(L.bfloat16).requires_grad_()
        x = L.tensor(rng.normal(size=(16, 8)).astype(np.float32)).to(L.bfloat16)
        got = []
        for _ in range(6):
            loss = ((x @ w.T).tanh() * 0.5 + 0.1).pow(2).mean()
            loss.backward()
            with L.no_grad():
                w -= 0.5 * w.grad
            w.grad = None
            got.append(loss.item())
        losses[L.__name__] = got
    np.testing.assert_allclose(losses["tidu"], losses["torch"], rtol=2e-2)


def _optimized(L: Any, name: str, h: str) -> np.ndarray:
    w = L.tensor([1.0, -2.0, 0.5]).to(getattr(L, h)).requires_grad_()
    opt = getattr(L.optim, name)([w], lr=0.1, **({"momentum": 0.9, "weight_decay": 0.1} if name == "SGD" else {}))
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    assert _name(w.dtype) == h
    return np.array(w.detach().float().tolist())


@pytest.mark.parametrize("h", HALF)
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "Rprop"])
def test_optimizers_step_half_parameters(name: str, h: str) -> None:
    np.testing.assert_allclose(_optimized(tidu, name, h), _optimized(torch, name, h), **TOL[h])


def test_views_of_half_tensors_share_storage_and_take_writes() -> None:
    for h in HALF:
        x = tidu.zeros(3, 4, dtype=getattr(tidu, h))
        v = x[1].view(2, 2)
        v += 1.5
        x.t()[0, 2] = -2.0
        ref = torch.zeros(3, 4, dtype=getattr(torch, h))
        rv = ref[1].view(2, 2)
        rv += 1.5
        ref.t()[0, 2] = -2.0
        np.testing.assert_array_equal(_bits(x), _bits(ref))


def _printed(L: Any, h: str) -> list[Any]:
    d = getattr(L, h)
    return [L.tensor([1.5, 2.25, -0.1], dtype=d), L.tensor(3.14159, dtype=d),
            L.tensor([[1e-5, 300.0], [7.0, 1e4]], dtype=d), L.tensor([1.0, 2.0], dtype=d, requires_grad=True) * 2,
            L.tensor([np.inf, np.nan, 1.0], dtype=d), L.arange(200, dtype=d) * 0.375 - 1]


def test_surface_names_printing_numpy_item() -> None:
    assert tidu.half is tidu.float16 and tidu.float16.is_floating_point and tidu.bfloat16.is_floating_point
    assert tidu.ones(2).half().dtype is tidu.float16 and tidu.ones(2).bfloat16().dtype is tidu.bfloat16
    assert tidu.ones(2).type(tidu.HalfTensor).dtype is tidu.float16
    assert tidu.ones(2, dtype=tidu.bfloat16).type() == "torch.BFloat16Tensor"
    assert isinstance(tidu.ones(2, dtype=tidu.float16), tidu.HalfTensor)
    assert tidu.ones(2).to(dtype=tidu.bfloat16).element_size() == 2 == tidu.ones(1).half().element_size()
    for h in HALF:
        for ours, ref in zip(_printed(tidu, h), _printed(torch, h)):
            assert repr(ours).replace("tidu.", "torch.").replace("<mul>", "<MulBackward0>") == repr(ref)
            np.testing.assert_array_equal(np.array(ours.tolist()), np.array(ref.tolist()))
        assert tidu.tensor(1.1, dtype=getattr(tidu, h)).item() == torch.tensor(1.1, dtype=getattr(torch, h)).item()
    half = tidu.tensor([1.1, 2.0], dtype=tidu.float16)
    assert half.numpy().dtype == np.float16 and half.numpy().tolist() == [1.099609375, 2.0]
    assert_same_error(lambda L: L.ones(2, dtype=L.bfloat16).numpy())
    assert tidu.from_numpy(np.ones(2, np.float16)).dtype is tidu.float16


def test_finfo_is_pytorchs() -> None:
    for h in HALF:
        ours, ref = tidu.finfo(getattr(tidu, h)), torch.finfo(getattr(torch, h))
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(ours, field) == getattr(ref, field), (h, field)
        assert repr(ours) == repr(ref)


def test_default_dtype_may_be_half_as_in_pytorch() -> None:
    try:
        for h in HALF:
            tidu.set_default_dtype(getattr(tidu, h))
            torch.set_default_dtype(getattr(torch, h))
            assert _name(tidu.tensor([1.5]).dtype) == _name(torch.tensor([1.5]).dtype)
            assert _name((tidu.arange(3) * 0.5).dtype) == _name((torch.arange(3) * 0.5).dtype)
    finally:
        tidu.set_default_dtype(tidu.float32)
        torch.set_default_dtype(torch.float32)


def test_save_and_load_keep_half_tensors_bit_for_bit() -> None:
    state = {"a": tidu.tensor([1.1, -np.inf, 3e-6], dtype=tidu.float16),
             "b": tidu.tensor([1.1, np.nan, -0.0, 3e38], dtype=tidu.bfloat16).requires_grad_()}
    buffer = io.BytesIO()
    tidu.save(state, buffer)
    buffer.seek(0)
    back = tidu.load(buffer)
    for k in state:
        assert back[k].dtype is state[k].dtype and back[k].requires_grad == state[k].requires_grad
        np.testing.assert_array_equal(_bits(back[k]), _bits(state[k]))


def test_autocast_runs_products_in_bfloat16_on_the_cpu() -> None:
    rng = np.random.default_rng(0)
    a, w, b = (rng.normal(size=s).astype(np.float32) for s in ((3, 4), (5, 4), (5,)))
    img, k = rng.normal(size=(1, 2, 5, 5)).astype(np.float32), rng.normal(size=(3, 2, 2, 2)).astype(np.float32)
    results = {}
    for L in (tidu, torch):
        F = L.nn.functional
        ta, tw, tb = L.tensor(a, requires_grad=True), L.tensor(w), L.tensor(b)
        with L.autocast("cpu", dtype=L.bfloat16):
            outs = [F.linear(ta, tw, tb), ta @ tw.T, L.mm(ta, tw.T), F.conv2d(L.tensor(img), L.tensor(k)),
                    ta + 1, L.softmax(ta, 0)]
            outs.append(outs[0].float().sum())
        outs[-1].backward()
        outs.append(ta.grad)
        with L.autocast("cpu", dtype=L.bfloat16, enabled=False):
            outs.append(ta @ tw.T)
        results[L.__name__] = outs
    for ours, ref in zip(results["tidu"], results["torch"]):
        _close(ours, ref, "bfloat16", "autocast", 2)


_AUTOCAST_CALLS = {  # PyTorch's CPU autocast lists: lowered, float32, and products that keep their dtype
    "addmm": lambda L, F, x, h: L.addmm(x[:, 0], x, x.T), "baddbmm": lambda L, F, x, h: L.baddbmm(x[None, :, :4], x[None], x.T[None]),
    "addbmm": lambda L, F, x, h: L.addbmm(x[:, :4], x[None], x.T[None]), "einsum": lambda L, F, x, h: L.einsum("ij,kj->ik", x, x),
    "tensordot": lambda L, F, x, h: L.tensordot(x, x.T, 1), "inner": lambda L, F, x, h: L.inner(x, x),
    "vecdot": lambda L, F, x, h: L.linalg.vecdot(x, x), "prelu": lambda L, F, x, h: F.prelu(x, L.ones(1)),
    "conv_transpose1d": lambda L, F, x, h: F.conv_transpose1d(x[None], L.ones(4, 2, 2)),
    "mv": lambda L, F, x, h: L.mv(x, x[0]), "dot": lambda L, F, x, h: L.dot(x[0], x[1]),
    "vdot": lambda L, F, x, h: L.vdot(x[0], x[1]), "lstsq": lambda L, F, x, h: L.linalg.lstsq(x[:, :4] + 4 * L.eye(4), x[:, :4]).solution,
    "mse_loss": lambda L, F, x, h: F.mse_loss(h, h), "cross_entropy": lambda L, F, x, h: F.cross_entropy(h, L.tensor([0, 1, 3, 2])),
    "nll_loss": lambda L, F, x, h: F.nll_loss(h, L.tensor([0, 1, 3, 2])), "l1_loss": lambda L, F, x, h: F.l1_loss(h, h),
    "bce_with_logits": lambda L, F, x, h: F.binary_cross_entropy_with_logits(h, h.sigmoid()),
    "kl_div": lambda L, F, x, h: F.kl_div(h, h), "prod": lambda L, F, x, h: L.prod(h, 1),
    "cdist": lambda L, F, x, h: L.cdist(h, h), "trace": lambda L, F, x, h: L.trace(h),
    "quantile": lambda L, F, x, h: L.quantile(h.float(), 0.5), "inv": lambda L, F, x, h: L.linalg.inv(h[:, :4] + 4 * L.eye(4, dtype=h.dtype)),
    "avg_pool3d": lambda L, F, x, h: F.avg_pool3d(h[None, None, :, :, None], 1),
    "grid_sample": lambda L, F, x, h: F.grid_sample(h[None, None], L.zeros(1, 2, 2, 2, dtype=h.dtype), align_corners=False),
    "pad_reflect": lambda L, F, x, h: F.pad(h[None], (1, 1), mode="reflect"),
    "pad_replicate": lambda L, F, x, h: F.pad(h[None], (1, 1), mode="replicate"),
    "pad_circular": lambda L, F, x, h: F.pad(h[None], (1, 1), mode="circular"),
    "layer_norm": lambda L, F, x, h: F.layer_norm(h, (8,)), "softmax": lambda L, F, x, h: F.softmax(h, -1),
}


@pytest.mark.parametrize("name", sorted(_AUTOCAST_CALLS))
def test_autocast_casts_as_pytorchs_cpu_lists(name) -> None:
    """Each function in its result dtype and values (within bfloat16's rounding) from float32 and
    from bfloat16 operands: lowered (``addmm``...), in float32 (the losses, ``prod``, ``cdist``,
    the decompositions, reflection and replication padding...) or as they are (``mv``, ``dot``)."""
    x32 = np.random.default_rng(0).uniform(0.5, 1.5, (4, 8)).astype(np.float32)
    got = {}
    for L in (tidu, torch):
        x, h = L.tensor(x32), L.tensor(x32).to(L.bfloat16)
        with L.autocast("cpu", dtype=L.bfloat16):
            got[L.__name__] = _AUTOCAST_CALLS[name](L, L.nn.functional, x, h)
    assert str(got["tidu"].dtype).split(".")[-1] == str(got["torch"].dtype).split(".")[-1]
    np.testing.assert_allclose(got["tidu"].detach().float().numpy(), got["torch"].detach().float().numpy(),
                               rtol=0.02, atol=0.02)


def test_unsupported_ops_raise_pytorchs_errors() -> None:
    for h in HALF:
        for call in ("L.linalg.inv(L.eye(3, dtype=L.{h}))", "L.linalg.slogdet(L.eye(3, dtype=L.{h}))",
                     "L.linalg.cholesky(L.eye(3, dtype=L.{h}))", "L.linalg.svd(L.eye(3, dtype=L.{h}))",
                     "L.linalg.qr(L.eye(3, dtype=L.{h}))", "L.special.ndtri(L.ones(3, dtype=L.{h}) / 2)"):
            assert_same_error(call.format(h=h))


def test_half_on_the_cuda_device() -> None:
    assert tidu.cuda.is_available(), "tests/conftest.py turns Numba's CUDA simulator on where there is no GPU"
    for h in HALF:
        rng = np.random.default_rng(0)
        values = rng.normal(size=(3, 4)).astype(np.float32)
        x = tidu.tensor(values, device="cuda").to(getattr(tidu, h)).requires_grad_()
        w = tidu.tensor(values.T.copy(), dtype=getattr(tidu, h), device="cuda")
        out = ((x @ w).softmax(1) * x.sum(1, keepdim=True)).exp().sum()
        out.backward()
        tx = torch.tensor(values).to(getattr(torch, h)).requires_grad_()
        tw = torch.tensor(values.T.copy(), dtype=getattr(torch, h))
        ref = ((tx @ tw).softmax(1) * tx.sum(1, keepdim=True)).exp().sum()
        ref.backward()
        assert out.device.type == "cuda" and out.dtype is getattr(tidu, h) and x.grad.device.type == "cuda"
        _close(out.cpu(), ref, h, "output", 4)
        _close(x.grad.cpu(), tx.grad, h, "grad", 8)
        bits = tidu.tensor([1.0, np.nan, 1.00390625, 1.01171875, -np.inf], device="cuda").to(getattr(tidu, h))
        ref_bits = torch.tensor([1.0, np.nan, 1.00390625, 1.01171875, -np.inf]).to(getattr(torch, h))
        np.testing.assert_array_equal(_bits(bits.cpu()), _bits(ref_bits))
        assert bits.cpu().to(tidu.float32)[2].item() == ref_bits.float()[2].item()


def test_dtype_tables_cover_the_half_dtypes() -> None:
    for h in HALF:
        d = getattr(tidu, h)
        assert dtypes.as_dtype(h) is d and d.itemsize == 2 and d.is_half
        torch_name = {"float16": "Half", "bfloat16": "BFloat16"}[h]
        assert str(dtypes.not_implemented("k", d)) == f"\"k\" not implemented for '{torch_name}'"
    assert dtypes.as_dtype("half") is tidu.float16
    with pytest.raises(TypeError, match="uint16"):
        tidu.from_numpy(np.ones(2, np.uint16))  # uint16 is bfloat16's storage, not a tidu dtype


@pytest.mark.parametrize("h", HALF)
def test_exp2_and_log2_round_once_like_pytorch(h: str) -> None:
    """Computed in float32 and rounded once: a rounded ``x ln 2`` would put its error in the exponent."""
    results = []
    for L in (tidu, torch):
        x = L.tensor([-25.3, -12.3, 2.7, 13.9, 15.3] if h == "float16" else [-25.3, 2.7, 27.9, 15.3, 100.2],
                     dtype=getattr(L, h))
        results.append((L.exp2(x).float().numpy(), L.log2(x.abs()).float().numpy()))
    for ours, ref in zip(*results):
        np.testing.assert_array_equal(ours, ref)
