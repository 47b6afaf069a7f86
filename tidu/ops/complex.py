"""PyTorch's complex-number functions, on tidu's real tensors (tidu has no complex dtypes): the
queries answer ``False`` and the conjugations and ``real`` give back ``input`` itself, as
PyTorch's do for a real tensor.

>>> import tidu
>>> x = tidu.tensor([1.0, -2.0])
>>> tidu.is_complex(x), tidu.conj(x) is x, x.real is x
(False, True, True)
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor

__all__ = ["conj", "conj_physical", "is_complex", "is_conj", "is_neg", "real", "resolve_conj", "resolve_neg"]


def _real_tensor(input: Any, op: str) -> Tensor:  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input


def is_complex(input: Any) -> bool:  # noqa: A002
    """Whether ``input``'s dtype is complex: never, in tidu.

    >>> import tidu
    >>> tidu.is_complex(tidu.ones(1))
    False
    """
    _real_tensor(input, "is_complex")
    return False


def is_conj(input: Any) -> bool:  # noqa: A002
    """Whether ``input`` is a lazily conjugated view: never, for a real tensor.

    >>> import tidu
    >>> tidu.is_conj(tidu.ones(1))
    False
    """
    _real_tensor(input, "is_conj")
    return False


def is_neg(input: Any) -> bool:  # noqa: A002
    """Whether ``input`` is a lazily negated view (PyTorch's for conjugated imaginary parts): never.

    >>> import tidu
    >>> tidu.is_neg(tidu.ones(1))
    False
    """
    _real_tensor(input, "is_neg")
    return False


def conj(input: Any) -> Tensor:  # noqa: A002
    """The complex conjugate: a real tensor is its own, so ``input`` itself.

    >>> import tidu
    >>> x = tidu.ones(2)
    >>> tidu.conj(x) is x
    True
    """
    return _real_tensor(input, "conj")


def conj_physical(input: Any) -> Tensor:  # noqa: A002
    """The complex conjugate, computed at once: ``input`` itself for a real tensor.

    >>> import tidu
    >>> tidu.conj_physical(tidu.tensor([1, -2]))
    tensor([ 1, -2])
    """
    return _real_tensor(input, "conj_physical")


def resolve_conj(input: Any) -> Tensor:  # noqa: A002
    """``input`` with a lazy conjugation carried out: ``input`` itself for a real tensor.

    >>> import tidu
    >>> x = tidu.ones(2)
    >>> tidu.resolve_conj(x) is x
    True
    """
    return _real_tensor(input, "resolve_conj")


def resolve_neg(input: Any) -> Tensor:  # noqa: A002
    """``input`` with a lazy negation carried out: ``input`` itself for a real tensor.

    >>> import tidu
    >>> x = tidu.ones(2)
    >>> tidu.resolve_neg(x) is x
    True
    """
    return _real_tensor(input, "resolve_neg")


def real(input: Any) -> Tensor:  # noqa: A002
    """The real part: ``input`` itself for a real tensor (``Tensor.real`` is the same).

    >>> import tidu
    >>> tidu.real(tidu.tensor([1.5]))
    tensor([1.5000])
    """
    return _real_tensor(input, "real")


def _imag(self: Tensor) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


METHODS: dict = {}
# methods of a ``Tensor`` (not of a ``Var``, inside ``vmap``)
TENSOR_METHODS = {"is_complex": is_complex, "is_conj": is_conj, "is_neg": is_neg, "conj": conj,
                  "conj_physical": conj_physical, "resolve_conj": resolve_conj, "resolve_neg": resolve_neg,
                  "real": property(real), "imag": property(_imag)}
