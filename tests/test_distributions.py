"""tidu.distributions against torch.distributions: densities, moments, cdf/icdf, KL and their
gradients on fixed float64 parameters; sample statistics, shapes, expand and validation."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as pdist

import tidu
import tidu.distributions as tdist

# name -> (parameters, the names that get gradients, log_prob values incl. boundary ones)
CASES = {
    "Normal": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, ("loc", "scale"), [[0.1, 2.0], [-3.0, 0.0]]),
    "Bernoulli": ({"probs": [0.2, 0.0, 1.0, 0.5]}, ("probs",), [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]),
    "Bernoulli-logits": ({"logits": [0.2, -3.0]}, ("logits",), [[1.0, 0.0], [0.0, 1.0]]),
    "Categorical": ({"probs": [[0.1, 0.6, 0.3], [2.0, 1.0, 1.0]]}, ("probs",), [[0, 2], [1, 1]]),
    "Categorical-logits": ({"logits": [[0.1, -0.6, 1.3], [2.0, 1.0, -1.0]]}, ("logits",), [[0, 2], [2, 1]]),
    "OneHotCategorical": ({"logits": [[0.1, -0.6, 1.3]]}, ("logits",), [[[0.0, 1.0, 0.0]], [[0.0, 0.0, 1.0]]]),
    "Uniform": ({"low": [0.0, -2.0], "high": [1.0, 3.0]}, ("low", "high"), [[0.5, -2.0], [1.0, 2.5]]),
    "Exponential": ({"rate": [0.5, 2.0]}, ("rate",), [[0.0, 1.5], [3.0, 0.2]]),
    "Laplace": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, ("loc", "scale"), [[0.1, 2.0], [-3.0, -1.0]]),
    "LogNormal": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, ("loc", "scale"), [[0.1, 2.0], [3.0, 0.5]]),
    "Gamma": ({"concentration": [1.0, 2.5], "rate": [0.5, 2.0]}, ("concentration", "rate"), [[0.0, 1.5], [3.0, 0.2]]),
    "Beta": ({"concentration1": [1.0, 2.5], "concentration0": [0.5, 2.0]}, ("concentration1", "concentration0"),
             [[0.0, 0.3], [0.9, 0.5]]),
    "Dirichlet": ({"concentration": [[1.0, 2.5, 0.5], [3.0, 3.0, 3.0]]}, ("concentration",),
                  [[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]]),
    "Poisson": ({"rate": [0.5, 2.0, 4.5]}, ("rate",), [[0.0, 3.0, 4.0], [0.0, 0.0, 10.0]]),
    "Binomial": ({"total_count": [5.0, 5.0], "probs": [0.3, 0.8]}, ("probs",), [[0.0, 5.0], [2.0, 3.0]]),
    "Binomial-logits": ({"total_count": [4.0, 4.0], "logits": [0.3, -1.8]}, ("logits",), [[0.0, 4.0], [2.0, 1.0]]),
    "Geometric": ({"probs": [0.3, 1.0, 0.8]}, ("probs",), [[0.0, 0.0, 3.0], [2.0, 0.0, 0.0]]),
    "Geometric-logits": ({"logits": [0.3, -1.0]}, ("logits",), [[0.0, 4.0], [2.0, 1.0]]),
    "MultivariateNormal": ({"loc": [[0.3, -1.0], [1.0, 0.5]], "covariance_matrix": [[2.0, 0.3], [0.3, 0.5]]},
                           ("loc", "covariance_matrix"), [[[0.1, 2.0], [-3.0, 0.0]]]),
    "MultivariateNormal-tril": ({"loc": [0.3, -1.0], "scale_tril": [[1.2, 0.0], [0.4, 0.7]]},
                                ("loc", "scale_tril"), [[0.1, 2.0], [-3.0, 0.0]]),
    "MultivariateNormal-precision": ({"loc": [0.3, -1.0], "precision_matrix": [[2.0, -0.4], [-0.4, 1.0]]},
                                     ("loc", "precision_matrix"), [[0.1, 2.0], [-3.0, 0.0]]),
}
NO_ENTROPY = {"Poisson", "Geometric", "Geometric-logits"} - {"Geometric", "Geometric-logits"}
CDF = {"Normal", "Uniform", "Exponential", "Laplace", "LogNormal"}
NO_MODE_GRAD = {"Bernoulli", "Bernoulli-logits", "Categorical", "Categorical-logits", "OneHotCategorical"}


def _build(name: str, lib, requires_grad: bool = True):
    params, diff, _ = CASES[name]
    cls = getattr(tdist if lib is tidu else pdist, name.split("-")[0])
    tensors = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad and k in diff) for k, v in params.items()}
    return cls(**tensors), tensors


def _value(lib, v, name: str):
    dtype = lib.int64 if name.startswith("Categorical") else lib.float64
    return lib.tensor(v, dtype=dtype)


def _close(a, b, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    a = np.asarray(a.detach().numpy() if isinstance(a, tidu.Tensor) else a, dtype=np.float64)
    b = np.asarray(b.detach().numpy() if isinstance(b, torch.Tensor) else b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _finite_sum(t, finite: np.ndarray):
    keep = np.flatnonzero(finite)
    flat = t.reshape(-1)
    return flat[torch.from_numpy(keep) if isinstance(t, torch.Tensor) else tidu.tensor(keep)].sum()


def _compare_with_grads(name: str, fn) -> None:
    """``fn(dist, lib)`` in both libraries: equal values, and equal gradients of its finite sum."""
    (td, tp), (pd, pp) = _build(name, tidu), _build(name, torch)
    ours, theirs = fn(td, tidu), fn(pd, torch)
    _close(ours, theirs)
    finite = np.isfinite(theirs.detach().numpy())
    if theirs.requires_grad and finite.any():
        _finite_sum(theirs, finite).backward()
        _finite_sum(ours, finite).backward()
        for k, p in pp.items():
            if p.requires_grad:
                _close(tp[k].grad, p.grad, rtol=1e-5)


@pytest.mark.parametrize("name", CASES)
def test_log_prob_and_gradients(name):
    for v in CASES[name][2]:
        _compare_with_grads(name, lambda d, lib, v=v: d.log_prob(_value(lib, v, name)))


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_ENTROPY - {"Poisson"}))
def test_entropy_and_gradients(name):
    _compare_with_grads(name, lambda d, lib: d.entropy())


def test_log_prob_at_degenerate_boundaries():
    cases = [(lambda m, t: m.Beta(t.tensor([2.5, 1.0, 0.5]), t.tensor([2.0, 1.0, 3.0])), [1.0, 1.0, 0.0]),
             (lambda m, t: m.Poisson(t.tensor([0.0, 0.0])), [0.0, 2.0]),
             (lambda m, t: m.Gamma(t.tensor([0.5, 2.0]), 1.0), [0.0, 0.0]),
             (lambda m, t: m.Dirichlet(t.tensor([0.5, 2.0])), [0.0, 1.0])]
    for make, value in cases:
        _close(make(tdist, tidu).log_prob(tidu.tensor(value)), make(pdist, torch).log_prob(torch.tensor(value)))


def test_poisson_has_no_entropy_like_torch():
    with pytest.raises(NotImplementedError):
        _build("Poisson", torch)[0].entropy()
    with pytest.raises(NotImplementedError):
        _build("Poisson", tidu)[0].entropy()


@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode"])
@pytest.mark.parametrize("name", CASES)
def test_moments(name, prop):
    if prop == "mode" and name in NO_MODE_GRAD:
        _close(getattr(_build(name, tidu)[0], prop), getattr(_build(name, torch)[0], prop))
        return
    _compare_with_grads(name, lambda d, lib: getattr(d, prop))


@pytest.mark.parametrize("name", sorted(CDF))
def test_cdf_icdf_and_gradients(name):
    for v in CASES[name][2]:
        _compare_with_grads(name, lambda d, lib, v=v: d.cdf(lib.tensor(v, dtype=lib.float64)))
    _compare_with_grads(name, lambda d, lib: d.icdf(lib.tensor([0.1, 0.75], dtype=lib.float64)))


KL_PAIRS = {
    "Normal": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, {"loc": [1.0, 0.0], "scale": [0.5, 2.0]}),
    "Bernoulli": ({"probs": [0.2, 0.0, 1.0, 0.5]}, {"probs": [0.7, 0.3, 0.4, 0.0]}),
    "Categorical": ({"probs": [[0.1, 0.6, 0.3], [0.5, 0.5, 0.0]]}, {"probs": [[0.3, 0.3, 0.4], [0.2, 0.0, 0.8]]}),
    "OneHotCategorical": ({"logits": [[0.1, -0.6, 1.3]]}, {"logits": [[1.0, 0.0, 0.3]]}),
    "MultivariateNormal": ({"loc": [[0.3, -1.0], [1.0, 0.5]], "covariance_matrix": [[2.0, 0.3], [0.3, 0.5]]},
                           {"loc": [0.0, 1.0], "scale_tril": [[1.2, 0.0], [0.4, 0.7]]}),
    "Beta": ({"concentration1": [1.0, 2.5], "concentration0": [0.5, 2.0]},
             {"concentration1": [3.0, 0.5], "concentration0": [1.5, 2.0]}),
    "Gamma": ({"concentration": [1.0, 2.5], "rate": [0.5, 2.0]}, {"concentration": [3.0, 0.5], "rate": [1.5, 2.0]}),
    "Dirichlet": ({"concentration": [[1.0, 2.5, 0.5]]}, {"concentration": [[3.0, 0.5, 1.0], [1.0, 1.0, 1.0]]}),
    "Exponential": ({"rate": [0.5, 2.0]}, {"rate": [1.5, 0.3]}),
    "Laplace": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, {"loc": [1.0, 0.0], "scale": [0.5, 2.0]}),
    "Poisson": ({"rate": [0.5, 2.0]}, {"rate": [1.5, 0.3]}),
    "Uniform": ({"low": [0.0, -2.0, 0.0], "high": [1.0, 3.0, 1.0]}, {"low": [-1.0, -2.0, 0.5], "high": [1.0, 4.0, 2.0]}),
}


def _kl_pair(name: str, lib, wrap: bool = False):
    cls = getattr(tdist if lib is tidu else pdist, name)
    params = [{k: lib.tensor(v, dtype=lib.float64, requires_grad=True) for k, v in side.items()} for side in KL_PAIRS[name]]
    p, q = (cls(**side) for side in params)
    if wrap:
        independent = tdist.Independent if lib is tidu else pdist.Independent
        p, q = independent(p, 1), independent(q, 1)
    return lib.distributions.kl_divergence(p, q) if lib is tidu else pdist.kl_divergence(p, q), params


@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence_and_gradients(name):
    wraps = (False, True) if name in {"Normal", "Exponential"} else (False,)
    for wrap in wraps:
        (ours, our_params), (theirs, their_params) = _kl_pair(name, tidu, wrap), _kl_pair(name, torch, wrap)
        _close(ours, theirs)
        finite = np.isfinite(theirs.detach().numpy())
        _finite_sum(theirs, finite).backward()
        _finite_sum(ours, finite).backward()
        for mine, other in zip(our_params, their_params):
            for k in other:
                _close(mine[k].grad if mine[k].grad is not None else np.zeros(other[k].shape),
                       other[k].grad if other[k].grad is not None else np.zeros(other[k].shape), rtol=1e-5)


def test_kl_unregistered_pair_raises_and_register_kl_dispatches_to_subclasses():
    with pytest.raises(NotImplementedError):
        tdist.kl_divergence(tdist.Normal(0.0, 1.0), tdist.Exponential(1.0))

    class Shifted(tdist.Normal):
        pass

    @tdist.register_kl(Shifted, tdist.Normal)
    def _kl(p, q):
        return p.loc * 0 + 7.0

    assert float(tdist.kl_divergence(Shifted(0.0, 1.0), tdist.Normal(1.0, 1.0))) == 7.0
    _close(tdist.kl_divergence(tdist.Normal(0.0, 1.0), Shifted(1.0, 2.0)),
           pdist.kl_divergence(pdist.Normal(0.0, 1.0), pdist.Normal(1.0, 2.0)))


SAMPLED = sorted(set(CASES) - {"OneHotCategorical", "Categorical-logits", "Bernoulli-logits", "Geometric-logits",
                               "Binomial-logits", "MultivariateNormal-tril"})


@pytest.mark.parametrize("name", SAMPLED)
def test_sample_statistics_and_shapes(name):
    tidu.manual_seed(0)
    ours, theirs = _build(name, tidu, False)[0], _build(name, torch, False)[0]
    x = ours.sample((20000,)).numpy().astype(np.float64)
    assert tuple(ours.sample((3, 4)).shape) == tuple(theirs.sample((3, 4)).shape)
    assert ours.sample().dtype == (tidu.int64 if name == "Categorical" else tidu.float64)
    if name == "Categorical":
        mean, var = (theirs.probs * torch.arange(3.0)).sum(-1).numpy(), None
    else:
        mean, var = theirs.mean.numpy(), theirs.variance.numpy()
    se = x.std(0) / np.sqrt(len(x))
    assert (np.abs(x.mean(0) - mean) <= 5 * se + 1e-12).all()
    if var is not None:
        se_var = ((x - x.mean(0)) ** 2).std(0) / np.sqrt(len(x))
        assert (np.abs(x.var(0) - var) <= 5 * se_var + 1e-12).all()
    assert bool(theirs.support.check(torch.from_numpy(x)).all())


def test_one_hot_categorical_samples_are_one_hot_with_the_right_frequencies():
    tidu.manual_seed(1)
    d = _build("OneHotCategorical", tidu, False)[0]
    x = d.sample((20000,))
    assert tuple(x.shape) == (20000, 1, 3)
    _close(x.sum(-1), np.ones((20000, 1)))
    _close(x.numpy().mean(0), _build("OneHotCategorical", torch, False)[0].probs, atol=0.015)


@pytest.mark.parametrize(("name", "grads"), [
    ("Normal", {"loc": lambda x, p: np.ones_like(x), "scale": lambda x, p: (x - p["loc"]) / p["scale"]}),
    ("Laplace", {"loc": lambda x, p: np.ones_like(x), "scale": lambda x, p: (x - p["loc"]) / p["scale"]}),
    ("Exponential", {"rate": lambda x, p: -x / p["rate"]}),
    ("Uniform", {"low": lambda x, p: 1 - (x - p["low"]) / (p["high"] - p["low"]),
                 "high": lambda x, p: (x - p["low"]) / (p["high"] - p["low"])}),
    ("LogNormal", {"loc": lambda x, p: x, "scale": lambda x, p: x * (np.log(x) - p["loc"]) / p["scale"]}),
])
def test_rsample_gradients_follow_the_reparameterization(name, grads):
    tidu.manual_seed(2)
    d, params = _build(name, tidu)
    x = d.rsample((5,))
    x.sum().backward()
    values = {k: v.detach().numpy() for k, v in params.items()}
    for k, grad in grads.items():
        _close(params[k].grad, grad(x.detach().numpy(), values).sum(0), rtol=1e-5)
    assert d.has_rsample == _build(name, torch)[0].has_rsample


def test_mvn_rsample_is_loc_plus_scale_tril_times_noise():
    tidu.manual_seed(3)
    d, params = _build("MultivariateNormal-tril", tidu)
    x = d.rsample((4,))
    eps = np.linalg.solve(params["scale_tril"].detach().numpy(), (x.detach().numpy() - [0.3, -1.0])[..., None])[..., 0]
    x.sum().backward()
    _close(params["loc"].grad, np.full(2, 4.0))
    _close(params["scale_tril"].grad, np.ones((2, 1)) * eps.sum(0)[None], rtol=1e-5)


def test_has_rsample_matches_torch():
    for name in CASES:
        ours, theirs = _build(name, tidu)[0], _build(name, torch)[0]
        assert ours.has_rsample == theirs.has_rsample, name


@pytest.mark.parametrize("name", CASES)
def test_expand_and_shapes(name):
    ours, theirs = _build(name, tidu, False)[0], _build(name, torch, False)[0]
    shape = (3, *theirs.batch_shape)
    ours_e, theirs_e = ours.expand(shape), theirs.expand(shape)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert tuple(ours_e.batch_shape) == tuple(theirs_e.batch_shape)
    assert tuple(ours_e.event_shape) == tuple(theirs_e.event_shape)
    value = CASES[name][2][0]
    _close(ours_e.log_prob(_value(tidu, value, name)), theirs_e.log_prob(_value(torch, value, name)))
    assert tuple(ours_e.sample((2,)).shape) == tuple(theirs_e.sample((2,)).shape)


def test_independent_and_transformed():
    loc, scale = [[0.3, -1.0], [0.2, 0.1]], [[1.5, 0.7], [0.4, 2.0]]
    ours = tdist.Independent(tdist.Normal(tidu.tensor(loc, dtype=tidu.float64), tidu.tensor(scale, dtype=tidu.float64)), 1)
    theirs = pdist.Independent(pdist.Normal(torch.tensor(loc, dtype=torch.float64),
                                            torch.tensor(scale, dtype=torch.float64)), 1)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    value = [[0.0, 1.0], [2.0, -1.0]]
    _close(ours.log_prob(tidu.tensor(value, dtype=tidu.float64)), theirs.log_prob(torch.tensor(value, dtype=torch.float64)))
    _close(ours.entropy(), theirs.entropy())
    assert repr(ours.support) == repr(theirs.support)
    for make in (lambda m: [m.SigmoidTransform()], lambda m: [m.TanhTransform()],
                 lambda m: [m.AffineTransform(0.5, -2.0), m.ExpTransform()]):
        d_ours = tdist.TransformedDistribution(tdist.Normal(tidu.tensor(0.2, dtype=tidu.float64), 0.8), make(tdist))
        d_theirs = pdist.TransformedDistribution(pdist.Normal(torch.tensor(0.2, dtype=torch.float64), 0.8),
                                                 make(pdist.transforms))
        v = [0.3, 0.6] if not isinstance(make(tdist)[0], tdist.AffineTransform) else [0.3, 2.0]
        _close(d_ours.log_prob(tidu.tensor(v, dtype=tidu.float64)), d_theirs.log_prob(torch.tensor(v, dtype=torch.float64)))
        _close(d_ours.cdf(tidu.tensor(v, dtype=tidu.float64)), d_theirs.cdf(torch.tensor(v, dtype=torch.float64)))
        _close(d_ours.icdf(tidu.tensor([0.2, 0.7], dtype=tidu.float64)),
               d_theirs.icdf(torch.tensor([0.2, 0.7], dtype=torch.float64)))


def test_validation_errors_match_torch():
    cases = [
        lambda m, t: m.Normal(t.tensor([0.0]), t.tensor([-1.0])),
        lambda m, t: m.Normal(0.0, 1.0).log_prob(1.0),
        lambda m, t: m.Normal(t.zeros(2), 1.0).log_prob(t.zeros(3)),
        lambda m, t: m.Bernoulli(probs=0.3).log_prob(t.tensor(0.5)),
        lambda m, t: m.Bernoulli(probs=0.3, logits=0.1),
        lambda m, t: m.Categorical(),
        lambda m, t: m.Uniform(1.0, 0.0),
        lambda m, t: m.Uniform(0.0, 1.0).log_prob(t.tensor(2.0)),
        lambda m, t: m.Poisson(1.0).log_prob(t.tensor(1.5)),
        lambda m, t: m.Geometric(t.tensor(0.0)),
        lambda m, t: m.Binomial(t.tensor(3.0), probs=t.tensor(0.2)).log_prob(t.tensor(4.0)),
        lambda m, t: m.Dirichlet(t.tensor([1.0, -1.0])),
        lambda m, t: m.Categorical(probs=t.tensor([0.5, -0.5])),
        lambda m, t: m.MultivariateNormal(t.zeros(2)),
        lambda m, t: m.MultivariateNormal(t.tensor(0.0), t.eye(1)),
        lambda m, t: m.MultivariateNormal(t.zeros(2), t.tensor([[1.0, 2.0], [2.0, 1.0]])),
        lambda m, t: m.Independent(m.Normal(t.zeros(2), 1.0), 2),
    ]
    for make in cases:
        with pytest.raises(ValueError) as theirs:
            make(pdist, torch)
        with pytest.raises(ValueError) as ours:
            make(tdist, tidu)
        first = str(theirs.value).split("\n")[0].replace("torch.Size", "tidu.Size")
        assert str(ours.value).split("\n")[0] == first
    assert float(tdist.Uniform(0.0, 1.0, validate_args=False).log_prob(tidu.tensor(2.0))) == float("-inf")


def test_reprs_and_constraints_match_torch():
    pairs = [(lambda m, t: m.Normal(t.zeros(2), 1.0)), (lambda m, t: m.Bernoulli(probs=0.3)),
             (lambda m, t: m.Independent(m.Normal(t.zeros(2), 1.0), 1)),
             (lambda m, t: m.MultivariateNormal(t.zeros(2), t.eye(2)))]
    for make in pairs:
        assert repr(make(tdist, tidu)) == repr(make(pdist, torch)).replace("torch.Size", "tidu.Size")
    for name in ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean", "nonnegative_integer",
                 "real_vector", "lower_cholesky", "positive_definite", "positive_integer"]:
        ours, theirs = getattr(tdist.constraints, name), getattr(pdist.constraints, name)
        assert (repr(ours), ours.event_dim, ours.is_discrete) == (repr(theirs), theirs.event_dim, theirs.is_discrete)


def test_enumerate_support_matches_torch():
    for name in ["Bernoulli", "Categorical", "OneHotCategorical", "Binomial"]:
        ours, theirs = _build(name, tidu, False)[0], _build(name, torch, False)[0]
        for expand in (True, False):
            _close(ours.enumerate_support(expand), theirs.enumerate_support(expand))


def test_the_mode_with_every_concentration_below_one_is_torchs_vertex():
    """No interior mode: PyTorch's Beta and Dirichlet pick the first vertex (the argmax of their
    NaN quotients), not the largest concentration's."""
    for make in (lambda m, t: m.Beta(t.tensor([2.0, 0.5, 0.9]), t.tensor([3.0, 0.7, 0.2])),
                 lambda m, t: m.Dirichlet(t.tensor([[0.5, 0.2, 0.9], [2.0, 0.5, 3.0]]))):
        _close(make(tdist, tidu).mode, make(pdist, torch).mode)
