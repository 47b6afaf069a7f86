"""``tidu.nn.init`` (PyTorch's bounds and gains, tidu's RNG, in place, no graph) and
``tidu.nn.utils.clip_grad_norm_`` / ``clip_grad_value_`` against PyTorch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import tidu
from tidu.nn import init


@pytest.mark.parametrize("nonlinearity,param", [("linear", None), ("sigmoid", None), ("tanh", None),
                                                ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
                                                ("selu", None), ("conv2d", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(nonlinearity, param)


def test_calculate_gain_errors():
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="Unsupported nonlinearity"):
            lib.nn.init.calculate_gain("swish")
        with pytest.raises(ValueError, match="not a valid number"):
            lib.nn.init.calculate_gain("leaky_relu", "a")


def _std_bound(fn, shape, **kwargs):  # noqa: ANN001, ANN003, ANN202
    """(max |w|, std) of ``fn`` applied to an empty tensor of ``shape``, for tidu and torch."""
    tidu.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(init, fn)(tidu.empty(*shape), **kwargs).numpy()
    ref = getattr(torch.nn.init, fn)(torch.empty(*shape), **kwargs).numpy()
    return ours, ref


@pytest.mark.parametrize("fn,kwargs", [
    ("uniform_", {"a": -0.5, "b": 2.0}),
    ("normal_", {"mean": 1.0, "std": 0.3}),
    ("xavier_uniform_", {"gain": 2.0}),
    ("xavier_normal_", {}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {}),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "tanh"}),
])
def test_distributions_match_torch(fn, kwargs):
    ours, ref = _std_bound(fn, (64, 32, 3), **kwargs)
    assert ours.dtype == np.float32
    assert abs(ours.mean() - ref.mean()) < 0.05 * max(ref.std(), 1e-3) + 0.01
    assert abs(ours.std() / ref.std() - 1) < 0.03
    if "uniform" in fn:
        assert ours.min() >= ref.min() - 0.01 * ref.std() and ours.max() <= ref.max() + 0.01 * ref.std()
        assert ours.max() > ref.max() - 0.02 * ref.std()


def test_constant_fills_and_keeps_dtype():
    w = tidu.empty(2, 3, dtype=tidu.float64)
    assert init.constant_(w, 0.25) is w
    assert w.dtype is tidu.float64 and w.tolist() == [[0.25] * 3] * 2
    assert init.ones_(w).tolist() == [[1.0] * 3] * 2 and init.zeros_(w).tolist() == [[0.0] * 3] * 2


def test_init_of_a_parameter_is_not_recorded():
    layer = tidu.nn.Linear(3, 2)
    version = layer.weight._version.value
    init.normal_(layer.weight)
    assert layer.weight.is_leaf and layer.weight.requires_grad and layer.weight.grad_fn is None
    assert layer.weight._version.value == version + 1
    layer(tidu.ones(1, 3)).sum().backward()
    assert layer.weight.grad is not None


def test_seeded_init_is_reproducible():
    tidu.manual_seed(5)
    a = tidu.nn.Linear(4, 3).state_dict()
    tidu.manual_seed(5)
    b = tidu.nn.Linear(4, 3).state_dict()
    assert all(a[k].tolist() == b[k].tolist() for k in a)


def test_fan_errors_like_torch():
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2"):
            lib.nn.init.xavier_uniform_(lib.empty(3))
        with pytest.raises(ValueError, match="Mode fan_avg not supported"):
            lib.nn.init.kaiming_uniform_(lib.empty(3, 3), mode="fan_avg")


def _with_grads(lib, grads):  # noqa: ANN001, ANN202
    params = []
    for g in grads:
        p = lib.zeros(g.shape, dtype=lib.float64, requires_grad=True)
        (p * lib.tensor(g)).sum().backward()
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=(3, 4)), rng.normal(size=(5,)), rng.normal(size=())]
    ours, ref = _with_grads(tidu, grads), _with_grads(torch, grads)
    total = tidu.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    total_ref = torch.nn.utils.clip_grad_norm_(ref, max_norm, norm_type)
    assert total.dtype is tidu.float64 and total.shape == ()
    np.testing.assert_allclose(total.item(), total_ref.item(), rtol=1e-12)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_edge_cases():
    p = tidu.zeros(2, requires_grad=True)
    assert tidu.nn.utils.clip_grad_norm_([p], 1.0).item() == 0.0
    single = _with_grads(tidu, [np.array([3.0, 4.0])])[0]
    assert tidu.nn.utils.clip_grad_norm_(single, 1.0).item() == 5.0
    bad = _with_grads(tidu, [np.array([np.inf, 1.0])])
    with pytest.raises(RuntimeError, match="non-finite"):
        tidu.nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_matches_torch():
    grads = [np.array([[-3.0, 0.2], [0.9, 5.0]])]
    ours, ref = _with_grads(tidu, grads), _with_grads(torch, grads)
    tidu.nn.utils.clip_grad_value_(ours, 1.0)
    torch.nn.utils.clip_grad_value_(ref, 1.0)
    np.testing.assert_array_equal(ours[0].grad.numpy(), ref[0].grad.numpy())


@pytest.mark.filterwarnings("ignore:mean is more than 2 std")  # the bounds in a tail, on purpose
def test_trunc_normal_follows_torchs_distribution_within_its_bounds():
    tidu.manual_seed(0)
    torch.manual_seed(0)
    for mean, std, a, b in [(0.0, 1.0, -2.0, 2.0), (1.0, 2.0, 0.0, 3.0), (0.0, 0.02, -0.04, 0.04), (0.0, 1.0, 6.0, 7.0)]:
        ours = init.trunc_normal_(tidu.empty(100_000, dtype=tidu.float64), mean, std, a, b).numpy()
        ref = torch.nn.init.trunc_normal_(torch.empty(100_000, dtype=torch.float64), mean, std, a, b).numpy()
        assert a <= ours.min() and ours.max() <= b and not np.isnan(ours).any()
        spread = b - a
        np.testing.assert_allclose(np.quantile(ours, [0.1, 0.5, 0.9]), np.quantile(ref, [0.1, 0.5, 0.9]),
                                   atol=0.01 * spread)
    for lib in (tidu, torch):
        with pytest.raises(RuntimeError, match=r"found from=2 > to=1"):
            lib.nn.init.trunc_normal_(lib.empty(3), a=2.0, b=1.0)
        with pytest.warns(UserWarning, match="mean is more than 2 std from"):
            lib.nn.init.trunc_normal_(lib.empty(3), a=6.0, b=7.0)


def test_eye_and_orthogonal_match_torch():
    for shape in [(2, 3), (3, 2), (3, 3)]:
        np.testing.assert_array_equal(init.eye_(tidu.empty(shape)).numpy(), torch.nn.init.eye_(torch.empty(shape)).numpy())
    for shape, gain in [((3, 5), 1.0), ((5, 3), 2.0), ((4, 2, 3), 0.5)]:
        w = init.orthogonal_(tidu.empty(shape, dtype=tidu.float64), gain=gain).numpy().reshape(shape[0], -1)
        gram = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram, gain**2 * np.eye(min(w.shape)), atol=1e-12)
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            lib.nn.init.eye_(lib.empty(2, 2, 2))
        with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
            lib.nn.init.orthogonal_(lib.empty(3))


def test_parameters_to_vector_and_back_match_torch():
    results = []
    for lib in (tidu, torch):
        torch.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Linear(2, 1)).double()
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * lib.arange(vec.numel(), dtype=lib.float64)).sum().backward()
        grads = [p.grad.tolist() for p in model.parameters()]
        lib.nn.utils.vector_to_parameters(lib.arange(vec.numel(), dtype=lib.float64) / 2, model.parameters())
        params = [(p.tolist(), p.requires_grad, p.is_leaf) for p in model.parameters()]
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], model.parameters())
        results.append((tuple(vec.shape), grads, params))
    assert results[0] == results[1]


@pytest.mark.parametrize(("shape", "groups"), [((4, 2, 3), 1), ((6, 3, 3, 5), 2), ((2, 4, 3, 3, 3), 1), ((4, 1, 2), 4)])
def test_dirac_matches_torch(shape, groups) -> None:  # noqa: ANN001
    ours = tidu.nn.init.dirac_(tidu.empty(*shape), groups=groups)
    ref = torch.nn.init.dirac_(torch.empty(*shape), groups=groups)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.parametrize("call", ["L.nn.init.dirac_(L.empty(2, 3))", "L.nn.init.dirac_(L.empty(3, 2, 2), groups=2)",
                                  "L.nn.init.sparse_(L.empty(2, 3, 4), 0.5)"])
def test_dirac_and_sparse_errors_match_torch(call: str) -> None:
    from ..test_torch_oracle import assert_same_error

    assert_same_error(call)


def test_sparse_zeros_per_column_and_std() -> None:
    tidu.manual_seed(0)
    w = tidu.nn.init.sparse_(tidu.empty(400, 50), sparsity=0.3, std=0.02)
    ref = torch.nn.init.sparse_(torch.empty(400, 50), sparsity=0.3, std=0.02)
    zeros, ref_zeros = (w == 0).sum(0).numpy(), (ref == 0).sum(0).numpy()
    np.testing.assert_array_equal(zeros, ref_zeros)  # ceil(0.3 * 400) = 120 in every column
    assert zeros[0] == 120
    nonzero = w.numpy()[w.numpy() != 0]
    assert abs(nonzero.std() - 0.02) < 0.002 and abs(nonzero.mean()) < 0.002
    tidu.manual_seed(0)
    again = tidu.nn.init.sparse_(tidu.empty(400, 50), sparsity=0.3, std=0.02)
    np.testing.assert_array_equal(w.numpy(), again.numpy())  # tidu's generator, seeded


DEPRECATED_INIT = [
    ("uniform", (3, 4), dict(a=-2.0, b=2.0)),
    ("normal", (3, 4), dict(mean=1.0, std=0.5)),
    ("constant", (3, 4), dict(val=0.25)),
    ("eye", (3, 4), {}),
    ("dirac", (4, 2, 3), dict(groups=2)),
    ("xavier_uniform", (3, 4), dict(gain=2.0)),
    ("xavier_normal", (3, 4), {}),
    ("kaiming_uniform", (3, 4), dict(a=0.1, mode="fan_out")),
    ("kaiming_normal", (3, 4), dict(nonlinearity="relu")),
    ("orthogonal", (3, 4), dict(gain=0.5)),
    ("sparse", (6, 4), dict(sparsity=0.5)),
]


def _call_recording(fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [(w.category, str(w.message), w.filename) for w in caught]


@pytest.mark.parametrize("name,shape,kwargs", DEPRECATED_INIT, ids=[d[0] for d in DEPRECATED_INIT])
def test_deprecated_init_names_warn_as_torch_and_fill_as_the_new_ones(name, shape, kwargs):
    """The same warning as PyTorch's (class, text, pointing at the caller), then the new function's
    fill: the same draws as ``name_`` from the same seed, and PyTorch's exact values where they
    are deterministic."""
    tidu.manual_seed(0)
    ours, warned = _call_recording(getattr(init, name), tidu.empty(*shape), **kwargs)
    _, warned_ref = _call_recording(getattr(torch.nn.init, name), torch.empty(*shape), **kwargs)
    assert [w[:2] for w in warned] == [w[:2] for w in warned_ref]
    assert warned[0][0] is FutureWarning and warned[0][2] == __file__
    tidu.manual_seed(0)
    np.testing.assert_array_equal(ours.numpy(), getattr(init, name + "_")(tidu.empty(*shape), **kwargs).numpy())
    if name in ("constant", "eye", "dirac"):
        ref = getattr(torch.nn.init, name + "_")(torch.empty(*shape), **kwargs)
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    assert getattr(init, name).__name__ == getattr(torch.nn.init, name).__name__ == name
    assert name in init.__all__ and name in torch.nn.init.__all__


def test_deprecated_init_errors_as_torch():
    from ..test_torch_oracle import assert_same_error

    assert_same_error("L.nn.init.eye(L.empty(2, 2, 2))")


def test_clip_grad_norm_warns_as_torch_and_clips_as_clip_grad_norm_():
    rng = np.random.default_rng(1)
    grads = [rng.normal(size=(3, 4)), rng.normal(size=(5,))]
    ours, ref = _with_grads(tidu, grads), _with_grads(torch, grads)
    total, warned = _call_recording(tidu.nn.utils.clip_grad_norm, ours, 0.5, norm_type=3.0)
    total_ref, warned_ref = _call_recording(torch.nn.utils.clip_grad_norm, ref, 0.5, norm_type=3.0)
    assert [(c, m.replace("tidu", "torch")) for c, m, _ in warned] == [w[:2] for w in warned_ref]
    assert warned[0][0] is FutureWarning and warned[0][2] == __file__
    np.testing.assert_allclose(total.item(), total_ref.item(), rtol=1e-12)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
    assert "clip_grad_norm" in tidu.nn.utils.__all__
