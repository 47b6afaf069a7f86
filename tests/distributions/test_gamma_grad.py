"""The implicit reparameterization gradient of gamma draws, and the ``rsample`` of ``Gamma``,
``Beta`` and ``Dirichlet`` built on it: against PyTorch's ``_standard_gamma_grad`` (the same
draws fed to both), finite differences of the CDF-inverse relation, and the derivatives of the
means they must give on average."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
import torch

import tidu
from tidu.distributions import Beta, Dirichlet, Gamma
from tidu.distributions import gamma as gamma_module


def _draws(alpha: float, n: int, seed: int) -> np.ndarray:
    return np.maximum(np.random.default_rng(seed).gamma(alpha, size=n), 1e-300)


# alpha, the relative tolerance against PyTorch's approximation (its error, not ours: see the FD test)
ALPHAS = [(0.001, 2e-2), (0.05, 2e-3), (0.3, 2e-3), (1.0, 2e-3), (3.0, 2e-3), (8.5, 2e-3), (20.0, 2e-3),
          (150.0, 2e-3), (5000.0, 2e-3)]


@pytest.mark.parametrize("alpha,rtol", ALPHAS)
def test_matches_torch_standard_gamma_grad(alpha: float, rtol: float) -> None:
    x = _draws(alpha, 400, 0)
    a = np.full_like(x, alpha)
    ours = tidu._standard_gamma_grad(tidu.tensor(a), tidu.tensor(x))
    ref = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x))
    assert ours.dtype is tidu.float64
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("alpha", [a for a, _ in ALPHAS if a >= 0.05])
def test_matches_finite_differences_of_the_cdf(alpha: float) -> None:
    """dx/da = -(dP/da) / p(x): the derivative of the CDF at fixed x by central differences
    (torch.special.gammainc, float64), the density exactly."""
    x = torch.tensor(_draws(alpha, 200, 1))
    a = torch.full_like(x, alpha)
    h = 1e-5 * max(alpha, 1.0)
    dp_da = (torch.special.gammainc(a + h, x) - torch.special.gammainc(a - h, x)) / (2 * h)
    density = torch.exp((a - 1) * x.log() - x - torch.lgamma(a))
    keep = density > 1e-250
    fd = (-dp_da / density)[keep].numpy()
    ours = tidu._standard_gamma_grad(tidu.tensor(a.numpy()), tidu.tensor(x.numpy())).numpy()[keep.numpy()]
    np.testing.assert_allclose(ours, fd, rtol=2e-5, atol=1e-12)


def test_edges_and_float32() -> None:
    out = tidu._standard_gamma_grad(tidu.tensor([2.0, 1.0, 0.5]), tidu.tensor([0.0, float("inf"), 0.7]))
    assert out.dtype is tidu.float32
    ref = torch._standard_gamma_grad(torch.tensor([0.5]), torch.tensor([0.7]))
    np.testing.assert_allclose(out.numpy(), [0.0, 0.0, ref.item()], rtol=1e-3)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list]:
    """The gamma draws tidu's rsample makes, in order."""
    draws: list = []
    original = gamma_module.standard_gamma

    def spy(concentration, shape):  # noqa: ANN001, ANN202
        out = original(concentration, shape)
        draws.append(out.numpy().copy())
        return out

    monkeypatch.setattr(gamma_module, "standard_gamma", spy)
    yield draws


class _TorchGamma(torch.autograd.Function):
    """Given draws of Gamma(alpha, 1) with PyTorch's derivative rule for ``_standard_gamma``
    (derivatives.yaml: ``grad * _standard_gamma_grad(self, result)``)."""

    @staticmethod
    def forward(ctx, alpha, draws):  # noqa: ANN001, ANN205
        ctx.save_for_backward(alpha, draws)
        return draws.clone()

    @staticmethod
    def backward(ctx, grad):  # noqa: ANN001, ANN205
        alpha, draws = ctx.saved_tensors
        return grad * torch._standard_gamma_grad(alpha, draws), None


def _torch_gamma(alpha: torch.Tensor, draws: np.ndarray) -> torch.Tensor:
    return _TorchGamma.apply(alpha.expand(draws.shape), torch.tensor(draws))


def _compare(ours_params: list, ref_params: list, ours_out, ref_out) -> None:  # noqa: ANN001
    w = np.random.default_rng(5).uniform(-1, 1, tuple(ref_out.shape))
    (ours_out * tidu.tensor(w)).sum().backward()
    (ref_out * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours_out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-12)
    for p, q in zip(ours_params, ref_params):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-3, atol=1e-12)


def test_gamma_rsample_gradients_match_torch(recorded: list) -> None:
    c, r = [0.4, 2.0, 30.0], [0.5, 1.0, 3.0]
    ours = [tidu.tensor(c, dtype=tidu.float64, requires_grad=True), tidu.tensor(r, dtype=tidu.float64, requires_grad=True)]
    ref = [torch.tensor(c, dtype=torch.float64, requires_grad=True), torch.tensor(r, dtype=torch.float64, requires_grad=True)]
    tidu.manual_seed(0)
    x = Gamma(*ours).rsample((50,))
    (draws,) = recorded
    _compare(ours, ref, x, _torch_gamma(ref[0], draws) / ref[1])


def test_beta_rsample_gradients_match_torch_for_two_gammas(recorded: list) -> None:
    a, b = [0.3, 1.5, 12.0], [2.0, 0.7, 40.0]
    ours = [tidu.tensor(v, dtype=tidu.float64, requires_grad=True) for v in (a, b)]
    ref = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, b)]
    tidu.manual_seed(1)
    value = Beta(*ours).rsample((40,))
    gx, gy = recorded
    x, y = _torch_gamma(ref[0], gx), _torch_gamma(ref[1], gy)
    _compare(ours, ref, value, (x / (x + y)).clamp(min=torch.finfo(torch.float64).tiny))


def test_dirichlet_rsample_gradients_match_torch_for_normalized_gammas(recorded: list) -> None:
    c = [[0.5, 2.0, 7.0], [1.0, 1.0, 0.2]]
    ours = [tidu.tensor(c, dtype=tidu.float64, requires_grad=True)]
    ref = [torch.tensor(c, dtype=torch.float64, requires_grad=True)]
    tidu.manual_seed(2)
    value = Dirichlet(*ours).rsample((30,))
    (draws,) = recorded
    g = _torch_gamma(ref[0], draws)
    _compare(ours, ref, value, g / g.sum(-1, keepdim=True))


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet"])
def test_gradients_of_the_mean_are_unbiased(name: str) -> None:
    """E[d x / d theta] = d E[x] / d theta, by Monte Carlo (float64, 200k draws)."""
    tidu.manual_seed(3)
    n = 200_000
    if name == "Gamma":
        c, r = tidu.tensor(1.7, dtype=tidu.float64, requires_grad=True), tidu.tensor(2.5, dtype=tidu.float64, requires_grad=True)
        Gamma(c, r).rsample((n,)).mean().backward()
        got, want = [c.grad.item(), r.grad.item()], [1 / 2.5, -1.7 / 2.5 ** 2]  # E = c / r
    elif name == "Beta":
        a, b = tidu.tensor(0.8, dtype=tidu.float64, requires_grad=True), tidu.tensor(2.2, dtype=tidu.float64, requires_grad=True)
        Beta(a, b).rsample((n,)).mean().backward()
        got, want = [a.grad.item(), b.grad.item()], [2.2 / 3.0 ** 2, -0.8 / 3.0 ** 2]  # E = a / (a + b)
    else:
        c = tidu.tensor([0.5, 1.5, 3.0], dtype=tidu.float64, requires_grad=True)
        (Dirichlet(c).rsample((n,))[:, 0]).mean().backward()
        got, want = c.grad.tolist(), [4.5 / 25, -0.5 / 25, -0.5 / 25]  # E[x0] = c0 / sum(c)
    np.testing.assert_allclose(got, want, atol=4e-3)


def test_sample_is_rsample_without_gradient_and_float32_on_cuda() -> None:
    c = tidu.tensor([1.5, 0.3], requires_grad=True)
    assert not Gamma(c, 1.0).sample((3,)).requires_grad
    assert Gamma(c, 1.0).rsample((3,)).requires_grad
    results = []
    for device in ("cpu", "cuda"):
        tidu.manual_seed(4)
        c = tidu.tensor([[1.5, 0.3, 4.0]], device=device, requires_grad=True)
        value = Dirichlet(c).rsample((6,))
        value.pow(2).sum().backward()
        assert value.dtype is tidu.float32 and c.grad.device.type == device
        results.append((value.detach().cpu().numpy(), c.grad.cpu().numpy()))
    for ours, ref in zip(*results):
        np.testing.assert_allclose(ours, ref, rtol=1e-6)


def test_forward_mode_gives_the_same_gradient() -> None:
    tidu.manual_seed(6)
    c = tidu.tensor([0.7, 3.0], dtype=tidu.float64)
    value, tangent = tidu.func.jvp(lambda c: Gamma(c, 2.0).rsample(), (c,), (tidu.ones(2, dtype=tidu.float64),))
    want = tidu._standard_gamma_grad(c, value * 2.0) / 2.0
    np.testing.assert_allclose(tangent.numpy(), want.numpy(), rtol=1e-12)
