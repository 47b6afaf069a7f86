"""Creation functions and dtype inference against PyTorch (values, shapes, dtypes, errors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import tidu
from tests.test_torch_oracle import assert_same, assert_same_error, errors_of

EXACT = {"rtol": 0, "atol": 0}


def _both(fn: Callable) -> tuple[Any, Any]:
    return fn(tidu), fn(torch)


CASES = {
    "tensor-np-scalar-list-promotes": lambda L: L.tensor([np.float64(1.5), 1.0]),
    "tensor-np-float32-and-int": lambda L: L.tensor([np.float32(1.5), 1]),
    "tensor-np-int32-and-int": lambda L: L.tensor([np.int32(1), 1]),
    "tensor-np-int32-and-bool": lambda L: L.tensor([np.int32(1), True]),
    "tensor-list-of-arrays": lambda L: L.tensor([np.array([1, 2], dtype=np.int32), np.array([1.0, 2.0])]),
    "tensor-nested-empty": lambda L: L.tensor([[], []]),
    "tensor-bool-float": lambda L: L.tensor([True, 2.5]),
    "tensor-of-tensor": lambda L: L.tensor(L.tensor([1, 2])),
    "tensor-int32-0d-and-float": lambda L: L.tensor([L.tensor(1, dtype=L.int32), 2.5]),
    "tensor-tuple": lambda L: L.tensor(((1, 2), (3, 4))),
    "tensor-dtype-cast": lambda L: L.tensor([1.7, -2.2], dtype=L.int32),
    "as_tensor-dtype": lambda L: L.as_tensor(np.arange(3), dtype=L.float32),
    "as_tensor-list-int": lambda L: L.as_tensor([1, 2]),
    "full-bool": lambda L: L.full((2,), True),
    "full-float-to-int": lambda L: L.full((2,), 1.5, dtype=L.int64),
    "full-int-size": lambda L: L.full([3, 1], -2),
    "full_like-int": lambda L: L.full_like(L.zeros(2, dtype=L.int64), 2.7),
    "full_like-dtype": lambda L: L.full_like(L.zeros(2), 2.7, dtype=L.float64),
    "zeros_like-dtype": lambda L: L.zeros_like(L.ones(2), dtype=L.int32),
    "ones_like-bool": lambda L: L.ones_like(L.zeros(2, 2, dtype=L.bool)),
    "empty_like": lambda L: L.empty_like(L.ones(2, 3, dtype=L.float64)).zero_(),
    "zeros-list-size": lambda L: L.zeros([2, 3]),
    "ones-0d": lambda L: L.ones(()),
    "arange-float-step": lambda L: L.arange(0, 5, 1.5),
    "arange-float-end": lambda L: L.arange(1, 2.5),
    "arange-negative-step": lambda L: L.arange(5, 0, -2),
    "arange-np-int": lambda L: L.arange(np.int32(3)),
    "arange-0d-tensor": lambda L: L.arange(L.tensor(3)),
    "arange-float-tenth": lambda L: L.arange(0, 1, 0.1),
    "arange-empty": lambda L: L.arange(0),
    "arange-dtype-int32": lambda L: L.arange(4, dtype=L.int32),
    "linspace": lambda L: L.linspace(0, 1, 5),
    "linspace-7": lambda L: L.linspace(-1.5, 2.0, 7),
    "linspace-int": lambda L: L.linspace(0, 10, 5, dtype=L.int64),
    "linspace-float64": lambda L: L.linspace(0, 1, 11, dtype=L.float64),
    "linspace-1": lambda L: L.linspace(0, 1, 1),
    "linspace-0": lambda L: L.linspace(0, 1, 0),
    "eye": lambda L: L.eye(3),
    "eye-rect": lambda L: L.eye(2, 3),
    "eye-int": lambda L: L.eye(2, dtype=L.int64),
    "eye-0": lambda L: L.eye(0),
    "new_zeros": lambda L: L.ones(2, dtype=L.float64).new_zeros(2, 3),
    "new_ones-dtype": lambda L: L.ones(2).new_ones((3,), dtype=L.int32),
    "new_empty": lambda L: L.ones(2, dtype=L.int64).new_empty(2).zero_(),
    "new_full": lambda L: L.ones(2, dtype=L.float64).new_full((2, 2), 1.5),
    "new_tensor": lambda L: L.ones(2, dtype=L.float64).new_tensor([1, 2]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_creation_matches_torch(name: str) -> None:
    out, ref = _both(CASES[name])
    tol = {"rtol": 1e-6, "atol": 1e-7} if name.startswith(("linspace", "arange")) else EXACT
    assert_same(out, ref, tol)


def test_default_dtype_changes_inference() -> None:
    try:
        for L in (tidu, torch):
            L.set_default_dtype(L.float64)
        for fn in (lambda L: L.tensor([1.5]), lambda L: L.arange(0.5, 2), lambda L: L.full((1,), 2.0),
                   lambda L: L.linspace(0, 1, 3), lambda L: L.zeros(2), lambda L: L.tensor([np.float32(1.0), 2.0])):
            assert_same(*_both(fn), EXACT)
        assert tidu.get_default_dtype() is tidu.float64
    finally:
        tidu.set_default_dtype(tidu.float32)
        torch.set_default_dtype(torch.float32)


# hypothesis: dtype inference of nested lists of bools, ints and floats
_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.floats(-3, 3, allow_nan=False).map(lambda v: v + 0.5))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 3).flatmap(lambda n: st.lists(st.lists(_scalars, min_size=2, max_size=2), min_size=n,
                                                     max_size=n)), st.booleans())
def test_fuzz_dtype_inference_of_nested_lists(data: list, flat: bool) -> None:
    if flat:
        data = [v for row in data for v in row]
    assert_same(*_both(lambda L: L.tensor(data)), EXACT)


@settings(max_examples=20, deadline=None)
@given(st.lists(_scalars, min_size=0, max_size=4), st.sampled_from(["float32", "float64", "int32", "int64", "bool"]))
def test_fuzz_explicit_dtype(data: list, dtype: str) -> None:
    assert_same(*_both(lambda L: L.tensor(data, dtype=getattr(L, dtype))), EXACT)


# --- random ------------------------------------------------------------------------------------
RANDOM = {
    "rand_like": lambda L: L.rand_like(L.zeros(2, 3, dtype=L.float64)),
    "randn_like": lambda L: L.randn_like(L.zeros(4)),
    "randint-high": lambda L: L.randint(5, (3,)),
    "randint-low-high": lambda L: L.randint(2, 5, (3, 2)),
    "randint-dtype": lambda L: L.randint(5, (3,), dtype=L.float32),
    "randn-tuple": lambda L: L.randn((2, 2)),
    "rand-0d": lambda L: L.rand(()),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_shapes_and_dtypes(name: str) -> None:
    out, ref = _both(RANDOM[name])
    assert tuple(out.shape) == tuple(ref.shape) and str(out.dtype)[5:] == str(ref.dtype)[6:]


def test_random_ranges_and_reproducibility() -> None:
    tidu.manual_seed(7)
    a = tidu.randint(2, 5, (1000,))
    assert set(a.tolist()) == {2, 3, 4}
    u = tidu.rand(1000, dtype=tidu.float64).numpy()
    assert 0 <= u.min() and u.max() < 1
    n = tidu.randn(4000, dtype=tidu.float64).numpy()
    assert abs(n.mean()) < 0.1 and abs(n.std() - 1) < 0.1
    tidu.manual_seed(7)
    assert tidu.randint(2, 5, (1000,)).tolist() == a.tolist()


# --- errors --------------------------------------------------------------------------------------
ERRORS = {
    "requires-grad-int-tensor": (lambda L: L.tensor([1], requires_grad=True), RuntimeError),
    "requires-grad-int-zeros": (lambda L: L.zeros(2, dtype=L.int64, requires_grad=True), RuntimeError),
    "requires-grad-arange": (lambda L: L.arange(3, requires_grad=True), RuntimeError),
    "requires-grad-int-method": (lambda L: L.tensor([1]).requires_grad_(), RuntimeError),
    "ragged": (lambda L: L.tensor([[1, 2], [3]]), ValueError),
    "ragged-scalar": (lambda L: L.tensor([[1, 2], 3]), TypeError),
    "str-first": (lambda L: L.tensor(["a"]), ValueError),
    "arange-step-0": (lambda L: L.arange(0, 5, 0), RuntimeError),
    "arange-sign": (lambda L: L.arange(5, 0), RuntimeError),
    "linspace-negative": (lambda L: L.linspace(0, 1, -1), RuntimeError),
    "eye-negative": (lambda L: L.eye(-1), RuntimeError),
    "randint-empty-range": (lambda L: L.randint(5, 2, (3,)), RuntimeError),
    "rand-int": (lambda L: L.rand(2, dtype=L.int64), NotImplementedError),
    "zeros-float-size": (lambda L: L.zeros(2, 3.0), TypeError),
    "zeros-negative": (lambda L: L.zeros(2, -1), RuntimeError),
    "ones-negative": (lambda L: L.ones(-1), RuntimeError),
    "full-negative": (lambda L: L.full((2, -3), 1.0), RuntimeError),
    "new_zeros-negative": (lambda L: L.ones(1).new_zeros(-1), RuntimeError),
    "default-dtype-int": (lambda L: L.set_default_dtype(L.int64), TypeError),
    # no size at all is a forgotten argument, not a 0-d tensor (that is ``()``)
    "zeros-no-size": (lambda L: L.zeros(dtype=L.float32), TypeError),
    "ones-no-size": (lambda L: L.ones(), TypeError),
    "empty-no-size": (lambda L: L.empty(requires_grad=True), TypeError),
    "rand-no-size": (lambda L: L.rand(), TypeError),
    "randn-no-size": (lambda L: L.randn(dtype=L.float64), TypeError),
    "new_ones-no-size": (lambda L: L.ones(1).new_ones(), TypeError),
    "new_empty-no-size": (lambda L: L.ones(1).new_empty(dtype=L.float64), TypeError),
}
MESSAGES = {  # where the exact message matters to scripts
    "requires-grad-int-tensor", "requires-grad-int-zeros", "requires-grad-int-method", "ragged", "str-first",
    "arange-step-0", "arange-sign", "linspace-negative", "eye-negative", "randint-empty-range", "rand-int",
    "default-dtype-int", "ragged-scalar", "zeros-float-size", "zeros-negative", "ones-negative", "full-negative", "new_zeros-negative",
    "zeros-no-size", "ones-no-size", "empty-no-size", "randn-no-size", "new_ones-no-size", "new_empty-no-size",
}


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(()), lambda L: L.ones([]), lambda L: L.empty(()), lambda L: L.rand(()), lambda L: L.randn([]),
    lambda L: L.full((), 2.0), lambda L: L.randint(0, 5, ()), lambda L: L.ones(2).new_zeros(()),
])
def test_an_empty_size_makes_a_0d_tensor_as_in_torch(make) -> None:
    ours, ref = make(tidu), make(torch)
    assert tuple(ours.shape) == tuple(ref.shape) == ()
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")


def test_0d_tensors_through_the_library_s_own_size_calls() -> None:
    """Dropout, ``nn.init`` and a custom Function's missing gradient make tensors of a 0-d
    tensor's shape (``*shape`` would be no size at all)."""
    x = tidu.tensor(2.0, requires_grad=True)
    assert tidu.nn.functional.dropout(x, 0.5).shape == ()
    assert tidu.nn.init.uniform_(tidu.empty(())).shape == ()
    assert tidu.nn.init.normal_(tidu.empty(())).shape == ()

    class Twice(tidu.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):  # noqa: ANN001, ANN205 - PyTorch's signature
            return a * 2, b * 3

        @staticmethod
        def backward(ctx, ga, gb):  # noqa: ANN001, ANN205
            return ga * 2, gb * 3

    y = tidu.tensor(1.0, requires_grad=True)
    a, _ = Twice.apply(x, y)
    a.backward()  # the unused output's gradient is materialized as zeros of its 0-d shape
    assert x.grad.item() == 2.0 and y.grad.item() == 0.0


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    fn, exc = ERRORS[name]
    with pytest.raises(exc) as ref:
        fn(torch)
    with pytest.raises(exc) as ours:
        fn(tidu)
    if name in MESSAGES:
        assert str(ours.value) == str(ref.value)


# --- conversions and copies ------------------------------------------------------------------------
def test_clone_is_a_recorded_copy() -> None:
    x = tidu.tensor([1.0, -0.0, float("nan")], requires_grad=True)
    y = x.clone()
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    assert y.grad_fn is not None
    (y * tidu.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]
    assert np.signbit(y.detach().numpy()[1])


def test_contiguous_and_cpu() -> None:
    for L in (tidu, torch):
        x = L.arange(6.0).reshape(2, 3).t()
        assert not x.is_contiguous()
        c = x.contiguous()
        assert c.is_contiguous() and c.tolist() == x.tolist()
        assert x.cpu() is x and c.contiguous() is c


def test_to_variants() -> None:
    for fn in (lambda L: L.zeros(2).to("cpu", L.int64), lambda L: L.zeros(2).to(L.zeros(1, dtype=L.int32)),
               lambda L: L.ones(2).to(dtype=L.float64), lambda L: L.tensor([1.5, -2.5]).int()):
        assert_same(*_both(fn), EXACT)


def test_dtype_queries() -> None:
    for L in (tidu, torch):
        assert L.ones(1).is_floating_point() and not L.ones(1, dtype=L.int32).is_floating_point()
        assert L.ones(1, dtype=L.float64).element_size() == 8 and L.ones(1, dtype=L.bool).element_size() == 1


def test_to_copy_makes_a_copy() -> None:
    for L in (tidu, torch):
        x = L.ones(2)
        y = x.to(L.float32, copy=True)
        y.add_(1)
        assert x.tolist() == [1.0, 1.0] and x.to(L.float32) is x


def test_item_and_tolist_types() -> None:
    for fn in (lambda L: L.tensor(3.5).item(), lambda L: L.tensor([[1, 2]]).tolist(),
               lambda L: L.tensor([True]).item(), lambda L: L.tensor(2.5, dtype=L.float64).tolist()):
        ours, ref = _both(fn)
        assert ours == ref and type(ours) is type(ref)


def test_from_numpy_shares_and_as_tensor_shares() -> None:
    a = np.arange(3.0)
    t = tidu.as_tensor(a)
    a[0] = 9
    assert t.tolist()[0] == 9
    x = tidu.ones(2)
    assert tidu.as_tensor(x) is x


# --- generators ---------------------------------------------------------------------------------------
def test_a_generator_is_a_stream_of_its_own() -> None:
    """Draws from a ``Generator`` repeat with its seed and leave the default stream where it was;
    every random function and ``nn.init`` takes one, as PyTorch's do."""
    tidu.manual_seed(5)
    expected_default = [tidu.rand(2).tolist() for _ in range(2)]
    tidu.manual_seed(5)
    g = tidu.Generator().manual_seed(11)
    runs = []
    for _ in range(2):
        g.manual_seed(11)
        runs.append([
            tidu.rand(3, generator=g).tolist(), tidu.randn(2, 2, generator=g).tolist(),
            tidu.randint(0, 9, (4,), generator=g).tolist(), tidu.randperm(5, generator=g).tolist(),
            tidu.empty(3).normal_(generator=g).tolist(), tidu.empty(3).uniform_(-1, 1, generator=g).tolist(),
            tidu.nn.init.kaiming_uniform_(tidu.empty(2, 3), generator=g).tolist(),
            tidu.nn.init.trunc_normal_(tidu.empty(3), generator=g).tolist(),
            tidu.nn.init.orthogonal_(tidu.empty(2, 2), generator=g).tolist(),
        ])
        tidu.rand(1)  # the default stream moves on between the runs: the generator's does not care
    assert runs[0] == runs[1]
    tidu.manual_seed(5)
    assert [tidu.rand(2).tolist() for _ in range(2)] == expected_default
    assert g.initial_seed() == 11 and tidu.manual_seed(3) is tidu.default_generator and tidu.initial_seed() == 3
    for L in (tidu, torch):  # noqa: N806 - reseeding from entropy reports the seed it took
        assert L.seed() == L.initial_seed()


def test_generator_state_round_trips_and_seed_reseeds() -> None:
    g = tidu.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()  # PyTorch's default seed
    state = g.get_state()
    first = tidu.rand(4, generator=g).tolist()
    g.set_state(state)
    assert tidu.rand(4, generator=g).tolist() == first
    seed = g.seed()
    assert g.initial_seed() == seed
    with pytest.raises(TypeError, match="tidu.Generator"):
        tidu.rand(2, generator="not a generator")


def test_randperm_and_loaders_take_a_generator_like_torch() -> None:
    for lib in (tidu, torch):
        p = lib.randperm(6, generator=lib.Generator().manual_seed(0))
        assert sorted(p.tolist()) == list(range(6)) and str(p.dtype).endswith("int64")
        assert lib.randperm(0).tolist() == [] and str(lib.randperm(3, dtype=lib.int32).dtype).endswith("int32")
    dataset = tidu.utils.data.TensorDataset(tidu.arange(8))
    orders = []
    for _ in range(2):
        loader = tidu.utils.data.DataLoader(dataset, batch_size=8, shuffle=True, generator=tidu.Generator().manual_seed(1))
        orders.append(next(iter(loader))[0].tolist())
    assert orders[0] == orders[1] and sorted(orders[0]) == list(range(8))


def test_bernoulli_and_multinomial_draw_like_torch() -> None:
    """Frequencies, shapes and dtypes as PyTorch's, reproducible with a generator."""
    probs = [0.1, 0.5, 0.9]
    draws = tidu.bernoulli(tidu.tensor(probs).expand(20000, 3), generator=tidu.Generator().manual_seed(0))
    assert draws.dtype is tidu.float32 and set(np.unique(draws.numpy())) <= {0.0, 1.0}
    np.testing.assert_allclose(draws.mean(0).numpy(), probs, atol=0.02)
    assert tidu.tensor([0.0, 1.0]).bernoulli().tolist() == [0.0, 1.0]
    weights = tidu.tensor([[1.0, 0.0, 3.0], [0.0, 2.0, 2.0]])
    counts = np.zeros((2, 3))
    samples = tidu.multinomial(weights, 8000, replacement=True, generator=tidu.Generator().manual_seed(1))
    assert samples.shape == (2, 8000) and samples.dtype is tidu.int64
    for row in range(2):
        counts[row] = np.bincount(samples[row].numpy(), minlength=3) / 8000
    np.testing.assert_allclose(counts, [[0.25, 0.0, 0.75], [0.0, 0.5, 0.5]], atol=0.02)
    no_repeats = weights[0].multinomial(2)
    assert sorted(no_repeats.tolist()) == [0, 2] and tuple(tidu.multinomial(weights[1], 1).shape) == (1,)
    g = tidu.Generator().manual_seed(4)
    first = tidu.multinomial(weights, 3, True, generator=g).tolist()
    assert tidu.multinomial(weights, 3, True, generator=g.manual_seed(4)).tolist() == first


@pytest.mark.parametrize("call", [
    "L.bernoulli(L.tensor([0.5, 1.5]))", "L.multinomial(L.tensor([1.0, 2.0]), 3)",
    "L.multinomial(L.tensor([-1.0, 2.0]), 1)", "L.multinomial(L.tensor([0.0, 0.0]), 1)",
    "L.multinomial(L.ones(2, 2, 2), 1)", "L.bernoulli(L.tensor([1, 0]))", "L.multinomial(L.tensor([1, 2]), 1)",
    "L.multinomial(L.tensor([1.0, 2.0]), 0)",
])
def test_bernoulli_and_multinomial_errors_match_torch(call: str) -> None:
    ref, ours = errors_of(call)
    assert (ours[0], ours[1].split("  (Could")[0]) == (ref[0], ref[1].split("  (Could")[0])


def test_poisson_and_binomial_draw_like_torch() -> None:
    """Means and variances of the draws, dtypes, PyTorch's edge cases, reproducible with a generator."""
    rates = tidu.tensor([0.0, 0.5, 4.0, 300.0], dtype=tidu.float64).expand(40000, 4)
    draws = tidu.poisson(rates, generator=tidu.Generator().manual_seed(0))
    assert draws.dtype is tidu.float64 and tuple(draws.shape) == (40000, 4)
    np.testing.assert_allclose(draws.mean(0).numpy(), [0.0, 0.5, 4.0, 300.0], rtol=0.02, atol=0.01)
    np.testing.assert_allclose(draws.var(0).numpy(), [0.0, 0.5, 4.0, 300.0], rtol=0.05, atol=0.01)
    g = tidu.Generator().manual_seed(5)
    assert tidu.poisson(rates[:3], g).tolist() == tidu.poisson(rates[:3], g.manual_seed(5)).tolist()
    for L in (tidu, torch):  # noqa: N806 - the library: differentiable in the rates with a zero gradient
        r = L.tensor([1.0, 2.0], requires_grad=True)
        L.poisson(r).sum().backward()
        assert r.grad.tolist() == [0.0, 0.0]
    counts = tidu.tensor([10.0, 10.0, -3.0, 7.0]).expand(40000, 4)
    probs = tidu.tensor([0.3, 1.5, 0.5, 0.0])
    drawn = tidu.binomial(counts, probs.expand(40000, 4), generator=tidu.Generator().manual_seed(1))
    assert drawn.dtype is tidu.float32
    np.testing.assert_allclose(drawn.mean(0).numpy(), [3.0, 10.0, 0.0, 0.0], atol=0.05)
    np.testing.assert_allclose(drawn.var(0).numpy(), [2.1, 0.0, 0.0, 0.0], atol=0.1)
    assert tuple(tidu.binomial(tidu.tensor([3.0, 4.0]), tidu.tensor([0.5])).shape) == (2,)  # broadcast, as torch


@pytest.mark.parametrize("call", [
    "L.poisson(L.tensor([-1.0]))", "L.poisson(L.tensor([float('nan')]))", "L.poisson(L.tensor([1, 2]))",
    "L.binomial(L.tensor([3]), L.tensor([0.5]))",
    "L.binomial(L.tensor([3.0]), L.tensor([0.5], dtype=L.float64))",
])
def test_poisson_and_binomial_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_frombuffer_shares_memory_and_checks_as_torch() -> None:
    import array

    for L in (tidu, torch):  # noqa: N806 - the library
        buffer = bytearray(8)
        t = L.frombuffer(buffer, dtype=L.float32)
        buffer[2:4] = b"\x80\x3f"  # 1.0 in the first float
        assert t.tolist() == [1.0, 0.0] and str(t.dtype).endswith("float32")
        assert L.frombuffer(array.array("q", [5, 6, 7]), dtype=L.int64, count=2, offset=8).tolist() == [6, 7]
        assert L.frombuffer(bytearray(8), dtype=L.float32, requires_grad=True).requires_grad
        with pytest.warns(UserWarning, match="not writable"):
            assert L.frombuffer(b"\x00\x00\x80\x3f", dtype=L.float32).tolist() == [1.0]


@pytest.mark.parametrize("call", [
    "L.frombuffer(bytearray(8), dtype=L.float32, count=3)", "L.frombuffer(bytearray(8), dtype=L.float32, offset=9)",
    "L.frombuffer(bytearray(0), dtype=L.float32)", "L.frombuffer(bytearray(7), dtype=L.float32)",
])
def test_frombuffer_errors_match_torch(call: str) -> None:
    assert_same_error(call)


def test_normal_draws_with_torch_s_shapes_dtypes_and_moments() -> None:
    gen = tidu.Generator().manual_seed(3)
    samples = tidu.normal(3.0, 2.0, size=(200000,), generator=gen)
    assert samples.dtype is tidu.float32
    assert abs(float(samples.mean()) - 3.0) < 0.02 and abs(float(samples.std()) - 2.0) < 0.02
    again = tidu.normal(3.0, 2.0, size=(200000,), generator=tidu.Generator().manual_seed(3))
    np.testing.assert_array_equal(samples.numpy(), again.numpy())
    mean = tidu.tensor([[0.0], [100.0]], dtype=tidu.float64)
    spread = tidu.normal(mean, tidu.tensor([1e-3, 1e-2, 1e-1], dtype=tidu.float64))
    assert spread.dtype is tidu.float64 and tuple(spread.shape) == (2, 3)
    assert np.abs(spread.numpy() - mean.numpy()).max() < 1.0
    for L in (torch, tidu):  # noqa: N806 - the library
        m = L.tensor([0.0, 1.0], requires_grad=True)
        s = L.tensor([1.0, 2.0], requires_grad=True)
        y = L.normal(m, s)
        assert y.requires_grad
        y.sum().backward()
        np.testing.assert_array_equal(m.grad.numpy(), [0.0, 0.0])  # a zero gradient, as PyTorch's
        np.testing.assert_array_equal(s.grad.numpy(), [0.0, 0.0])
        assert tuple(L.normal(0.0, s).shape) == (2,) and L.normal(m, 1.0).dtype is L.float32


@pytest.mark.parametrize("call", [
    "L.normal(L.ones(2), -L.ones(2))", "L.normal(0.0, 1.0)", "L.normal(L.ones(2), L.ones(3))",
    "L.normal(L.tensor([1]), 1.0)",
])
def test_normal_errors_match_torch(call: str) -> None:
    assert_same_error(call, same_message=False)


@pytest.mark.parametrize("lib_fn", [
    lambda L: L.logspace(0, 2, 3),
    lambda L: L.logspace(-1, 1, 5, base=2, dtype=L.float64),
    lambda L: L.logspace(1, 1, 1),
])
def test_logspace_matches_torch(lib_fn: Any) -> None:
    ours, ref = lib_fn(tidu), lib_fn(torch)
    assert str(ours.dtype).removeprefix("tidu.") == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6)


def test_randint_like_keeps_shape_and_dtype() -> None:
    x = tidu.randint_like(tidu.zeros(3, 4, dtype=tidu.int32), 3, 5)
    assert x.dtype is tidu.int32 and tuple(x.shape) == (3, 4) and set(x.numpy().ravel()) <= {3, 4}
    assert set(tidu.randint_like(tidu.zeros(1000), 2).numpy().ravel()) == {0.0, 1.0}


@pytest.mark.parametrize("call", ["L.tensor(range(4))", "L.tensor(range(2, 8, 2), dtype=L.float32)",
                                  "L.tensor([range(2), range(2)])"])
def test_tensor_of_ranges_matches_torch(call: str) -> None:
    ours, ref = (eval(call, {"L": L}) for L in (tidu, torch))  # noqa: S307
    assert (str(ours.dtype).split(".")[-1], ours.tolist()) == (str(ref.dtype).split(".")[-1], ref.tolist())


@pytest.mark.parametrize("call", ["L.tensor(2**63)", "L.tensor([1, 2**64])", "L.tensor(-2**63 - 1)"])
def test_an_int_beyond_int64_raises_like_torch(call: str) -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(call)


def test_linspace_rounds_each_value_once_as_pytorch() -> None:
    """PyTorch's ``linspace`` makes each value with one fused multiply-add in the dtype: bit for bit."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        a, b = rng.uniform(-10, 10, 2)
        steps = int(rng.integers(0, 40))
        for dt in ("float32", "float64"):
            ours = tidu.linspace(a, b, steps, dtype=getattr(tidu, dt)).numpy()
            theirs = torch.linspace(a, b, steps, dtype=getattr(torch, dt)).numpy()
            np.testing.assert_array_equal(ours, theirs)
