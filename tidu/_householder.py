"""Householder reflectors: ``geqrf`` (LAPACK's compact QR) and ``linalg.householder_product``
(the ``Q`` that reflectors stored that way make; PyTorch's ``orgqr``)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from .core.autocast import policy as autocast_policy
from .ops import creation, indexing, shape
from .ops._operands import is_value
from .primitives import decompositions as dec

GeqrfResult = namedtuple("geqrf", ["a", "tau"])


@autocast_policy("fp32")
def geqrf(input: Any) -> GeqrfResult:  # noqa: A002
    """LAPACK's QR of each matrix in ``input``: ``a`` holds ``R`` on and above its diagonal and the
    Householder vectors below it (their leading 1 implied), ``tau`` their scales, so that
    ``linalg.householder_product(a, tau)`` is ``Q``. Not differentiable, as in PyTorch.

    >>> import tidu
    >>> a, tau = tidu.geqrf(tidu.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> a
    tensor([[-5.0000, -2.2000],
            [ 0.5000,  0.4000]])
    >>> tau
    tensor([1.6000, 0.0000])
    """
    if not is_value(input):
        raise TypeError(f"geqrf(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    a, tau = dec.geqrf.bind(input)
    return GeqrfResult(a, tau)


@autocast_policy("fp32")
def householder_product(A: Any, tau: Any) -> Any:  # noqa: N803
    """The first ``n`` columns of ``H_1 H_2 ... H_k`` for ``A`` of shape ``(..., m, n)`` and ``tau``
    of shape ``(..., k)``, where ``H_i = I - tau_i v_i v_iᵀ`` and ``v_i`` is column ``i`` of ``A``
    below the diagonal with a 1 on it (the reflectors ``geqrf`` stores). Differentiable in both.

    >>> import tidu
    >>> a, tau = tidu.geqrf(tidu.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> tidu.linalg.householder_product(a, tau)
    tensor([[-0.6000, -0.8000],
            [-0.8000,  0.6000]])
    """
    for name, value in (("input", A), ("tau", tau)):
        if not is_value(value):
            raise TypeError(f"linalg_householder_product(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != A.ndim - 1 or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError("torch.linalg.householder_product: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {tuple(tau.shape[:-1])}")
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {tau.dtype} does not match input dtype "
                           f"{A.dtype}")
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.householder_product: Expected a floating point tensor, got {A.dtype}")
    eye = creation.eye(m, n, dtype=A.dtype, device=A.device)
    vectors = indexing.tril(A, -1) + eye  # column i is v_i
    q = shape.expand(eye, *A.shape) if A.ndim > 2 else eye
    for i in range(k - 1, -1, -1):  # Q = H_1 (H_2 (... (H_k E)))
        v = vectors[..., :, i:i + 1]
        scale = shape.unsqueeze(shape.unsqueeze(tau[..., i], -1), -1)
        q = q - (scale * v) @ (v.mT @ q)
    return q


def orgqr(input: Any, tau: Any) -> Any:  # noqa: A002
    """``linalg.householder_product`` under LAPACK's name.

    >>> import tidu
    >>> tidu.orgqr(*tidu.geqrf(tidu.eye(2))).abs()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return householder_product(input, tau)


def ormqr(input: Any, tau: Any, other: Any, left: bool = True, transpose: bool = False) -> Any:  # noqa: A002
    """``other`` multiplied by the full ``Q`` (m x m) of ``geqrf``'s reflectors in ``input`` and ``tau``:
    ``Q @ other`` (``Qᵀ`` with ``transpose``), or ``other @ Q`` when not ``left``. Differentiable.

    >>> import tidu
    >>> a, tau = tidu.geqrf(tidu.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> tidu.ormqr(a, tau, tidu.eye(2), transpose=True) @ tidu.tensor([[3.0, 1.0], [4.0, 2.0]])
    tensor([[-5.0000, -2.2000],
            [ 0.0000,  0.4000]])
    """
    for name, value in (("input", input), ("input2", tau), ("input3", other)):
        if not is_value(value):
            raise TypeError(f"ormqr(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if input.ndim < 2 or other.ndim < 2:
        raise RuntimeError("torch.ormqr: input and other must have at least 2 dimensions.")
    m = input.shape[-2]
    if (other.shape[-2] if left else other.shape[-1]) != m:
        side = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"torch.ormqr: {side} must be equal to input.shape[-2]")
    if tau.shape[-1] > m:
        raise RuntimeError("torch.ormqr: input.shape[-2] must be greater than or equal to tau.shape[-1]")
    reflectors = input[..., :, :min(m, input.shape[-1])]
    if reflectors.shape[-1] < m:  # the full Q: reflectors past tau's are identities
        pad = creation.zeros(*reflectors.shape[:-1], m - reflectors.shape[-1], dtype=input.dtype, device=input.device)
        reflectors = shape.cat([reflectors, pad], -1)
    q = householder_product(reflectors, tau)
    if transpose:
        q = q.mT
    return q @ other if left else other @ q

