"""CUDA kernels of ``dot_general`` and ``conv_general_dilated`` against the CPU kernels (simulator in CI).

Besides hand-picked layouts, the params and arrays are recorded from what ``tidu``'s public
ops (matmul, bmm, einsum, conv1d, conv2d) pass to the CPU kernels, forward and backward.
"""

import numpy as np
import pytest

import tidu
from tidu.backends.cuda.strided import permuted
from tidu.primitives.conv import conv_general_dilated
from tidu.primitives.linalg import dot_general

from .oracle import check, device_view, recorded, to_device

RNG = np.random.default_rng(0)


def _array(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-9, 10, shape).astype(dtype)


DOTS = [  # (lhs shape, rhs shape, ((contract lhs, rhs), (batch lhs, rhs)))
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),  # a @ b
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),  # a^T @ b, read transposed
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),  # a @ b^T
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),  # a^T @ b^T
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((2, 4, 3), (2, 5, 4), (((1,), (2,)), ((0,), (0,)))),  # batched, both transposed
    ((3, 2, 4), (4, 2, 5), (((2,), (0,)), ((1,), (1,)))),  # batch dims not leading: copies
    ((2, 3, 4, 5), (4, 5, 6), (((2, 3), (0, 1)), ((), ()))),  # two contracted dims
    ((2, 3, 4, 5), (5, 4, 6), (((2, 3), (1, 0)), ((), ()))),  # contracted in the other order
    ((5,), (5,), (((0,), (0,)), ((), ()))),  # vector dot: a 0-d result
    ((3,), (4,), (((), ()), ((), ()))),  # outer product
    ((), (), (((), ()), ((), ()))),  # 0-d operands
    ((2, 3), (2, 3), (((1,), (1,)), ((0,), (0,)))),  # rowwise dot
    ((0, 4), (4, 5), (((1,), (0,)), ((), ()))),  # empty output
    ((3, 0), (0, 5), (((1,), (0,)), ((), ()))),  # empty contraction: zeros
    ((2, 0, 3), (2, 3, 4), (((2,), (1,)), ((0,), (0,)))),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("case", DOTS, ids=[f"{a}x{b}" for a, b, _ in DOTS])
def test_dot_general(case, dtype):
    sa, sb, dims = case
    check(dot_general, _array(sa, dtype), _array(sb, dtype), dimension_numbers=dims)


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the simulator computes with numpy scalars
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_dot_general_integer_tiles(dtype):
    """Several output tiles and contraction slices of the integer kernel, and int32 wrap-around."""
    a, b = _array((2, 17, 20), dtype), _array((2, 20, 18), dtype)
    check(dot_general, a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    big = np.full((1, 3), 2**30, dtype)
    check(dot_general, big, np.full((3, 1), 3, dtype), dimension_numbers=(((1,), (0,)), ((), ())))


def _replay(prim, calls, **extra):
    assert calls, "the ops recorded no call"
    for arrays, params in calls:
        check(prim, *arrays, **params, **extra)


def _leaf(shape, dtype="float64"):
    return tidu.tensor(_array(shape, dtype), requires_grad=True)


def test_dot_general_as_called_by_ops():
    with recorded(dot_general) as calls:
        a, b, v = _leaf((3, 4)), _leaf((4, 5)), _leaf((4,))
        x, y = _leaf((2, 1, 3, 4)), _leaf((3, 4, 2))
        p, q = _leaf((2, 3, 4)), _leaf((2, 4, 3))
        losses = [
            a @ b, a @ v, v @ b, v @ v, x @ y, tidu.bmm(p, q), tidu.matmul(p, b),
            tidu.einsum("ij,kj->ik", a, a), tidu.einsum("bij,bkj->bik", p, p), tidu.einsum("i,j->ij", v, v),
            tidu.einsum("bij,jk->bk", p, b), tidu.mm(a, b), tidu.outer(v, v),
        ]
        sum(out.sum() for out in losses).backward()
    _replay(dot_general, calls)


def test_dot_general_integer_ops():
    with recorded(dot_general) as calls:
        a, b = tidu.tensor(_array((3, 4), "int64")), tidu.tensor(_array((2, 4, 2), "int64"))
        a @ b, tidu.einsum("ij,bjk->bik", a, b)
    _replay(dot_general, calls)


CONVS = [  # (input shape, weight shape, params)
    ((2, 3, 6, 7), (4, 3, 3, 2), dict(window_strides=(1, 2), padding=((1, 0), (2, 1)), lhs_dilation=(1, 1),
                                      rhs_dilation=(2, 1), feature_group_count=1, flip=False)),
    ((2, 4, 5, 6), (6, 2, 2, 3), dict(window_strides=(2, 1), padding=((0, 2), (1, -1)), lhs_dilation=(2, 1),
                                      rhs_dilation=(1, 2), feature_group_count=2, flip=True)),
    ((1, 6, 4, 4), (6, 1, 3, 3), dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
                                      rhs_dilation=(1, 1), feature_group_count=6, flip=False)),  # depthwise
    ((2, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding=((2, 1),), lhs_dilation=(3,), rhs_dilation=(2,),
                                feature_group_count=1, flip=True)),  # 1-d
    ((2, 4, 3, 5), (6, 2, 1, 1), dict(window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
                                      rhs_dilation=(2, 1), feature_group_count=2, flip=True)),  # 1x1: no im2col
    ((2, 4, 3, 5), (3, 4, 1, 1), dict(window_strides=(2, 1), padding=((0, 1), (0, 0)), lhs_dilation=(1, 1),
                                      rhs_dilation=(1, 1), feature_group_count=1, flip=False)),  # 1x1, strided
    ((0, 3, 4, 4), (2, 3, 2, 2), dict(window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
                                      rhs_dilation=(1, 1), feature_group_count=1, flip=False)),  # empty batch
    ((2, 0, 4, 4), (2, 0, 2, 2), dict(window_strides=(1, 1), padding=((0, 0), (0, 0)), lhs_dilation=(1, 1),
                                      rhs_dilation=(1, 1), feature_group_count=1, flip=False)),  # no channels
    ((2, 4, 3, 4, 3), (4, 2, 2, 2, 1), dict(window_strides=(1, 2, 1), padding=((1, 0), (0, 1), (1, -1)),
                                            lhs_dilation=(2, 1, 1), rhs_dilation=(1, 2, 1), feature_group_count=2,
                                            flip=True)),  # 3-d
    ((1, 2, 2, 3, 3), (3, 2, 1, 1, 1), dict(window_strides=(1, 1, 1), padding=((0, 0),) * 3,
                                            lhs_dilation=(1, 1, 1), rhs_dilation=(1, 1, 1), feature_group_count=1,
                                            flip=False)),  # 3-d 1x1x1: no im2col
]


@pytest.mark.parametrize("method", ["auto", "im2col", "folded", "direct"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONVS, ids=[f"{a}*{b}" for a, b, _ in CONVS])
def test_conv(case, dtype, method):
    sx, sw, params = case
    x, w = _array(sx, dtype), _array(sw, dtype)
    want = conv_general_dilated.impls["cpu"](x, w, **params)
    got = conv_general_dilated.impls["cuda"](to_device(x), to_device(w), **params,
                                             method=method).copy_to_host()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", ["im2col", "folded"])
def test_conv_chunks(monkeypatch, method):
    """im2col in chunks of images when the scratch would be too large."""
    from tidu.backends.cuda import conv

    monkeypatch.setattr(conv, "COLS_LIMIT", 2 * 3 * 4 * 9)
    x, w = _array((5, 3, 4, 5), "float64"), _array((2, 3, 2, 2), "float64")
    params = dict(window_strides=(1, 1), padding=((1, 0), (0, 0)), lhs_dilation=(1, 1), rhs_dilation=(1, 1),
                  feature_group_count=1, flip=False)
    want = conv_general_dilated.impls["cpu"](x, w, **params)
    got = conv_general_dilated.impls["cuda"](to_device(x), to_device(w), **params, method=method)
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-12)


@pytest.mark.parametrize("method", ["auto", "im2col", "folded", "direct"])
def test_conv_as_called_by_ops(method):
    """conv2d/conv1d with stride, padding, dilation and groups, and the transposed convolutions of
    their backward pass."""
    with recorded(conv_general_dilated) as calls:
        x, w = _leaf((2, 4, 5, 5)), _leaf((4, 2, 3, 2))
        y = tidu.nn.functional.conv2d(x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
        s, k = _leaf((2, 3, 7)), _leaf((2, 3, 3))
        z = tidu.nn.functional.conv1d(s, k, stride=2, padding=1, dilation=2)
        (y.sum() + (z * z).sum()).backward()
    _replay(conv_general_dilated, calls, **({} if method == "auto" else {"method": method}))


T = (lambda x: x.T)  # noqa: E731
VIEWS = [  # (lhs shape, lhs view, rhs shape, rhs view, dimension numbers of the views)
    ((4, 3), T, (4, 5), None, (((1,), (0,)), ((), ()))),  # a transposed view: cuBLAS's flag, no copy
    ((3, 4), None, (5, 4), T, (((1,), (0,)), ((), ()))),
    ((3, 7), lambda x: x[:, 1:5], (4, 9), lambda x: x[:, 2:7], (((1,), (0,)), ((), ()))),  # leading dims
    ((3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)), (2, 4, 5), None, (((2,), (1,)), ((0,), (0,)))),  # batch 0
    ((4,), lambda x: np.broadcast_to(x, (3, 4)), (4, 5), None, (((1,), (0,)), ((), ()))),  # stride-0 rows: copy
    ((3, 4), lambda x: x[::-1], (4, 5), lambda x: x[:, ::-2], (((1,), (0,)), ((), ()))),  # negative strides: copy
    ((2, 3, 4), lambda x: x.transpose(1, 0, 2), (3, 4, 5), None, (((2,), (1,)), ((0,), (0,)))),  # batch inside
    ((2, 5, 3), lambda x: x.transpose(0, 2, 1), (2, 5, 4), lambda x: x.transpose(0, 2, 1),
     (((2,), (2,)), ((0,), (0,)))),
]


COPIES = [0, 0, 0, 0, 1, 2, 0, 0]  # operands copied before the gemm, per case


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("case", range(len(VIEWS)))
def test_dot_general_views(case, dtype, monkeypatch):
    """``dot_general`` reads strided operands (transposed, sliced, broadcast) in place where it can."""
    from tidu.backends.cuda import linalg

    copies = []
    monkeypatch.setattr(linalg, "permuted", lambda x, perm: copies.append(perm) or permuted(x, perm))
    sa, va, sb, vb, dims = VIEWS[case]
    a, b = _array(sa, dtype), _array(sb, dtype)
    va, vb = va or (lambda x: x), vb or (lambda x: x)
    want = dot_general.impls["cpu"](np.ascontiguousarray(va(a)), np.ascontiguousarray(vb(b)), dimension_numbers=dims)
    got = dot_general.impls["cuda"](device_view(a, va), device_view(b, vb), dimension_numbers=dims)
    assert got.is_c_contiguous and got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-5)
    if dtype != "int64":  # the integer kernel reads C-contiguous operands
        assert len(copies) == COPIES[case]


def test_pointwise_conv_is_one_gemm(monkeypatch):
    """A 1x1 convolution with unit strides and no padding multiplies the input itself."""
    from tidu.backends.cuda import conv

    monkeypatch.setattr(conv, "_im2col_kernel", lambda dtype: pytest.fail("im2col ran"))
    sx, sw, params = CONVS[4]
    check(conv_general_dilated, _array(sx, "float64"), _array(sw, "float64"), **params)
