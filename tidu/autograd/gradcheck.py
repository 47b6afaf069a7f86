"""``gradcheck`` / ``gradgradcheck``: AD against central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import dtypes, grad_mode
from ..tensor import Tensor


class GradcheckError(RuntimeError):
    """AD and finite differences disagree; the message names input, output and entry."""


def _outputs(fn: Callable[..., Any], inputs: Sequence[Any]) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    return [o for o in outs if isinstance(o, Tensor)]


def _numerical(fn: Callable[..., Any], inputs: Sequence[Any], i: int, eps: float) -> list[np.ndarray]:
    """Jacobians d out_j / d inputs[i], one (out_j.size, in.size) matrix per output."""
    x = inputs[i]
    base = x.detach()._values().astype(np.float64)  # (``_values``: bfloat16's numbers, not its bits)
    flat = base.reshape(-1)
    columns: list[list[np.ndarray]] = []
    with grad_mode.enable_grad():
        for k in range(flat.size):
            values = []
            for sign in (1, -1):
                probe = flat.copy()
                probe[k] += sign * eps
                args = list(inputs)
                args[i] = Tensor(dtypes.cast(probe.reshape(base.shape), x.dtype), x.dtype, requires_grad=x.requires_grad)
                values.append([o._values().astype(np.float64).reshape(-1) for o in _outputs(fn, args)])
            columns.append([(p - m) / (2 * eps) for p, m in zip(*values)])
    n_out = len(columns[0]) if columns else len(_outputs(fn, inputs))
    if not columns:
        return [np.zeros((o.numel(), 0)) for o in _outputs(fn, inputs)]
    return [np.stack([c[j] for c in columns], axis=1) for j in range(n_out)]


def _analytical(fn: Callable[..., Any], inputs: Sequence[Any], diff: list[int]) -> list[list[np.ndarray]]:
    """Reverse-mode Jacobians, [input][output] -> (out.size, in.size)."""
    from .backward import grad

    with grad_mode.enable_grad():
        outs = _outputs(fn, inputs)
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for o in outs] for i in diff]
    for j, out in enumerate(outs):
        if not out.requires_grad:
            continue
        for r in range(out.numel()):
            seed = np.zeros(out.numel())
            seed[r] = 1
            gs = grad(out, [inputs[i] for i in diff], _like(seed.reshape(out._buf.shape), out),
                      retain_graph=True, allow_unused=True)
            for a, g in enumerate(gs):
                if g is not None:
                    jac[a][j][r] = g._values().astype(np.float64).reshape(-1)
    return jac


def _like(values: np.ndarray, x: Any) -> Tensor:
    """``values`` as a tensor of ``x``'s dtype and device (cast: a bfloat16's storage is bits)."""
    t = Tensor(dtypes.cast(values, x.dtype), x.dtype)
    return t if x.device.type == "cpu" else t.to(x.device)


def _forward(fn: Callable[..., Any], inputs: Sequence[Any], diff: list[int]) -> list[list[np.ndarray]]:
    from ..func import jvp

    cols: list[list[np.ndarray]] = []
    for i in diff:
        per_out: list[list[np.ndarray]] = []
        for k in range(inputs[i].numel()):
            tangents = []
            for m, x in enumerate(inputs):
                t = np.zeros(x.numel())
                if m == i:
                    t[k] = 1
                tangents.append(_like(t.reshape(x._buf.shape), x))
            _, tout = jvp(lambda *a: tuple(_outputs(fn, a)), tuple(inputs), tuple(tangents))
            per_out.append([t._values().astype(np.float64).reshape(-1) for t in tout])
        n_out = len(per_out[0]) if per_out else 0
        cols.append([np.stack([c[j] for c in per_out], axis=1) if per_out else np.zeros((0, 0))
                     for j in range(n_out)])
    return cols


def gradcheck(fn: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, check_forward_ad: bool = False, check_backward_ad: bool = True) -> bool:
    """Check reverse (and optionally forward) mode against central differences.

    Inputs that require grad are differentiated; use float64 for tight tolerances.

    >>> import tidu
    >>> x = tidu.tensor([0.5, 1.5], dtype=tidu.float64, requires_grad=True)
    >>> tidu.autograd.gradcheck(tidu.tanh, (x,))
    True
    """
    inputs = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    numerical = [_numerical(fn, inputs, i, eps) for i in diff]
    modes = []
    if check_backward_ad:
        modes.append(("reverse", _analytical(fn, inputs, diff)))
    if check_forward_ad:
        modes.append(("forward", _forward(fn, inputs, diff)))
    for mode, analytical in modes:
        for a, i in enumerate(diff):
            for j, (num, ana) in enumerate(zip(numerical[a], analytical[a])):
                if not np.allclose(ana, num, rtol=rtol, atol=atol, equal_nan=True):
                    bad = np.unravel_index(np.argmax(np.abs(ana - num) - rtol * np.abs(num)), num.shape)
                    msg = (
                        f"Jacobian mismatch for output {j} with respect to input {i} ({mode} mode),\n"
                        f"at entry (output element {bad[0]}, input element {bad[1]}): "
                        f"AD {ana[bad]:.10g} vs finite differences {num[bad]:.10g} "
                        f"(eps={eps}, atol={atol}, rtol={rtol})\n"
                        f"numerical:{num}\nanalytical:{ana}"
                    )
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    return True


def gradgradcheck(fn: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                  check_fwd_over_rev: bool = False, seed: int = 0) -> bool:
    """Check second derivatives: ``gradcheck`` of the vector-Jacobian product of ``fn``.

    >>> import tidu
    >>> x = tidu.tensor([0.5, 1.5], dtype=tidu.float64, requires_grad=True)
    >>> tidu.autograd.gradgradcheck(tidu.sin, (x,))
    True
    """
    from .backward import grad

    inputs = tuple(inputs) if isinstance(inputs, tuple | list) else (inputs,)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    with grad_mode.enable_grad():
        outs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [Tensor(rng.standard_normal(o._buf.shape).astype(o.dtype.np), o.dtype,
                               requires_grad=True) for o in outs]
    grad_outputs = list(grad_outputs)
    n = len(inputs)

    def vjp(*args: Any) -> tuple:
        ins, gos = args[:n], args[n:]
        outputs = _outputs(fn, ins)
        pairs = [(o, g) for o, g in zip(outputs, gos) if o.requires_grad]
        gs = grad([o for o, _ in pairs], [ins[i] for i in diff], [g for _, g in pairs],
                  create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, (*inputs, *grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, check_forward_ad=check_fwd_over_rev)
