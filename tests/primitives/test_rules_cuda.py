"""The primitive table on the CUDA device: every row's values and derivatives equal the CPU's.

The CPU results are checked against numpy and finite differences by ``test_rules.py``;
here each row runs again with its inputs on ``cuda`` (Numba's simulator in CI, a GPU
through the device tool) and must agree: values, the reverse-mode gradient, the
forward-mode JVP and a second-order term (reverse over reverse), float64, to 1e-10.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from op_db import DIFF_CASES, OP_DB, case_id

import tidu
from tidu.func import jvp


def _first_entries(cases):
    """One shape per row keeps the simulator fast; ``device_put``'s row crosses devices itself
    (``test_rules.py`` runs it with the device's kernels)."""
    return [pytest.param((c, c.shapes[0]), id=case_id((c, c.shapes[0]))) for c in cases if c.prim != "device_put"]


def _on_cuda(fn):
    """``fn`` with the tensors it captures (globals, closure cells) moved to the device, as a
    user moves a model's constants along with its inputs."""
    def moved(value):
        return value.cuda() if isinstance(value, tidu.Tensor) else value

    names = {n: fn.__globals__[n] for n in fn.__code__.co_names if isinstance(fn.__globals__.get(n), tidu.Tensor)}
    captured = [c.cell_contents for c in fn.__closure__ or ()]
    if not names and not any(isinstance(c, tidu.Tensor) for c in captured):
        return fn
    cells = tuple(types.CellType(moved(c)) for c in captured)
    names = {n: moved(v) for n, v in names.items()}
    return types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__, fn.__defaults__,
                              cells or None)


def _fn(case, device: str):
    return case.fn if device == "cpu" else _on_cuda(case.fn)


def _pair(case, entry, *, requires_grad: bool):
    arrays = case.sample(entry)
    cpu = [tidu.tensor(a, requires_grad=requires_grad) for a in arrays]
    gpu = [tidu.tensor(a, device="cuda", requires_grad=requires_grad) for a in arrays]
    return cpu, gpu


def _close(gpu: tidu.Tensor, cpu: tidu.Tensor, what: str) -> None:
    assert gpu.device.type == "cuda", f"{what}: result left the device ({gpu.device})"
    assert gpu.dtype is cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape), what
    np.testing.assert_allclose(gpu.detach().cpu().numpy(), cpu.detach().numpy(), rtol=1e-10, atol=1e-10,
                               err_msg=what)


@pytest.mark.parametrize("pair", _first_entries(OP_DB))
def test_values_match_cpu(pair):
    case, entry = pair
    cpu, gpu = _pair(case, entry, requires_grad=False)
    _close(_fn(case, "cuda")(*gpu), case.fn(*cpu), f"{case.id} values")


def _cotangent(out: tidu.Tensor, device: str) -> tidu.Tensor:
    rng = np.random.default_rng(7)
    return tidu.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype, device=device)


@pytest.mark.parametrize("pair", _first_entries(DIFF_CASES))
def test_derivatives_match_cpu(pair):
    case, entry = pair
    cpu, gpu = _pair(case, entry, requires_grad=True)
    results = {}
    for device, xs in (("cpu", cpu), ("cuda", gpu)):
        fn = _fn(case, device)
        out = fn(*xs)
        ct = _cotangent(out, device)
        grads = tidu.autograd.grad(out, xs, ct, create_graph=True, allow_unused=True)
        live = [(x, g) for x, g in zip(xs, grads) if g is not None and g.requires_grad]
        second = tidu.autograd.grad(sum((g * g).sum() for _, g in live), [x for x, _ in live],
                                    allow_unused=True, materialize_grads=True) if live else ()
        tangents = [_cotangent(x, device) for x in xs]
        _, tangent_out = jvp(fn, tuple(x.detach() for x in xs), tuple(tangents))
        results[device] = (grads, second, tangent_out)
    (g_cpu, s_cpu, t_cpu), (g_gpu, s_gpu, t_gpu) = results["cpu"], results["cuda"]
    for i, (a, b) in enumerate(zip(g_gpu, g_cpu)):
        assert (a is None) == (b is None), f"{case.id}: gradient {i} present on one device only"
        if a is not None:
            _close(a, b, f"{case.id} gradient {i}")
    for i, (a, b) in enumerate(zip(s_gpu, s_cpu)):
        _close(a, b, f"{case.id} second order {i}")
    _close(t_gpu, t_cpu, f"{case.id} jvp")
