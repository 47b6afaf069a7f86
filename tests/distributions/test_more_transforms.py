"""The transforms, constraints and distributions that complete ``tidu.distributions``'s surface
(``ComposeTransform`` ... ``CumulativeDistributionTransform`` in ``transforms``; ``cat``, ``stack``,
``lower_triangular``, ``square``, ``symmetric``, ``positive_semidefinite``; ``GeneralizedPareto`` and
``ExponentialFamily``) against PyTorch's, in float64 on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as pdist

import tidu
import tidu.distributions as tdist
from tidu.distributions.exp_family import bregman_kl


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if isinstance(t, tidu.Tensor | torch.Tensor) else t, dtype=np.float64)


def _close(a, b, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _both(x: np.ndarray, grad: bool = False) -> tuple[tidu.Tensor, torch.Tensor]:
    return (tidu.tensor(x, dtype=tidu.float64, requires_grad=grad),
            torch.tensor(x, dtype=torch.float64, requires_grad=grad))


def _outcome(fn) -> object:
    """``fn()``, or the name of the exception it raises."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - compared by type name with PyTorch's
        return type(e).__name__


def test_public_surface_matches_torch() -> None:
    for theirs, ours in ((pdist.transforms, tdist.transforms), (pdist.constraints, tdist.constraints)):
        missing = [name for name in theirs.__all__ if not hasattr(ours, name)]
        assert not missing, missing
    for name in ("GeneralizedPareto", "ExponentialFamily", *pdist.transforms.__all__):
        if hasattr(pdist, name):
            assert hasattr(tdist, name), name


# ---------------------------------------------------------------------------------------------
# transforms: name -> (factory taking the library's ``distributions`` module, input shape)

def _cdf_exponential(d):
    lib = tidu if d is tdist else torch
    return d.transforms.CumulativeDistributionTransform(d.Exponential(lib.tensor([0.5, 2.0], dtype=lib.float64)))


TRANSFORMS = {
    "compose": (lambda d: d.transforms.ComposeTransform([d.transforms.ExpTransform(),
                                                         d.transforms.AffineTransform(1.0, 2.0)]), (4,)),
    "compose-events": (lambda d: d.transforms.ComposeTransform(
        [d.transforms.AffineTransform(0.5, 3.0), d.transforms.StickBreakingTransform(),
         d.transforms.ReshapeTransform((4,), (2, 2)), d.transforms.IndependentTransform(d.transforms.ExpTransform(), 2)]),
        (5, 3)),
    "compose-corr": (lambda d: d.transforms.ComposeTransform([d.transforms.SoftplusTransform(),
                                                              d.transforms.CorrCholeskyTransform()]), (2, 3)),
    "compose-empty": (lambda d: d.transforms.ComposeTransform([]), (3,)),
    "independent": (lambda d: d.transforms.IndependentTransform(d.transforms.SigmoidTransform(), 1), (3, 4)),
    "independent-2": (lambda d: d.transforms.IndependentTransform(d.transforms.StickBreakingTransform(), 1), (2, 3, 2)),
    "reshape": (lambda d: d.transforms.ReshapeTransform((2, 3), (3, 2)), (5, 2, 3)),
    "reshape-split": (lambda d: d.transforms.ReshapeTransform((6,), (2, 3)), (4, 6)),
    "softmax": (lambda d: d.transforms.SoftmaxTransform(), (3, 4)),
    "softplus": (lambda d: d.transforms.SoftplusTransform(), (6,)),
    "lower-cholesky": (lambda d: d.transforms.LowerCholeskyTransform(), (2, 3, 3)),
    "positive-definite": (lambda d: d.transforms.PositiveDefiniteTransform(), (2, 3, 3)),
    "corr-cholesky": (lambda d: d.transforms.CorrCholeskyTransform(), (2, 6)),
    "cat": (lambda d: d.transforms.CatTransform([d.transforms.ExpTransform(), d.transforms.AffineTransform(0.0, 3.0)],
                                                dim=1, lengths=[2, 1]), (4, 3)),
    "cat-event-dim": (lambda d: d.transforms.CatTransform(
        [d.transforms.IndependentTransform(d.transforms.ExpTransform(), 1),
         d.transforms.AffineTransform(0.5, -2.0, event_dim=1)], dim=-1, lengths=[2, 3]), (4, 5)),
    "cat-batch-dim": (lambda d: d.transforms.CatTransform(
        [d.transforms.IndependentTransform(d.transforms.ExpTransform(), 1),
         d.transforms.IndependentTransform(d.transforms.TanhTransform(), 1)], dim=0, lengths=[1, 2]), (3, 4)),
    "stack": (lambda d: d.transforms.StackTransform([d.transforms.ExpTransform(), d.transforms.SigmoidTransform()],
                                                    dim=1), (4, 2)),
    "stack-dim0": (lambda d: d.transforms.StackTransform(
        [d.transforms.SoftplusTransform(), d.transforms.AffineTransform(1.0, -0.5), d.transforms.TanhTransform()]),
        (3, 5)),
    "cdf-normal": (lambda d: d.transforms.CumulativeDistributionTransform(d.Normal(0.5, 2.0)), (5,)),
    "cdf-exponential": (_cdf_exponential, (3, 2)),
}
NO_LOGDET = {"softmax", "lower-cholesky", "positive-definite"}  # PyTorch's have none either
POSITIVE_INPUT = {"cdf-exponential"}


def _input(name: str) -> np.ndarray:
    x = np.random.default_rng(sum(map(ord, name))).standard_normal(TRANSFORMS[name][1]) * 0.7
    return np.abs(x) + 0.1 if name in POSITIVE_INPUT else x


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_matches_torch(name: str) -> None:
    make, shape = TRANSFORMS[name]
    ours, theirs = make(tdist), make(pdist)
    x = _input(name)
    (a, ta) = _both(x, grad=True)
    y, ty = ours(a), theirs(ta)
    _close(y, ty)
    _close(ours.inv(y), theirs.inv(ty), rtol=1e-8, atol=1e-10)
    # shapes: forward_shape/inverse_shape against PyTorch's and against the actual tensors
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(shape)) == tuple(y.shape)
    assert tuple(ours.inverse_shape(tuple(y.shape))) == tuple(theirs.inverse_shape(ty.shape)) == shape
    assert tuple(ours.inv.forward_shape(tuple(y.shape))) == shape
    assert tuple(ours.inv.inverse_shape(shape)) == tuple(y.shape)
    # domains, flags, event dims and signs as PyTorch's (or the same exception)
    for t, u in ((ours, theirs), (ours.inv, theirs.inv)):
        assert t.domain.event_dim == u.domain.event_dim and t.codomain.event_dim == u.codomain.event_dim
        assert (repr(t.domain), repr(t.codomain)) == (repr(u.domain), repr(u.codomain))
        assert t.bijective == u.bijective
        assert _outcome(lambda t=t: t.event_dim) == _outcome(lambda u=u: u.event_dim)
        ours_sign, theirs_sign = _outcome(lambda t=t: t.sign), _outcome(lambda u=u: u.sign)
        if isinstance(theirs_sign, str):
            assert ours_sign == theirs_sign
        else:
            _close(tidu.as_tensor(ours_sign) * 1.0, torch.as_tensor(theirs_sign) * 1.0)
    assert ours.inv.inv is ours
    assert bool(ours.codomain.check(y).all()) and bool(theirs.codomain.check(ty).all())
    assert bool(ours.domain.check(a).all()) and bool(theirs.domain.check(ta).all())
    # gradients of a weighted sum of the outputs and the log-det
    weights = np.random.default_rng(7).standard_normal(tuple(y.shape))
    loss, tloss = (y * tidu.tensor(weights)).sum(), (ty * torch.tensor(weights)).sum()
    if name in NO_LOGDET:
        for t, u, v in ((ours, a, y), (theirs, ta, ty)):
            with pytest.raises(NotImplementedError):
                t.log_abs_det_jacobian(u, v)
    else:
        ladj, tladj = ours.log_abs_det_jacobian(a, y), theirs.log_abs_det_jacobian(ta, ty)
        _close(ladj, tladj)
        _close(ours.inv.log_abs_det_jacobian(y, a), theirs.inv.log_abs_det_jacobian(ty, ta))
        lweights = np.random.default_rng(8).standard_normal(tuple(ladj.shape))
        loss = loss + (ladj * tidu.tensor(lweights)).sum()
        tloss = tloss + (tladj * torch.tensor(lweights)).sum()
    loss.backward()
    tloss.backward()
    _close(a.grad, ta.grad, rtol=1e-8, atol=1e-10)
    # and through the inverse
    (b, tb) = _both(_np(ty), grad=True)
    (ours.inv(b) * tidu.tensor(x)).sum().backward()
    (theirs.inv(tb) * torch.tensor(x)).sum().backward()
    _close(b.grad, tb.grad, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_equality_and_cache_match_torch(name: str) -> None:
    make, _ = TRANSFORMS[name]
    assert (make(tdist) == make(tdist)) == (make(pdist) == make(pdist))
    x = _input(name)
    (a, ta) = _both(x)
    ours, theirs = make(tdist).with_cache(1), make(pdist).with_cache(1)
    y, ty = ours(a), theirs(ta)
    assert (ours.inv(y) is a) == (theirs.inv(ty) is ta)
    assert ours(a) is y
    assert (make(tdist).inv(y) is a) == (make(pdist).inv(ty) is ta)  # without a cache it is computed again


def test_transform_errors_match_torch() -> None:
    for d in (tdist, pdist):
        T = d.transforms
        with pytest.raises(ValueError, match="different numbers of elements"):
            T.ReshapeTransform((2, 3), (4,))
        with pytest.raises(ValueError, match="Shape mismatch"):
            T.ReshapeTransform((2, 3), (6,)).forward_shape((4, 3, 2))
        with pytest.raises(ValueError, match="flattened lower-diagonal"):
            T.CorrCholeskyTransform().forward_shape((4,))
        with pytest.raises(ValueError, match="not square"):
            T.CorrCholeskyTransform().inverse_shape((3, 4))
        with pytest.raises(ValueError, match="Too few dimensions"):
            T.StickBreakingTransform().forward_shape(())
        with pytest.raises(AssertionError):
            T.CatTransform([T.ExpTransform()], lengths=[1, 2])
        with pytest.raises(ValueError, match="cache_size"):
            T.ExpTransform(cache_size=2)
        lib = tidu if d is tdist else torch
        with pytest.raises(AssertionError):
            T.StackTransform([T.ExpTransform(), T.ExpTransform()], dim=1)(lib.zeros(2, 3))
        with pytest.raises(AssertionError):
            T.CatTransform([T.ExpTransform()], dim=2)(lib.zeros(2, 3))
        with pytest.raises(ValueError, match="Too few dimensions"):
            T.IndependentTransform(T.ExpTransform(), 2)(lib.zeros(3))


def test_compose_inverse_is_a_composition() -> None:
    for d in (tdist, pdist):
        t = d.transforms.ComposeTransform([d.transforms.ExpTransform(), d.transforms.SoftplusTransform()])
        assert isinstance(t.inv, d.transforms.ComposeTransform) and t.inv.inv is t
        assert t.inv.parts == [d.transforms.SoftplusTransform().inv, d.transforms.ExpTransform().inv]


# ---------------------------------------------------------------------------------------------
# TransformedDistribution with transforms that change the event shape

def _transformed(d, case: str):
    lib = tidu if d is tdist else torch
    loc = lib.tensor(np.linspace(-0.5, 0.5, 6).reshape(2, 3), dtype=lib.float64, requires_grad=True)
    T = d.transforms
    if case == "reshape":
        return d.TransformedDistribution(d.Normal(loc, 1.5), [T.ReshapeTransform((2, 3), (3, 2))]), loc
    if case == "corr-cholesky":
        return d.TransformedDistribution(d.Normal(loc, 0.8), [T.CorrCholeskyTransform()]), loc
    if case == "independent":
        return d.TransformedDistribution(d.Normal(loc, 0.8), [T.IndependentTransform(T.ExpTransform(), 1)]), loc
    if case == "broadcast":  # the transform's parameters broadcast the base's batch
        shift = lib.tensor([[1.0], [2.0], [3.0]], dtype=lib.float64)
        return d.TransformedDistribution(d.Normal(loc[0], 1.0), [T.AffineTransform(shift, 2.0)]), loc
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["reshape", "corr-cholesky", "independent", "broadcast"])
def test_transformed_distribution_with_event_transforms(case: str) -> None:
    (ours, loc), (theirs, tloc) = _transformed(tdist, case), _transformed(pdist, case)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    tidu.manual_seed(0)
    value = theirs.sample((2,))
    lp, tlp = ours.log_prob(tidu.tensor(value.numpy())), theirs.log_prob(value)
    _close(lp, tlp)
    lp.sum().backward()
    tlp.sum().backward()
    _close(loc.grad, tloc.grad)
    assert tuple(ours.sample((4,)).shape) == tuple(theirs.sample((4,)).shape)


# ---------------------------------------------------------------------------------------------
# constraints

def _matrices() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3, 3))
    psd_singular = np.stack([np.diag([1.0, 0.0, 2.0]), np.zeros((3, 3)), np.ones((3, 3)) * 0.0])
    return {
        "random": a,
        "lower": np.tril(a),
        "symmetric": a + np.swapaxes(a, -1, -2),
        "pd": a @ np.swapaxes(a, -1, -2) + np.eye(3),
        "psd-singular": psd_singular,
        "negative": -(a @ np.swapaxes(a, -1, -2) + np.eye(3)),
        "rectangular": rng.standard_normal((2, 3, 4)),
        "nearly-symmetric": a + np.swapaxes(a, -1, -2) + np.triu(np.full((3, 3), 1e-9)),
        "mixed": np.stack([np.tril(a[0]), a[1], a[2] + a[2].T]),
    }


MATRIX_CONSTRAINTS = ["lower_triangular", "square", "symmetric", "positive_semidefinite", "positive_definite",
                      "lower_cholesky"]


@pytest.mark.parametrize("constraint", MATRIX_CONSTRAINTS)
def test_matrix_constraints_match_torch(constraint: str) -> None:
    ours, theirs = getattr(tdist.constraints, constraint), getattr(pdist.constraints, constraint)
    assert (ours.event_dim, ours.is_discrete, repr(ours)) == (theirs.event_dim, theirs.is_discrete, repr(theirs))
    for name, m in _matrices().items():
        a, ta = _both(m)
        if name == "mixed" and constraint in ("positive_semidefinite", "positive_definite"):
            # PyTorch answers only the symmetry of a batch with a non-symmetric matrix: judge one by one
            expected = np.array([bool(theirs.check(ta[i])) for i in range(len(m))])
        else:
            expected = theirs.check(ta).numpy()
        got = ours.check(a)
        assert got.dtype == tidu.bool
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=name)


def test_cat_and_stack_constraints_match_torch() -> None:
    def cases(c):
        return {
            "cat": (c.cat([c.positive, c.real, c.unit_interval], dim=-1, lengths=[2, 1, 1]), (5, 4)),
            "cat-dim0": (c.cat([c.simplex, c.simplex], dim=0, lengths=[1, 2]), (3, 4)),
            "cat-discrete": (c.cat([c.nonnegative_integer, c.real], dim=1), (3, 2)),
            "stack": (c.stack([c.positive, c.real, c.interval(-1.0, 1.0)], dim=1), (4, 3)),
            "stack-last": (c.stack([c.positive, c.real], dim=-1), (4, 2)),
            "stack-vectors": (c.stack([c.simplex, c.real_vector], dim=0), (2, 3)),
            "stack-boolean": (c.stack([c.boolean, c.positive_integer], dim=0), (2, 3)),
        }

    ours, theirs = cases(tdist.constraints), cases(pdist.constraints)
    rng = np.random.default_rng(11)
    for name, (constraint, shape) in ours.items():
        tconstraint = theirs[name][0]
        assert (constraint.event_dim, constraint.is_discrete) == (tconstraint.event_dim, tconstraint.is_discrete), name
        assert repr(constraint) == repr(tconstraint)
        values = [rng.standard_normal(shape), np.abs(rng.standard_normal(shape)) * 0.3,
                  rng.integers(0, 3, shape).astype(float), np.full(shape, 1 / shape[-1])]
        for value in values:
            a, ta = _both(value)
            np.testing.assert_array_equal(constraint.check(a).numpy(), tconstraint.check(ta).numpy(), err_msg=name)
    for c, lib in ((tdist.constraints, tidu), (pdist.constraints, torch)):
        with pytest.raises(AssertionError):
            c.cat([c.real], dim=2).check(lib.zeros(2, 1))
        with pytest.raises(AssertionError):
            c.stack([c.real], dim=-3).check(lib.zeros(2, 1))
        with pytest.raises(AssertionError):
            c.cat([c.real, 3.0])


def test_registries_for_the_new_constraints_match_torch() -> None:
    def make(c):
        return {
            "cat": c.cat([c.positive, c.interval(-2.0, 1.0), c.real], dim=-1, lengths=[2, 1, 1]),
            "stack": c.stack([c.unit_interval, c.greater_than(3.0)], dim=0),
            "psd": c.positive_semidefinite,
        }

    ours, theirs = make(tdist.constraints), make(pdist.constraints)
    x = np.random.default_rng(2).standard_normal((2, 4))
    for name in ours:
        for registry in ("biject_to", "transform_to"):
            if name == "psd" and registry == "biject_to":
                for lib in (tdist, pdist):
                    with pytest.raises(NotImplementedError):
                        lib.biject_to(make(lib.constraints)[name])
                continue
            value = np.random.default_rng(4).standard_normal((2, 3, 3)) if name == "psd" else x
            t, u = getattr(tdist, registry)(ours[name]), getattr(pdist, registry)(theirs[name])
            assert type(t).__name__ == type(u).__name__
            (a, ta) = _both(value)
            y, ty = t(a), u(ta)
            _close(y, ty)
            assert bool(ours[name].check(y).all())


# ---------------------------------------------------------------------------------------------
# GeneralizedPareto: concentration positive, negative (one at -1, the uniform), zero, and
# beyond the finite mean and variance

GP_PARAMS = {"loc": [0.3, -1.0, 0.0, 2.0, 0.5, -0.2],
             "scale": [1.5, 0.7, 2.0, 1.0, 0.4, 1.2],
             "concentration": [0.4, -0.3, 0.0, -1.0, 0.55, 1.2]}
GP_Z = [[0.2, 0.9, 1.3, 0.5, 2.0, 3.0], [1.5, 3.0, 0.05, 0.99, 0.1, 0.6]]  # (value - loc) / scale


@pytest.fixture
def torch_float64():
    """PyTorch's ``GeneralizedPareto`` compares with a tensor of the default dtype (it fails in
    float64 otherwise); tidu's has no such restriction."""
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


def _gp(lib, grad: bool = True):
    params = {k: lib.tensor(v, dtype=lib.float64, requires_grad=grad) for k, v in GP_PARAMS.items()}
    d = (tdist if lib is tidu else pdist).GeneralizedPareto(**params)
    return d, params


def _gp_values(lib):
    z = np.array(GP_Z)
    return lib.tensor(np.array(GP_PARAMS["loc"]) + np.array(GP_PARAMS["scale"]) * z, dtype=lib.float64)


@pytest.mark.parametrize("method", ["log_prob", "cdf", "log_cdf", "log_survival_function", "icdf"])
def test_generalized_pareto_functions_and_gradients(method: str, torch_float64: None) -> None:
    (ours, params), (theirs, tparams) = _gp(tidu), _gp(torch)
    if method == "icdf":
        u = np.array([[0.1, 0.5, 0.9, 0.3, 0.99, 0.01], [0.7, 0.2, 0.4, 0.6, 0.05, 0.95]])
        value, tvalue = _both(u)
    else:
        value, tvalue = _gp_values(tidu), _gp_values(torch)
    result, tresult = getattr(ours, method)(value), getattr(theirs, method)(tvalue)
    _close(result, tresult)
    result.sum().backward()
    tresult.sum().backward()
    for k in params:
        _close(params[k].grad, tparams[k].grad, rtol=1e-8, atol=1e-10)


def test_generalized_pareto_moments_support_and_shapes(torch_float64: None) -> None:
    (ours, params), (theirs, tparams) = _gp(tidu), _gp(torch)
    for prop in ("mean", "variance", "mode", "stddev"):
        _close(getattr(ours, prop), getattr(theirs, prop))
    entropy, tentropy = ours.entropy(), theirs.entropy()
    _close(entropy, tentropy)
    entropy.sum().backward()
    tentropy.sum().backward()
    for k in params:
        _close(params[k].grad, tparams[k].grad)
    support, tsupport = ours.support, theirs.support
    assert type(support).__name__ == type(tsupport).__name__
    _close(support.lower_bound, tsupport.lower_bound)
    _close(support.upper_bound, tsupport.upper_bound)
    # the bounds themselves, and values beyond them
    for z in (0.0, 0.5, 1.0, 5.0, -0.1):
        value = np.array(GP_PARAMS["loc"]) + np.array(GP_PARAMS["scale"]) * z
        np.testing.assert_array_equal(support.check(tidu.tensor(value)).numpy(),
                                      tsupport.check(torch.tensor(value)).numpy())
    upper = tsupport.upper_bound.detach().numpy()
    at_upper = np.where(np.isfinite(upper), upper, 1.0)
    _close(ours.log_prob(tidu.tensor(at_upper)), theirs.log_prob(torch.tensor(at_upper)))
    assert ours.batch_shape == theirs.batch_shape and ours.event_shape == theirs.event_shape
    assert ours.has_rsample and theirs.has_rsample
    draws = ours.rsample((7, 2))
    assert tuple(draws.shape) == tuple(theirs.rsample((7, 2)).shape) == (7, 2, 6)
    assert bool(ours.support.check(draws).all())
    draws.sum().backward()  # reparameterized: the draws carry gradients to every parameter
    assert all(np.isfinite(_np(p.grad)).all() for p in params.values())
    expanded, texpanded = ours.expand((3, 6)), theirs.expand((3, 6))
    assert expanded.batch_shape == texpanded.batch_shape
    _close(expanded.log_prob(_gp_values(tidu)[:1]), texpanded.log_prob(_gp_values(torch)[:1]))
    scalar, tscalar = tdist.GeneralizedPareto(0.0, 1.0, 0.2), pdist.GeneralizedPareto(0.0, 1.0, 0.2)
    assert tuple(scalar.batch_shape) == tuple(tscalar.batch_shape) == ()
    _close(scalar.cdf(tidu.tensor(1.5)), tscalar.cdf(torch.tensor(1.5)), rtol=1e-6)  # tidu's float32


def test_generalized_pareto_validation_and_sample_mean(torch_float64: None) -> None:
    for d, lib in ((tdist, tidu), (pdist, torch)):
        with pytest.raises(ValueError):
            d.GeneralizedPareto(0.0, -1.0, 0.1)
        with pytest.raises(ValueError):
            d.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(lib.tensor(2.5))  # beyond loc - scale / xi = 2
        with pytest.raises(ValueError):
            d.GeneralizedPareto(1.0, 1.0, 0.5).log_prob(lib.tensor(0.5))  # below loc
    tidu.manual_seed(5)
    d, td = tdist.GeneralizedPareto(0.5, 2.0, 0.2), pdist.GeneralizedPareto(0.5, 2.0, 0.2)
    draws = _np(d.sample((20000,)))
    assert abs(draws.mean() - td.mean.item()) < 5 * td.stddev.item() / np.sqrt(len(draws))


# ---------------------------------------------------------------------------------------------
# ExponentialFamily: natural parameters, log normalizer, the Bregman entropy and KL divergence

def _wishart(d, lib, t):
    return d.Wishart(t["df"], covariance_matrix=t["covariance_matrix"])


# name -> (parameters, how to build it unless by keyword, whether PyTorch gives it a carrier measure)
FAMILIES = {
    "Normal": ({"loc": [0.3, -1.0], "scale": [1.5, 0.7]}, None, True),
    "Gamma": ({"concentration": [2.0, 0.7], "rate": [1.5, 3.0]}, None, True),
    "Chi2": ({"df": [3.0, 0.8]}, None, True),
    "Exponential": ({"rate": [0.5, 2.0]}, None, True),
    "Bernoulli": ({"probs": [0.2, 0.7]}, None, True),
    "ContinuousBernoulli": ({"probs": [0.2, 0.4995, 0.9]}, None, True),
    "Wishart": ({"df": [4.0, 5.5], "covariance_matrix": [[2.0, 0.3], [0.3, 0.5]]}, _wishart, True),
    "Beta": ({"concentration1": [2.0, 0.7], "concentration0": [3.0, 1.5]}, None, False),
    "Dirichlet": ({"concentration": [[1.0, 2.5, 0.5], [3.0, 3.0, 3.0]]}, None, False),
    "Poisson": ({"rate": [0.5, 4.0]}, None, False),
}


def _family(name: str, lib, factor: float = 1.0, grad: bool = True):
    params, make, _ = FAMILIES[name]
    tensors = {k: lib.tensor(np.array(v) * (factor if k != "covariance_matrix" else 1.0), dtype=lib.float64,
                             requires_grad=grad) for k, v in params.items()}
    d = tdist if lib is tidu else pdist
    return (make(d, lib, tensors) if make else getattr(d, name)(**tensors)), tensors


def test_exponential_families_are_torchs() -> None:
    for name in pdist.__all__:
        theirs = getattr(pdist, name)
        if isinstance(theirs, type) and issubclass(theirs, pdist.Distribution) and hasattr(tdist, name):
            assert issubclass(getattr(tdist, name), tdist.ExponentialFamily) == issubclass(theirs, pdist.ExponentialFamily), name


@pytest.mark.parametrize("name", list(FAMILIES))
def test_exponential_family_natural_parameters_and_entropy(name: str) -> None:
    (ours, params), (theirs, _) = _family(name, tidu), _family(name, torch)
    naturals, tnaturals = ours._natural_params, theirs._natural_params
    assert len(naturals) == len(tnaturals)
    for n, tn in zip(naturals, tnaturals):
        _close(n, tn)
    _close(ours._log_normalizer(*naturals), theirs._log_normalizer(*tnaturals))
    if not FAMILIES[name][2]:
        for d, lib in ((ours, tdist), (theirs, pdist)):
            with pytest.raises(NotImplementedError):
                lib.ExponentialFamily.entropy(d)
        return
    bregman, tbregman = tdist.ExponentialFamily.entropy(ours), pdist.ExponentialFamily.entropy(theirs)
    _close(bregman, tbregman, rtol=1e-8)
    _close(bregman, ours.entropy(), rtol=1e-8)
    # differentiable in the parameters (PyTorch's Bregman entropy is not): the closed form's gradients
    bregman.sum().backward()
    closed, closed_params = _family(name, tidu)
    closed.entropy().sum().backward()
    for k, p in closed_params.items():
        _close(params[k].grad, p.grad if p.grad is not None else tidu.zeros_like(p), rtol=1e-7, atol=1e-9)
    with tidu.no_grad():
        assert not tdist.ExponentialFamily.entropy(ours).requires_grad
    plain, _ = _family(name, tidu, grad=False)
    assert not tdist.ExponentialFamily.entropy(plain).requires_grad


@pytest.mark.parametrize("name", list(FAMILIES))
def test_bregman_kl_matches_torch(name: str) -> None:
    (p, p_params), (q, q_params) = _family(name, tidu), _family(name, tidu, factor=1.1)
    (tp, tp_params), (tq, tq_params) = _family(name, torch), _family(name, torch, factor=1.1)
    kl = bregman_kl(p, q)
    if name == "Wishart":
        # PyTorch's sums the df term over the batch (see bregman_kl): compare one matrix at a time;
        # it has no closed form, tidu's does (checked by Monte Carlo in test_families)
        cov = tp_params["covariance_matrix"]
        for i in range(2):
            one = [pdist.Wishart(params["df"][i], covariance_matrix=cov) for params in (tp_params, tq_params)]
            _close(kl[i], pdist.kl._kl_expfamily_expfamily(*one), rtol=1e-8)
        (closed_p, tp_params), (closed_q, tq_params) = _family(name, tidu), _family(name, tidu, factor=1.1)
        closed = tdist.kl_divergence(closed_p, closed_q)
    else:
        _close(kl, pdist.kl._kl_expfamily_expfamily(tp, tq), rtol=1e-8)
        closed = pdist.kl_divergence(tp, tq)  # PyTorch's closed form
    _close(kl, closed, rtol=1e-7, atol=1e-10)
    # gradients in both distributions' parameters (PyTorch's Bregman form has them only in q's)
    kl.sum().backward()
    closed.sum().backward()
    for ours, theirs in ((p_params, tp_params), (q_params, tq_params)):
        for k in ours:
            _close(ours[k].grad, theirs[k].grad, rtol=1e-6, atol=1e-9)


def _poisson_like(d):
    """A family of its own (the Poisson's natural parameter), so that ``kl_divergence`` has no closed form."""

    class PoissonLike(d.ExponentialFamily):
        arg_constraints: dict = {}

        def __init__(self, rate):
            self.rate = rate
            super().__init__(rate.shape, validate_args=False)

        @property
        def _natural_params(self):
            return (self.rate.log(),)

        def _log_normalizer(self, x):
            return x.exp()

    return PoissonLike


def test_kl_divergence_falls_back_to_bregman() -> None:
    ours, theirs = _poisson_like(tdist), _poisson_like(pdist)
    rates = ([0.5, 4.0], [1.5, 2.0])
    kl = tdist.kl_divergence(*(ours(tidu.tensor(r, dtype=tidu.float64)) for r in rates))
    tkl = pdist.kl_divergence(*(theirs(torch.tensor(r, dtype=torch.float64)) for r in rates))
    _close(kl, tkl)
    assert not kl.requires_grad
    for d, lib in ((tdist, tidu), (pdist, torch)):
        with pytest.raises(NotImplementedError):
            d.kl_divergence(d.Poisson(lib.tensor(1.0)), d.Exponential(lib.tensor(1.0)))
