"""The scalar math of the softmax tangents, shared by the CPU and CUDA kernels.

Along a row (the softmax axis), with ``d`` the tangent (or cotangent) and ``w`` the saved output:

    kind 0, softmax:                s * (d - sum(s * d))             (its own transpose)
    kind 1, log_softmax:            d - sum(exp(y) * d)
    kind 2, log_softmax transposed: d - exp(y) * sum(d)

A kernel sums ``term(kind, d, w)`` over the row, then writes ``value(kind, d, w, total)``.
The CPU kernels compile these with Numba (``register_jitable``), the CUDA kernels as device functions.
"""

from __future__ import annotations

import math

SOFTMAX, LOG_SOFTMAX, LOG_SOFTMAX_TRANSPOSED = 0, 1, 2


def term(kind, d, w):  # noqa: ANN001, ANN201
    if kind == SOFTMAX:
        return w * d
    if kind == LOG_SOFTMAX:
        return math.exp(w) * d
    return d


def value(kind, d, w, total):  # noqa: ANN001, ANN201
    if kind == SOFTMAX:
        return w * (d - total)
    if kind == LOG_SOFTMAX:
        return d - total
    return d - math.exp(w) * total
