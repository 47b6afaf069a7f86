"""The distributions added after the first set (Cauchy ... LowRankMultivariateNormal) against
torch.distributions, driven by one table: densities, cdf/icdf, entropy and moments with their
gradients in float64; reparameterized gradients (implicitly, from PyTorch's CDF and density, or
from the same base noise); sample statistics on fixed seeds; shapes, expand, support, validation
errors and KL divergences."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.distributions as pdist

import tidu
import tidu.distributions as tdist
from tests.test_distributions import _close, _finite_sum
from tidu.distributions.gamma import standard_gamma


@dataclass(frozen=True)
class Case:
    """One distribution: float64 parameters (those in ``diff`` get gradients), values for
    ``log_prob`` and ``cdf``, and how to build it (``cls(**params)`` unless ``make`` is given)."""

    cls: str
    params: dict
    diff: tuple
    values: list
    make: Callable | None = None
    rsample_by: str = ""  # "cdf": implicit gradient from PyTorch's CDF; "noise": the same base noise
    extra: dict = field(default_factory=dict)

    def build(self, lib, requires_grad: bool = True):
        tensors = {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad and k in self.diff)
                   for k, v in self.params.items()}
        module = tdist if lib is tidu else pdist
        d = self.make(module, tensors) if self.make else getattr(module, self.cls)(**tensors)
        return d, tensors


def _cls(module, name: str):
    """``module``'s class ``name``; PyTorch keeps the two relaxed base classes in submodules."""
    if module is pdist and name in ("LogitRelaxedBernoulli", "ExpRelaxedCategorical"):
        return getattr(pdist.relaxed_bernoulli if "Bernoulli" in name else pdist.relaxed_categorical, name)
    return getattr(module, name)


def _temp(cls: str, key: str = "probs"):
    return lambda m, t: _cls(m, cls)(t["temperature"], **{key: t[key]})


_LKJ_VALUE = [[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]]
_WISHART_VALUE = [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.7]]

CASES = {
    "Cauchy": Case("Cauchy", {"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, ("loc", "scale"),
                   [[0.1, 2.0], [-3.0, -1.0]], rsample_by="cdf"),
    "HalfNormal": Case("HalfNormal", {"scale": [1.5, 0.7]}, ("scale",), [[0.1, 2.0], [0.0, 1.0]], rsample_by="cdf"),
    "HalfCauchy": Case("HalfCauchy", {"scale": [1.5, 0.7]}, ("scale",), [[0.1, 2.0], [0.0, 1.0]], rsample_by="cdf"),
    "Gumbel": Case("Gumbel", {"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, ("loc", "scale"),
                   [[0.1, 2.0], [-3.0, -1.0]], rsample_by="cdf"),
    "Weibull": Case("Weibull", {"scale": [1.5, 0.7], "concentration": [2.0, 0.8]}, ("scale", "concentration"),
                    [[0.1, 2.0], [3.0, 0.5]], rsample_by="cdf"),
    "Pareto": Case("Pareto", {"scale": [1.0, 0.5], "alpha": [3.0, 1.5]}, ("scale", "alpha"),
                   [[1.5, 0.6], [3.0, 2.0]], rsample_by="cdf"),
    "Kumaraswamy": Case("Kumaraswamy", {"concentration1": [2.0, 0.7], "concentration0": [3.0, 1.5]},
                        ("concentration1", "concentration0"), [[0.5, 0.2], [0.9, 0.01]], rsample_by="cdf"),
    "Chi2": Case("Chi2", {"df": [3.0, 0.7]}, ("df",), [[2.0, 0.5], [0.1, 4.0]]),
    # the cdf's gradient in the rate only (PyTorch has none in the concentration: see _compare)
    "Gamma-rate": Case("Gamma", {"concentration": [2.5, 0.4], "rate": [1.5, 3.0]}, ("rate",), [[2.0, 0.5], [0.1, 4.0]]),
    "StudentT": Case("StudentT", {"df": [3.0, 1.5, 0.8], "loc": [1.0, 0.0, -1.0], "scale": [2.0, 0.5, 1.0]},
                     ("df", "loc", "scale"), [[0.0, 1.0, -2.0], [5.0, -0.5, 0.0]]),
    "FisherSnedecor": Case("FisherSnedecor", {"df1": [4.0, 1.5, 3.0], "df2": [6.0, 3.0, 9.0]}, ("df1", "df2"),
                           [[1.0, 0.5, 2.0], [0.1, 3.0, 1.0]]),
    "Multinomial": Case("Multinomial", {"probs": [[0.2, 0.3, 0.5], [0.6, 0.0, 0.4]]}, ("probs",),
                        [[[1.0, 1.0, 3.0], [2.0, 0.0, 3.0]], [[0.0, 5.0, 0.0], [5.0, 0.0, 0.0]]],
                        make=lambda m, t: m.Multinomial(5, probs=t["probs"])),
    "Multinomial-logits": Case("Multinomial", {"logits": [[0.2, -0.3, 1.5]]}, ("logits",),
                               [[[1.0, 1.0, 2.0]], [[0.0, 4.0, 0.0]]],
                               make=lambda m, t: m.Multinomial(4, logits=t["logits"])),
    "NegativeBinomial": Case("NegativeBinomial", {"total_count": [3.0, 0.5], "probs": [0.4, 0.7]},
                             ("total_count", "probs"), [[0.0, 2.0], [5.0, 1.0]]),
    "NegativeBinomial-logits": Case("NegativeBinomial", {"total_count": [3.0, 2.5], "logits": [0.4, -1.7]},
                                    ("total_count", "logits"), [[0.0, 2.0], [5.0, 1.0]]),
    "ContinuousBernoulli": Case("ContinuousBernoulli", {"probs": [0.8, 0.5002, 0.2, 0.0]}, ("probs",),
                                [[0.3, 0.5, 0.9, 0.1], [1.0, 0.0, 0.2, 0.6]], rsample_by="cdf"),
    "ContinuousBernoulli-logits": Case("ContinuousBernoulli", {"logits": [1.3, -0.4]}, ("logits",),
                                       [[0.3, 0.5], [1.0, 0.0]], rsample_by="cdf"),
    "LogitRelaxedBernoulli": Case("LogitRelaxedBernoulli", {"temperature": 0.5, "probs": [0.3, 0.9]},
                                  ("temperature", "probs"), [[0.2, -1.0], [3.0, 0.0]],
                                  make=_temp("LogitRelaxedBernoulli"), rsample_by="noise"),
    "RelaxedBernoulli": Case("RelaxedBernoulli", {"temperature": 0.5, "probs": [0.3, 0.9]},
                             ("temperature", "probs"), [[0.2, 0.9], [0.5, 0.01]],
                             make=_temp("RelaxedBernoulli"), rsample_by="noise"),
    "RelaxedBernoulli-logits": Case("RelaxedBernoulli", {"temperature": 1.5, "logits": [0.3, -2.0]},
                                    ("temperature", "logits"), [[0.2, 0.9]],
                                    make=_temp("RelaxedBernoulli", "logits"), rsample_by="noise"),
    "ExpRelaxedCategorical": Case("ExpRelaxedCategorical", {"temperature": 0.5, "probs": [[0.2, 0.8], [0.5, 0.5]]},
                                  ("temperature", "probs"), [[[-1.3863, -0.2877]], [[-0.1, -2.0]]],
                                  make=_temp("ExpRelaxedCategorical"), rsample_by="noise"),
    "RelaxedOneHotCategorical": Case("RelaxedOneHotCategorical",
                                     {"temperature": 0.5, "logits": [[0.2, -0.8, 1.0], [0.5, 0.5, 0.0]]},
                                     ("temperature", "logits"), [[[0.25, 0.7, 0.05]], [[0.1, 0.1, 0.8]]],
                                     make=_temp("RelaxedOneHotCategorical", "logits"), rsample_by="noise"),
    "VonMises": Case("VonMises", {"loc": [0.0, 1.0, -2.0], "concentration": [2.0, 5.0, 0.3]}, ("loc", "concentration"),
                     [[0.5, -2.0, 3.0], [0.0, 1.0, -3.0]]),
    "MixtureSameFamily": Case("MixtureSameFamily", {"logits": [0.2, -0.4, 1.0], "loc": [-1.0, 2.0, 0.5],
                                                    "scale": [1.0, 0.5, 2.0]},
                              ("logits", "loc", "scale"), [[0.0], [1.5], [-2.0]],
                              make=lambda m, t: m.MixtureSameFamily(m.Categorical(logits=t["logits"]),
                                                                    m.Normal(t["loc"], t["scale"]))),
    "MixtureSameFamily-mvn": Case("MixtureSameFamily", {"probs": [[0.3, 0.7], [0.5, 0.5]],
                                                        "loc": [[[0.0, 1.0], [2.0, -1.0]], [[1.0, 1.0], [0.0, 0.0]]],
                                                        "scale_tril": [[1.0, 0.0], [0.3, 0.5]]},
                                  ("probs", "loc", "scale_tril"), [[[0.5, 0.5], [1.0, -1.0]]],
                                  make=lambda m, t: m.MixtureSameFamily(
                                      m.Categorical(probs=t["probs"]),
                                      m.MultivariateNormal(t["loc"], scale_tril=t["scale_tril"]))),
    "LowRankMultivariateNormal": Case("LowRankMultivariateNormal",
                                      {"loc": [[0.3, -1.0, 0.2], [1.0, 0.5, 0.0]],
                                       "cov_factor": [[1.0, 0.2], [0.5, -0.3], [0.1, 0.8]], "cov_diag": [1.0, 0.5, 2.0]},
                                      ("loc", "cov_factor", "cov_diag"), [[[0.1, 2.0, -1.0], [0.0, 0.0, 0.0]]],
                                      rsample_by="noise"),
    "LogisticNormal": Case("LogisticNormal", {"loc": [[0.3, -0.5], [1.0, 0.0]], "scale": [1.0, 0.7]},
                           ("loc", "scale"), [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], rsample_by="noise"),
    "LogisticNormal-scalar": Case("LogisticNormal", {"loc": 0.4, "scale": 1.2}, ("loc", "scale"),
                                  [[0.2, 0.8], [0.6, 0.4]]),
    "LKJCholesky": Case("LKJCholesky", {"concentration": [0.5, 2.0]}, ("concentration",),
                        [_LKJ_VALUE, [_LKJ_VALUE, [[1.0, 0.0, 0.0], [-0.28, 0.96, 0.0], [0.48, 0.64, 0.6]]]],
                        make=lambda m, t: m.LKJCholesky(3, t["concentration"])),
    "LKJCholesky-dim2": Case("LKJCholesky", {"concentration": 1.5}, ("concentration",), [[[1.0, 0.0], [0.6, 0.8]]],
                             make=lambda m, t: m.LKJCholesky(2, t["concentration"])),
    "Wishart": Case("Wishart", {"df": [4.5, 6.5], "scale_tril": [[1.0, 0.0, 0.0], [0.3, 0.8, 0.0], [-0.2, 0.1, 1.5]]},
                    ("df", "scale_tril"), [_WISHART_VALUE, [_WISHART_VALUE, [[1.0, 0.2, 0.0], [0.2, 0.5, 0.1],
                                                                             [0.0, 0.1, 0.3]]]],
                    rsample_by="noise"),
    "Wishart-covariance": Case("Wishart", {"df": 3.0, "covariance_matrix": [[[2.0, 0.3], [0.3, 1.0]],
                                                                           [[1.0, -0.5], [-0.5, 0.7]]]},
                               ("df", "covariance_matrix"), [[[1.0, 0.2], [0.2, 0.5]]]),
    "Wishart-precision": Case("Wishart", {"df": [2.5, 5.0], "precision_matrix": [[2.0, 0.3], [0.3, 1.0]]},
                              ("df", "precision_matrix"), [[[1.0, 0.2], [0.2, 0.5]]]),
}

MULTIVARIATE = {"LogisticNormal", "LogisticNormal-scalar", "Multinomial", "Multinomial-logits", "ExpRelaxedCategorical", "RelaxedOneHotCategorical",
                "MixtureSameFamily-mvn", "LowRankMultivariateNormal", "LKJCholesky", "LKJCholesky-dim2", "Wishart",
                "Wishart-covariance", "Wishart-precision"}


def _value(lib, v):
    return lib.tensor(v, dtype=lib.float64)


def _compare(case: Case, fn) -> None:
    """``fn(dist, lib)`` in both libraries: equal values (or both NotImplementedError), and equal
    gradients of the finite entries' sum (or both NotImplementedError in the backward: Gamma's cdf
    has no derivative in its concentration)."""
    (td, tp), (pd, pp) = case.build(tidu), case.build(torch)
    try:
        theirs = fn(pd, torch)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            fn(td, tidu)
        return
    ours = fn(td, tidu)
    _close(ours, theirs, rtol=1e-6, atol=1e-9)
    finite = np.isfinite(theirs.detach().numpy())
    if theirs.requires_grad and finite.any():
        try:
            _finite_sum(theirs, finite).backward()
        except NotImplementedError as error:
            with pytest.raises(NotImplementedError, match=str(error)):
                _finite_sum(ours, finite).backward()
            return
        _finite_sum(ours, finite).backward()
        for k, p in pp.items():
            if p.requires_grad:
                theirs_grad = p.grad if p.grad is not None else torch.zeros_like(p)
                ours_grad = tp[k].grad if tp[k].grad is not None else tidu.zeros(tuple(p.shape), dtype=tidu.float64)
                if k == "scale_tril":  # only its lower triangle is read: PyTorch's cholesky_solve
                    ours_grad, theirs_grad = ours_grad.tril(), theirs_grad.tril()  # gives the rest a gradient
                _close(ours_grad, theirs_grad, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("name", CASES)
def test_log_prob_and_gradients(name):
    for v in CASES[name].values:
        _compare(CASES[name], lambda d, lib, v=v: d.log_prob(_value(lib, v)))


@pytest.mark.parametrize("name", CASES)
def test_entropy_and_gradients(name):
    _compare(CASES[name], lambda d, lib: d.entropy())


@pytest.mark.parametrize("prop", ["mean", "variance", "stddev", "mode"])
@pytest.mark.parametrize("name", CASES)
def test_moments_and_gradients(name, prop):
    _compare(CASES[name], lambda d, lib: getattr(d, prop))


@pytest.mark.parametrize("name", CASES)
def test_cdf_icdf_and_gradients(name):
    case = CASES[name]
    for v in case.values:
        _compare(case, lambda d, lib, v=v: d.cdf(_value(lib, v)))
    if name not in MULTIVARIATE and not name.startswith("MixtureSameFamily"):
        _compare(case, lambda d, lib: d.icdf(_value(lib, [0.1, 0.75])[:, None].expand(2, *d.batch_shape)))


def test_has_rsample_support_and_shapes_match_torch():
    for name, case in CASES.items():
        ours, theirs = case.build(tidu, False)[0], case.build(torch, False)[0]
        assert ours.has_rsample == theirs.has_rsample, name
        assert repr(ours.support).replace("tidu", "torch") == repr(theirs.support), name
        assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape),
                                                                      tuple(theirs.event_shape)), name
        for shape in [(), (2,), (3, 4)]:
            assert tuple(ours.sample(shape).shape) == tuple(theirs.sample(shape).shape), (name, shape)
            if theirs.has_rsample:
                assert tuple(ours.rsample(shape).shape) == tuple(theirs.rsample(shape).shape), (name, shape)


@pytest.mark.parametrize("name", CASES)
def test_expand(name):
    case = CASES[name]
    ours, theirs = case.build(tidu, False)[0], case.build(torch, False)[0]
    shape = (3, *theirs.batch_shape)
    ours_e, theirs_e = ours.expand(shape), theirs.expand(shape)
    assert (tuple(ours_e.batch_shape), tuple(ours_e.event_shape)) == (tuple(theirs_e.batch_shape),
                                                                      tuple(theirs_e.event_shape))
    _close(ours_e.log_prob(_value(tidu, case.values[0])), theirs_e.log_prob(_value(torch, case.values[0])))
    assert tuple(ours_e.sample((2,)).shape) == tuple(theirs_e.sample((2,)).shape)
    if theirs.has_rsample:
        assert tuple(ours_e.rsample((2,)).shape) == tuple(theirs_e.rsample((2,)).shape)


# ---- reparameterized gradients -------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.rsample_by == "cdf"])
def test_rsample_gradient_is_the_implicit_one(name):
    """A scalar draw ``x`` made by a monotone map of fixed noise moves with the parameters as
    ``dx/dθ = -(∂F(x; θ)/∂θ) / p(x; θ)`` (the quantile held fixed): PyTorch's CDF and density."""
    case = CASES[name]
    tidu.manual_seed(4)
    d, params = case.build(tidu)
    x = d.rsample((6,))
    xs = torch.from_numpy(x.detach().numpy())
    inner = (xs > 1e-3) & (xs < 1e3)  # away from the clamps at the ends of the support
    if case.cls in ("ContinuousBernoulli", "Kumaraswamy"):
        inner &= xs < 1 - 1e-3
    (x * tidu.tensor(inner.numpy()).to(x.dtype)).sum().backward()
    pd, pp = case.build(torch)
    density = pd.log_prob(xs).exp().detach()
    implicit = -(pd.cdf(xs) / density)[inner].sum()  # each draw depends on its own batch element only
    for k, p in pp.items():
        if p.requires_grad:
            (expected,) = torch.autograd.grad(implicit, p, retain_graph=True)
            _close(params[k].grad, expected, rtol=1e-5, atol=1e-9)


def _same_noise(name: str, lib, t, shape):
    """PyTorch's rsample of ``name`` written out on given uniform or normal noise."""
    def clamp(p):
        eps = lib.finfo(p.dtype).eps
        return p.clamp(min=eps, max=1 - eps)
    if name in ("LogitRelaxedBernoulli", "RelaxedBernoulli", "RelaxedBernoulli-logits"):
        probs = t["probs"] if "probs" in t else t["logits"].sigmoid()
        probs = clamp(probs.expand(*shape))
        u = clamp(lib.tensor(_NOISE[0], dtype=lib.float64))
        x = (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / t["temperature"]
        return x if name == "LogitRelaxedBernoulli" else x.sigmoid().clamp(min=lib.finfo(x.dtype).tiny,
                                                                           max=1 - lib.finfo(x.dtype).eps)
    if name in ("ExpRelaxedCategorical", "RelaxedOneHotCategorical"):
        logits = (t["probs"] / t["probs"].sum(-1, keepdim=True)).log() if "probs" in t else t["logits"]
        logits = logits - logits.logsumexp(-1, keepdim=True)
        u = clamp(lib.tensor(_NOISE[0], dtype=lib.float64))
        scores = (logits - (-u.log()).log()) / t["temperature"]
        x = scores - scores.logsumexp(-1, keepdim=True)
        return x if name == "ExpRelaxedCategorical" else x.exp()
    if name == "LogisticNormal":
        x = t["loc"] + t["scale"] * lib.tensor(_NOISE[0], dtype=lib.float64)
        transform = (tdist if lib is tidu else pdist).transforms.StickBreakingTransform()
        return transform(x)
    if name == "Wishart":  # Bartlett: L A, A's diagonal sqrt(2 g) of gamma draws g, normals below it
        alpha = (t["df"].unsqueeze(-1) - lib.arange(shape[-1], dtype=lib.float64)) / 2
        g = lib.tensor(_NOISE[0], dtype=lib.float64)
        # tidu's implicit gamma gradient (tests/distributions/test_gamma_grad.py compares it with PyTorch's)
        g = g + (alpha - alpha.detach()) * torch.from_numpy(tidu._standard_gamma_grad(
            tidu.tensor(alpha.detach().numpy()), tidu.tensor(_NOISE[0])).numpy())
        a = lib.diag_embed((2 * g).sqrt()) + lib.tensor(_NOISE[1], dtype=lib.float64).tril(-1)
        factor = t["scale_tril"] @ a
        return factor @ factor.mT
    eps_w, eps_d = (lib.tensor(n, dtype=lib.float64) for n in _NOISE)
    return t["loc"] + (t["cov_factor"] @ eps_w.unsqueeze(-1)).squeeze(-1) + t["cov_diag"].sqrt() * eps_d


_NOISE: list = []


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.rsample_by == "noise"])
def test_rsample_gradient_from_the_same_noise(name):
    """tidu's rsample against PyTorch's formula run on the very noise tidu drew (replayed from the
    seed): equal draws and equal gradients."""
    case = CASES[name]
    d, params = case.build(tidu)
    shape = tuple(d._extended_shape((5,)))
    if name == "LogisticNormal":
        shape = tuple(d.base_dist._extended_shape((5,)))
    tidu.manual_seed(5)
    x = d.rsample((5,))
    tidu.manual_seed(5)
    _NOISE.clear()
    if name == "LowRankMultivariateNormal":
        rank = case.params["cov_factor"][0].__len__()
        _NOISE.append(tidu.randn((*shape[:-1], rank), dtype=tidu.float64).numpy())
        _NOISE.append(tidu.randn(shape, dtype=tidu.float64).numpy())
    elif name == "LogisticNormal":
        _NOISE.append(tidu.randn(shape, dtype=tidu.float64).numpy())
    elif name == "Wishart":
        alpha = (d.df.unsqueeze(-1).detach() - tidu.arange(shape[-1], dtype=tidu.float64)) / 2
        _NOISE.append(standard_gamma(alpha, shape[:-1]).numpy())
        _NOISE.append(tidu.randn(shape, dtype=tidu.float64).numpy())
    else:
        _NOISE.append(tidu.rand(shape, dtype=tidu.float64).numpy())
    pd, pp = case.build(torch)
    theirs = _same_noise(name, torch, pp, shape)
    _close(x, theirs, rtol=1e-9)
    weights = np.linspace(0.5, 1.5, int(np.prod(x.shape))).reshape(tuple(x.shape))  # a generic cotangent
    (x * tidu.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for k, p in pp.items():
        if p.requires_grad:
            _close(params[k].grad, p.grad, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(("make", "param", "derivative"), [
    # E[x] = df                                        d/d df = 1
    (lambda df: tdist.Chi2(df), 3.0, lambda df: 1.0),
    # E[(x - loc)^2] = scale^2 df / (df - 2): its derivative in df, through x
    (lambda df: tdist.StudentT(df, 1.0, 1.0), 8.0, lambda df: -2 / (df - 2) ** 2),
    # E[x] = df2 / (df2 - 2)
    (lambda df2: tdist.FisherSnedecor(tidu.full_like(df2, 5.0), df2), 9.0, lambda df2: -2 / (df2 - 2) ** 2),
], ids=["Chi2", "StudentT", "FisherSnedecor"])
def test_rsample_gradient_is_unbiased_for_the_moment(make, param, derivative):
    """Per-draw gradients (one parameter element per draw) average to the moment's derivative."""
    tidu.manual_seed(6)
    n = 200000
    theta = tidu.full((n,), param, dtype=tidu.float64, requires_grad=True)
    d = make(theta)
    x = d.rsample()
    statistic = (x - 1.0) ** 2 if isinstance(d, tdist.StudentT) else x
    statistic.sum().backward()
    grads = theta.grad.numpy()
    assert abs(grads.mean() - derivative(param)) <= 5 * grads.std() / math.sqrt(n)


# ---- sampling ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_sample_statistics(name):
    """Moments (where PyTorch's are finite) within 5 standard errors, quantiles (where PyTorch has
    an icdf) within 0.015, and every draw in the support; fixed seed."""
    case = CASES[name]
    tidu.manual_seed(7)
    ours, theirs = case.build(tidu, False)[0], case.build(torch, False)[0]
    x = ours.sample((20000,)).numpy().astype(np.float64)
    assert bool(theirs.support.check(torch.from_numpy(x)).all())
    try:
        mean, var = theirs.mean.numpy(), theirs.variance.numpy()
    except NotImplementedError:
        mean = var = None
    if mean is not None and case.cls != "VonMises":
        finite = np.isfinite(var) & np.isfinite(mean)
        se = x.std(0) / np.sqrt(len(x))
        assert (np.abs(x.mean(0) - mean) <= 5 * se + 1e-12)[finite].all()
        se_var = ((x - x.mean(0)) ** 2).std(0) / np.sqrt(len(x))
        heavy = case.cls in ("StudentT", "FisherSnedecor", "Pareto")  # fourth moments infinite: skip variance
        if not heavy:
            assert (np.abs(x.var(0) - var) <= 5 * se_var + 1e-12)[finite].all()
    if name not in MULTIVARIATE and not name.startswith("MixtureSameFamily"):
        try:
            q = theirs.icdf(torch.tensor([[0.25], [0.5], [0.75]], dtype=torch.float64).expand(3, *theirs.batch_shape))
        except NotImplementedError:
            return
        below = (x[None] <= q.numpy()[:, None]).mean(1)
        np.testing.assert_allclose(below, np.broadcast_to([[0.25], [0.5], [0.75]], below.shape), atol=0.015)


def test_von_mises_draws_have_the_circular_moments():
    tidu.manual_seed(8)
    case = CASES["VonMises"]
    ours, theirs = case.build(tidu, False)[0], case.build(torch, False)[0]
    x = ours.sample((40000,)).numpy()
    assert (x >= -math.pi).all() and (x < math.pi).all()
    centred = x - theirs.loc.numpy()
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - PyTorch's circular variance; E[sin(x - loc)] = 0
    _close(np.cos(centred).mean(0), 1 - theirs.variance.numpy(), atol=0.01)
    _close(np.sin(centred).mean(0), np.zeros(3), atol=0.01)


@pytest.mark.parametrize("dim", [2, 4])
def test_lkj_draws_are_correlation_factors_with_the_beta_marginal(dim):
    """Every draw is a Cholesky factor of a correlation matrix (PyTorch's support check), and each
    off-diagonal correlation is distributed as ``2 B - 1``, ``B ~ Beta(a, a)``, ``a = eta - 1 + dim / 2``:
    its mean, variance and quartiles (scipy's) on a fixed seed."""
    from scipy import stats
    tidu.manual_seed(10)
    eta = np.array([0.5, 1.0, 3.0])
    x = tdist.LKJCholesky(dim, tidu.tensor(eta, dtype=tidu.float64)).sample((20000,))
    assert tuple(x.shape) == (20000, 3, dim, dim)
    assert bool(pdist.constraints.corr_cholesky.check(torch.from_numpy(x.numpy())).all())
    corr = (x @ x.mT).numpy()
    rows, cols = np.tril_indices(dim, -1)
    r = corr[..., rows, cols]  # (draws, eta, pairs)
    a = (eta - 1 + dim / 2)[:, None]
    assert (np.abs(r.mean(0)) <= 5 * r.std(0) / np.sqrt(len(r))).all()
    se_var = (r ** 2).std(0) / np.sqrt(len(r))
    assert (np.abs(r.var(0) - 1 / (2 * a + 1)) <= 5 * se_var).all()
    for q in (0.25, 0.5, 0.75):
        np.testing.assert_allclose((r <= 2 * stats.beta.ppf(q, a, a) - 1).mean(0), q, atol=0.015)


def test_lkj_log_prob_gradient_in_the_value_matches_torch():
    value = [[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.6, 0.8]], [[1.0, 0.0, 0.0], [-0.28, 0.96, 0.0], [0.48, 0.64, 0.6]]]
    grads = []
    for lib, module in ((tidu, tdist), (torch, pdist)):
        v = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        module.LKJCholesky(3, lib.tensor([0.5, 2.0], dtype=lib.float64)).log_prob(v).sum().backward()
        grads.append(v.grad)
    _close(*grads)


def test_lkj_and_wishart_construction_errors_and_warnings_match_torch():
    for make in (lambda m, t: m.Wishart(t.tensor(3.0)),
                 lambda m, t: m.Wishart(t.tensor(3.0), covariance_matrix=t.eye(2), scale_tril=t.eye(2))):
        with pytest.raises(AssertionError) as theirs:
            make(pdist, torch)
        with pytest.raises(AssertionError, match=str(theirs.value)):
            make(tdist, tidu)
    # PyTorch's own message for a bad concentration is its inner Beta's (a Dirichlet's); tidu names LKJCholesky
    with pytest.raises(ValueError):
        pdist.LKJCholesky(3, torch.tensor([1.0, -0.5]))
    with pytest.raises(ValueError, match=r"Expected parameter concentration .* of distribution LKJCholesky"):
        tdist.LKJCholesky(3, tidu.tensor([1.0, -0.5]))
    for m, t in ((tdist, tidu), (pdist, torch)):
        with pytest.warns(UserWarning, match="Low df values detected"):
            m.Wishart(t.tensor([1.5, 3.0]), covariance_matrix=t.eye(2))


def test_relaxed_draws_keep_the_discrete_probabilities():
    """At any temperature, ``argmax`` of a relaxed one-hot draw is Categorical(probs) (the Gumbel-max
    trick) and a relaxed Bernoulli draw exceeds 1/2 with probability ``probs``."""
    tidu.manual_seed(9)
    d = CASES["RelaxedOneHotCategorical"].build(tidu, False)[0]
    x = d.sample((20000,)).numpy()
    frequencies = np.stack([(x.argmax(-1) == k).mean(0) for k in range(3)], -1)
    _close(frequencies, tidu.softmax(d.logits, -1).numpy(), atol=0.015)
    _close(x.sum(-1), np.ones(x.shape[:-1]))
    b = CASES["RelaxedBernoulli"].build(tidu, False)[0].sample((20000,)).numpy()
    _close((b > 0.5).mean(0), [0.3, 0.9], atol=0.015)


# ---- validation, KL, transforms ------------------------------------------------------------

VALIDATION = [
    lambda m, t: m.Cauchy(t.tensor([0.0]), t.tensor([-1.0])),
    lambda m, t: m.Cauchy(0.0, 1.0).log_prob(1.0),
    lambda m, t: m.HalfNormal(t.tensor([-1.0])),
    lambda m, t: m.HalfNormal(t.tensor([1.0])).log_prob(t.tensor([-1.0])),
    lambda m, t: m.HalfCauchy(t.tensor(0.0)),
    lambda m, t: m.Gumbel(t.tensor(0.0), t.tensor(-2.0)),
    lambda m, t: m.Weibull(t.tensor(1.0), t.tensor(0.0)),
    lambda m, t: m.Weibull(t.tensor(1.0), t.tensor(2.0)).log_prob(t.tensor(-1.0)),
    lambda m, t: m.Pareto(t.tensor(1.0), t.tensor(-1.0)),
    lambda m, t: m.Pareto(t.tensor(1.0), t.tensor(2.0)).log_prob(t.tensor(0.5)),
    lambda m, t: m.Kumaraswamy(t.tensor(1.0), t.tensor(-2.0)),
    lambda m, t: m.Kumaraswamy(t.tensor(1.0), t.tensor(2.0)).log_prob(t.tensor(1.5)),
    lambda m, t: m.Chi2(t.tensor([-1.0])),
    lambda m, t: m.StudentT(t.tensor(0.0)),
    lambda m, t: m.StudentT(t.tensor(2.0), 0.0, t.tensor(-1.0)),
    lambda m, t: m.FisherSnedecor(t.tensor(1.0), t.tensor(-1.0)),
    lambda m, t: m.Multinomial(3, t.tensor([0.5, -0.5])),
    lambda m, t: m.Multinomial(3, t.tensor([0.5, 0.5])).log_prob(t.tensor([2.0, 2.0])),
    lambda m, t: m.Multinomial(3),
    lambda m, t: m.NegativeBinomial(t.tensor(2.0), probs=t.tensor(1.0)),
    lambda m, t: m.NegativeBinomial(t.tensor(-1.0), probs=t.tensor(0.5)),
    lambda m, t: m.NegativeBinomial(t.tensor(2.0), probs=t.tensor(0.5)).log_prob(t.tensor(1.5)),
    lambda m, t: m.ContinuousBernoulli(t.tensor(1.5), validate_args=True),
    lambda m, t: m.ContinuousBernoulli(t.tensor(0.5)).log_prob(t.tensor(2.0)),
    lambda m, t: m.RelaxedBernoulli(t.tensor(0.5), probs=t.tensor(2.0)),
    lambda m, t: m.RelaxedOneHotCategorical(t.tensor(0.5), probs=t.tensor([0.5, -0.1])),
    lambda m, t: m.VonMises(t.tensor(0.0), t.tensor(-1.0)),
    lambda m, t: m.MixtureSameFamily(m.Normal(0.0, 1.0), m.Normal(t.zeros(2), 1.0)),
    lambda m, t: m.MixtureSameFamily(m.Categorical(t.ones(2)), 3),
    lambda m, t: m.MixtureSameFamily(m.Categorical(t.ones(3)), m.Normal(t.zeros(2), 1.0)),
    lambda m, t: m.MixtureSameFamily(m.Categorical(t.ones(4, 2)), m.Normal(t.zeros(3, 2), 1.0)),
    lambda m, t: m.LowRankMultivariateNormal(t.tensor(0.0), t.ones(1, 1), t.ones(1)),
    lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2), t.ones(2)),
    lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(3, 1), t.ones(2)),
    lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(3)),
    lambda m, t: m.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.tensor([1.0, -1.0])),
    lambda m, t: m.LKJCholesky(1),
    lambda m, t: m.LKJCholesky(2).log_prob(t.tensor([[1.0, 0.0], [0.5, 0.5]])),
    lambda m, t: m.LKJCholesky(2).log_prob(t.tensor([[1.0, 0.5], [0.0, 1.0]])),
    lambda m, t: m.Wishart(t.tensor([1.0, 3.0]), covariance_matrix=t.eye(2)),
    lambda m, t: m.Wishart(2.0, covariance_matrix=t.eye(3)),
    lambda m, t: m.Wishart(t.tensor(3.0), scale_tril=t.ones(2)),
    lambda m, t: m.Wishart(t.tensor(3.0), covariance_matrix=t.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m, t: m.Wishart(t.tensor(3.0), scale_tril=t.tensor([[1.0, 0.0], [2.0, -1.0]])),
    lambda m, t: m.Wishart(t.tensor(3.0), scale_tril=t.eye(2)).log_prob(t.tensor([[1.0, 2.0], [2.0, 1.0]])),
]


@pytest.mark.parametrize("index", range(len(VALIDATION)))
def test_validation_errors_match_torch(index):
    make = VALIDATION[index]
    with pytest.raises((ValueError, NotImplementedError)) as theirs:
        make(pdist, torch)
    with pytest.raises(theirs.type) as ours:
        make(tdist, tidu)
    first = str(theirs.value).split("\n")[0].replace("torch.Size", "tidu.Size").replace("torch.distributions",
                                                                                      "tidu.distributions")
    assert str(ours.value).split("\n")[0].replace("torch.distributions", "tidu.distributions") == first


def test_continuous_bernoulli_validates_probs_only_when_asked_like_torch():
    # PyTorch checks probs before clamping them only for an explicit validate_args
    assert float(tdist.ContinuousBernoulli(tidu.tensor(1.5)).probs) == float(
        pdist.ContinuousBernoulli(torch.tensor(1.5)).probs)
    with pytest.raises(ValueError, match="The parameter probs has invalid values"):
        tdist.ContinuousBernoulli(tidu.tensor(-0.5), validate_args=False)


KL_PAIRS = {
    "ContinuousBernoulli": (Case("ContinuousBernoulli", {"probs": [0.8, 0.5002, 0.2]}, ("probs",), []),
                            Case("ContinuousBernoulli", {"logits": [0.3, -1.0, 2.0]}, ("logits",), [])),
    "Gumbel": (CASES["Gumbel"], Case("Gumbel", {"loc": [1.0, 0.0], "scale": [0.5, 2.0]}, ("loc", "scale"), [])),
    "HalfNormal": (CASES["HalfNormal"], Case("HalfNormal", {"scale": [0.5, 2.0]}, ("scale",), [])),
    "Pareto": (CASES["Pareto"], Case("Pareto", {"scale": [0.5, 1.0], "alpha": [2.0, 0.5]}, ("scale", "alpha"), [])),
    "LowRankMultivariateNormal": (CASES["LowRankMultivariateNormal"],
                                  Case("LowRankMultivariateNormal", {"loc": [0.0, 1.0, -1.0],
                                                                     "cov_factor": [[0.3], [1.0], [-0.5]],
                                                                     "cov_diag": [0.5, 1.5, 1.0]},
                                       ("loc", "cov_factor", "cov_diag"), [])),
    "MultivariateNormal-LowRank": (Case("MultivariateNormal", {"loc": [[0.3, -1.0, 0.2]],
                                                               "scale_tril": [[1.0, 0.0, 0.0], [0.3, 0.8, 0.0],
                                                                              [-0.2, 0.1, 1.5]]},
                                        ("loc", "scale_tril"), []), CASES["LowRankMultivariateNormal"]),
    "LowRank-MultivariateNormal": (CASES["LowRankMultivariateNormal"],
                                   Case("MultivariateNormal", {"loc": [0.0, 1.0, -1.0],
                                                               "covariance_matrix": [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2],
                                                                                     [0.0, 0.2, 0.7]]},
                                        ("loc", "covariance_matrix"), [])),
    "Weibull-transformed": (CASES["Weibull"], CASES["Weibull"]),
    "LKJCholesky": (CASES["LKJCholesky"], CASES["LKJCholesky"]),  # PyTorch has none

}


@pytest.mark.parametrize("name", KL_PAIRS)
def test_kl_divergence_and_gradients(name):
    p_case, q_case = KL_PAIRS[name]
    (tp, tp_params), (tq, tq_params) = p_case.build(tidu), q_case.build(tidu)
    (pp, pp_params), (pq, pq_params) = p_case.build(torch), q_case.build(torch)
    try:
        theirs = pdist.kl_divergence(pp, pq)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            tdist.kl_divergence(tp, tq)
        return
    ours = tdist.kl_divergence(tp, tq)
    _close(ours, theirs, rtol=1e-6, atol=1e-9)
    if not theirs.requires_grad:  # Weibull: the KL of the two equal unit exponentials it is built on
        assert not ours.requires_grad
        return
    finite = np.isfinite(theirs.detach().numpy())
    _finite_sum(theirs, finite).backward()
    _finite_sum(ours, finite).backward()
    for mine, other in ((tp_params, pp_params), (tq_params, pq_params)):
        for k, p in other.items():
            if p.requires_grad:
                _close(mine[k].grad if mine[k].grad is not None else np.zeros(tuple(p.shape)),
                       p.grad if p.grad is not None else torch.zeros_like(p), rtol=1e-5, atol=1e-9)


def test_wishart_kl_is_the_expected_log_ratio():
    """PyTorch's exponential-family KL for Wishart pairs is wrong (another value than E_p[log p - log q]);
    tidu's closed form against that expectation over tidu's draws, PyTorch's log_prob, and its
    gradient in q's parameters against the expectation's (fixed seed, loose tolerance)."""
    q_case = Case("Wishart", {"df": [3.5, 8.0], "covariance_matrix": _WISHART_VALUE}, ("df", "covariance_matrix"), [])
    tidu.manual_seed(11)
    (tp, _), (tq, tq_params) = CASES["Wishart"].build(tidu, False), q_case.build(tidu)
    (pp, _), (pq, pq_params) = CASES["Wishart"].build(torch, False), q_case.build(torch)
    x = torch.from_numpy(tp.sample((20000,)).numpy())
    ratio = (pp.log_prob(x) - pq.log_prob(x)).detach().numpy()
    ours = tdist.kl_divergence(tp, tq)
    assert (np.abs(ours.detach().numpy() - ratio.mean(0)) <= 5 * ratio.std(0) / np.sqrt(len(ratio))).all()
    ours.sum().backward()
    (-pq.log_prob(x).mean(0).sum()).backward()
    for k, p in pq_params.items():
        _close(tq_params[k].grad, p.grad, rtol=0.05, atol=0.02)


def test_kl_between_transformed_distributions_needs_equal_transforms():
    ours = tdist.kl_divergence(tdist.LogNormal(0.0, 1.0), tdist.LogNormal(1.0, 2.0))
    _close(ours, pdist.kl_divergence(pdist.LogNormal(0.0, 1.0), pdist.LogNormal(1.0, 2.0)))
    with pytest.raises(NotImplementedError):
        tdist.kl_divergence(tdist.Weibull(1.0, 2.0), tdist.Weibull(1.0, 3.0))


def _power(m):
    lib = tidu if m is tdist.transforms else torch
    return m.PowerTransform(lib.tensor([2.0, -0.5], dtype=lib.float64))


# (the transform, an input in its domain)
TRANSFORMS = {
    "power": (_power, [[0.3, 2.0], [1.5, 0.2]]),
    "exp-inv": (lambda m: m.ExpTransform().inv, [[0.3, 2.0], [1.5, 0.2]]),
    "abs": (lambda m: m.AbsTransform(), [[-0.3, 2.0], [1.5, -0.2]]),
    "stick-breaking": (lambda m: m.StickBreakingTransform(), [[0.3, -1.0], [1.5, 0.2]]),
    "stick-breaking-inv": (lambda m: m.StickBreakingTransform().inv, [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_torch(name):
    make, x = TRANSFORMS[name]
    ours, theirs = make(tdist.transforms), make(pdist.transforms)
    xo, xt = tidu.tensor(x, dtype=tidu.float64), torch.tensor(x, dtype=torch.float64)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    _close(ours.inv(yo), theirs.inv(yt))
    if name != "abs":  # not injective: PyTorch has no log-det for it either
        _close(ours.log_abs_det_jacobian(xo, yo), theirs.log_abs_det_jacobian(xt, yt))
    assert ours.event_dim == theirs.event_dim
    if name not in ("abs", "stick-breaking", "stick-breaking-inv"):  # PyTorch gives these no sign
        _close(tidu.as_tensor(ours.sign) * 1.0, torch.as_tensor(theirs.sign) * 1.0)
    assert ours.inv.inv is ours
    assert repr(ours.domain) == repr(theirs.domain) and repr(ours.codomain) == repr(theirs.codomain)


def test_stick_breaking_transformed_normal_is_logistic_normal():
    loc, scale = [0.3, -0.5], [1.0, 0.7]
    ours = tdist.TransformedDistribution(tdist.Normal(tidu.tensor(loc, dtype=tidu.float64), tidu.tensor(scale)),
                                         tdist.StickBreakingTransform())
    theirs = pdist.LogisticNormal(torch.tensor(loc, dtype=torch.float64), torch.tensor(scale, dtype=torch.float64))
    assert tuple(ours.event_shape) == tuple(theirs.event_shape) == (3,)
    value = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]
    _close(ours.log_prob(tidu.tensor(value, dtype=tidu.float64)), theirs.log_prob(torch.tensor(value,
                                                                                               dtype=torch.float64)))
    assert tuple(ours.expand((4,)).sample((2,)).shape) == (2, 4, 3)
