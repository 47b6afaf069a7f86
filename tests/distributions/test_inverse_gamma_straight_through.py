"""InverseGamma and OneHotCategoricalStraightThrough against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu


def test_inverse_gamma_matches_torch() -> None:
    conc, rate, x = np.array([3.0, 1.5, 0.7]), np.array([2.0, 0.5, 1.2]), np.array([1.0, 0.3, 2.5])
    c, r = tidu.tensor(conc, requires_grad=True), tidu.tensor(rate, requires_grad=True)
    tc, tr = torch.tensor(conc, requires_grad=True), torch.tensor(rate, requires_grad=True)
    ours, theirs = tidu.distributions.InverseGamma(c, r), torch.distributions.InverseGamma(tc, tr)
    for name in ("mean", "mode", "variance"):
        np.testing.assert_allclose(getattr(ours, name).detach().numpy(), getattr(theirs, name).detach().numpy())
    lp, tlp = ours.log_prob(tidu.tensor(x)), theirs.log_prob(torch.tensor(x))
    np.testing.assert_allclose(lp.detach().numpy(), tlp.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.entropy().detach().numpy(), theirs.entropy().detach().numpy(), rtol=1e-12)
    (lp.sum() + ours.entropy().sum()).backward()
    (tlp.sum() + theirs.entropy().sum()).backward()
    np.testing.assert_allclose(c.grad.numpy(), tc.grad.numpy(), rtol=1e-8)  # PyTorch's trigamma is ~1e-9 off mpmath's; tidu's matches it
    np.testing.assert_allclose(r.grad.numpy(), tr.grad.numpy(), rtol=1e-10)
    assert ours.has_rsample and tuple(ours.rsample((4,)).shape) == (4, 3)
    assert tuple(ours.expand((2, 3)).batch_shape) == (2, 3)
    tidu.manual_seed(0)
    draws = tidu.distributions.InverseGamma(tidu.tensor(6.0), tidu.tensor(5.0)).sample((40000,)).numpy()
    assert abs(draws.mean() - 1.0) < 0.02 and (draws > 0).all()
    for lib in (tidu, torch):
        with pytest.raises(ValueError, match="concentration"):
            lib.distributions.InverseGamma(lib.tensor(-1.0), lib.tensor(1.0), validate_args=True)


def test_straight_through_gradient_matches_torch() -> None:
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    p, tp = tidu.tensor(probs, requires_grad=True), torch.tensor(probs, requires_grad=True)
    ours = tidu.distributions.OneHotCategoricalStraightThrough(probs=p)
    theirs = torch.distributions.OneHotCategoricalStraightThrough(probs=tp)
    weights = np.array([1.0, -2.0, 3.0])
    (ours.rsample((5,)) * tidu.tensor(weights)).sum().backward()
    (theirs.rsample((5,)) * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy())  # the straight-through part: 5 * weights
    draw = ours.rsample()
    assert ((draw.detach().numpy() == 0) | (draw.detach().numpy() == 1)).all()
    assert ours.has_rsample and theirs.has_rsample
    np.testing.assert_allclose(ours.log_prob(tidu.tensor([0.0, 0.0, 1.0])).detach().numpy(),
                               theirs.log_prob(torch.tensor([0.0, 0.0, 1.0])).detach().numpy())
