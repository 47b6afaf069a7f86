"""``tidu.special``'s orthogonal polynomials against PyTorch's: bit for bit over a grid of ``x`` and
``n`` (PyTorch's edges at |x| = 1, its closed forms for large n, its degree limits, negative,
fractional and non-finite n), dtypes and broadcasting, ``out=``, no gradient, and the errors."""

import math
import warnings

import numpy as np
import pytest
import torch

import tidu
from tests.test_torch_oracle import assert_same_error

NAMES = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
]
# where PyTorch's kernel returns an uninitialized value for x = NaN and n >= 2 (tidu: NaN)
UNINITIALIZED_AT_NAN = {
    "chebyshev_polynomial_u", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_w", "laguerre_polynomial_l", "legendre_polynomial_p",
}
_rng = np.random.default_rng(0)
X = np.concatenate([
    _rng.uniform(-1, 1, 60), _rng.uniform(0, 1, 30), _rng.uniform(-3, 3, 20),
    [0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 0.75, 2.0, -2.0, 1 - 2**-20, -1 + 2**-20, 1e10, -1e10, math.inf, -math.inf, math.nan],
])
N = np.array([*range(-2, 21), 25, 50, 100, 127, 128, 129, 200, 511, 512, 513, 1000, 2.5, 6.9, -0.5, -3.7,
              math.nan, math.inf, -math.inf, 1e19, -1e19, 2.0**40])


def _grid(name, dtype):
    x, n = X[:, None], N[None, :]
    if name in ("laguerre_polynomial_l", "legendre_polynomial_p") or name.startswith("shifted"):
        # both libraries loop n times here (never reaching NaN): keep n small
        n = np.where(np.abs(n) > 1e4, 1000.0, n)
    return x.astype(dtype), n.astype(dtype)


def _assert_same(ours, ref):
    assert isinstance(ours, tidu.Tensor) and ours.dtype.name == str(ref.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(ref.shape) and not ours.requires_grad
    a, b = ours.numpy(), ref.numpy()
    np.testing.assert_array_equal(a, b)  # NaN where PyTorch has NaN
    np.testing.assert_array_equal(np.signbit(a[~np.isnan(a)]), np.signbit(b[~np.isnan(b)]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_values_match_torch_bit_for_bit(name, dtype):
    x, n = _grid(name, dtype)
    ours = getattr(tidu.special, name)(tidu.tensor(x), tidu.tensor(n))
    ref = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    if name in UNINITIALIZED_AT_NAN:
        garbage = np.isnan(x) & (n >= 2) & (n < 2.0**63)
        assert np.isnan(ours.numpy()[np.broadcast_to(garbage, ours.shape)]).all()
        ref[torch.tensor(np.broadcast_to(garbage, tuple(ref.shape)))] = math.nan
    _assert_same(ours, ref)


@pytest.mark.parametrize("name", NAMES)
def test_number_operands_promotion_and_broadcasting_as_torch(name):
    cases = [
        lambda L: (L.tensor([[0.3], [-0.7], [1.5]]), L.tensor([0.0, 2.0, 5.0, 11.0])),
        lambda L: (L.tensor([0.3, 0.9]), 7),
        lambda L: (L.tensor([0.3, 0.9], dtype=L.float64), 9.6),
        lambda L: (0.4, L.tensor([3, 10])),
        lambda L: (2, L.tensor([3, 10])),
        lambda L: (L.tensor([0, 1, 2]), L.tensor([4])),
        lambda L: (L.tensor([True, False]), 3),
        lambda L: (L.tensor(0.6), L.tensor([[2.0], [12.0]], dtype=L.float64)),
        lambda L: (L.tensor([0.6, 0.2]), True),
        lambda L: (L.tensor(0.35), 10),
    ]
    for case in cases:
        ours = getattr(tidu.special, name)(*case(tidu))
        ref = getattr(torch.special, name)(*case(torch))
        _assert_same(ours, ref)
    _assert_same(getattr(tidu.special, name)(x=tidu.tensor([0.2]), n=4), getattr(torch.special, name)(x=torch.tensor([0.2]), n=4))


def test_hermite_degree_limits_depend_on_the_dtype_as_torch():
    for name in ("hermite_polynomial_h", "hermite_polynomial_he"):
        for dtype, n in (("float32", [127, 128, 129]), ("float64", [511, 512, 513])):
            x = np.array([1e-3, -1e-3, 0.0], dtype)
            ours = getattr(tidu.special, name)(tidu.tensor(x)[:, None], tidu.tensor(np.array(n, dtype)))
            ref = getattr(torch.special, name)(torch.tensor(x)[:, None], torch.tensor(np.array(n, dtype)))
            _assert_same(ours, ref)
            assert np.isnan(ours.numpy()[:, 2]).all()


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_torch(name):
    results = []
    for lib in (tidu, torch):
        x = lib.tensor([0.3, 0.6], requires_grad=True)
        out = getattr(lib.special, name)(x, lib.tensor(3.0, requires_grad=True))
        results.append((out.requires_grad, out.grad_fn is None))
    assert results[0] == results[1] == (False, True)
    assert_same_error(lambda L: getattr(L.special, name)(L.tensor([0.3], requires_grad=True), 3).sum().backward())


def test_out_as_torch():
    f = "chebyshev_polynomial_t"
    for lib in (tidu, torch):
        out = lib.empty(2, dtype=lib.float64)
        result = getattr(lib.special, f)(lib.tensor([0.3, 0.5]), 3, out=out)
        assert result is out and out.dtype == lib.float64
        np.testing.assert_allclose(out.numpy(), [-0.792, -1.0], rtol=1e-6)
        # the result has no gradient: PyTorch writes it even into an ``out`` that requires grad
        grad_out = lib.zeros(2, requires_grad=True)
        getattr(lib.special, f)(lib.tensor([0.3, 0.5], requires_grad=True), 3, out=grad_out)
        assert grad_out.requires_grad and grad_out.tolist() == pytest.approx([-0.792, -1.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            resized = getattr(lib.special, f)(lib.tensor([0.3, 0.5]), 3, out=lib.empty(3))
        assert tuple(resized.shape) == (2,) and [w.category for w in caught] == [UserWarning]
    assert_same_error(lambda L: L.special.legendre_polynomial_p(L.tensor([0.3]), 3, out=L.empty(1, dtype=L.int64)))


@pytest.mark.parametrize("name", NAMES)
def test_errors_as_torch(name):
    assert_same_error(lambda L: getattr(L.special, name)(L.tensor([0.5], dtype=L.float16), 3))
    assert_same_error(lambda L: getattr(L.special, name)(L.tensor([0.5], dtype=L.bfloat16), L.tensor([3])))
    assert_same_error(lambda L: getattr(L.special, name)(0.5, 3), same_message=False)
    with pytest.raises(TypeError, match=rf"^special_{name}\(\) received an invalid combination of arguments - got "
                                        r"\(float, int\)"):
        getattr(tidu.special, name)(0.5, 3)
    assert name in tidu.special.__all__


@pytest.mark.parametrize("name", NAMES)
def test_the_cuda_device_gives_the_cpu_values(name):
    """The same scalar functions in the device's kernels (the simulator in CI: there a fused
    multiply-add rounds twice, so within float64 rounding)."""
    x = np.linspace(-1.5, 2.5, 9)
    n = np.array([0, 1, 2, 3, 5, 7, 9, 12, -1], dtype=np.float64)
    fn = getattr(tidu.special, name)
    on_cpu = fn(tidu.tensor(x), tidu.tensor(n))
    on_device = fn(tidu.tensor(x, device="cuda"), tidu.tensor(n, device="cuda"))
    assert on_device.device.type == "cuda"
    np.testing.assert_allclose(on_device.cpu().numpy(), on_cpu.numpy(), rtol=1e-12, atol=1e-12)
