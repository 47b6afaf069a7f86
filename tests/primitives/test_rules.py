"""Every primitive checked from one table (``op_db.OP_DB``).

For each row: values against numpy; float64 gradcheck in reverse and forward mode;
second order (``gradgradcheck``, reverse-over-reverse and forward-over-reverse); the
exact adjoint identity <c, J t> == <J^T c, t> between ``tidu.func.jvp`` and
``tidu.autograd.grad`` (to 1e-12, no finite-difference noise); for linear rows also
``jvp(fn, x, t) == fn(t)``. An audit keeps the table complete.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_db import DERIVATIVE_NOT_IMPLEMENTED, DIFF_CASES, LINEAR_CASES, NONDIFF_EXEMPT, OP_DB, case_id, expand

import tidu
from tidu.autograd import grad, gradcheck, gradgradcheck
from tidu.core import deferred
from tidu.core.primitive import REGISTRY


def _inputs(case, entry, *, requires_grad: bool, seed: int = 0) -> list[tidu.Tensor]:
    return [tidu.tensor(a, requires_grad=requires_grad) for a in case.sample(entry, seed=seed)]


def _dyadic(rng: np.random.Generator, shape: tuple, dtype) -> np.ndarray:
    """Random multiples of 1/64 in [-2, 2]: exact in float32 and float64, so linear maps of
    them round identically whichever way they are computed."""
    return np.asarray(rng.integers(-128, 129, size=shape) / 64.0, dtype=dtype)


@pytest.mark.parametrize("pair", expand(OP_DB), ids=case_id)
def test_values_match_numpy(pair):
    case, entry = pair
    arrays = case.sample(entry)
    out = case.fn(*[tidu.tensor(a) for a in arrays])
    expected = np.asarray(case.ref(*arrays))
    assert isinstance(out, tidu.Tensor)
    assert tuple(out.shape) == expected.shape, (
        f"{case.id}: shape {tuple(out.shape)} vs numpy {expected.shape}"
    )
    assert out.dtype.np == expected.dtype, f"{case.id}: dtype {out.dtype} vs numpy {expected.dtype}"
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12, err_msg=case.id)


@pytest.mark.parametrize("pair", expand(DIFF_CASES, "grad"), ids=case_id)
def test_gradcheck_forward_and_reverse(pair):
    case, entry = pair
    xs = _inputs(case, entry, requires_grad=True)
    assert gradcheck(case.fn, xs, eps=case.eps, atol=case.atol, rtol=case.rtol, check_forward_ad=True)


@pytest.mark.parametrize("pair", expand(DIFF_CASES, "gradgrad"), ids=case_id)
def test_gradgradcheck(pair):
    case, entry = pair
    xs = _inputs(case, entry, requires_grad=True, seed=1)
    assert gradgradcheck(case.fn, xs, eps=case.eps, atol=case.atol, rtol=case.rtol, check_fwd_over_rev=True)


def _adjoint_sides(case, entry, seed: int = 0):
    rng = np.random.default_rng(seed + 100)
    xs = _inputs(case, entry, requires_grad=True, seed=seed)
    ts = [tidu.tensor(_dyadic(rng, tuple(x.shape), np.float64)) for x in xs]
    out, lt = tidu.func.jvp(case.fn, tuple(xs), tuple(ts))
    c = tidu.tensor(_dyadic(rng, tuple(out.shape), out.dtype.np))
    ltc = grad(case.fn(*xs), xs, grad_outputs=c, allow_unused=True)
    lt = lt.detach()
    lhs = float(np.sum(c.numpy().astype(np.float64) * lt.numpy().astype(np.float64)))
    terms = [np.zeros(()) if g is None else g.numpy() * t.numpy() for g, t in zip(ltc, ts)]
    rhs = float(sum(np.sum(term) for term in terms))
    scale = float(np.sum(np.abs(c.numpy() * lt.numpy()))) + 1.0
    return xs, ts, lt, lhs, rhs, scale


@pytest.mark.parametrize("pair", expand(LINEAR_CASES, "adjoint"), ids=case_id)
def test_transpose_is_adjoint(pair):
    """<c, L t> == <L^T c, t> exactly (dyadic t and c), and L t == fn(t) for a linear fn."""
    case, entry = pair
    xs, ts, lt, lhs, rhs, _ = _adjoint_sides(case, entry)
    assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)), (
        f"{case.id}: <c, L t> = {lhs!r} vs <L^T c, t> = {rhs!r}"
    )
    direct = case.fn(*ts)
    assert lt.dtype is direct.dtype
    np.testing.assert_allclose(
        lt.numpy(), direct.numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{case.id}: jvp != fn(t)"
    )


@pytest.mark.parametrize("pair", expand([c for c in DIFF_CASES if not c.linear], "adjoint"), ids=case_id)
def test_forward_and_reverse_mode_agree(pair):
    """The same identity for nonlinear rows: jvp's J and grad's J^T are one Jacobian."""
    case, entry = pair
    _, _, _, lhs, rhs, scale = _adjoint_sides(case, entry)
    assert abs(lhs - rhs) <= 1e-12 * scale, f"{case.id}: <c, J t> = {lhs!r} vs <J^T c, t> = {rhs!r}"


@pytest.mark.smoke
def test_every_primitive_has_a_case():
    names = {n for n in REGISTRY if not n.startswith(("doc_", "test_"))}
    covered = {c.prim for c in OP_DB}
    missing = names - covered - NONDIFF_EXEMPT
    assert not missing, f"registered primitives without an OP_DB row: {sorted(missing)}"
    assert {c.prim for c in OP_DB} <= set(REGISTRY), "OP_DB names an unregistered primitive"
    undiffed = names - {c.prim for c in DIFF_CASES} - NONDIFF_EXEMPT - DERIVATIVE_NOT_IMPLEMENTED
    assert not undiffed, f"differentiable primitives without a gradcheck row: {sorted(undiffed)}"


@pytest.mark.parametrize("case", [c for c in OP_DB if c.prim in DERIVATIVE_NOT_IMPLEMENTED], ids=lambda c: c.id)
def test_unimplemented_derivatives_raise_as_torch(case):
    """A primitive whose derivative PyTorch does not implement raises its error in a backward."""
    for entry in case.shapes:
        out = case.fn(*_inputs(case, entry, requires_grad=True))
        with pytest.raises(NotImplementedError, match=f"the derivative for '{case.prim}' is not implemented"):
            out.sum().backward()


@pytest.mark.smoke
def test_nondiff_primitives_have_value_rows():
    for name in NONDIFF_EXEMPT:
        assert name in {c.prim for c in OP_DB}, f"{name} has no value-test row"


@pytest.mark.parametrize("case", OP_DB, ids=lambda c: c.id)
def test_row_binds_its_primitive(case, monkeypatch):
    """A row tests the primitive it names (its kernel runs during ``fn``)."""
    prim = REGISTRY[case.prim]
    calls = []
    kernel = prim.impls["cpu"]
    monkeypatch.setitem(prim.impls, "cpu", lambda *a, **k: calls.append(1) or kernel(*a, **k))
    monkeypatch.setattr(deferred, "ENABLED", False)  # a deferred op may run fused, not through its kernel
    case.fn(*[tidu.tensor(a) for a in case.sample(case.shapes[0])])
    assert calls, f"row {case.id} never ran primitive {case.prim}"
