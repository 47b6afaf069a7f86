"""``op_db`` rows for the math primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

import tidu


def _ints(x: np.ndarray) -> np.ndarray:
    return (x * 100).astype(np.int64)


def _bits(x: tidu.Tensor) -> tidu.Tensor:
    return (x * 100).long()


ROWS: list[OpCase] = [
    # --- smooth unary ----------------------------------------------------------------------------
    OpCase("sqrt", tidu.sqrt, ((5,), (2, 3), ()), low=0.2, ref=np.sqrt),
    OpCase("expm1", tidu.expm1, ((5,), (2, 3), ()), ref=np.expm1),
    OpCase("log1p", tidu.log1p, ((5,), (2, 3)), low=-0.5, ref=np.log1p),
    OpCase("tan", tidu.tan, ((5,), (2, 3)), low=-1.2, high=1.2, ref=np.tan),
    OpCase("sinh", tidu.sinh, ((5,), (2, 3), ()), ref=np.sinh),
    OpCase("cosh", tidu.cosh, ((5,), (2, 3)), ref=np.cosh),
    OpCase("asin", tidu.asin, ((5,), (2, 3)), low=-0.9, high=0.9, ref=np.arcsin),
    OpCase("acos", tidu.acos, ((5,), ()), low=-0.9, high=0.9, ref=np.arccos),
    OpCase("atan", tidu.atan, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.arctan),
    OpCase("asinh", tidu.asinh, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.arcsinh),
    OpCase("acosh", tidu.acosh, ((5,), (2, 3)), low=1.2, high=3.0, ref=np.arccosh),
    OpCase("atanh", tidu.atanh, ((5,), (2, 3)), low=-0.9, high=0.9, ref=np.arctanh),
    OpCase("log10", tidu.log10, ((5,), (2, 3)), low=0.2, high=3.0, ref=np.log10),
    OpCase("atan2", tidu.atan2, (((5,), (5,)), ((2, 3), (2, 3))), low=(0.5, 0.5), high=(2.0, 2.0), ref=np.arctan2),
    OpCase("hypot", tidu.hypot, (((5,), (5,)), ((2, 3), (1, 3))), low=(0.5, 0.5), high=(2.0, 2.0), ref=np.hypot),
    OpCase("fmod", tidu.fmod, (((5,), (5,)),), low=(0.2, 1.0), high=(0.8, 2.0), ref=np.fmod),  # x / y in (0, 1)
    OpCase("logistic", tidu.sigmoid, ((5,), (2, 3), ()), low=-6.0, high=6.0, ref=lambda x: 1 / (1 + np.exp(-x))),
    OpCase("abs", tidu.abs, ((5,), (2, 3), ()), ref=np.abs),
    OpCase("relu", tidu.relu, ((5,), (2, 3), ()), ref=lambda x: np.maximum(x, 0)),
    # --- piecewise constant: zero derivative (random points are away from the jumps) ------------
    OpCase("sign", tidu.sign, ((5,), (2, 3)), ref=np.sign),
    OpCase("floor", tidu.floor, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.floor),
    OpCase("ceil", tidu.ceil, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.ceil),
    OpCase("round", tidu.round, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.round),
    OpCase(
        "round", lambda x: tidu.round(x, decimals=2), ((5,),), ref=lambda x: np.round(x, 2), name="decimals"
    ),
    OpCase("trunc", tidu.trunc, ((5,), (2, 3)), low=-3.0, high=3.0, ref=np.trunc),
    # --- binary ----------------------------------------------------------------------------------
    OpCase("minimum", tidu.minimum, (((2, 3), (2, 3)), ((2, 1), (1, 3))), distinct=True, ref=np.minimum),
    OpCase(
        "floor_divide",
        tidu.floor_divide,
        (((2, 3), (2, 3)), ((2, 3), (3,))),
        low=(-5.0, 0.5),
        high=(5.0, 2.0),
        ref=np.floor_divide,
    ),
    OpCase(
        "floor_divide",
        lambda x, y: tidu.floor_divide(x, -y),
        (((2, 3), (2, 3)),),
        low=(-5.0, 0.5),
        high=(5.0, 2.0),
        ref=lambda x, y: np.floor_divide(x, -y),
        name="negative-divisor",
    ),
    OpCase(
        "remainder",
        tidu.remainder,
        (((2, 3), (2, 3)), ((2, 3), (3,))),
        low=(-5.0, 0.5),
        high=(5.0, 2.0),
        ref=np.remainder,
    ),
    OpCase(
        "remainder",
        lambda x, y: tidu.remainder(x, -y),
        (((2, 3), (2, 3)),),
        low=(-5.0, 0.5),
        high=(5.0, 2.0),
        ref=lambda x, y: np.remainder(x, -y),
        name="negative-divisor",
    ),
    # --- integer and bool kernels: values only ---------------------------------------------------
    *[
        OpCase(
            f"bitwise_{op}",
            lambda x, y, f=getattr(tidu, f"bitwise_{op}"): f(_bits(x), _bits(y)),
            (((2, 3), (2, 3)), ((2, 3), (3,))),
            ref=lambda x, y, f=getattr(np, f"bitwise_{op}"): f(_ints(x), _ints(y)),
        )
        for op in ("and", "or", "xor")
    ],
    *[
        OpCase(
            f"bitwise_{op}",
            lambda x, y, f=getattr(tidu, f"bitwise_{op}"): f(x > 0, y > 0),
            (((2, 3), (2, 3)),),
            ref=lambda x, y, f=getattr(np, f"bitwise_{op}"): f(x > 0, y > 0),
            name="bool",
        )
        for op in ("and", "or", "xor")
    ],
    # counts from -5 to 69: negative, in range and past the 64 bits (numpy's results are PyTorch's)
    *[
        OpCase(
            f"bitwise_{op}_shift",
            lambda x, y, f=getattr(tidu, f"bitwise_{op}_shift"): f(_bits(x), _bits(y) % 75 - 5),
            (((2, 3), (2, 3)), ((2, 3), (3,))),
            ref=lambda x, y, f=getattr(np, f"{op}_shift"): f(_ints(x), _ints(y) % 75 - 5),
        )
        for op in ("left", "right")
    ],
]
