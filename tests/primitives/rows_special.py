"""``op_db`` rows for the special functions and the scans (appended to ``OP_DB``; see op_db.py
for the row format). The numpy references are the functions' defining properties or series."""

from __future__ import annotations

import math

import numpy as np
from op_db import OpCase

import tidu

_erf = np.vectorize(math.erf)
_lgamma = np.vectorize(math.lgamma)


def _digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = psi(x + N) - sum_{k < N} 1 / (x + k), psi(x + N) by three terms of Stirling's series:
    for N = 1000 the first term left out is 1e-14."""
    n = 1000
    big = x + n
    shifted = np.log(big) - 1 / (2 * big) - 1 / (12 * big**2)
    return shifted - (1.0 / (x[..., None] + np.arange(n))).sum(-1)


def _polygamma(n: int) -> object:
    """(-1)^(n+1) n! sum_k (x + k)^-(n+1), the tail past k = 10^5 as its midpoint integral."""

    def ref(x: np.ndarray) -> np.ndarray:
        s, big = n + 1, 100_000
        total = (1.0 / (x[..., None] + np.arange(big)) ** s).sum(-1) + (x + big - 0.5) ** (1 - s) / (s - 1)
        return (-1) ** (n + 1) * math.factorial(n) * total

    return ref


def _erfinv(y: np.ndarray) -> np.ndarray:
    """Newton on erf from 0 (monotone: erf is concave on each side of 0)."""
    x = np.zeros_like(y)
    for _ in range(60):
        x -= (_erf(x) - y) * (math.sqrt(math.pi) / 2) * np.exp(x * x)
    return x


ROWS: list[OpCase] = [
    OpCase("erfc", tidu.erfc, ((5,), (2, 3), ()), ref=lambda x: 1.0 - _erf(x)),
    OpCase("erfinv", tidu.erfinv, ((5,), (2, 3)), low=-0.9, high=0.9, ref=_erfinv),
    OpCase("ndtri", tidu.special.ndtri, ((5,), (2, 3)), low=0.05, high=0.95,
           ref=lambda p: math.sqrt(2) * _erfinv(2 * p - 1)),
    OpCase("lgamma", tidu.lgamma, ((5,), (2, 3)), low=0.2, high=5.0, ref=_lgamma),
    OpCase("lgamma", tidu.lgamma, ((4,),), low=-2.9, high=-2.1, ref=_lgamma, name="negative"),
    OpCase("digamma", tidu.digamma, ((5,), (2, 3)), low=0.2, high=5.0, ref=_digamma),
    OpCase("digamma", tidu.digamma, ((4,),), low=-1.9, high=-1.1, ref=_digamma, name="negative"),
    OpCase("polygamma", lambda x: tidu.polygamma(1, x), ((5,), (2, 3)), low=0.2, high=5.0, ref=_polygamma(1)),
    OpCase("polygamma", lambda x: x.polygamma(3), ((4,),), low=-2.9, high=-2.1, ref=_polygamma(3), name="n3-negative"),
]

_ZEROS = np.array([[1.5, 0.0, 2.0, 0.0, -1.0], [0.0, 3.0, -2.0, 1.0, 0.5]])
_NONZERO = tidu.tensor((_ZEROS != 0).astype(np.float64))  # module-level: the CUDA test moves it

SCAN_ROWS: list[OpCase] = [
    OpCase("linear_recurrence", lambda x: tidu.cumprod(x, 0), ((5,), (2, 3)), ref=lambda x: np.cumprod(x, 0)),
    OpCase("linear_recurrence", lambda x: x.cumprod(-1), ((2, 4),), ref=lambda x: np.cumprod(x, -1), name="last"),
    # exact at zeros: the inputs' zeros are kept (x * mask keeps them zero under every perturbation
    # of the other entries), so finite differences see the polynomial there
    OpCase("linear_recurrence", lambda x: (x * _NONZERO).cumprod(1), ((2, 5),),
           ref=lambda x: np.cumprod(x * (_ZEROS != 0), 1), name="zeros"),
    OpCase("logcumsumexp", lambda x: tidu.logcumsumexp(x, 0), ((5,), (2, 3)),
           ref=lambda x: np.logaddexp.accumulate(x, 0)),
    OpCase("logcumsumexp", lambda x: x.logcumsumexp(1) * 30.0, ((2, 4),), low=-30.0, high=30.0, name="wide",
           ref=lambda x: np.logaddexp.accumulate(x, 1) * 30.0),
    OpCase("cumulative_arg_extreme", lambda x: tidu.cummax(x, 0).values, ((6,), (2, 3)), distinct=True,
           ref=lambda x: np.maximum.accumulate(x, 0)),
    OpCase("cumulative_arg_extreme", lambda x: x.cummin(1).values, ((2, 5),), distinct=True, name="min",
           ref=lambda x: np.minimum.accumulate(x, 1)),
]
ROWS += SCAN_ROWS
