"""Seed parity test: the BERT FFN block of rlx's finite-difference parity test.

``loss = sum(gelu(x @ W1 + b1) @ W2)`` with m, k, n, p = 2, 3, 4, 2, exact (erf) GELU.
Autodiff gradients of W1, b1, W2 (24 entries) against central differences, with b1
broadcast implicitly and with an explicit ``expand``; float32 at rlx's tolerances and
float64 at tight ones; and against PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tidu

M, K, N, P = 2, 3, 4, 2
NAMES = ("w1", "b1", "w2")

# (dtype, FD step, abs tolerance, rel tolerance, loss tolerance, torch tolerance)
SETTINGS = {
    "float32": (np.float32, 1e-3, 5e-3, 5e-3, 1e-4, 1e-6),
    "float64": (np.float64, 1e-6, 1e-8, 1e-8, 1e-12, 1e-13),
}


def seed_values(dt: type) -> dict[str, np.ndarray]:
    """rlx's initial values, computed in the working precision (i is the flat index)."""

    def ramp(start: float, step: float, *shape: int) -> np.ndarray:
        i = np.arange(int(np.prod(shape))).astype(dt)
        return (dt(start) + dt(step) * i).reshape(shape)

    return {
        "x": ramp(0.1, 0.07, M, K),
        "w1": ramp(-0.2, 0.05, K, N),
        "b1": (dt(0.01) * (np.arange(N).astype(dt) + dt(1))),
        "w2": ramp(0.05, 0.03, N, P),
    }


def ffn_loss(x, w1, b1, w2, explicit: bool, gelu=tidu.gelu):  # noqa: ANN001, ANN201
    bias = b1.expand(M, N) if explicit else b1
    return (gelu(x @ w1 + bias) @ w2).sum()


def plain_forward(values: dict[str, np.ndarray], explicit: bool, device: str = "cpu") -> float:
    with tidu.no_grad():
        loss = ffn_loss(*(tidu.tensor(values[k], device=device) for k in ("x", *NAMES)), explicit=explicit)
    assert not loss.requires_grad
    return loss.item()


def fd_grad(values: dict[str, np.ndarray], name: str, idx: int, eps: float, explicit: bool,
            device: str = "cpu") -> float:
    dt = values[name].dtype.type

    def perturbed(sign: int) -> float:
        moved = {k: v.copy() for k, v in values.items()}
        moved[name].reshape(-1)[idx] += dt(sign * eps)
        return dt(plain_forward(moved, explicit, device))

    return float((perturbed(1) - perturbed(-1)) / (dt(2) * dt(eps)))


def compare(ad: float, fd: float, name: str, idx: int, abs_tol: float, rel_tol: float) -> str | None:
    """rlx's acceptance rule; the message names the tensor and index."""
    abs_err = abs(fd - ad)
    rel_err = abs_err / max(abs(fd), 1e-6)
    if abs_err < abs_tol or rel_err < rel_tol:
        return None
    return f"{name} grad[{idx}]: autodiff {ad:e} vs FD {fd:e} (abs {abs_err:e}, rel {rel_err:e})"


def autodiff(values: dict[str, np.ndarray], explicit: bool, device: str = "cpu") -> tuple[float, dict[str, np.ndarray]]:
    x = tidu.tensor(values["x"], device=device)
    params = {k: tidu.tensor(values[k], requires_grad=True, device=device) for k in NAMES}
    loss = ffn_loss(x, *params.values(), explicit=explicit)
    loss.backward()
    assert x.grad is None
    grads = {}
    for k, p in params.items():
        assert p.grad is not None, f"{k} got no gradient"
        assert tuple(p.grad.shape) == values[k].shape and p.grad.dtype is p.dtype
        assert p.grad.device == p.device
        grads[k] = p.grad.cpu().numpy()
    return loss.item(), grads


# "cuda": the same test on the CUDA device (Numba's simulator in CI, a GPU through the device tool)
DEVICES = pytest.mark.parametrize("device", ["cpu", "cuda"])


@DEVICES
@pytest.mark.parametrize("explicit", [False, True], ids=["broadcast", "expand"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_ffn_gradients_match_finite_differences(precision: str, explicit: bool, device: str) -> None:
    dt, eps, abs_tol, rel_tol, loss_tol, _ = SETTINGS[precision]
    values = seed_values(dt)
    loss, grads = autodiff(values, explicit, device)
    forward = plain_forward(values, explicit, device)
    assert abs(loss - forward) < loss_tol, f"autodiff loss {loss} disagrees with forward {forward}"
    assert sum(g.size for g in grads.values()) == 24
    failures = [
        compare(
            float(grads[name].reshape(-1)[idx]),
            fd_grad(values, name, idx, eps, explicit, device),
            name,
            idx,
            abs_tol,
            rel_tol,
        )
        for name in NAMES
        for idx in range(values[name].size)
    ]
    failures = [f for f in failures if f]
    assert not failures, "\n".join(failures)


@DEVICES
@pytest.mark.parametrize("explicit", [False, True], ids=["broadcast", "expand"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_ffn_matches_pytorch(precision: str, explicit: bool, device: str) -> None:
    dt, *_, tol = SETTINGS[precision]
    values = seed_values(dt)
    loss, grads = autodiff(values, explicit, device)
    x = torch.tensor(values["x"])
    params = {k: torch.tensor(values[k], requires_grad=True) for k in NAMES}
    ref = ffn_loss(x, *params.values(), explicit=explicit, gelu=torch.nn.functional.gelu)
    ref.backward()
    assert loss == pytest.approx(ref.item(), rel=tol, abs=tol)
    for k in NAMES:
        np.testing.assert_allclose(grads[k], params[k].grad.numpy(), rtol=10 * tol, atol=tol, err_msg=k)


@pytest.mark.smoke
def test_checker_names_tensor_and_index() -> None:
    """The comparison flags a wrong entry (a sign flip) and says which one."""
    assert compare(0.25, 0.25 + 1e-4, "w1", 3, 5e-3, 5e-3) is None
    msg = compare(-0.25, 0.25, "w1", 3, 5e-3, 5e-3)
    assert msg is not None and msg.startswith("w1 grad[3]: autodiff -2.500000e-01 vs FD 2.500000e-01 (abs ")
