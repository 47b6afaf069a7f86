"""One row per use of a registered primitive; ``test_rules.py`` drives every test from it.

A row names the primitive it exercises (``prim``, a key of ``REGISTRY``), a call that
binds it (``fn``, usually the public op), the argument shapes, the input domain and a
numpy reference. ``shapes`` lists one entry per case: a shape for a one-argument
``fn`` (``(5,)``, ``()``) or a tuple of shapes, one per argument (``((2, 1), (1, 3))``).

``linear=True`` marks ``fn`` as linear in all its arguments (together): the adjoint test
then also checks ``jvp(fn, x, t) == fn(t)``. ``distinct=True`` samples every input
entry from a shuffled grid, so no two entries tie (``maximum``, ``amax``: keep away
from kinks; ties are tested in ``tests/test_torch_oracle.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import tidu
from tidu.core.primitive import REGISTRY, Literal
from tidu.primitives.creation import full, literal
from tidu.primitives.linalg import dot_general
from tidu.primitives.slicing import pad, slice_p
from tidu.primitives.structural import broadcast_in_dim


def _pad_reference(x: np.ndarray, config: tuple) -> np.ndarray:
    """numpy has no interior padding: place x on a strided grid of zeros."""
    shape = [lo + hi + n + max(0, n - 1) * i for n, (lo, hi, i) in zip(x.shape, config)]
    out = np.zeros(shape, x.dtype)
    out[tuple(slice(lo, lo + n * (i + 1), i + 1) for n, (lo, _, i) in zip(x.shape, config))] = x
    return out


def _device_param(x: tidu.Tensor) -> dict:
    """``full`` has no input to take a device from: it is a param (absent for the CPU)."""
    return {} if x.device.type == "cpu" else {"device": x.device.type}


# Primitives with no derivative (declared ``Primitive(..., nondiff=True)``): value-tested only.
NONDIFF_EXEMPT = frozenset(name for name, prim in REGISTRY.items() if prim.nondiff)
# Primitives whose derivative raises PyTorch's NotImplementedError, as PyTorch's does (their outputs
# are recorded, so a backward through them raises instead of skipping them): value-tested, and
# test_rules checks that the backward raises.
DERIVATIVE_NOT_IMPLEMENTED = frozenset({"geqrf"})


@dataclass(frozen=True)
class OpCase:
    prim: str  # registry name
    fn: Callable[..., Any]  # tensors in, one tensor out
    shapes: tuple  # one entry per case (see the module docstring)
    low: float | tuple = -2.0  # input domain; a tuple gives one bound per argument
    high: float | tuple = 2.0
    linear: bool = False  # fn is linear in all its inputs: exact adjoint + linearity
    ref: Callable[..., Any] | None = None  # numpy reference for the values
    distinct: bool = False  # no ties between entries (kinks of max)
    eps: float = 1e-6  # finite-difference step (float64: truncation ~1e-12, roundoff ~1e-10)
    atol: float = 1e-7
    rtol: float = 1e-7
    name: str = ""  # test id suffix when a primitive has several rows

    @property
    def id(self) -> str:
        return f"{self.prim}-{self.name}" if self.name else self.prim

    def arg_shapes(self, entry: tuple) -> list[tuple[int, ...]]:
        if entry and isinstance(entry[0], tuple):
            return [tuple(s) for s in entry]
        return [tuple(entry)]

    def bound(self, value: float | tuple, i: int) -> float:
        return value[i] if isinstance(value, tuple) else value

    def sample(self, entry: tuple, *, seed: int = 0, dtype: Any = np.float64) -> list[np.ndarray]:
        """Inputs for one shape entry, in the row's domain (deterministic per seed)."""
        rng = np.random.default_rng(seed)
        shapes = self.arg_shapes(entry)
        if self.distinct:
            sizes = [math.prod(s) for s in shapes]
            lo, hi = self.bound(self.low, 0), self.bound(self.high, 0)
            grid = rng.permutation(np.linspace(lo, hi, max(sum(sizes), 2)))
            parts = np.split(grid, np.cumsum(sizes)[:-1]) if len(sizes) > 1 else [grid[: sizes[0]]]
            return [p.reshape(s).astype(dtype) for p, s in zip(parts, shapes)]
        return [
            rng.uniform(self.bound(self.low, i), self.bound(self.high, i), size=s).astype(dtype)
            for i, s in enumerate(shapes)
        ]


def _fixed(*shape: int, seed: int = 7, low: float = -1.0, high: float = 1.0) -> tidu.Tensor:
    """A constant operand (does not require grad), float64."""
    rng = np.random.default_rng(seed)
    return tidu.from_numpy(rng.uniform(low, high, size=shape))


# Constants closed over by rows that are linear in one argument of a bilinear primitive.
W_34 = _fixed(3, 4)
W_23 = _fixed(2, 3, seed=8)
D_23 = _fixed(2, 3, seed=9, low=0.5, high=2.0)
COND_23 = tidu.from_numpy(np.array([[True, False, True], [False, False, True]]))
COND_3 = tidu.from_numpy(np.array([True, False, True]))

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _dot(a: Any, b: Any, dims: Any) -> Any:
    return dot_general.bind(a, b, dimension_numbers=dims)


# dot_general with non-leading batch and contracting dims: (i, a, k) x (k, j, a) -> (a, i, j)
DOT_ODD = (((2,), (0,)), ((1,), (2,)))
# two contracting dims listed out of order on both sides: (k, b, l, y) x (k, l, b, z) -> (b, y, z)
DOT_CROSSED = (((2, 0), (1, 0)), ((1,), (2,)))

OP_DB: list[OpCase] = [
    # --- elementwise, unary ------------------------------------------------------------------
    OpCase("neg", tidu.neg, ((5,), (2, 3), ()), linear=True, ref=np.negative),
    OpCase("exp", tidu.exp, ((5,), (2, 3), ()), ref=np.exp),
    OpCase("log", tidu.log, ((5,), (2, 3)), low=0.5, ref=np.log),
    OpCase("tanh", tidu.tanh, ((5,), (2, 3), ()), ref=np.tanh),
    OpCase("sin", tidu.sin, ((5,), (2, 3)), ref=np.sin),
    OpCase("cos", tidu.cos, ((5,), (2, 3)), ref=np.cos),
    OpCase("erf", tidu.erf, ((5,), (2, 3)), ref=_erf),
    # --- elementwise, binary (the public op broadcasts) -----------------------------------------
    OpCase("add", tidu.add, (((2, 3), (2, 3)), ((2, 1), (1, 3)), ((), (3,))), linear=True, ref=np.add),
    OpCase("sub", tidu.sub, (((2, 3), (2, 3)), ((3,), (2, 3))), linear=True, ref=np.subtract),
    OpCase("mul", tidu.mul, (((2, 3), (2, 3)), ((2, 1), (1, 3)), ((), (3,))), ref=np.multiply),
    OpCase(
        "mul",
        lambda x: x * W_23,
        ((2, 3), (1, 3)),
        linear=True,
        ref=lambda x: x * W_23.numpy(),
        name="linear-lhs",
    ),
    OpCase(
        "mul", lambda y: W_23 * y, ((2, 3),), linear=True, ref=lambda y: W_23.numpy() * y, name="linear-rhs"
    ),
    OpCase(
        "div", tidu.div, (((2, 3), (2, 3)), ((2, 3), (3,))), low=(-2.0, 0.5), high=(2.0, 2.0), ref=np.divide
    ),
    OpCase(
        "div", lambda x: x / D_23, ((2, 3),), linear=True, ref=lambda x: x / D_23.numpy(), name="linear-lhs"
    ),
    OpCase("pow", tidu.pow, (((2, 3), (2, 3)), ((3,), ())), low=0.5, high=2.0, ref=np.power),
    OpCase("pow", lambda x: x**3, ((5,),), ref=lambda x: x**3, name="int-exponent"),
    OpCase("maximum", tidu.maximum, (((2, 3), (2, 3)), ((2, 1), (1, 3))), distinct=True, ref=np.maximum),
    OpCase(
        "select",
        lambda x, y: tidu.where(COND_23, x, y),
        (((2, 3), (2, 3)), ((3,), (2, 1))),
        linear=True,
        ref=lambda x, y: np.where(COND_23.numpy(), x, y),
    ),
    OpCase(
        "select",
        lambda x: tidu.where(x > 0, x, 0.1 * x),
        ((2, 3),),
        ref=lambda x: np.where(x > 0, x, 0.1 * x),
        name="data-dependent",
    ),
    # --- comparisons: values only ----------------------------------------------------------------
    *[
        OpCase(
            name,
            getattr(tidu, name),
            (((2, 3), (2, 3)), ((2, 3), (3,))),
            ref=getattr(np, npname),
            distinct=True,
        )
        for name, npname in [
            ("eq", "equal"),
            ("ne", "not_equal"),
            ("lt", "less"),
            ("le", "less_equal"),
            ("gt", "greater"),
            ("ge", "greater_equal"),
        ]
    ],
    OpCase("eq", lambda x: tidu.eq(x, x.amax()), ((5,),), ref=lambda x: x == x.max(), name="ties"),
    # --- constants: values only ------------------------------------------------------------------
    OpCase(
        "full",
        lambda x: full.bind(shape=tuple(x.shape), value=1.5, dtype=x.dtype, **_device_param(x)),
        ((2, 3), ()),
        ref=lambda x: np.full(x.shape, 1.5),
    ),
    OpCase("literal", lambda x: literal.bind(value=Literal(x)), ((2, 3),), ref=lambda x: x),
    # --- structural ------------------------------------------------------------------------------
    OpCase(
        "broadcast_in_dim",
        lambda x: x.expand(3, 4),
        ((3, 1), (4,), ()),
        linear=True,
        ref=lambda x: np.broadcast_to(x, (3, 4)),
    ),
    OpCase(
        "broadcast_in_dim",
        lambda x: broadcast_in_dim.bind(x, shape=(3, 2, 4), broadcast_dimensions=(0, 2)),
        ((3, 4), (1, 4)),
        linear=True,
        ref=lambda x: np.broadcast_to(x[:, None, :], (3, 2, 4)),
        name="interior",
    ),
    OpCase(
        "reshape",
        lambda x: x.reshape(3, -1),
        ((2, 3), (3, 1, 2)),
        linear=True,
        ref=lambda x: x.reshape(3, -1),
    ),
    OpCase(
        "reshape", lambda x: x.unsqueeze(0), ((), (3,)), linear=True, ref=lambda x: x[None], name="unsqueeze"
    ),
    OpCase(
        "transpose",
        lambda x: x.permute(2, 0, 1),
        ((2, 3, 4),),
        linear=True,
        ref=lambda x: np.transpose(x, (2, 0, 1)),
    ),
    OpCase("transpose", lambda x: x.t(), ((2, 3),), linear=True, ref=lambda x: x.T, name="t"),
    # bound directly: indexing a tensor that does not require grad takes numpy's view, not a bind
    OpCase("slice", lambda x: slice_p.bind(x, start_indices=(1, 0), limit_indices=tuple(x.shape), strides=(1, 2)),
           ((3, 5), (1, 4)), linear=True, ref=lambda x: x[1:, ::2]),
    OpCase("slice", lambda x: slice_p.bind(x, start_indices=(0, 2), limit_indices=(4, 3), strides=(1, 1)),
           ((4, 3),), linear=True, ref=lambda x: x[..., 2, None], name="int"),
    OpCase(
        "pad",
        lambda x: pad.bind(x, padding_config=((1, 2, 1), (0, 1, 0))),
        ((3, 2), (0, 2)),
        linear=True,
        ref=lambda x: _pad_reference(x, ((1, 2, 1), (0, 1, 0))),
    ),
    OpCase(
        "convert_element_type",
        lambda x: x.float(),
        ((2, 3),),
        linear=True,
        ref=lambda x: x.astype(np.float32),
        eps=1e-3,
        atol=1e-3,
        rtol=1e-3,
    ),
    # --- reductions ------------------------------------------------------------------------------
    OpCase("reduce_sum", lambda x: x.sum(dim=1), ((3, 4),), linear=True, ref=lambda x: x.sum(axis=1)),
    OpCase("reduce_sum", lambda x: x.sum(), ((3, 4), (), (5,)), linear=True, ref=np.sum, name="all"),
    OpCase(
        "reduce_sum",
        lambda x: x.sum(dim=(0, 2), keepdim=True),
        ((2, 3, 2),),
        linear=True,
        ref=lambda x: x.sum(axis=(0, 2), keepdims=True),
        name="split-keepdim",
    ),
    OpCase("reduce_max", lambda x: x.amax(dim=1), ((3, 4),), distinct=True, ref=lambda x: x.max(axis=1)),
    OpCase("reduce_max", lambda x: x.amax(), ((2, 3),), distinct=True, ref=np.max, name="all"),
    # --- contraction -----------------------------------------------------------------------------
    OpCase(
        "dot_general",
        tidu.matmul,
        (((2, 3), (3, 4)), ((3,), (3,)), ((2, 2, 3), (2, 3, 2)), ((3,), (3, 2))),
        ref=np.matmul,
    ),
    OpCase(
        "dot_general",
        lambda a, b: _dot(a, b, DOT_ODD),
        (((2, 2, 3), (3, 2, 2)),),
        ref=lambda a, b: np.einsum("iak,kja->aij", a, b),
        name="odd-dims",
    ),
    OpCase(
        "dot_general",
        lambda a, b: _dot(a, b, DOT_CROSSED),
        (((3, 2, 4, 2), (3, 4, 2, 3)),),
        ref=lambda a, b: np.einsum("kbly,klbz->byz", a, b),
        name="crossed-dims",
    ),
    OpCase(  # each operand laid out (batch, free, contracted): x @ w.T as F.linear binds it
        "dot_general",
        lambda a, b: _dot(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((0,), (0,)) if a.ndim == 3 else ((), ()))),
        (((2, 3, 4), (2, 5, 4)), ((3, 2), (4, 2))),
        ref=lambda a, b: np.einsum("...ik,...jk->...ij", a, b),
        name="free-then-contracted",
    ),
    OpCase(  # the lhs laid out (contracted, free): a.T @ b
        "dot_general",
        lambda a, b: _dot(a, b, (((0,), (0,)), ((), ()))),
        (((3, 2), (3, 4)),),
        ref=lambda a, b: a.T @ b,
        name="contracted-then-free",
    ),
    OpCase(
        "dot_general",
        lambda x: x @ W_34,
        ((2, 3), (3,)),
        linear=True,
        ref=lambda x: x @ W_34.numpy(),
        name="linear-lhs",
    ),
    OpCase(
        "dot_general",
        lambda y: W_23 @ y,
        ((3, 2), (3,)),
        linear=True,
        ref=lambda y: W_23.numpy() @ y,
        name="linear-rhs",
    ),
]

# Rows of later primitive families live in their own files (one per family).
from rows_conv import ROWS as _CONV_ROWS  # noqa: E402
from rows_linalg_dec import ROWS as _LINALG_DEC_ROWS  # noqa: E402
from rows_math import ROWS as _MATH_ROWS  # noqa: E402
from rows_nn import ROWS as _NN_ROWS  # noqa: E402
from rows_reduce import ROWS as _REDUCE_ROWS  # noqa: E402
from rows_shape import ROWS as _SHAPE_ROWS  # noqa: E402
from rows_special import ROWS as _SPECIAL_ROWS  # noqa: E402

OP_DB += [*_MATH_ROWS, *_REDUCE_ROWS, *_SHAPE_ROWS, *_NN_ROWS, *_CONV_ROWS, *_LINALG_DEC_ROWS, *_SPECIAL_ROWS]

DIFF_CASES = [c for c in OP_DB if c.prim not in NONDIFF_EXEMPT | DERIVATIVE_NOT_IMPLEMENTED]
LINEAR_CASES = [c for c in OP_DB if c.linear]

# Known tidu bugs, by (test kind, row id): the test is marked xfail(strict=True), so it
# turns red (XPASS) the day the bug is fixed and the entry must be removed.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def expand(cases: list[OpCase], kind: str = "") -> list[Any]:
    """(row, shape entry) pairs for parametrization, known bugs marked xfail(strict=True)."""
    import pytest

    params = []
    for c in cases:
        reason = KNOWN_BUGS.get((kind, c.id))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params += [pytest.param((c, entry), marks=marks) for entry in c.shapes]
    return params


def case_id(pair: tuple[OpCase, tuple]) -> str:
    case, entry = pair
    return f"{case.id}-{'x'.join(str(s) for s in case.arg_shapes(entry))}".replace(" ", "")
