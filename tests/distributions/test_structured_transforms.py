"""The structured transforms and the constraint registries against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD  # noqa: N812

import tidu
import tidu.distributions as D  # noqa: N812


def _both(a: np.ndarray, grad: bool = False) -> tuple[tidu.Tensor, torch.Tensor]:
    return tidu.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _pairs(lib: object) -> dict:
    d = lib.distributions
    return {
        "compose": d.ComposeTransform([d.ExpTransform(), d.AffineTransform(1.0, 2.0)]),
        "compose-vector": d.ComposeTransform([d.AffineTransform(0.5, 3.0), d.StickBreakingTransform()]),
        "independent": d.IndependentTransform(d.SigmoidTransform(), 1),
        "reshape": d.ReshapeTransform((2, 3), (3, 2)),
        "softplus": d.SoftplusTransform(),
        "lower-cholesky": d.LowerCholeskyTransform(),
        "positive-definite": d.PositiveDefiniteTransform(),
        "corr-cholesky": d.CorrCholeskyTransform(),
        "stack": d.StackTransform([d.ExpTransform(), d.SigmoidTransform()], dim=1),
        "cat": d.CatTransform([d.ExpTransform(), d.AffineTransform(0.0, 3.0)], dim=1, lengths=[2, 1]),
        "cdf": d.CumulativeDistributionTransform(d.Normal(0.5, 2.0)),
    }


SHAPES = {"compose": (4,), "compose-vector": (3, 2), "independent": (3, 4), "reshape": (5, 2, 3), "softplus": (6,),
          "lower-cholesky": (2, 3, 3), "positive-definite": (3, 3), "corr-cholesky": (2, 6), "stack": (4, 2),
          "cat": (4, 3), "cdf": (5,)}
# PyTorch's own transforms without a log-determinant
NO_LOGDET = {"lower-cholesky", "positive-definite"}


@pytest.mark.parametrize("name", list(SHAPES))
def test_transforms_match_torch(name: str) -> None:
    ours, theirs = _pairs(tidu)[name], _pairs(torch)[name]
    x = np.random.default_rng(len(name)).standard_normal(SHAPES[name]) * 0.7
    (a, ta) = _both(x, grad=True)
    y, ty = ours(a), theirs(ta)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.inv(y).detach().numpy(), theirs.inv(ty).detach().numpy(), rtol=1e-8, atol=1e-10)
    assert ours.domain.event_dim == theirs.domain.event_dim and ours.codomain.event_dim == theirs.codomain.event_dim
    assert tuple(ours.forward_shape(SHAPES[name])) == tuple(theirs.forward_shape(SHAPES[name]))
    assert bool(ours.codomain.check(y).all()) and bool(theirs.codomain.check(ty).all())
    if name in NO_LOGDET:
        for t, u, v in ((ours, a, y), (theirs, ta, ty)):
            with pytest.raises(NotImplementedError):
                t.log_abs_det_jacobian(u, v)
        return
    ladj, tladj = ours.log_abs_det_jacobian(a, y), theirs.log_abs_det_jacobian(ta, ty)
    np.testing.assert_allclose(ladj.detach().numpy(), tladj.detach().numpy(), rtol=1e-9, atol=1e-12)
    (y.sum() + ladj.sum()).backward()
    (ty.sum() + tladj.sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-10)


def test_softmax_transform_and_identity() -> None:
    x = np.random.default_rng(3).standard_normal((2, 4))
    ours, theirs = D.SoftmaxTransform(), TD.SoftmaxTransform()
    np.testing.assert_allclose(ours(tidu.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12)
    assert not ours.bijective and not theirs.bijective
    assert D.identity_transform(tidu.tensor(x)).shape == (2, 4)
    assert D.SoftplusTransform() == D.SoftplusTransform() and D.SoftplusTransform() != D.ExpTransform()


@pytest.mark.parametrize("constraint", ["positive", "nonnegative", "greater_than", "less_than", "unit_interval",
                                        "interval", "half_open_interval", "simplex", "real", "real_vector",
                                        "lower_cholesky", "positive_definite", "corr_cholesky", "independent"])
def test_registries_match_torch(constraint: str) -> None:
    def make(lib: object) -> object:
        c = lib.distributions.constraints
        return {"greater_than": lambda: c.greater_than(2.0), "less_than": lambda: c.less_than(1.0),
                "interval": lambda: c.interval(-1.0, 3.0), "half_open_interval": lambda: c.half_open_interval(0.0, 2.0),
                "independent": lambda: c.independent(c.positive, 1)}.get(constraint, lambda: getattr(c, constraint))()

    shapes = {"simplex": (3, 4), "lower_cholesky": (3, 3), "positive_definite": (3, 3), "corr_cholesky": (2, 3),
              "real_vector": (2, 3), "independent": (2, 3)}
    x = np.random.default_rng(5).standard_normal(shapes.get(constraint, (5,)))
    for registry in ("biject_to", "transform_to"):
        if registry == "biject_to" and constraint in ("lower_cholesky", "positive_definite"):
            for lib in (tidu, torch):  # only transform_to has them: the maps are not bijective
                with pytest.raises(NotImplementedError, match="Cannot transform"):
                    lib.distributions.biject_to(make(lib))
            continue
        ours = getattr(D, registry)(make(tidu))
        theirs = getattr(TD, registry)(make(torch))
        assert type(ours).__name__ == type(theirs).__name__
        y, ty = ours(tidu.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-12)
        assert bool(make(tidu).check(y).all())


def test_registry_errors_and_registration() -> None:
    for lib in (tidu, torch):
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            lib.distributions.biject_to(lib.distributions.constraints.boolean)

    class Odd(D.constraints.Constraint):
        def check(self, value: object) -> object:
            return value > 0

    registry = D.constraint_registry.ConstraintRegistry()
    registry.register(Odd, lambda c: D.ExpTransform())
    assert isinstance(registry(Odd()), D.ExpTransform)
    with pytest.raises(TypeError):
        registry.register(3, lambda c: c)


def test_constrained_parameter_optimization() -> None:
    """The use the registries exist for: an unconstrained parameter mapped onto the simplex."""
    target = tidu.tensor([0.2, 0.3, 0.5])
    transform = D.biject_to(D.constraints.simplex)
    raw = tidu.zeros(2, requires_grad=True)
    opt = tidu.optim.Adam([raw], lr=0.1)
    for _ in range(300):
        opt.zero_grad()
        ((transform(raw) - target) ** 2).sum().backward()
        opt.step()
    np.testing.assert_allclose(transform(raw).detach().numpy(), target.numpy(), atol=1e-3)
