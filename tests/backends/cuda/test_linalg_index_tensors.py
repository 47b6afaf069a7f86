"""Tensors on ``device='cuda'`` through the public ops whose kernels are dot_general, conv,
gather/scatter_add, pad, rev and concatenate: values and gradients equal the CPU's."""

import numpy as np
import pytest

import tidu
import tidu.nn.functional as F

RNG = np.random.default_rng(3)
TOL = {"float32": 1e-5, "float64": 1e-12}


def _run(fn, shapes, dtype, *extra):
    """``fn`` on CPU and on CUDA leaves of ``shapes``: the outputs and the gradients of a random
    projection of them must agree, and stay on their device."""
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    results = {}
    for device in ("cpu", "cuda"):
        xs = [tidu.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(*xs, *[e.to(device) if isinstance(e, tidu.Tensor) else e for e in extra])
        weights = tidu.tensor(np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(dtype), device=device)
        (out * weights).sum().backward()
        assert out.device.type == device and all(x.grad.device.type == device for x in xs)
        results[device] = [out.detach().cpu().numpy()] + [x.grad.cpu().numpy() for x in xs]
    tol = TOL[dtype]
    for got, want in zip(results["cuda"], results["cpu"]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, float(np.abs(want).max(initial=0))))


MATMULS = [
    ("mm", lambda a, b: a @ b, [(3, 4), (4, 5)]),
    ("matrix-vector", lambda a, b: a @ b, [(3, 4), (4,)]),
    ("vector dot", lambda a, b: a @ b, [(4,), (4,)]),
    ("broadcast batch", lambda a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)]),
    ("transposed views", lambda a, b: a.T @ b.T, [(4, 3), (5, 4)]),
    ("bmm", tidu.bmm, [(2, 3, 4), (2, 4, 5)]),
    ("einsum attention", lambda q, k: tidu.einsum("bhtd,bhsd->bhts", q, k), [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("linear", lambda x, w, b: F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", MATMULS, ids=[c[0] for c in MATMULS])
def test_matmul(case, dtype):
    _, fn, shapes = case
    _run(fn, shapes, dtype)


def test_integer_matmul():
    a, b = RNG.integers(-5, 6, (3, 4)), RNG.integers(-5, 6, (2, 4, 2))
    got = (tidu.tensor(a, device="cuda") @ tidu.tensor(b, device="cuda"))
    assert got.device.type == "cuda"
    np.testing.assert_array_equal(got.cpu().numpy(), (tidu.tensor(a) @ tidu.tensor(b)).numpy())


CONVS = [
    ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
     [(2, 3, 6, 5), (4, 3, 3, 2), (4,)]),
    ("conv2d groups", lambda x, w: F.conv2d(x, w, padding=1, groups=2), [(1, 4, 5, 5), (6, 2, 3, 3)]),
    ("depthwise", lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=4), [(2, 4, 5, 5), (4, 1, 3, 3)]),
    ("conv1d", lambda x, w: F.conv1d(x, w, stride=2, padding=1, dilation=2), [(2, 3, 9), (2, 3, 3)]),
    ("conv2d same", lambda x, w: F.conv2d(x, w, padding="same"), [(1, 2, 5, 4), (3, 2, 2, 3)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONVS, ids=[c[0] for c in CONVS])
def test_conv(case, dtype):
    _, fn, shapes = case
    _run(fn, shapes, dtype)


INDEXING = [
    ("gather", lambda x, i: tidu.gather(x, 1, i), [(3, 4)], tidu.tensor([[0, 3], [1, 1], [2, 0]])),
    ("scatter_add", lambda x, s, i: x.scatter_add(0, i, s), [(3, 4), (2, 4)], tidu.tensor([[0, 2, 0, 1], [0, 0, 1, 2]])),
    ("advanced index", lambda x, i: x[:, i], [(3, 4)], tidu.tensor([3, 0, 3])),
    ("index_select", lambda x: x.index_select(0, tidu.tensor([2, 0, 2])), [(3, 4)]),
    ("max_pool2d", lambda x: F.max_pool2d(x, 2, stride=1, padding=1), [(1, 2, 4, 5)]),
    ("cat", lambda x, y: tidu.cat([x, y, x], 1), [(2, 3), (2, 1)]),
    ("stack", lambda x, y: tidu.stack([x, y], 0), [(2, 3), (2, 3)]),
    ("flip", lambda x: tidu.flip(x, (0, 2)), [(2, 3, 4)]),
    ("roll", lambda x: tidu.roll(x, 2, 1), [(2, 5)]),
    ("strided slice", lambda x: x[::2, 1::3], [(5, 7)]),
    ("pad", lambda x: F.pad(x, (1, 2, 0, 1)), [(2, 3)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", INDEXING, ids=[c[0] for c in INDEXING])
def test_indexing_and_structural(case, dtype):
    _, fn, shapes, *extra = case
    _run(fn, shapes, dtype, *extra)
