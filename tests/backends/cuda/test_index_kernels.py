"""CUDA kernels of gather, scatter_add, pad, rev and concatenate against the CPU kernels (simulator in CI)."""

import numpy as np
import pytest
from numba import cuda

import tidu
from tidu.backends.cuda.launch import Kernel
from tidu.backends.cuda.memory import CudaArray
from tidu.backends.cuda.strided import divmod_
from tidu.primitives.gather import gather, scatter_add
from tidu.primitives.slicing import pad
from tidu.primitives.structural import concatenate, rev

from .oracle import check, device_view, recorded, to_device

RNG = np.random.default_rng(1)
DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def _array(shape, dtype):
    if dtype == "bool":
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-9, 10, shape).astype(dtype)


GATHERS = [  # (input shape, index shape, axis)
    ((5,), (7,), 0),
    ((3, 4), (3, 6), 1),
    ((3, 4), (2, 4), 0),
    ((3, 4, 5), (2, 3, 4), 1),  # index smaller than the input outside the axis
    ((2, 3, 4, 5), (2, 3, 4, 2), 3),
    ((3, 4), (3, 0), 1),
    ((0, 4), (0, 2), 1),
    ((1,), (1,), 0),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", GATHERS, ids=[f"{a}{b}@{c}" for a, b, c in GATHERS])
def test_gather(case, dtype):
    shape, ishape, axis = case
    index = RNG.integers(0, max(shape[axis], 1), ishape)
    check(gather, _array(shape, dtype), index, axis=axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("case", GATHERS, ids=[f"{a}{b}@{c}" for a, b, c in GATHERS])
def test_scatter_add(case, dtype):
    """Repeated indices accumulate; ``src`` may be larger than the index."""
    shape, ishape, axis = case
    index = RNG.integers(0, max(shape[axis], 1), ishape)
    src_shape = tuple(m + (d % 2) for d, m in enumerate(ishape))
    check(scatter_add, _array(shape, dtype), index, _array(src_shape, dtype), axis=axis)


GATHER_VIEWS = [  # (input shape, its view, index shape, its view, axis)
    ((4, 3), lambda x: x.T, (3, 5), None, 1),  # a transposed input
    ((3, 6), lambda x: x[::-1, ::2], (3, 2), None, 1),  # negative and step strides
    ((5, 4), None, (3,), lambda i: np.broadcast_to(i[:, None], (3, 4)), 0),  # a broadcast index (stride 0)
    ((2, 3, 4), lambda x: x.transpose(2, 0, 1), (2, 1), lambda i: np.broadcast_to(i[:, None], (2, 2, 3)), 1),
]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("case", range(len(GATHER_VIEWS)))
def test_gather_views(case, dtype):
    """``gather`` reads strided operands in place (it is registered ``takes_views``)."""
    shape, xv, ishape, iv, axis = GATHER_VIEWS[case]
    xv, iv = xv or (lambda a: a), iv or (lambda a: a)
    x = _array(shape, dtype)
    size = xv(x).shape[axis]
    index = RNG.integers(0, size, ishape)
    want = gather.impls["cpu"](np.ascontiguousarray(xv(x)), np.ascontiguousarray(iv(index)), axis=axis)
    got = gather.impls["cuda"](device_view(x, xv), device_view(index, iv), axis=axis)
    assert got.is_c_contiguous
    np.testing.assert_array_equal(got.copy_to_host(), want)


SCATTER_VIEWS = [  # (self shape, its view, index shape, its view, src shape, its view, axis)
    ((4, 3), lambda x: x.T, (3, 2), None, (3, 2), None, 1),  # a transposed self
    ((5, 4), None, (3,), lambda i: np.broadcast_to(i[:, None], (3, 4)), (3, 4), None, 0),  # a broadcast index
    ((3, 6), None, (3, 4), lambda i: i[:, ::-2], (4, 5), lambda s: s[::-1, 1:], 1),  # strided index, larger src
    ((2, 3, 4), None, (2, 1), lambda i: np.broadcast_to(i[:, None], (2, 2, 3)), (3, 2, 2), lambda s: s.T, 2),
]


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@pytest.mark.parametrize("case", range(len(SCATTER_VIEWS)))
def test_scatter_add_views(case, dtype):
    """``scatter_add`` reads strided operands (it is registered ``takes_views``)."""
    shape, xv, ishape, iv, sshape, sv, axis = SCATTER_VIEWS[case]
    xv, iv, sv = xv or (lambda a: a), iv or (lambda a: a), sv or (lambda a: a)
    x, src = _array(shape, dtype), _array(sshape, dtype)
    index = RNG.integers(0, xv(x).shape[axis], ishape)
    arrays = [np.ascontiguousarray(v(a)) for v, a in ((xv, x), (iv, index), (sv, src))]
    want = scatter_add.impls["cpu"](*arrays, axis=axis)
    got = scatter_add.impls["cuda"](device_view(x, xv), device_view(index, iv), device_view(src, sv), axis=axis)
    assert got.is_c_contiguous
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-12)


def test_out_of_range_indices_are_never_dereferenced():
    """Documented CUDA behaviour: gather reads 0 there, scatter_add drops the value."""
    x, index = np.arange(1.0, 5.0), np.array([0, -1, 4, 3, 99])
    got = gather.impls["cuda"](to_device(x), to_device(index), axis=0).copy_to_host()
    np.testing.assert_array_equal(got, [1.0, 0.0, 0.0, 4.0, 0.0])
    out = scatter_add.impls["cuda"](to_device(x), to_device(index), to_device(np.ones(5)), axis=0).copy_to_host()
    np.testing.assert_array_equal(out, x + np.array([1.0, 0.0, 0.0, 1.0]))


def test_gather_and_scatter_as_called_by_ops():
    """Indexing, gather, index_select, max pooling and their backward passes."""
    with recorded(gather) as gathers, recorded(scatter_add) as scatters:
        x = tidu.tensor(_array((3, 4, 5), "float64"), requires_grad=True)
        idx = tidu.tensor(RNG.integers(0, 4, (3, 2, 5)))
        outs = [x[:, [0, 2, 2]], x[tidu.tensor([1, 0, 1])], tidu.gather(x, 1, idx), x.index_select(2, idx[0, 0]),
                tidu.nn.functional.max_pool2d(x[None], 2)]
        sum(o.sum() for o in outs).backward()
        tidu.zeros(3, 4).scatter_add(0, tidu.tensor([[0, 2, 0, 1]]), tidu.ones(1, 4))
    assert gathers and scatters
    for prim, calls in ((gather, gathers), (scatter_add, scatters)):
        for arrays, params in calls:
            check(prim, *arrays, **params)


PADS = [  # (shape, padding_config)
    ((4,), ((1, 2, 0),)),
    ((3, 4), ((0, 1, 1), (2, 0, 2))),
    ((2, 3, 4), ((1, 1, 0), (0, 0, 0), (3, 2, 1))),
    ((3, 0), ((1, 1, 1), (2, 1, 0))),
    ((), ()),
    ((1, 5), ((0, 0, 3), (0, 0, 0))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", PADS, ids=[str(c) for _, c in PADS])
def test_pad(case, dtype):
    shape, config = case
    check(pad, _array(shape, dtype), padding_config=config)


@pytest.mark.parametrize("config", [((-1, 2, 0), (0, -2, 1)), ((-3, -1, 2), (1, 0, 0)), ((-4, 0, 0), (0, 0, 0))])
def test_pad_negative(config):
    """Negative padding crops (XLA's semantics; the shape rule keeps it out of tidu's ops)."""
    x = _array((4, 3), "float64")
    got = pad.impls["cuda"](to_device(x), padding_config=config).copy_to_host()
    grown = pad.impls["cpu"](x, padding_config=tuple((max(lo, 0), max(hi, 0), i) for lo, hi, i in config))
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi, _) in zip(grown.shape, config))
    want = grown[crop]
    np.testing.assert_array_equal(got, want)


REVS = [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)), ((2, 0, 3), (1,)), ((), ()),
        ((2, 3), ())]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", REVS, ids=[f"{s}{d}" for s, d in REVS])
def test_rev(case, dtype):
    shape, dims = case
    check(rev, _array(shape, dtype), dimensions=dims)


CONCATS = [([(3,), (2,)], 0), ([(2, 3), (2, 1), (2, 4)], 1), ([(1, 3), (2, 3)], 0), ([(2, 0, 3), (2, 2, 3)], 1),
           ([(2, 3, 4)], 2), ([(0, 2), (0, 2)], 0)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CONCATS, ids=[f"{s}@{d}" for s, d in CONCATS])
def test_concatenate(case, dtype):
    shapes, dim = case
    check(concatenate, *[_array(s, dtype) for s in shapes], dimension=dim)


def test_structural_as_called_by_ops():
    with recorded(pad) as pads, recorded(rev) as revs, recorded(concatenate) as cats:
        x = tidu.tensor(_array((3, 4), "float64"), requires_grad=True)
        outs = [tidu.cat([x, x[:1]]), tidu.stack([x, x], 1), tidu.flip(x, (0, 1)), tidu.roll(x, 1, 1), x[::2, 1:]]
        sum(o.sum() for o in outs).backward()
    assert pads and revs and cats
    for prim, calls in ((pad, pads), (rev, revs), (concatenate, cats)):
        for arrays, params in calls:
            check(prim, *arrays, **params)


def _divmod_kernel(i, d, inv, q, r):
    for t in range(cuda.grid(1), i.size, cuda.gridsize(1)):
        q[t], r[t] = divmod_(i[t], d[t], inv[t])


def test_float_divmod_is_exact():
    """The kernels' index arithmetic divides through a float64 inverse and corrects by one."""
    d = np.concatenate([RNG.integers(1, 1 << 20, 200), [1, 3, 7, 56, 3136, (1 << 26) + 1]])
    i = np.concatenate([RNG.integers(0, 1 << 50, 100) // d[:100] * d[:100],  # exact multiples
                        RNG.integers(0, 1 << 50, 100) // d[100:200] * d[100:200] - 1,  # one below
                        [0, 2**51, 2**51 + 1, 3135, 3136, (1 << 52) - 1]])
    i = np.maximum(i, 0)
    q, r = CudaArray.empty(i.shape, np.int64), CudaArray.empty(i.shape, np.int64)
    kernel = Kernel(_divmod_kernel, "void(int64[::1], int64[::1], float64[::1], int64[::1], int64[::1])")
    kernel(i.size, to_device(i), to_device(d), to_device(1.0 / d), q, r)
    np.testing.assert_array_equal(q.copy_to_host(), i // d)
    np.testing.assert_array_equal(r.copy_to_host(), i % d)
