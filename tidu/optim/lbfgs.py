"""L-BFGS (Nocedal & Wright, Numerical Optimization, 2nd ed.: algorithm 7.4 for the direction,
algorithms 3.5 and 3.6 for the strong Wolfe line search), with PyTorch's choices: its first
step length, its tests for stopping, its curvature threshold and its state.

The parameters are one flat vector ``x``; a step evaluates ``closure()`` for the loss and the
gradient ``g``. With the last ``m`` pairs ``s_k = x_{k+1} - x_k``, ``y_k = g_{k+1} - g_k`` (a
pair is kept only when ``y.s > 1e-10``), the direction ``d = -H g`` comes from the two-loop
recursion, ``H_0 = (s.y / y.y) I`` from the newest pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core.grad_mode import enable_grad, no_grad
from ..core.inplace import written
from ..tensor import Tensor, of_array
from .optimizer import Optimizer, add_scaled_, assign_, buffer, check_lr


def _scalar(value: Any) -> Tensor:
    """A 0-d tensor, as PyTorch keeps ``ro``, ``al`` and ``H_diag`` in the state."""
    return of_array(np.asarray(value))


def _number(value: Any) -> Any:
    """A state scalar back as a numpy scalar of its dtype (a 0-d tensor's, or a float)."""
    return value._host()[()] if isinstance(value, Tensor) else value


def _array(value: Any) -> Any:
    return value._host() if isinstance(value, Tensor) else value


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: tuple[float, float] | None = None) -> float:
    """The minimizer of the cubic through ``(x1, f1)`` and ``(x2, f2)`` with slopes ``g1``, ``g2``
    (Nocedal & Wright, eq. 3.59), clipped to ``bounds`` (default: between the points); the
    bounds' midpoint when the cubic has no minimum.

    >>> from tidu.optim.lbfgs import cubic_minimum
    >>> float(cubic_minimum(0.0, 0.0, -1.0, 2.0, 0.0, 1.0))  # the parabola x * (x - 2) / 2
    1.0
    """
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def strong_wolfe(evaluate: Callable[[Any], tuple[float, np.ndarray]], t: Any, d: np.ndarray, f: float,
                 g: np.ndarray, gtd: Any, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                 max_ls: int = 25) -> tuple[float, np.ndarray, Any, int]:
    """A step ``t`` along ``d`` that satisfies the strong Wolfe conditions
    ``f(t) <= f + c1 t g.d`` and ``|g(t).d| <= c2 |g.d|``: widen until a bracket holds one
    (N&W algorithm 3.5), then shrink the bracket by safeguarded cubic interpolation (3.6).
    ``evaluate(t)`` gives the loss and gradient at ``x + t d``. Returns the loss, gradient and
    step found and the number of evaluations."""
    d_norm = np.abs(d).max()
    f_new, g_new = evaluate(t)
    evals, gtd_new = 1, g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done, ls_iter = False, 0
    while ls_iter < max_ls:  # bracketing
        armijo_fails = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not armijo_fails and abs(gtd_new) <= -c2 * gtd:  # both conditions hold: done
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if armijo_fails or gtd_new >= 0:  # a minimum lies between the last two steps
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        grown = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = grown
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insufficient = False  # zoom: bracket[low] is the best point so far
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        lo, hi = min(bracket), max(bracket)
        eps = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < eps:  # too close to an end: once allowed, then moved eps inside
            if insufficient or t >= hi or t <= lo:
                t = hi - eps if abs(t - hi) < abs(t - lo) else lo + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
            continue
        if abs(gtd_new) <= -c2 * gtd:
            done = True
        elif gtd_new * (bracket[high] - bracket[low]) >= 0:
            bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
            bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
        bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """Limited-memory BFGS, PyTorch's: each ``step(closure)`` runs up to ``max_iter`` iterations
    (``max_eval`` closure calls, default ``max_iter * 5 // 4``) of::

        d = -H g                    (two-loop recursion over the last history_size pairs)
        t = lr                      (min(1, 1 / |g|_1) * lr on the very first iteration)
        x = x + t d                 (t from a strong Wolfe line search if line_search_fn="strong_wolfe")

    stopping when ``max|g| <= tolerance_grad``, when the step or the change of the loss falls
    below ``tolerance_change``, or when ``g.d > -tolerance_change``. ``closure`` clears the
    gradients, computes the loss, calls ``backward()`` and returns the loss; ``step`` returns
    its first value. One parameter group only; the state (``d``, ``t``, ``old_dirs``,
    ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``, ``n_iter``,
    ``func_evals``) is kept under the first parameter, as PyTorch's.

    >>> import tidu
    >>> x = tidu.tensor([-1.5, 2.0], dtype=tidu.float64, requires_grad=True)
    >>> opt = tidu.optim.LBFGS([x], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    ...     loss.backward()
    ...     return loss
    >>> for _ in range(3):
    ...     _ = opt.step(closure)
    >>> x.detach()
    tensor([1., 1.], dtype=tidu.float64)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        if any(p.dtype.name == "bfloat16" for p in self._params):  # numpy, which it computes in, has no bfloat16
            raise NotImplementedError("tidu's LBFGS does not support bfloat16 parameters (PyTorch's does)")

    # --- the parameters as one flat vector (numpy, in the parameters' dtype) ---------------
    def _flat_grad(self) -> np.ndarray:
        parts = [np.zeros(p.numel(), p.dtype.np) if p._grad is None else p._grad._host().reshape(-1)
                 for p in self._params]
        return np.concatenate(parts) if len(parts) > 1 else parts[0].copy()

    def _add(self, t: Any, d: np.ndarray) -> None:
        """``x += t * d``, parameter by parameter."""
        offset = 0
        for p in self._params:
            n = p.numel()
            chunk = d[offset:offset + n].reshape(tuple(p.shape))
            target = buffer(p)
            add_scaled_(target, float(t), chunk if isinstance(target, np.ndarray) else of_array(chunk).to(p.device))
            written(p)
            offset += n

    def _evaluate(self, closure: Callable[[], Any]) -> float:
        with enable_grad():
            return float(closure())

    def _directional(self, closure: Callable[[], Any], x: list[Tensor], t: Any, d: np.ndarray) -> tuple:
        """Loss and gradient at ``x + t d``; the parameters are put back to ``x`` after."""
        self._add(t, d)
        loss, grad = self._evaluate(closure), self._flat_grad()
        for p, saved in zip(self._params, x):
            assign_(buffer(p), buffer(saved))
            written(p)
        return loss, grad

    @no_grad()
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` L-BFGS iterations; return the loss of the first ``closure()`` call."""
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search_fn = group["history_size"], group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _array(state.get("d")), _number(state.get("t"))
        old_dirs = [_array(v) for v in state.get("old_dirs", [])]
        old_stps = [_array(v) for v in state.get("old_stps", [])]
        ro = [_number(v) for v in state.get("ro", [])]
        h_diag = _number(state.get("H_diag"))
        prev_flat_grad, prev_loss = _array(state.get("prev_flat_grad")), state.get("prev_loss")
        al = None if "al" not in state else [None if v is None else _number(v) for v in state["al"]]

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1
            else:
                y, s = flat_grad - prev_flat_grad, d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad  # two-loop recursion: d = -H g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]
            prev_flat_grad, prev_loss = flat_grad.copy(), loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.detach().clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = strong_wolfe(
                    lambda step, x=x_init, d=d: self._directional(closure, x, step, d), t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)  # PyTorch's: the evaluations left in this step
                self._add(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate, unless this is the last iteration
                    loss, flat_grad, ls_func_evals = self._evaluate(closure), self._flat_grad(), 1
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(
            d=of_array(d), t=float(t), old_dirs=[of_array(v) for v in old_dirs], old_stps=[of_array(v) for v in old_stps],
            ro=[_scalar(v) for v in ro], H_diag=_scalar(h_diag), prev_flat_grad=of_array(prev_flat_grad),
            prev_loss=prev_loss,
        )
        if al is not None:
            state["al"] = [None if v is None else _scalar(v) for v in al]
        return orig_loss
