"""PyTorch as the oracle: values, gradients and dtypes of the public ops.

Every op runs on the same numpy data in tidu and in torch; values, output shapes and
dtypes must agree, and so must the gradients of ``sum(out * w)`` for a random weight
``w``. Shapes include 0-d, empty, broadcast and non-contiguous (transposed) operands, in
float32 and float64. Also: dtype inference and promotion, conversions, gradients at
kinks, and a hypothesis fuzz of broadcasting.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tidu
from tidu.core.dtypes import result_type

FLOATS = ["float32", "float64"]
TOL = {"float32": {"rtol": 2e-5, "atol": 2e-6}, "float64": {"rtol": 1e-12, "atol": 1e-12}}


# --- harness ---------------------------------------------------------------------------------
def _name(dt: Any) -> str:
    return str(dt).removeprefix("torch.").removeprefix("tidu.")


class Arg:
    """A float operand: a leaf of ``shape``; ``transposed`` passes ``leaf.t()`` (non-contiguous)."""

    def __init__(self, shape: tuple, transposed: bool = False, low: float = -2.0, high: float = 2.0) -> None:
        self.shape, self.transposed, self.low, self.high = tuple(shape), transposed, low, high

    def __repr__(self) -> str:
        return ("T" if self.transposed else "") + "x".join(map(str, self.shape)) if self.shape else "0d"


def T(*shape: int) -> Arg:  # noqa: N802 - reads like the math
    return Arg(shape, transposed=True)


def _as_args(spec: Any) -> list[Arg]:
    items = spec if isinstance(spec, list) else [spec]
    return [a if isinstance(a, Arg) else Arg(a) for a in items]


def run_both(
    fn: Callable,
    torch_fn: Callable | None,
    args: list[Arg],
    dtype: str,
    *,
    grad: bool = True,
    seed: int = 0,
    tol: dict | None = None,
) -> None:
    """Run ``fn`` on tidu and ``torch_fn`` (default ``fn``) on torch; compare outputs and grads."""
    torch_fn = torch_fn or fn
    tol = tol or TOL[dtype]
    rng = np.random.default_rng(seed)
    data = [rng.uniform(a.low, a.high, size=a.shape).astype(dtype) for a in args]
    leaves_tidu = [tidu.tensor(d, requires_grad=grad) for d in data]
    leaves_torch = [torch.tensor(d, requires_grad=grad) for d in data]

    def inputs(leaves: list, args: list[Arg]) -> list:
        return [x.t() if a.transposed else x for x, a in zip(leaves, args)]

    out = fn(*inputs(leaves_tidu, args))
    ref = torch_fn(*inputs(leaves_torch, args))
    assert_same(out, ref, tol)
    if not grad:
        return
    w = rng.uniform(-1, 1, size=tuple(ref.shape)).astype(dtype)
    (out * tidu.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for i, (a, b) in enumerate(zip(leaves_tidu, leaves_torch)):
        if b.grad is None:
            assert a.grad is None or not a.grad.numpy().any(), f"input {i}: tidu has a gradient, torch none"
            continue
        assert a.grad is not None, f"input {i}: no gradient"
        assert_same(a.grad, b.grad, tol, what=f"grad of input {i}")


def errors_of(call: str | Callable, scope: Callable[[Any], dict] | None = None) -> tuple[tuple, tuple]:
    """PyTorch's and tidu's ``(exception class, message)`` for ``call``: a string evaluated with ``L``
    bound to each library (with ``np``, ``math`` and the names ``scope(L)`` gives), or a function of the
    library. Each must raise."""
    errors = []
    for lib in (torch, tidu):
        names = {"L": lib, "np": np, "math": math, **(scope(lib) if scope else {})}
        with pytest.raises(Exception) as info:  # noqa: PT011 - the caller compares the class with PyTorch's
            eval(call, names) if isinstance(call, str) else call(lib)  # noqa: S307 - the tests' own calls
        errors.append((type(info.value), str(info.value)))
    return errors[0], errors[1]


def assert_same_error(call: str | Callable, scope: Callable[[Any], dict] | None = None, *,
                      same_message: bool = True) -> None:
    """``call`` raises the same exception class in both libraries (``errors_of``), and the same
    message unless ``same_message`` is false (PyTorch's names its own types or internals)."""
    ref, ours = errors_of(call, scope)
    assert ours[0] is ref[0], (ref, ours)
    if same_message:
        assert ours[1] == ref[1], (ref, ours)


def assert_same(out: Any, ref: Any, tol: dict, what: str = "output") -> None:
    assert isinstance(out, tidu.Tensor), f"{what}: got {type(out).__name__}"
    assert tuple(out.shape) == tuple(ref.shape), (
        f"{what}: shape {tuple(out.shape)} vs torch {tuple(ref.shape)}"
    )
    assert _name(out.dtype) == _name(ref.dtype), f"{what}: dtype {out.dtype} vs {ref.dtype}"
    np.testing.assert_allclose(
        out.detach().numpy(), ref.detach().numpy(), equal_nan=True, err_msg=what, **tol
    )


def _both(lib_fn: Callable) -> tuple[Any, Any]:
    """Evaluate ``lib_fn(tidu)`` and ``lib_fn(torch)``."""
    return lib_fn(tidu), lib_fn(torch)


def _xfail(reason: str) -> Any:
    return pytest.mark.xfail(strict=True, reason=reason)


# --- elementwise -----------------------------------------------------------------------------
POS = (0.2, 3.0)
UNARY = {
    # name: (tidu fn, torch fn or None (same code), domain)
    "neg": (tidu.neg, torch.neg, None),
    "neg-op": (operator.neg, None, None),
    "exp": (tidu.exp, torch.exp, None),
    "log": (tidu.log, torch.log, POS),
    "tanh": (tidu.tanh, torch.tanh, None),
    "sin": (tidu.sin, torch.sin, None),
    "cos": (tidu.cos, torch.cos, None),
    "erf": (tidu.erf, torch.erf, None),
    "sqrt": (tidu.sqrt, torch.sqrt, POS),
    "sigmoid": (tidu.sigmoid, torch.sigmoid, None),
    "relu": (tidu.relu, torch.relu, None),
    "gelu": (tidu.gelu, torch.nn.functional.gelu, None),
    "gelu-tanh": (
        lambda x: tidu.gelu(x, approximate="tanh"),
        lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
        None,
    ),
    "exp-method": (lambda x: x.exp().sin().tanh(), None, None),
    "radd": (lambda x: 2.5 + x, None, None),
    "rsub": (lambda x: 2.5 - x, None, None),
    "rmul": (lambda x: 3 * x, None, None),
    "rdiv": (lambda x: 3 / x, None, POS),
    "div-scalar": (lambda x: x / 4, None, None),
    "pow-2": (lambda x: x**2, None, None),
    "pow-half": (lambda x: x**0.5, None, POS),
    "rpow": (lambda x: 2**x, None, None),
    "add-alpha": (lambda x: tidu.add(x, x * x, alpha=2), lambda x: torch.add(x, x * x, alpha=2), None),
}
UNARY_SHAPES = [(), (0, 3), (5,), (2, 3), T(3, 2)]
UNARY_GRAD_BUGS: dict[str, str] = {}  # name -> reason (xfail strict)


def _unary_params(with_bugs: bool) -> list:
    params = []
    for name, shape, dtype in itertools.product(UNARY, UNARY_SHAPES, FLOATS):
        marks = [_xfail(UNARY_GRAD_BUGS[name])] if with_bugs and name in UNARY_GRAD_BUGS else []
        params.append(
            pytest.param(name, shape, dtype, marks=marks, id=f"{name}-{_as_args(shape)[0]!r}-{dtype}")
        )
    return params


def _unary_args(name: str, shape: Any) -> list[Arg]:
    arg = _as_args(shape)[0]
    domain = UNARY[name][2]
    if domain:
        arg.low, arg.high = domain
    return [arg]


@pytest.mark.parametrize("name,shape,dtype", _unary_params(False))
def test_unary_values(name: str, shape: Any, dtype: str) -> None:
    fn, torch_fn, _ = UNARY[name]
    run_both(fn, torch_fn, _unary_args(name, shape), dtype, grad=False)


@pytest.mark.parametrize("name,shape,dtype", _unary_params(True))
def test_unary_grads(name: str, shape: Any, dtype: str) -> None:
    fn, torch_fn, _ = UNARY[name]
    run_both(fn, torch_fn, _unary_args(name, shape), dtype)


BINARY = {
    "add": (tidu.add, torch.add, None),
    "sub": (tidu.sub, torch.sub, None),
    "mul": (tidu.mul, torch.mul, None),
    "div": (tidu.div, torch.div, ((-2.0, 2.0), (0.5, 2.0))),
    "pow": (tidu.pow, torch.pow, ((0.5, 2.0), (-1.5, 2.0))),
    "maximum": (tidu.maximum, torch.maximum, None),
    "op-mix": (lambda a, b: (a - b) * a / (b * b + 1) + b, None, None),
}
BINARY_SHAPES = [
    [(2, 3), (2, 3)],
    [(2, 1), (1, 3)],
    [(), (2, 3)],
    [(2, 3), ()],
    [(3,), (2, 3)],
    [(0, 3), (3,)],
    [(2, 0), (1, 1)],
    [T(3, 2), (2, 3)],
    [T(3, 2), T(3, 2)],
]


def _binary_args(name: str, shapes: list) -> list[Arg]:
    args = _as_args(shapes)
    domain = BINARY[name][2]
    if domain:
        for a, (lo, hi) in zip(args, domain):
            a.low, a.high = lo, hi
    return args


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=lambda s: "-".join(repr(a) for a in _as_args(s)))
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name: str, shapes: list, dtype: str) -> None:
    fn, torch_fn, _ = BINARY[name]
    run_both(fn, torch_fn, _binary_args(name, shapes), dtype)


COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]
OPERATOR = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("name", COMPARE)
def test_comparisons(name: str, dtype: str) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 3, size=(2, 3)).astype(dtype), rng.integers(0, 3, size=(3,)).astype(dtype)
    for fn in (getattr(tidu, name), OPERATOR[name]):
        out = fn(tidu.tensor(a), tidu.tensor(b))
        ref = (getattr(torch, name) if fn is not OPERATOR[name] else fn)(torch.tensor(a), torch.tensor(b))
        assert_same(out, ref, {"rtol": 0, "atol": 0})
    # a Python scalar on either side
    assert_same(OPERATOR[name](tidu.tensor(a), 1), OPERATOR[name](torch.tensor(a), 1), {"rtol": 0, "atol": 0})
    assert_same(
        OPERATOR[name](1.5, tidu.tensor(a)), OPERATOR[name](1.5, torch.tensor(a)), {"rtol": 0, "atol": 0}
    )
    assert not fn(tidu.tensor(a, dtype=tidu.float64, requires_grad=True), 1.0).requires_grad


WHERE_SHAPES = [[(2, 3), (2, 3), (2, 3)], [(2, 1), (3,), ()], [(), (2, 3), (1, 3)], [(0, 3), (3,), (1,)]]


def _where_run(shapes: list, dtype: str, grad: bool) -> None:
    cond_shape, *value_shapes = shapes
    cond = np.random.default_rng(5).uniform(size=cond_shape) > 0.5
    run_both(
        lambda x, y: tidu.where(tidu.tensor(cond), x, y),
        lambda x, y: torch.where(torch.tensor(cond), x, y),
        _as_args(value_shapes),
        dtype,
        grad=grad,
    )


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_values(shapes: list, dtype: str) -> None:
    _where_run(shapes, dtype, grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_grads(shapes: list, dtype: str) -> None:
    _where_run(shapes, dtype, grad=True)


def test_where_scalar_operands_and_dtypes() -> None:
    cond = [True, False, True]
    for lib_fn in (
        lambda L: L.where(L.tensor(cond), 1, 0),
        lambda L: L.where(L.tensor(cond), 1.0, 0),
        lambda L: L.where(L.tensor(cond), L.tensor([1, 2, 3]), 0.5),
        lambda L: L.where(L.tensor(cond), L.tensor([1.0, 2.0, 3.0], dtype=L.float64), 0),
        lambda L: L.where(L.tensor(cond), L.tensor([1, 2, 3], dtype=L.int32), L.tensor(7)),
    ):
        assert_same(*_both(lib_fn), {"rtol": 0, "atol": 0})


# --- reductions ------------------------------------------------------------------------------
REDUCTIONS = [
    ("sum", lambda x: x.sum(), [(2, 3), (), (0, 3), T(4, 3)]),
    ("sum-dim0", lambda x: x.sum(dim=0), [(2, 3), (0, 3), T(4, 3)]),
    ("sum-dim-1-keep", lambda x: x.sum(dim=-1, keepdim=True), [(2, 3), (2, 0)]),
    ("sum-dims", lambda x: x.sum(dim=(0, 2)), [(2, 3, 4)]),
    ("sum-fn", lambda x: (tidu if isinstance(x, tidu.Tensor) else torch).sum(x, 1), [(2, 3, 4)]),
    ("mean", lambda x: x.mean(), [(2, 3), (), (0, 3)]),
    ("mean-dim", lambda x: x.mean(dim=1), [(2, 3), T(4, 3), (2, 0)]),
    ("mean-dims-keep", lambda x: x.mean(dim=(0, -1), keepdim=True), [(2, 3, 4)]),
    ("amax", lambda x: x.amax(), [(2, 3), ()]),
    ("amax-dim", lambda x: x.amax(dim=1), [(2, 3), T(4, 3), (0, 3)]),
    ("amax-dims-keep", lambda x: x.amax(dim=(0, 1), keepdim=True), [(2, 3, 4)]),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "fn,shape",
    [pytest.param(fn, s, id=f"{name}-{_as_args(s)[0]!r}") for name, fn, shapes in REDUCTIONS for s in shapes],
)
def test_reductions(fn: Callable, shape: Any, dtype: str) -> None:
    run_both(fn, None, _as_args(shape), dtype)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integer_and_bool_reductions(dtype: str) -> None:
    a = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
    for fn in (
        lambda x: x.sum(),
        lambda x: x.sum(dim=0),
        lambda x: x.sum(dim=1, keepdim=True),
        lambda x: x.amax(dim=1),
        lambda x: x.amin(dim=0),
        lambda x: x.prod(dim=1) if x.dtype is not (tidu.bool if isinstance(x, tidu.Tensor) else torch.bool) else x,
        lambda x: x.sum(dtype=tidu.float64 if isinstance(x, tidu.Tensor) else torch.float64),
    ):
        assert_same(fn(tidu.tensor(a)), fn(torch.tensor(a)), {"rtol": 0, "atol": 0})
    with pytest.raises(RuntimeError):
        torch.tensor(a).mean()
    with pytest.raises(RuntimeError, match="mean"):
        tidu.tensor(a).mean()


@pytest.mark.parametrize("op", ["sum", "amax", "mean"])
def test_reduction_over_dim0_of_0d_tensor(op: str) -> None:
    assert_same(*_both(lambda L: getattr(L.tensor(2.5), op)(dim=0)), TOL["float32"])
    assert_same(*_both(lambda L: getattr(L.tensor(2.5), op)(dim=-1, keepdim=True)), TOL["float32"])


def test_amax_of_empty_dim_raises_index_error_like_torch() -> None:
    with pytest.raises(IndexError):
        torch.zeros(0, 3).amax(dim=0)
    with pytest.raises(IndexError, match="non-zero size"):
        tidu.zeros(0, 3).amax(dim=0)


# --- matmul ----------------------------------------------------------------------------------
MATMUL_SHAPES = [
    [(3,), (3,)],
    [(3,), (3, 2)],
    [(2, 3), (3,)],
    [(2, 3), (3, 4)],
    [(5, 2, 3), (3, 4)],
    [(2, 3), (5, 3, 4)],
    [(5, 2, 3), (5, 3, 4)],
    [(5, 1, 2, 3), (4, 3, 2)],
    [(1, 2, 3), (5, 3, 4)],
    [(3,), (5, 3, 2)],
    [(5, 2, 3), (3,)],
    [T(3, 2), T(4, 3)],
    [(0, 3), (3, 4)],
    [(2, 3), (3, 0)],
    [(2, 0), (0, 3)],
    [(3, 0, 2), (2, 4)],
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(
    "shapes",
    [pytest.param(s, id="@".join(repr(a) for a in _as_args(s))) for s in MATMUL_SHAPES],
)
def test_matmul(shapes: list, dtype: str) -> None:
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else TOL[dtype]
    run_both(operator.matmul, None, _as_args(shapes), dtype, tol=tol)
    run_both(tidu.matmul, torch.matmul, _as_args(shapes), dtype, tol=tol, grad=False)


def test_mm() -> None:
    run_both(tidu.mm, torch.mm, _as_args([(2, 3), (3, 4)]), "float64")
    run_both(lambda a, b: a.mm(b), None, _as_args([T(3, 2), (3, 4)]), "float32")
    with pytest.raises(RuntimeError):
        torch.mm(torch.ones(3), torch.ones(3, 2))
    with pytest.raises(RuntimeError):
        tidu.mm(tidu.ones(3), tidu.ones(3, 2))


# --- shape ops -------------------------------------------------------------------------------
SHAPE_OPS = [
    ("reshape-flat", lambda x: x.reshape(-1), (2, 3)),
    ("reshape-infer", lambda x: x.reshape(3, -1), (2, 3)),
    ("reshape-tuple", lambda x: x.reshape((1, 6, 1)), T(3, 2)),
    ("reshape-0d", lambda x: x.reshape(1, 1), ()),
    ("reshape-empty", lambda x: x.reshape(-1, 3), (0, 3)),
    ("view", lambda x: x.view(6), (2, 3)),
    ("permute", lambda x: x.permute(2, 0, 1), (2, 3, 4)),
    ("permute-neg", lambda x: x.permute(-1, 0, 1), (2, 3, 4)),
    ("transpose", lambda x: x.transpose(0, -1), (2, 3, 4)),
    ("t", lambda x: x.t(), (2, 3)),
    ("t-1d", lambda x: x.t(), (3,)),
    ("T", lambda x: x.T, (2, 3)),
    ("expand", lambda x: x.expand(4, 2, 3), (2, 3)),
    ("expand-keep", lambda x: x.expand(2, -1, 3), (1, 4, 1)),
    ("expand-0d", lambda x: x.expand(3), ()),
    ("unsqueeze", lambda x: x.unsqueeze(0), (2, 3)),
    ("unsqueeze-neg", lambda x: x.unsqueeze(-1), (2, 3)),
    ("squeeze", lambda x: x.squeeze(), (1, 3, 1)),
    ("squeeze-dim", lambda x: x.squeeze(0), (1, 3, 1)),
    ("squeeze-noop", lambda x: x.squeeze(1), (1, 3, 1)),
    ("squeeze-dims", lambda x: x.squeeze((0, 2)), (1, 3, 1)),
    ("flatten", lambda x: x.flatten(), (2, 3, 4)),
    ("flatten-1", lambda x: x.flatten(1), (2, 3, 4)),
    ("flatten-01", lambda x: x.flatten(0, 1), T(3, 2)),
    ("flatten-0d", lambda x: x.flatten(), ()),
    ("expand_as", lambda x: x.expand_as(x.sum(dim=0, keepdim=True).expand(3, 4)), (1, 4)),
    ("chain", lambda x: x.t().reshape(-1).unsqueeze(1).expand(6, 2).permute(1, 0), (2, 3)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn,shape", [pytest.param(fn, s, id=n) for n, fn, s in SHAPE_OPS])
def test_shape_ops(fn: Callable, shape: Any, dtype: str) -> None:
    run_both(fn, None, _as_args(shape), dtype)


def test_module_level_shape_functions() -> None:
    for name, args in [
        ("reshape", ((3, 2),)),
        ("permute", ((1, 0),)),
        ("transpose", (0, 1)),
        ("t", ()),
        ("unsqueeze", (1,)),
        ("squeeze", ()),
        ("flatten", ()),
    ]:
        run_both(
            lambda x, n=name, a=args: getattr(tidu, n)(x, *a),
            lambda x, n=name, a=args: getattr(torch, n)(x, *a),
            _as_args((2, 3)),
            "float64",
        )
    run_both(
        lambda x: tidu.broadcast_to(x, (4, 2, 3)),
        lambda x: torch.broadcast_to(x, (4, 2, 3)),
        _as_args((2, 1)),
        "float64",
    )
    assert tuple(tidu.broadcast_shapes((2, 1), (3,), ())) == tuple(torch.broadcast_shapes((2, 1), (3,), ()))


# --- creation and dtype inference ------------------------------------------------------------
CREATION = {
    "tensor-int": lambda L: L.tensor([1, 2]),
    "tensor-float": lambda L: L.tensor([[1.0, 2.5]]),
    "tensor-bool": lambda L: L.tensor([True, False]),
    "tensor-mixed": lambda L: L.tensor([1, 2.5, True]),
    "tensor-int-bool": lambda L: L.tensor([1, True]),
    "tensor-0d-int": lambda L: L.tensor(3),
    "tensor-0d-float": lambda L: L.tensor(3.5),
    "tensor-empty": lambda L: L.tensor([]),
    "tensor-dtype": lambda L: L.tensor([1, 2], dtype=L.float64),
    "tensor-np-int32": lambda L: L.tensor(np.array([1, 2], dtype=np.int32)),
    "tensor-np-float64": lambda L: L.tensor(np.array([1.5, 2.0])),
    "tensor-np-bool": lambda L: L.tensor(np.array([True])),
    "tensor-of-tensors": lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)]),
    "zeros": lambda L: L.zeros(2, 3),
    "zeros-tuple": lambda L: L.zeros((2, 3), dtype=L.int32),
    "zeros-0d": lambda L: L.zeros(()),
    "zeros-empty": lambda L: L.zeros(0, 3),
    "ones": lambda L: L.ones(3, dtype=L.int64),
    "ones-bool": lambda L: L.ones(2, dtype=L.bool),
    "full-int": lambda L: L.full((2,), 7),
    "full-float": lambda L: L.full((2, 1), 7.0),
    "full-bool": lambda L: L.full((2,), True),
    "full-dtype": lambda L: L.full((2,), 7, dtype=L.float64),
    "arange": lambda L: L.arange(5),
    "arange-start": lambda L: L.arange(2, 7, 2),
    "arange-float": lambda L: L.arange(0, 1, 0.25),
    "arange-float-end": lambda L: L.arange(3.0),
    "arange-dtype": lambda L: L.arange(4, dtype=L.float64),
    "zeros_like": lambda L: L.zeros_like(L.ones(2, 3, dtype=L.int32)),
    "ones_like": lambda L: L.ones_like(L.zeros(2, dtype=L.float64)),
    "as_tensor": lambda L: L.as_tensor([1.0, 2.0]),
    "from_numpy-float32": lambda L: L.from_numpy(np.arange(3, dtype=np.float32)),
    "from_numpy-float64": lambda L: L.from_numpy(np.arange(3, dtype=np.float64)),
    "from_numpy-int32": lambda L: L.from_numpy(np.arange(3, dtype=np.int32)),
    "from_numpy-int64": lambda L: L.from_numpy(np.arange(3, dtype=np.int64)),
    "from_numpy-bool": lambda L: L.from_numpy(np.array([True, False])),
    "from_numpy-0d": lambda L: L.from_numpy(np.array(2.5)),
    "from_numpy-noncontig": lambda L: L.from_numpy(np.arange(6.0).reshape(2, 3).T),
}


@pytest.mark.parametrize("name", list(CREATION))
def test_creation_and_dtype_inference(name: str) -> None:
    out, ref = _both(CREATION[name])
    assert_same(out, ref, {"rtol": 0, "atol": 0})


@pytest.mark.parametrize("value", [np.float64(1.5), np.int32(1), [np.float64(1.5)]], ids=str)
def test_tensor_of_numpy_scalar_keeps_its_dtype(value: Any) -> None:
    assert_same(*_both(lambda L: L.tensor(value)), {"rtol": 0, "atol": 0})


def test_random_creation_shapes_and_dtypes() -> None:
    for lib_fn in (
        lambda L: L.randn(2, 3),
        lambda L: L.rand(4, dtype=L.float64),
        lambda L: L.empty(2, 0),
        lambda L: L.randn((3,), dtype=L.float64),
    ):
        out, ref = _both(lib_fn)
        assert tuple(out.shape) == tuple(ref.shape) and _name(out.dtype) == _name(ref.dtype)
    with pytest.raises(RuntimeError):
        torch.randn(2, dtype=torch.int64)
    with pytest.raises(RuntimeError):
        tidu.randn(2, dtype=tidu.int64)


def test_manual_seed_makes_draws_reproducible_in_both() -> None:
    """The streams differ (tidu does not reproduce torch's numbers); the contract is the same."""
    for L in (tidu, torch):
        L.manual_seed(123)
        first = L.randn(4).tolist() + L.rand(2).tolist()
        L.manual_seed(123)
        assert L.randn(4).tolist() + L.rand(2).tolist() == first
        L.manual_seed(124)
        assert L.randn(4).tolist() != first[:4]


# --- conversions -----------------------------------------------------------------------------
SOURCES = {
    "float32": lambda L: L.tensor([-1.7, 0.0, 2.5, -0.2]),
    "float64": lambda L: L.tensor([[-1.7, 0.0], [2.5, 3.0]], dtype=L.float64),
    "int64": lambda L: L.tensor([-2, 0, 3]),
    "int32": lambda L: L.tensor([-2, 0, 3], dtype=L.int32),
    "int16": lambda L: L.tensor([-300, 0, 3], dtype=L.int16),
    "int8": lambda L: L.tensor([-2, 0, 127], dtype=L.int8),
    "uint8": lambda L: L.tensor([255, 0, 3], dtype=L.uint8),
    "wide-int64": lambda L: L.tensor([-129, 300, 70000]),
    "bool": lambda L: L.tensor([True, False]),
    "0d": lambda L: L.tensor(-2.5),
}
CONVERSIONS = {
    "to-float64": lambda x, L: x.to(L.float64),
    "to-int64": lambda x, L: x.to(L.int64),
    "to-int32": lambda x, L: x.to(dtype=L.int32),
    "to-bool": lambda x, L: x.to(L.bool),
    "to-float32": lambda x, L: x.to(L.float32),
    "to-uint8": lambda x, L: x.to(L.uint8),
    "to-int8": lambda x, L: x.to(L.int8),
    "to-int16": lambda x, L: x.to(L.int16),
    "to-tensor": lambda x, L: x.to(L.tensor([1], dtype=L.int32)),
    "to-cpu": lambda x, L: x.to("cpu"),
    "float": lambda x, L: x.float(),
    "double": lambda x, L: x.double(),
    "long": lambda x, L: x.long(),
    "int": lambda x, L: x.int(),
    "bool()": lambda x, L: x.bool(),
    "byte": lambda x, L: x.byte(),
    "char": lambda x, L: x.char(),
    "short": lambda x, L: x.short(),
}


@pytest.mark.parametrize("conv", list(CONVERSIONS))
@pytest.mark.parametrize("src", list(SOURCES))
def test_conversions(src: str, conv: str) -> None:
    out, ref = (CONVERSIONS[conv](SOURCES[src](L), L) for L in (tidu, torch))
    assert_same(out, ref, {"rtol": 0, "atol": 0})


@pytest.mark.parametrize("src,dst", [("float32", "float64"), ("float64", "float32")])
def test_conversion_gradients(src: str, dst: str) -> None:
    run_both(
        lambda x: (x.to(getattr(tidu, dst)) * 3).exp(),
        lambda x: (x.to(getattr(torch, dst)) * 3).exp(),
        _as_args((2, 3)),
        src,
        tol=TOL["float32"],
    )


# --- dtype promotion -------------------------------------------------------------------------
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]
OPERANDS: dict[str, Callable] = {
    **{f"{d}[2]": (lambda L, d=d: L.tensor([1, 1], dtype=getattr(L, d))) for d in DTYPES},
    **{f"{d}[]": (lambda L, d=d: L.tensor(1, dtype=getattr(L, d))) for d in DTYPES},
    "True": lambda L: True,
    "2": lambda L: 2,
    "2.5": lambda L: 2.5,
}
PAIRS = [(a, b) for a, b in itertools.product(OPERANDS, OPERANDS) if "[" in a or "[" in b]


@pytest.mark.parametrize("a,b", PAIRS, ids=lambda v: v)
def test_promotion_table(a: str, b: str) -> None:
    ta, tb = OPERANDS[a](tidu), OPERANDS[b](tidu)
    ra, rb = OPERANDS[a](torch), OPERANDS[b](torch)
    expected = torch.result_type(ra, rb)
    assert _name(result_type(ta, tb)) == _name(expected)
    ops = [operator.eq, operator.lt, operator.add, operator.mul, operator.sub, operator.truediv]
    if isinstance(ta, tidu.Tensor) and isinstance(tb, tidu.Tensor):
        ops.append(tidu.maximum)
    for op in ops:
        try:
            ref = op(ra, rb) if op is not tidu.maximum else torch.maximum(ra, rb)
        except RuntimeError:  # torch refuses to subtract bools
            with pytest.raises(RuntimeError):
                op(ta, tb)
            continue
        out = op(ta, tb)
        assert _name(out.dtype) == _name(ref.dtype), f"{op.__name__}({a}, {b}): {out.dtype} vs {ref.dtype}"
        assert tuple(out.shape) == tuple(ref.shape)
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "op",
    [operator.add, operator.mul, operator.lt, operator.ge, "maximum"],
    ids=["add", "mul", "lt", "ge", "maximum"],
)
def test_bool_arithmetic(op: Any) -> None:
    def run(L: Any) -> Any:
        a, b = L.tensor([True, False, False]), L.tensor([True, True, False])
        return L.maximum(a, b) if op == "maximum" else op(a, b)

    assert_same(*_both(run), {"rtol": 0, "atol": 0})


@pytest.mark.parametrize(
    "lib_fn",
    [
        lambda L: L.tensor([1, 2]) - True,
        lambda L: L.tensor([True]) - 1.5,
        lambda L: 2 - L.tensor([True, False]),
    ],
    ids=["int-True", "bool-float", "rsub"],
)
def test_subtracting_a_bool_raises_like_torch(lib_fn: Callable) -> None:
    with pytest.raises(RuntimeError):
        lib_fn(torch)
    with pytest.raises(RuntimeError, match="Subtraction"):
        lib_fn(tidu)


# --- gradients at kinks ----------------------------------------------------------------------
def test_relu_gradient_at_zero_is_zero() -> None:
    run_both(tidu.relu, torch.relu, [Arg((5,))], "float64")
    x = tidu.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    tidu.relu(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_maximum_ties_split_the_gradient() -> None:
    def fn(L: Any) -> tuple:
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = L.tensor([1.0, 1.0, 3.0], requires_grad=True)
        s = L.tensor(2.0, requires_grad=True)
        (L.maximum(x, y) * L.tensor([1.0, 2.0, 4.0])).sum().backward()
        L.maximum(s, L.tensor([2.0, 1.0, 2.0])).sum().backward()
        return x.grad, y.grad, s.grad

    for a, b in zip(*_both(fn)):
        assert_same(a, b, TOL["float32"])
    x_grad, y_grad, s_grad = fn(tidu)
    assert x_grad.tolist() == [0.5, 2.0, 2.0] and y_grad.tolist() == [0.5, 0.0, 2.0] and s_grad.item() == 2.0


@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.amax(dim=1),
        lambda x: x.amax(),
        lambda x: x.amax(dim=0),
        lambda x: x.amax(dim=1, keepdim=True) * 2,
    ],
    ids=["dim1", "all", "dim0", "keepdim"],
)
def test_amax_ties_split_evenly(reduce: Callable) -> None:
    def fn(L: Any) -> Any:
        x = L.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
        out = reduce(x)
        (out * L.arange(1, out.numel() + 1).reshape(out.shape)).sum().backward()
        return x.grad

    assert_same(*_both(fn), TOL["float32"])


# --- hypothesis: broadcasting fuzz -----------------------------------------------------------
FUZZ_OPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "maximum": "maximum",
}


def _fuzz_op(name: str, lib: Any) -> Callable:
    op = FUZZ_OPS[name]
    return getattr(lib, op) if isinstance(op, str) else op


@settings(max_examples=40, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
    name=st.sampled_from(list(FUZZ_OPS)),
    seed=st.integers(0, 2**16),
)
def test_fuzz_broadcast_binary(shapes: Any, name: str, seed: int) -> None:
    args = _as_args([tuple(s) for s in shapes.input_shapes])
    if name == "div":
        args[1].low, args[1].high = 0.5, 2.0
    run_both(_fuzz_op(name, tidu), _fuzz_op(name, torch), args, "float64", seed=seed)


@settings(max_examples=40, deadline=None)
@given(
    a=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
    b=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
    name=st.sampled_from(list(FUZZ_OPS)),
)
def test_fuzz_shape_mismatch_raises_runtime_error(a: tuple, b: tuple, name: str) -> None:
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        expected = None
    results = []
    for lib in (tidu, torch):
        x, y = lib.ones(a, dtype=lib.float64), lib.ones(b, dtype=lib.float64)
        if expected is None:
            with pytest.raises(RuntimeError) as info:
                _fuzz_op(name, lib)(x, y)
            results.append(str(info.value))
        else:
            results.append(tuple(_fuzz_op(name, lib)(x, y).shape))
    if expected is None:
        assert "must match" in results[0]
    else:
        assert results[0] == results[1] == expected


# --- coverage audit --------------------------------------------------------------------------
NOT_IN_TORCH = {"is_linear"}  # tidu-only (transpose rules)


def test_every_public_op_is_compared_with_torch() -> None:
    """Each name in ``tidu.ops.__all__`` that torch has appears in this file, tests/ops/ or the creation/printing tests."""
    import re
    from pathlib import Path

    # this file, the per-area oracle tests in tests/ops/ and the creation/printing tests
    here = Path(__file__).parent
    files = [Path(__file__), *sorted((here / "ops").glob("test_*.py")), here / "test_creation.py",
             here / "test_printing.py"]
    source = "\n".join(f.read_text() for f in files)
    missing = []
    for name in tidu.ops.__all__:
        if name in NOT_IN_TORCH:
            continue
        in_torch = any(hasattr(ns, name) for ns in (torch, torch.Tensor, torch.nn.functional))
        assert in_torch, f"{name}: not in torch; list it in NOT_IN_TORCH"
        if not re.search(rf'((tidu|L|x|a)\.{name}\b)|("{name}")', source):
            missing.append(name)
    assert not missing, f"public ops never compared with torch: {missing}"


def test_math_constants_do_not_leak() -> None:
    """Sanity of the harness: a wrong gradient is caught."""
    with pytest.raises(AssertionError):
        run_both(
            tidu.sin,
            lambda x: (
                torch.sin(x)
                + 0 * x
                + (x * x - x * x)
                + math.pi * 0
                + x.detach() * 0
                + (x - x.detach()) * 1e-3
            ),
            [Arg((3,))],
            "float64",
        )


# --- basic indexing ---------------------------------------------------------------------------
INDICES = [
    1, -1, slice(None), slice(1, None), slice(None, None, 2), slice(5, 9), slice(-2, None, 3), None,
    Ellipsis, (1, 2), (slice(None), 0), (Ellipsis, 1), (None, 1, slice(0, 2)), (0, Ellipsis, None),
    (slice(1, 3), slice(None, None, 2), 0), (-1, -1, -1),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_getitem_matches_torch(index: Any, layout: str) -> None:
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 3, 5))
    ours = tidu.tensor(data, requires_grad=True)
    ref = torch.tensor(data, requires_grad=True)
    a, b = (ours.permute(2, 1, 0), ref.permute(2, 1, 0)) if layout == "transposed" else (ours, ref)
    out, expected = a[index], b[index]
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy())
    weight = rng.standard_normal(tuple(expected.shape))
    (out * tidu.tensor(weight)).sum().backward()
    (expected * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), ref.grad.numpy())


@pytest.mark.parametrize(
    "index, exc",
    [(3, IndexError), (-4, IndexError), ((0, 0, 0, 0), IndexError),
     (slice(None, None, -1), ValueError)],
    ids=repr,
)
def test_bad_index_raises_like_torch(index: Any, exc: type) -> None:
    with pytest.raises(exc):
        torch.zeros(3, 2, 2)[index]
    with pytest.raises(exc):
        tidu.zeros(3, 2, 2)[index]
