"""The scalar math of the softmax tangents, shared by the CPU and CUDA kernels.

Along a row (the softmax axis), with ``d`` the tangent (or cotangent) and ``w`` the saved output:

    kind 0, softmax:                s * (d - sum(s * d))             (its own transpose)
    kind 1, log_softmax:            d - sum(exp(y) * d)
    kind 2, log_softmax transposed: d - exp(y) * sum(d)

A kernel sums ``term(kind, d, p)`` over the row, then writes ``value(kind, d, p, total)``, where
``p = weight(kind, w)`` is the row's probability: ``s`` itself, or ``exp(y)``. Each kernel brings
its own ``weight`` where its ``exp`` differs (the CPU's float32 one vectorizes).
The CPU kernels compile these with Numba (``register_jitable``), the CUDA kernels as device functions.
"""

from __future__ import annotations

import math

SOFTMAX, LOG_SOFTMAX, LOG_SOFTMAX_TRANSPOSED = 0, 1, 2


def weight(kind, w):  # noqa: ANN001, ANN201
    return w if kind == SOFTMAX else math.exp(w)


def term(kind, d, p):  # noqa: ANN001, ANN201
    return d if kind == LOG_SOFTMAX_TRANSPOSED else p * d


def value(kind, d, p, total):  # noqa: ANN001, ANN201
    if kind == SOFTMAX:
        return p * (d - total)
    if kind == LOG_SOFTMAX:
        return d - total
    return d - p * total
