"""LBFGS against PyTorch's in float64: the iterates, returned losses and evaluation counts of
every step on Rosenbrock, least squares and a tiny MLP (with and without the strong Wolfe
line search, short histories, tight iteration and evaluation budgets), the state and its
state_dict round trip, and the errors."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import tidu


def _rosenbrock(lib: Any, x: Any) -> Any:
    return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def _rosenbrock_problem(lib: Any, n: int = 2) -> tuple[list, Callable]:
    start = np.array([-1.2, 1.0] * (n // 2)) if n > 1 else np.array([-1.2])
    x = lib.tensor(start, dtype=lib.float64, requires_grad=True)
    return [x], lambda: _rosenbrock(lib, x)


def _least_squares_problem(lib: Any) -> tuple[list, Callable]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((12, 5)), rng.standard_normal((12, 2))
    w = lib.tensor(rng.standard_normal((5, 2)), dtype=lib.float64, requires_grad=True)
    c = lib.tensor(np.zeros(2), dtype=lib.float64, requires_grad=True)
    a_t, b_t = lib.tensor(a), lib.tensor(b)
    return [w, c], lambda: ((a_t @ w + c - b_t) ** 2).mean()


def _mlp_problem(lib: Any) -> tuple[list, Callable]:
    rng = np.random.default_rng(1)
    x, y = lib.tensor(rng.standard_normal((16, 3))), lib.tensor(np.sin(rng.standard_normal((16, 1))))
    shapes = [(3, 6), (6,), (6, 1), (1,)]
    params = [lib.tensor(rng.standard_normal(s) * 0.5, dtype=lib.float64, requires_grad=True) for s in shapes]
    w1, b1, w2, b2 = params
    return params, lambda: ((lib.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()


PROBLEMS = {"rosenbrock": _rosenbrock_problem, "rosenbrock-6": lambda lib: _rosenbrock_problem(lib, 6),
            "least-squares": _least_squares_problem, "mlp": _mlp_problem}
OPTIONS = {  # at most 10 iterations a step: rounding differences (last bits of the losses and
    # gradients) grow along the iterates, on Rosenbrock by about 10x an iteration
    "default": dict(max_iter=10),
    "strong-wolfe": dict(line_search_fn="strong_wolfe", max_iter=10),
    "short-history": dict(history_size=2, max_iter=7, lr=0.5),
    "wolfe-short-history": dict(history_size=3, line_search_fn="strong_wolfe", max_iter=6),
    "eval-budget": dict(max_iter=10, max_eval=4, line_search_fn="strong_wolfe"),
    "tolerances": dict(tolerance_grad=1e-3, tolerance_change=1e-4, lr=0.3, max_iter=10),
}


def _run(lib: Any, problem: str, options: dict, steps: int) -> list:
    """Each step's returned loss, parameters, ``n_iter`` and ``func_evals``."""
    params, loss_fn = PROBLEMS[problem](lib)
    opt = lib.optim.LBFGS(params, **options)

    def closure() -> Any:
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[params[0]]
        trace.append((loss.item(), [p.detach().numpy().copy() for p in params],
                      state.get("n_iter"), state.get("func_evals")))
    return trace


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("problem", PROBLEMS)
def test_iterates_match_torch(problem: str, options: str) -> None:
    ours, ref = _run(tidu, problem, OPTIONS[options], 2), _run(torch, problem, OPTIONS[options], 2)
    for step, ((loss, params, n_iter, evals), (ref_loss, ref_params, ref_iter, ref_evals)) in enumerate(zip(ours, ref)):
        assert (n_iter, evals) == (ref_iter, ref_evals), f"step {step}"
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-9, atol=1e-14, err_msg=f"loss of step {step}")
        for p, q in zip(params, ref_params):  # the products' last bits differ by BLAS (numpy's, PyTorch's):
            # on an AMD EPYC, two steps of ten iterations grow them to 2e-8 on least-squares
            np.testing.assert_allclose(p, q, rtol=1e-7, atol=1e-10, err_msg=f"parameters after step {step}")


def test_rosenbrock_converges_as_torch() -> None:
    ours, ref = _run(tidu, "rosenbrock", dict(line_search_fn="strong_wolfe"), 3), _run(
        torch, "rosenbrock", dict(line_search_fn="strong_wolfe"), 3)
    np.testing.assert_allclose(ours[-1][1][0], [1.0, 1.0], atol=1e-4)  # where tolerance_change stops both
    np.testing.assert_allclose(ours[-1][1][0], ref[-1][1][0], rtol=1e-12)
    assert [step[2:] for step in ours] == [step[2:] for step in ref]  # the same iteration and evaluation counts


def _closure(opt: Any, params: list, loss_fn: Callable) -> Callable:
    def closure() -> Any:
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_state_matches_torch_and_its_state_dict_resumes(line_search_fn: str | None) -> None:
    kw = dict(history_size=3, max_iter=4, line_search_fn=line_search_fn)
    (params, loss_fn), (ref_params, ref_loss_fn) = _mlp_problem(tidu), _mlp_problem(torch)
    opt, ref = tidu.optim.LBFGS(params, **kw), torch.optim.LBFGS(ref_params, **kw)
    for _ in range(2):
        opt.step(_closure(opt, params, loss_fn))
        ref.step(_closure(ref, ref_params, ref_loss_fn))
    sd, ref_sd = opt.state_dict(), ref.state_dict()
    assert sd["param_groups"] == ref_sd["param_groups"]
    assert sorted(sd["state"][0]) == sorted(ref_sd["state"][0])
    for key, value in ref_sd["state"][0].items():
        ours = sd["state"][0][key]
        if isinstance(value, list):
            assert len(ours) == len(value), key
            for a, b in zip(ours, value):
                assert (a is None) == (b is None), key
                if b is not None:
                    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-12, err_msg=key)
        else:
            np.testing.assert_allclose(np.asarray(ours.numpy() if isinstance(ours, tidu.Tensor) else ours),
                                       np.asarray(value), rtol=1e-8, atol=1e-12, err_msg=key)

    buf = io.BytesIO()  # through tidu.save and load, into a new optimizer over copies of the parameters
    tidu.save(sd, buf)
    buf.seek(0)
    copies = [p.detach().clone().requires_grad_() for p in params]
    resumed = tidu.optim.LBFGS(copies, **kw)
    resumed.load_state_dict(tidu.load(buf))
    w1, b1, w2, b2 = copies
    rng = np.random.default_rng(1)
    x, y = tidu.tensor(rng.standard_normal((16, 3))), tidu.tensor(np.sin(rng.standard_normal((16, 1))))
    resumed.step(_closure(resumed, copies, lambda: ((tidu.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()))
    opt.step(_closure(opt, params, loss_fn))
    ref.step(_closure(ref, ref_params, ref_loss_fn))
    for a, b, c in zip(copies, params, ref_params):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        np.testing.assert_allclose(a.detach().numpy(), c.detach().numpy(), rtol=1e-9, atol=1e-12)


def test_repr_and_defaults_match_torch() -> None:
    ours = tidu.optim.LBFGS([tidu.zeros(2, requires_grad=True)], max_iter=8)
    ref = torch.optim.LBFGS([torch.zeros(2, requires_grad=True)], max_iter=8)
    assert repr(ours) == repr(ref)
    assert ours.defaults == ref.defaults


def test_a_stationary_start_returns_after_one_evaluation() -> None:
    x = tidu.ones(3, dtype=tidu.float64, requires_grad=True)
    opt = tidu.optim.LBFGS([x])
    loss = opt.step(_closure(opt, [x], lambda: ((x - 1) ** 2).sum()))
    assert float(loss) == 0.0 and opt.state[x] == {"func_evals": 1, "n_iter": 0}


@pytest.mark.parametrize("call", [
    "L.optim.LBFGS([{'params': [L.zeros(1, requires_grad=True)]}, {'params': [L.zeros(1, requires_grad=True)]}])",
    "L.optim.LBFGS([L.zeros(1, requires_grad=True)], lr=-1)",
    "L.optim.LBFGS([L.zeros(1, requires_grad=True)]).step()",
])
def test_errors_match_torch(call: str) -> None:
    from tests.test_torch_oracle import assert_same_error

    assert_same_error(call)


def test_unknown_line_search_raises_at_step_as_torch() -> None:
    for lib in (torch, tidu):
        x = lib.tensor([2.0], requires_grad=True)
        opt = lib.optim.LBFGS([x], line_search_fn="backtracking")
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(_closure(opt, [x], lambda x=x: (x * x).sum()))
