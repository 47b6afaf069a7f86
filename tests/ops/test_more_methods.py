"""Tensor methods and functional names filled in from PyTorch's list, compared with PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF  # noqa: N812

import tidu
import tidu.nn.functional as F  # noqa: N812


def _np(t: object) -> np.ndarray:
    return t.detach().numpy()


def _both(a: np.ndarray, grad: bool = False) -> tuple[tidu.Tensor, torch.Tensor]:
    return tidu.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def test_conjugate_transposes_match_torch() -> None:
    a = np.arange(6.0).reshape(2, 3)
    x, tx = _both(a, grad=True)
    for get in (lambda t: t.H, lambda t: t.mH, lambda t: t.adjoint()):
        np.testing.assert_array_equal(_np(get(x)), get(tx).detach().numpy())
    np.testing.assert_array_equal(_np(tidu.adjoint(x)), torch.adjoint(tx).detach().numpy())
    (x.H * tidu.tensor(a.T)).sum().backward()
    (tx.H * torch.tensor(a.T)).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), tx.grad.numpy())
    for lib, get, msg in ((tidu, lambda t: t.H, "only supported on matrices \\(2-D"),
                          (torch, lambda t: t.H, "only supported on matrices \\(2-D"),
                          (tidu, lambda t: t.mH, "matrices or batches"), (torch, lambda t: t.mH, "matrices or batches")):
        with pytest.raises(RuntimeError, match=msg):
            get(lib.ones(2, 2, 2) if msg.startswith("only") else lib.ones(3))


@pytest.mark.parametrize("name", ["addmm_", "addbmm_", "addmv_", "baddbmm_"])
def test_inplace_products_match_torch(name: str) -> None:
    rng = np.random.default_rng(0)
    shapes = {"addmm_": ((2, 4), (2, 3), (3, 4)), "addbmm_": ((2, 4), (5, 2, 3), (5, 3, 4)),
              "addmv_": ((2,), (2, 3), (3,)), "baddbmm_": ((5, 2, 4), (5, 2, 3), (5, 3, 4))}[name]
    arrays = [rng.standard_normal(s) for s in shapes]
    ours, theirs = [tidu.tensor(a) for a in arrays], [torch.tensor(a) for a in arrays]
    out = getattr(ours[0], name)(ours[1], ours[2], beta=0.5, alpha=2.0)
    getattr(theirs[0], name)(theirs[1], theirs[2], beta=0.5, alpha=2.0)
    assert out is ours[0]
    np.testing.assert_allclose(_np(ours[0]), theirs[0].numpy(), rtol=1e-12)


def test_method_forms_of_functions() -> None:
    a = np.array([[-1.0, 0.2], [0.7, -0.3]])
    x, tx = _both(a)
    np.testing.assert_array_equal(_np(x.diagflat()), tx.diagflat().numpy())
    np.testing.assert_array_equal(_np(x.hardshrink(0.5)), tx.hardshrink(0.5).numpy())
    w = np.array([0.25])
    np.testing.assert_array_equal(_np(x.prelu(tidu.tensor(w))), tx.prelu(torch.tensor(w)).numpy())
    assert tuple(x.new_empty_strided((2, 3), (3, 1)).shape) == tuple(tx.new_empty_strided((2, 3), (3, 1)).shape)


def test_random_draws_within_torchs_bounds() -> None:
    tidu.manual_seed(0)
    for dtype, args, low, high in ((tidu.int64, (-5, 5), -5, 4), (tidu.float32, (10,), 0, 9), (tidu.uint8, (), 0, 255),
                                   (tidu.bool, (), 0, 1), (tidu.float32, (), 0, 2 ** 24), (tidu.int16, (3, 4), 3, 3)):
        values = tidu.zeros(4000, dtype=dtype).random_(*args)
        assert values.dtype is dtype
        v = values.numpy().astype(np.float64)
        assert v.min() >= low and v.max() <= high and (v == np.round(v)).all()
        if high - low < 300:
            assert v.min() == low and v.max() == high  # every value in the range is drawn
    x = tidu.zeros(3)
    assert x.random_(to=3, generator=tidu.Generator().manual_seed(1)) is x


def test_random_errors_match_torch() -> None:
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to'"):
            lib.zeros(3).random_(5, 2)
        with pytest.raises(RuntimeError, match="from is out of bounds for unsigned char"):
            lib.zeros(3, dtype=lib.uint8).random_(-1, 5)
        with pytest.raises(RuntimeError, match="to - 1 is out of bounds for signed char"):
            lib.zeros(3, dtype=lib.int8).random_(0, 1000)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            lib.zeros(2, requires_grad=True).random_()


def test_resize_matches_torch_on_kept_elements() -> None:
    x, tx = tidu.arange(6.0), torch.arange(6.0)
    version = x._version.value
    for size in ((2, 2), (4,), (2, 2)):
        assert x.resize_(*size) is x
        tx.resize_(*size)
        np.testing.assert_array_equal(_np(x), tx.numpy())
    assert x._version.value > version
    grown = tidu.arange(3.0).resize_(2, 3)
    np.testing.assert_array_equal(_np(grown)[0], [0.0, 1.0, 2.0])  # kept; the rest are zeros here
    np.testing.assert_array_equal(_np(tidu.ones(2).resize_as_(tidu.ones(1, 3)))[0, :2], [1.0, 1.0])
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            lib.ones(3, requires_grad=True).resize_(2)


def test_triangular_solve_and_ormqr_match_torch() -> None:
    rng = np.random.default_rng(1)
    a = np.triu(rng.standard_normal((3, 3))) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    (A, tA), (B, tB) = _both(a, True), _both(b, True)  # noqa: N806
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for upper, transpose, unit in ((True, False, False), (True, True, False), (False, False, True)):
            coeff, tcoeff = (A, tA) if upper else (A.mT, tA.mT)
            ours = tidu.triangular_solve(B, coeff, upper, transpose, unit)
            theirs = torch.triangular_solve(tB, tcoeff, upper, transpose, unit)
            np.testing.assert_allclose(_np(ours.solution), theirs.solution.detach().numpy(), rtol=1e-12)
            np.testing.assert_array_equal(_np(ours.cloned_coefficient), theirs.cloned_coefficient.detach().numpy())
            ours.solution.sum().backward()
            theirs.solution.sum().backward()
        np.testing.assert_allclose(_np(A.grad), tA.grad.numpy(), rtol=1e-10)
        np.testing.assert_allclose(_np(B.grad), tB.grad.numpy(), rtol=1e-10)
    with pytest.warns(UserWarning, match="deprecated"):
        B.triangular_solve(A)
    m = rng.standard_normal((5, 3))
    c = rng.standard_normal((5, 2))
    a_, tau = tidu.geqrf(tidu.tensor(m))
    ta_, ttau = torch.geqrf(torch.tensor(m))
    C, tC = _both(c, True)  # noqa: N806
    for left, transpose in ((True, False), (True, True)):
        ours, theirs = a_.ormqr(tau, C, left, transpose), torch.ormqr(ta_, ttau, tC, left, transpose)
        np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), atol=1e-12)
        ours.pow(2).sum().backward()
        theirs.pow(2).sum().backward()
    np.testing.assert_allclose(_np(C.grad), tC.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(_np(tidu.ormqr(a_, tau, tidu.tensor(c.T), left=False)),
                               torch.ormqr(ta_, ttau, torch.tensor(c.T), left=False).numpy(), atol=1e-12)


@pytest.mark.parametrize(("name", "args"), [("relu", ()), ("elu", (0.7,)), ("leaky_relu", (0.2,)),
                                            ("hardtanh", (-0.5, 0.5)), ("celu", (1.5,)), ("selu", ()),
                                            ("threshold", (0.1, -2.0))])
def test_functional_inplace_forms_match_torch(name: str, args: tuple) -> None:
    a = np.random.default_rng(2).standard_normal(6)
    for inplace_form in (True, False):
        x, tx = _both(a)
        if inplace_form:
            out, tout = getattr(F, name + "_")(x, *args), getattr(TF, name + "_")(tx, *args)
        else:
            out, tout = getattr(F, name)(x, *args, inplace=True), getattr(TF, name)(tx, *args, inplace=True)
        assert out is x and tout is tx
        np.testing.assert_allclose(_np(x), tx.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["relu", "relu6", "silu", "hardsigmoid", "hardswish", "mish", "leaky_relu", "elu",
                                  "hardtanh"])
def test_inplace_flag_writes_the_input_and_keeps_gradients(name: str) -> None:
    a = np.random.default_rng(3).uniform(-4, 4, 8)
    (w, tw) = _both(a, True)
    x, tx = w * 1.0, tw * 1.0
    out, tout = getattr(F, name)(x, inplace=True), getattr(TF, name)(tx, inplace=True)
    assert out is x
    np.testing.assert_allclose(_np(x), tx.detach().numpy(), rtol=1e-6)
    (out * tidu.tensor(a)).sum().backward()
    (tout * torch.tensor(a)).sum().backward()
    np.testing.assert_allclose(_np(w.grad), tw.grad.numpy(), rtol=1e-6, atol=1e-12)


def test_dropout_inplace_writes_the_input() -> None:
    x = tidu.ones(1000)
    assert F.dropout(x, 0.5, inplace=True) is x
    assert set(np.unique(_np(x))) <= {0.0, 2.0} and 0 < int((x == 0).sum()) < 1000
    y = tidu.ones(2, 3, 4)
    assert F.dropout2d(y, 0.5, training=False, inplace=True) is y


@pytest.mark.parametrize(("name", "shape", "args"), [("max_pool1d", (1, 2, 8), (3, 2)), ("max_pool2d", (1, 2, 6, 6), (2,)),
                                                     ("max_pool3d", (1, 1, 4, 4, 4), (2,)),
                                                     ("adaptive_max_pool1d", (1, 2, 9), (4,)),
                                                     ("adaptive_max_pool2d", (1, 2, 7, 5), ((3, 2),)),
                                                     ("adaptive_max_pool3d", (1, 1, 5, 4, 4), (2,))])
def test_pooling_with_indices_names(name: str, shape: tuple, args: tuple) -> None:
    a = np.random.default_rng(4).permutation(int(np.prod(shape))).reshape(shape).astype(np.float64)
    (out, idx), (tout, tidx) = getattr(F, name + "_with_indices")(tidu.tensor(a), *args), \
        getattr(TF, name + "_with_indices")(torch.tensor(a), *args)
    np.testing.assert_array_equal(_np(out), tout.numpy())
    np.testing.assert_array_equal(_np(idx), tidx.numpy())


def test_upsample_names_warn_and_match_interpolate() -> None:
    a = np.random.default_rng(5).standard_normal((1, 2, 3, 3))
    for name, kwargs in (("upsample", {"scale_factor": 2, "mode": "bilinear", "align_corners": False}),
                         ("upsample_nearest", {"scale_factor": 2}), ("upsample_bilinear", {"size": (5, 4)})):
        with pytest.warns(UserWarning, match="deprecated"):
            ours = getattr(F, name)(tidu.tensor(a), **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = getattr(TF, name)(torch.tensor(a), **kwargs)
        np.testing.assert_allclose(_np(ours), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", ["x.geometric_(0)", "x.geometric_(1.0)", "x.log_normal_(0, 0)", "x.exponential_(0)",
                                  "x.exponential_(-1)", "x.cauchy_(0, 0)", "x.normal_(0, -1)", "x.uniform_(2, 1)",
                                  "x.bernoulli_(1.5)", "x.random_(3, 3)"])
def test_random_fills_check_their_parameters_like_torch(call: str) -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(call, lambda L: {"x": L.zeros(3)})


def test_scatter_with_reduce_multiply_and_dim_order_match_torch() -> None:
    results = []
    for L in (tidu, torch):
        index = L.tensor([[0, 0], [2, 2]])
        with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is deprecated"):
            by_tensor = L.ones(2, 3).scatter(1, index, L.tensor([[2.0, 3.0], [4.0, 5.0]]), reduce="multiply")
        by_number = L.ones(2, 3).scatter_(1, index, 2.0, reduce="multiply")
        orders = [L.ones(2, 3, 4).permute(2, 0, 1).dim_order(), L.ones(2, 1, 3).dim_order(), L.ones(3, 4).t().dim_order()]
        results.append((by_tensor.tolist(), by_number.tolist(), orders))
    assert results[0] == results[1]
